//! The order a bundle is applied in: what others depend on goes first.
use std::collections::BTreeMap;

use kube::api::{DynamicObject, GroupVersionKind};

/// A tier number; lower tiers are applied (and waited for) before higher ones.
///
/// CRDs first (custom resources need them Established), then namespaces (namespaced objects need
/// them), then identities and configuration, then RBAC, then workloads and admission
/// configuration, and custom resources last (an operator watching them should find its RBAC and
/// Deployment in place).
#[must_use]
pub fn tier(gvk: &GroupVersionKind) -> u8 {
    match (gvk.group.as_str(), gvk.kind.as_str()) {
        ("apiextensions.k8s.io", "CustomResourceDefinition") => 0,
        ("", "Namespace") => 1,
        ("", "ServiceAccount" | "Secret" | "ConfigMap") => 2,
        ("rbac.authorization.k8s.io", "ClusterRole" | "Role") => 3,
        ("rbac.authorization.k8s.io", "ClusterRoleBinding" | "RoleBinding") => 4,
        ("", "Service") => 5,
        ("apps" | "batch", _) | ("", "Pod") => 6,
        ("admissionregistration.k8s.io", _) => 7,
        (group, _) if is_builtin_group(group) => 5,
        _ => 8,
    }
}

/// Objects grouped by [`tier`], lowest tier first; objects without a kind go last.
#[must_use]
pub fn by_tier(objects: &[DynamicObject]) -> BTreeMap<u8, Vec<&DynamicObject>> {
    let mut tiers: BTreeMap<u8, Vec<&DynamicObject>> = BTreeMap::new();
    for obj in objects {
        let t = super::gvk_of(obj).map_or(u8::MAX, |g| tier(&g));
        tiers.entry(t).or_default().push(obj);
    }
    tiers
}

/// Groups served by kube-apiserver itself rather than by CRDs.
fn is_builtin_group(group: &str) -> bool {
    group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gvk(group: &str, kind: &str) -> GroupVersionKind {
        GroupVersionKind::gvk(group, "v1", kind)
    }

    #[test]
    fn dependencies_come_first() {
        let order = [
            gvk("apiextensions.k8s.io", "CustomResourceDefinition"),
            gvk("", "Namespace"),
            gvk("", "ServiceAccount"),
            gvk("rbac.authorization.k8s.io", "ClusterRole"),
            gvk("rbac.authorization.k8s.io", "ClusterRoleBinding"),
            gvk("apps", "Deployment"),
            gvk("operator.open-cluster-management.io", "ClusterManager"),
        ];
        let tiers: Vec<u8> = order.iter().map(tier).collect();
        assert!(tiers.windows(2).all(|w| w[0] < w[1]), "{tiers:?}");
    }

    #[test]
    fn custom_resources_go_last() {
        assert_eq!(
            tier(&gvk("work.open-cluster-management.io", "ManifestWork")),
            8
        );
        assert!(tier(&gvk("certificates.k8s.io", "CertificateSigningRequest")) < 8);
    }
}
