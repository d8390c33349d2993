//! The hub RoleBindings of a template add-on's `KubeClient` registration, as upstream's template
//! agent names and binds them. Pure: part of what the manager decides ([`super::plan`]).
use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef, Subject as RbacSubject};
use kube::ResourceExt as _;
use kube::api::ObjectMeta;

use crate::addon::owner_reference;
use ocm_api::addon::{
    ADDON_NAME_LABEL, ADDON_TEMPLATE_LABEL, AddOnTemplate, HubPermissionType, ManagedClusterAddOn,
    RegistrationConfig, RegistrationType,
};
use ocm_api::names::CLIENT_SIGNER;

/// The name of the RoleBinding for a hub permission, as upstream's template agent names it.
#[must_use]
pub fn binding_name(addon: &str, role_kind: &str) -> String {
    format!(
        "open-cluster-management:{addon}:{}:agent",
        role_kind.to_lowercase()
    )
}

/// The RoleBindings of the template's `KubeClient` hub permissions for the subject the status
/// registers (its user and groups but `system:authenticated`, as upstream binds them): the
/// ClusterRole in the cluster's namespace (owned by the add-on, so it goes with it), or a role
/// in a named namespace. Upstream binds the group of every cluster's agent of the add-on in the
/// cluster's namespace too, which lets one cluster's agent act in every other's; that group is
/// bound only in a named namespace here, where every cluster's agent shares the binding.
pub(super) fn bindings(
    template: &AddOnTemplate,
    mca: &ManagedClusterAddOn,
    registrations: &[RegistrationConfig],
) -> Vec<RoleBinding> {
    let (addon, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    let rbac = |kind: &str, name: &str| RbacSubject {
        kind: kind.into(),
        api_group: Some("rbac.authorization.k8s.io".into()),
        name: name.into(),
        namespace: None,
    };
    let Some(subject) = registrations
        .iter()
        .find(|r| r.signer_name == CLIENT_SIGNER)
        .and_then(|r| r.subject.as_ref())
    else {
        return Vec::new();
    };
    let subjects: Vec<RbacSubject> = subject
        .user
        .iter()
        .map(|u| rbac("User", u))
        .chain(
            subject
                .groups
                .iter()
                .filter(|g| *g != "system:authenticated")
                .map(|g| rbac("Group", g)),
        )
        .collect();
    let permissions = template
        .spec
        .registration
        .iter()
        .filter(|r| r.type_ == RegistrationType::KubeClient)
        .filter_map(|r| r.kube_client.as_ref())
        .flat_map(|k| &k.hub_permissions);
    let every_cluster = ocm_runtime::identity::addon::addon_group(&addon);
    let mut out = Vec::new();
    for permission in permissions {
        let (namespace, role_ref, shared) = match permission.type_ {
            HubPermissionType::CurrentCluster => {
                let Some(current) = &permission.current_cluster else {
                    continue;
                };
                let role_ref = RoleRef {
                    api_group: Some("rbac.authorization.k8s.io".into()),
                    kind: "ClusterRole".into(),
                    name: current.cluster_role_name.clone(),
                };
                (cluster.clone(), role_ref, false)
            }
            HubPermissionType::SingleNamespace => {
                let Some(single) = &permission.single_namespace else {
                    continue;
                };
                let role_ref = RoleRef {
                    api_group: Some(single.role_ref.api_group.clone()),
                    kind: single.role_ref.kind.clone(),
                    name: single.role_ref.name.clone(),
                };
                (single.namespace.clone(), role_ref, true)
            }
        };
        let bound = subjects
            .iter()
            .filter(|s| shared || s.name != every_cluster)
            .cloned()
            .collect();
        out.push(RoleBinding {
            metadata: ObjectMeta {
                name: Some(binding_name(&addon, &role_ref.kind)),
                namespace: Some(namespace),
                labels: Some(BTreeMap::from([
                    (ADDON_NAME_LABEL.into(), addon.clone()),
                    (ADDON_TEMPLATE_LABEL.into(), String::new()),
                ])),
                owner_references: (!shared).then(|| vec![owner_reference(mca, false)]),
                ..ObjectMeta::default()
            },
            role_ref,
            subjects: Some(bound),
        });
    }
    out
}
