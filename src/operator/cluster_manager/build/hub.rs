//! The hub as our image runs it: one Deployment running `clusteradm controller hub` (every hub
//! controller and the add-on conversion webhook, two replicas under a Lease so one reconciles and
//! the other stands by), its ServiceAccount, and one ClusterRole holding what those controllers do. The
//! admission rules are the API server's own policies (no webhook pods), as in-process.
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule};
use serde_json::json;

use super::Component;
use super::rbac::{self, rule};
use crate::api::names::HUB_NAMESPACE;
use crate::operator::cluster_manager::validate::Validated;

/// The Deployment's name and its pods' `app` label.
pub const NAME: &str = "cluster-manager-hub";
/// Its ServiceAccount.
pub const SERVICE_ACCOUNT: &str = "cluster-manager-hub-sa";
/// Its ClusterRole and ClusterRoleBinding.
pub const CLUSTER_ROLE: &str = "open-cluster-management:cluster-manager-hub";
/// Pods of the Deployment: a leader and a standby.
pub const REPLICAS: i32 = 2;
/// Where `/healthz`, `/readyz` and `/metrics` are served.
pub const PROBE_PORT: i32 = 8000;

const ADDON: &str = "addon.open-cluster-management.io";
const WORK: &str = "work.open-cluster-management.io";
const CLUSTER: &str = "cluster.open-cluster-management.io";
const MANAGE: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];

/// What the hub controllers do beyond upstream's registration and placement controllers: the
/// add-on manager's work (add-ons, their configs and CSRs, the ManifestWorks that deploy them),
/// the replica-set controller's, the cluster sets' and the conversion webhook's CRD pointing.
fn extra_rules() -> Vec<PolicyRule> {
    vec![
        rule(
            &[ADDON],
            &["clustermanagementaddons", "managedclusteraddons"],
            MANAGE,
        ),
        rule(
            &[ADDON],
            &[
                "clustermanagementaddons/status",
                "managedclusteraddons/status",
                "clustermanagementaddons/finalizers",
                "managedclusteraddons/finalizers",
            ],
            &["update", "patch"],
        ),
        rule(
            &[ADDON],
            &["addondeploymentconfigs", "addontemplates"],
            &["get", "list", "watch"],
        ),
        rule(&[WORK], &["manifestworkreplicasets"], MANAGE),
        rule(
            &[WORK],
            &[
                "manifestworkreplicasets/status",
                "manifestworkreplicasets/finalizers",
            ],
            &["update", "patch"],
        ),
        rule(&[CLUSTER], &["placements", "placementdecisions"], MANAGE),
        rule(
            &[CLUSTER],
            &["managedclustersetbindings", "managedclustersets"],
            MANAGE,
        ),
        // Add-ons registering with their own signers: approved and signed here.
        rule(&["certificates.k8s.io"], &["signers"], &["approve", "sign"]),
        // The add-on conversion webhook points the two add-on CRDs at itself.
        PolicyRule {
            resource_names: Some(
                crate::hub::conversion::CRDS
                    .iter()
                    .map(|s| (*s).to_string())
                    .collect(),
            ),
            ..rule(
                &["apiextensions.k8s.io"],
                &["customresourcedefinitions"],
                &["get", "update", "patch"],
            )
        },
        rule(
            &["apiextensions.k8s.io"],
            &["customresourcedefinitions"],
            &["list", "watch"],
        ),
        // The registration controller server-side-applies each cluster's namespace (upstream's
        // creates and updates it).
        rule(&[""], &["namespaces"], &["patch"]),
        // Add-on templates' signing CA and registration secrets.
        rule(&[""], &["secrets"], MANAGE),
        rule(&[""], &["serviceaccounts"], &["get", "list", "watch"]),
    ]
}

/// The ServiceAccount.
#[must_use]
pub fn service_account() -> ServiceAccount {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": SERVICE_ACCOUNT, "namespace": HUB_NAMESPACE},
    }))
    .expect("a valid ServiceAccount")
}

/// The ClusterRole: upstream's registration and placement controllers' rules and [`extra_rules`].
#[must_use]
pub fn cluster_role() -> ClusterRole {
    let mut rules = rbac::rules(Component::RegistrationController);
    rules.extend(rbac::rules(Component::PlacementController));
    rules.extend(extra_rules());
    ClusterRole {
        metadata: kube::api::ObjectMeta {
            name: Some(CLUSTER_ROLE.into()),
            ..Default::default()
        },
        rules: Some(rules),
        ..Default::default()
    }
}

/// The ClusterRoleBinding.
#[must_use]
pub fn cluster_role_binding() -> ClusterRoleBinding {
    serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": CLUSTER_ROLE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": CLUSTER_ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": HUB_NAMESPACE}],
    }))
    .expect("a valid ClusterRoleBinding")
}

/// The Deployment, with `image` (the ClusterManager's one image).
#[must_use]
pub fn deployment(v: &Validated, image: &str) -> Deployment {
    let probe = |path: &str| json!({"httpGet": {"path": path, "port": PROBE_PORT, "scheme": "HTTP"}, "periodSeconds": 10});
    let mut container = json!({
        "name": "hub",
        "image": image,
        "args": ["controller", "hub", format!("--probe-address=0.0.0.0:{PROBE_PORT}")],
        "ports": [{"name": "metrics", "containerPort": PROBE_PORT, "protocol": "TCP"}],
        "livenessProbe": probe("/healthz"),
        "readinessProbe": probe("/readyz"),
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]},
            "privileged": false,
            "runAsNonRoot": true,
            "readOnlyRootFilesystem": true,
        },
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
    });
    if let Some(resources) = &v.resources {
        container["resources"] = serde_json::to_value(resources).expect("serialisable");
    }
    let mut pod_spec = json!({
        "serviceAccountName": SERVICE_ACCOUNT,
        "securityContext": {"runAsNonRoot": true},
        "containers": [container],
    });
    super::deployment::place(&mut pod_spec, v);
    serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": HUB_NAMESPACE, "labels": {"app": NAME}},
        "spec": {
            // One leads (the Lease), one stands by and takes over when the leader stops.
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": NAME}},
            "template": {"metadata": {"labels": {"app": NAME}}, "spec": pod_spec},
        },
    }))
    .expect("a valid Deployment")
}
