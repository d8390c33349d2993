//! The governance policy framework's hub side: the policy propagator (policies to clusters' namespaces, and
//! their status back) and the policy add-on controller (the `governance-policy-framework` and
//! `config-policy-controller` add-ons' agents, deployed to managed clusters by ManifestWorks).
//! Its CRDs and the two controllers' ClusterRoles are the components' own, vendored in
//! `templates/hub-addons/governance-policy-framework/` (origin in its README).
use kube::api::DynamicObject;
use serde_json::{Value, json};

use super::{
    account, bound_role, cluster_binding, cluster_management_addon, image, object,
    restricted_container, vendored,
};

/// The add-on's name, as `--names` takes it.
pub const POLICY_FRAMEWORK: &str = "governance-policy-framework";
/// The add-ons the policy add-on controller serves (its ClusterManagementAddOns).
pub const POLICY_ADDONS: [&str; 2] = ["config-policy-controller", POLICY_FRAMEWORK];
/// The propagator's names (its Deployment, ServiceAccount and ClusterRole).
pub const PROPAGATOR: &str = "governance-policy-propagator";
/// The add-on controller's Deployment.
pub const ADDON_CONTROLLER: &str = "governance-policy-addon-controller";
/// The add-on controller's ServiceAccount.
const ADDON_CONTROLLER_ACCOUNT: &str = "policy-addon-ctrl-controller-manager";

/// The vendored files, in apply order within their kinds.
pub(super) const CRDS: [&str; 5] = [
    include_str!(
        "../../../templates/hub-addons/governance-policy-framework/crd-placementbindings.yaml"
    ),
    include_str!("../../../templates/hub-addons/governance-policy-framework/crd-policies.yaml"),
    include_str!(
        "../../../templates/hub-addons/governance-policy-framework/crd-policyautomations.yaml"
    ),
    include_str!("../../../templates/hub-addons/governance-policy-framework/crd-policysets.yaml"),
    PLACEMENT_RULES_CRD,
];
/// PlacementRules: the policy framework's and application-manager's, the same file (the
/// subscription's v0.16.0).
pub(super) const PLACEMENT_RULES_CRD: &str = include_str!(
    "../../../templates/hub-addons/governance-policy-framework/crd-placementrules.yaml"
);
const PROPAGATOR_ROLE: &str = include_str!(
    "../../../templates/hub-addons/governance-policy-framework/clusterrole-propagator.yaml"
);
const ADDON_CONTROLLER_ROLE: &str = include_str!(
    "../../../templates/hub-addons/governance-policy-framework/clusterrole-addon-controller.yaml"
);

/// The images' tag of a `--bundle-version` (upstream's version bundles: the policy add-on's
/// version for each OCM version).
pub(super) fn tag(bundle_version: &str) -> Option<&'static str> {
    Some(match bundle_version.trim_start_matches('v') {
        // The default bundle is OCM v1.3.1's.
        "default" | "" | "1.2.0" | "1.2.1" | "1.3.0" | "1.3.1" => "v0.18.0",
        "latest" => "latest",
        "1.1.1" | "1.1.3" => "v0.17.0",
        "1.1.0" => "v0.16.0",
        _ => return None,
    })
}

/// The propagator, the add-on controller and their ClusterManagementAddOns, in `namespace`, with
/// images of `tag`.
pub(super) fn plan(namespace: &str, tag: &str) -> Result<Vec<DynamicObject>, String> {
    let mut objects = Vec::new();
    for crd in CRDS {
        objects.push(vendored(crd, None)?);
    }
    // The propagator.
    objects.push(account(PROPAGATOR, namespace));
    objects.push(vendored(PROPAGATOR_ROLE, Some(PROPAGATOR))?);
    objects.push(cluster_binding(
        &format!("{PROPAGATOR}-global"),
        PROPAGATOR,
        PROPAGATOR,
        namespace,
    ));
    objects.extend(leader_election(
        &format!("{PROPAGATOR}-leader-election-role"),
        &format!("{PROPAGATOR}-leader-election-rolebinding"),
        PROPAGATOR,
        namespace,
    ));
    objects.push(object(propagator_deployment(namespace, tag)));
    // The add-on controller.
    objects.push(account(ADDON_CONTROLLER_ACCOUNT, namespace));
    objects.push(vendored(
        ADDON_CONTROLLER_ROLE,
        Some("policy-addon-ctrl-manager-role"),
    )?);
    objects.push(cluster_binding(
        "policy-addon-ctrl-manager-rolebinding",
        "policy-addon-ctrl-manager-role",
        ADDON_CONTROLLER_ACCOUNT,
        namespace,
    ));
    objects.extend(leader_election(
        "policy-addon-ctrl-leader-election-role",
        "policy-addon-ctrl-leader-election-rolebinding",
        ADDON_CONTROLLER_ACCOUNT,
        namespace,
    ));
    objects.push(object(addon_controller_deployment(namespace, tag)));
    objects.push(object(cluster_management_addon(
        "config-policy-controller",
        "Configuration Policy Addon",
        "Audits Kubernetes resources and remediates violations based on configuration policies.",
    )));
    objects.push(object(cluster_management_addon(
        POLICY_FRAMEWORK,
        "Governance Policy Framework Addon",
        "Distributes policies and collects policy evaluation results.",
    )));
    Ok(objects)
}

/// The Lease and Events a controller's leader election needs, in its namespace only.
fn leader_election(
    role: &str,
    binding: &str,
    account: &str,
    namespace: &str,
) -> [DynamicObject; 2] {
    let rules = json!([
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
         "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    ]);
    bound_role((role, binding), namespace, &rules, account, namespace)
}

fn propagator_deployment(namespace: &str, tag: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": PROPAGATOR, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"name": PROPAGATOR}},
            "template": {
                "metadata": {
                    "labels": {"name": PROPAGATOR},
                    "annotations": {"kubectl.kubernetes.io/default-container": PROPAGATOR},
                },
                "spec": {
                    "serviceAccountName": PROPAGATOR,
                    "containers": [{
                        "name": PROPAGATOR,
                        "image": image(PROPAGATOR, tag),
                        "imagePullPolicy": "IfNotPresent",
                        "command": [PROPAGATOR],
                        "args": [
                            "--health-probe-bind-address=:8081",
                            "--metrics-bind-address=:8383",
                            "--leader-elect",
                            "--enable-webhooks=false",
                        ],
                        "env": [
                            {"name": "WATCH_NAMESPACE", "value": ""},
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "OPERATOR_NAME", "value": PROPAGATOR},
                        ],
                        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8081}},
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8081}, "initialDelaySeconds": 15},
                        "securityContext": restricted_container(),
                    }],
                },
            },
        },
    })
}

fn addon_controller_deployment(namespace: &str, tag: &str) -> Value {
    let labels = json!({"app": ADDON_CONTROLLER, "control-plane": "controller-manager"});
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": ADDON_CONTROLLER, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {
                    "labels": labels,
                    "annotations": {"kubectl.kubernetes.io/default-container": "manager"},
                },
                "spec": {
                    "serviceAccountName": ADDON_CONTROLLER_ACCOUNT,
                    "terminationGracePeriodSeconds": 10,
                    "containers": [{
                        "name": "manager",
                        "image": image(ADDON_CONTROLLER, tag),
                        "imagePullPolicy": "IfNotPresent",
                        "command": [ADDON_CONTROLLER],
                        "args": ["controller"],
                        "env": [
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "CONFIG_POLICY_CONTROLLER_IMAGE", "value": image("config-policy-controller", tag)},
                            {"name": "GOVERNANCE_POLICY_FRAMEWORK_ADDON_IMAGE", "value": image("governance-policy-framework-addon", tag)},
                        ],
                        "resources": {
                            "requests": {"cpu": "10m", "memory": "64Mi"},
                            "limits": {"cpu": "500m", "memory": "256Mi"},
                        },
                        "securityContext": restricted_container(),
                    }],
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_framework_is_upstreams_objects_under_upstreams_names() {
        let objects = plan("ocm", "v0.18.0").unwrap();
        let names = crate::install::names(&objects);
        for expected in [
            "CustomResourceDefinition/policies.policy.open-cluster-management.io",
            "CustomResourceDefinition/placementrules.apps.open-cluster-management.io",
            "ClusterRole/governance-policy-propagator",
            "ClusterRole/policy-addon-ctrl-manager-role",
            "ClusterRoleBinding/governance-policy-propagator-global",
            "RoleBinding/policy-addon-ctrl-leader-election-rolebinding",
            "Deployment/governance-policy-propagator",
            "Deployment/governance-policy-addon-controller",
            "ClusterManagementAddOn/config-policy-controller",
            "ClusterManagementAddOn/governance-policy-framework",
        ] {
            assert!(
                names.contains(&expected.to_string()),
                "{expected} in {names:?}"
            );
        }
        let text = serde_json::to_string(&objects).unwrap();
        assert!(
            text.contains(
                "quay.io/open-cluster-management/governance-policy-framework-addon:v0.18.0"
            )
        );
        let removable =
            super::super::removable(super::super::HubAddon::PolicyFramework, "ocm").unwrap();
        assert!(
            removable
                .iter()
                .all(|o| super::super::kind(o) != "CustomResourceDefinition")
        );
        assert_eq!(removable.len(), objects.len() - CRDS.len());
    }
}
