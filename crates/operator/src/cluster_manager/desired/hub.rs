//! The hub as our image runs it: one Deployment running `clusteradm controller hub` (every hub
//! controller, two replicas under a Lease so one reconciles and the other stands by), its
//! ServiceAccount, one ClusterRole holding what those controllers do, and the Service through
//! which the API server reaches the webhooks both replicas serve (the add-on conversion and
//! upstream's admission webhooks, with the operator's serving certificate; the operator points
//! the CRDs and webhook configurations there). No webhook pods of upstream's run.
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;

use super::Component;
use super::rbac::{self, rule};
use crate::cluster_manager::validate::{HostedWebhook, Validated};
use crate::pod_security;
use ocm_api::names::{ADDON_MANAGER_SA, HUB_NAMESPACE};

/// The Deployment's name and its pods' `app` label.
pub const NAME: &str = ocm_api::names::HUB_SERVICE;
/// Its ServiceAccount.
pub const SERVICE_ACCOUNT: &str = "cluster-manager-hub-sa";
/// Its ClusterRole and ClusterRoleBinding.
pub const CLUSTER_ROLE: &str = "open-cluster-management:cluster-manager-hub";
/// Pods of the Deployment: a leader and a standby.
pub const REPLICAS: i32 = 2;
/// The ClusterRole (and its binding) of upstream's add-on manager's ServiceAccount, as which our
/// hub writes a template's hub RoleBindings.
pub const ADDON_MANAGER_ROLE: &str = "open-cluster-management:cluster-manager-hub:addon-manager";
/// Where `/healthz` and `/readyz` are served.
pub const PROBE_PORT: i32 = 8000;
/// Where the hub pods serve `/metrics` over HTTPS to authenticated, authorised callers.
pub const METRICS_PORT: i32 = ocm_runtime::metrics_server::PORT;

/// Where the hub pods serve the placement debug endpoint (`PlacementDebugServer`).
pub const PLACEMENT_DEBUG_PORT: u16 = ocm_hub::placement::debug::PORT;
/// Upstream's Service in front of it.
pub const PLACEMENT_DEBUG_SERVICE: &str = "cluster-manager-placement";

/// The Secret holding the hub Service's serving certificate (its webhooks').
pub const SERVING_SECRET: &str = "cluster-manager-hub-serving-cert";
/// Where the hub pods mount it.
const SERVING_DIR: &str = "/serving-cert";
/// The port the Service and the pods serve the webhooks on.
pub const WEBHOOK_PORT: u16 = ocm_hub::webhook::mounted::PORT;
const ADDON: &str = "addon.open-cluster-management.io";
const WORK: &str = "work.open-cluster-management.io";
const CLUSTER: &str = "cluster.open-cluster-management.io";
const MANAGE: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];

/// What the hub controllers do beyond upstream's registration and placement controllers: the
/// add-on manager's work (add-ons, their configs and CSRs, the ManifestWorks that deploy them),
/// the replica-set controller's and the cluster sets'. The operator, not the pods, points the
/// add-on CRDs and the webhook configurations at the hub's Service.
fn extra_rules() -> Vec<PolicyRule> {
    vec![
        // ClusterManagementAddOns are the user's: read, their status written (upstream's add-on
        // manager also holds `patch`, which ours never sends).
        rule(
            &[ADDON],
            &["clustermanagementaddons"],
            &["get", "list", "watch"],
        ),
        // Install strategies create and delete ManagedClusterAddOns; the manager patches them.
        rule(&[ADDON], &["managedclusteraddons"], MANAGE),
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
        // Our registration controller puts clusters without a set in `default` (what upstream's
        // mutating webhook does): the admission policy asks the writer of that label for
        // `managedclustersets/join`.
        PolicyRule {
            resource_names: Some(vec![ocm_api::cluster::DEFAULT_CLUSTER_SET.into()]),
            ..rule(&[CLUSTER], &["managedclustersets/join"], &["create"])
        },
        // The works the add-on manager and the replica-set controller write pass the work
        // webhook's executor check (`execute-as`, asked for the default executor too under
        // NilExecutorValidating): upstream grants it to its work controller, and to its add-on
        // manager for the default executor (`…-work-executor-admin:webhook`).
        rule(&[WORK], &["manifestworks"], &["execute-as"]),
        // The user's: read, their finalizer added and removed (a patch).
        rule(
            &[WORK],
            &["manifestworkreplicasets"],
            &["get", "list", "watch", "patch"],
        ),
        rule(
            &[WORK],
            &[
                "manifestworkreplicasets/status",
                "manifestworkreplicasets/finalizers",
            ],
            &["update", "patch"],
        ),
        // Add-ons registering with their own signers: approved and signed here.
        rule(&["certificates.k8s.io"], &["signers"], &["approve", "sign"]),
        // The registration controller server-side-applies each cluster's namespace (upstream's
        // creates and updates it).
        rule(&[""], &["namespaces"], &["patch"]),
        // No Secret, and no template's hub permission bound as the hub: a template add-on's
        // signing CA is read, and its hub RoleBindings written, as upstream's add-on manager
        // (impersonated, [`ocm_hub::addon::as_addon_manager`]), which holds only what
        // [`addon_manager_cluster_role`] and the user grant it.
        PolicyRule {
            resource_names: Some(vec![ADDON_MANAGER_SA.into()]),
            ..rule(&[""], &["serviceaccounts"], &["impersonate"])
        },
        rule(&[""], &["serviceaccounts"], &["get", "list", "watch"]),
        // The admission webhooks follow the ClusterManager's gates.
        rule(
            &["operator.open-cluster-management.io"],
            &["clustermanagers"],
            &["get", "list", "watch"],
        ),
    ]
}

/// The ServiceAccount.
#[must_use]
pub fn service_account() -> ServiceAccount {
    named_service_account(SERVICE_ACCOUNT, HUB_NAMESPACE)
}

/// Upstream's add-on manager's ServiceAccount: no pod runs as it here, but the hub reads a
/// template add-on's signing CA and binds its hub permissions as it, so that a user grants it
/// what upstream documents.
#[must_use]
pub fn addon_manager_service_account() -> ServiceAccount {
    named_service_account(ADDON_MANAGER_SA, HUB_NAMESPACE)
}

/// The ClusterRole of upstream's add-on manager's ServiceAccount while our hub does its work.
/// RBAC lets a template's hub permission grant only what its writer holds, so the account holds
/// upstream's add-on manager's rules, which templates are written against (upstream's e2e
/// template grants ConfigMaps and ManagedClusterAddOns), but for what would let a taken hub pod
/// make identities through it: no ServiceAccount written, no token requested (the operator makes
/// the add-ons' token identities), and RoleBindings, not Roles, written. Anything else a template
/// binds the user grants that account, as add-ons' charts do for upstream's.
#[must_use]
pub fn addon_manager_cluster_role() -> ClusterRole {
    let mints = |r: &PolicyRule| {
        r.resources
            .iter()
            .flatten()
            .any(|res| res.starts_with("serviceaccounts"))
    };
    let rules = rbac::rules(Component::AddonManager)
        .into_iter()
        .filter(|r| !mints(r))
        .map(|mut r| {
            if let Some(resources) = &mut r.resources {
                resources.retain(|res| res != "roles");
            }
            r
        })
        .collect();
    named_cluster_role(ADDON_MANAGER_ROLE, rules)
}

/// Its ClusterRoleBinding to upstream's add-on manager's ServiceAccount.
#[must_use]
pub fn addon_manager_cluster_role_binding() -> ClusterRoleBinding {
    binding_to_account(ADDON_MANAGER_ROLE, ADDON_MANAGER_SA)
}

/// ClusterRole `name` with `rules`.
fn named_cluster_role(name: &str, rules: Vec<PolicyRule>) -> ClusterRole {
    ClusterRole {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        rules: Some(rules),
        ..Default::default()
    }
}

/// The ClusterRoleBinding `role` of ClusterRole `role` to ServiceAccount `account` of the hub
/// namespace.
fn binding_to_account(role: &str, account: &str) -> ClusterRoleBinding {
    serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": HUB_NAMESPACE}],
    }))
    .expect("a valid ClusterRoleBinding")
}

/// ServiceAccount `name` in `namespace`.
#[must_use]
pub fn named_service_account(name: &str, namespace: &str) -> ServiceAccount {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace},
    }))
    .expect("a valid ServiceAccount")
}

/// The ClusterRole: upstream's registration and placement controllers' rules (placements read,
/// decisions written, cluster sets kept, bindings read; TokenReviews and SubjectAccessReviews,
/// with which `/metrics` checks its callers) and `extra_rules`.
#[must_use]
pub fn cluster_role() -> ClusterRole {
    let mut rules = rbac::rules(Component::RegistrationController);
    rules.extend(rbac::rules(Component::PlacementController));
    rules.extend(extra_rules());
    named_cluster_role(CLUSTER_ROLE, rules)
}

/// The ClusterRoleBinding.
#[must_use]
pub fn cluster_role_binding() -> ClusterRoleBinding {
    binding_to_account(CLUSTER_ROLE, SERVICE_ACCOUNT)
}

/// The Deployment, with `image` (the ClusterManager's one image).
#[must_use]
pub fn deployment(v: &Validated, image: &str) -> Deployment {
    let probe = |path: &str| json!({"httpGet": {"path": path, "port": PROBE_PORT, "scheme": "HTTP"}, "periodSeconds": 10});
    let mut container = json!({
        "name": "hub",
        "image": image,
        "args": [
            "controller",
            "hub",
            format!("--probe-address=0.0.0.0:{PROBE_PORT}"),
            format!("--metrics-address=0.0.0.0:{METRICS_PORT}"),
            format!("--webhook-cert-dir={SERVING_DIR}"),
        ],
        "ports": [
            {"name": "healthz", "containerPort": PROBE_PORT, "protocol": "TCP"},
            {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
            {"name": "webhook", "containerPort": WEBHOOK_PORT, "protocol": "TCP"},
        ],
        "volumeMounts": [{"name": "serving-cert", "mountPath": SERVING_DIR, "readOnly": true}],
        "livenessProbe": probe("/healthz"),
        "readinessProbe": probe("/readyz"),
        "securityContext": pod_security::container(),
        "resources": {
            "requests": {"cpu": "10m", "memory": "32Mi"},
            "limits": {"cpu": "2", "memory": "2Gi"},
        },
    });
    if let Some(resources) = &v.resources {
        container["resources"] = serde_json::to_value(resources).expect("serialisable");
    }
    if v.placement_debug_server() {
        let port = i32::from(PLACEMENT_DEBUG_PORT);
        container["args"]
            .as_array_mut()
            .expect("args")
            .push(format!("--placement-debug-address=0.0.0.0:{port}").into());
        container["ports"]
            .as_array_mut()
            .expect("ports")
            .push(json!({"name": "placement-debug", "containerPort": port, "protocol": "TCP"}));
    }
    let mut pod_spec = json!({
        "serviceAccountName": SERVICE_ACCOUNT,
        "securityContext": pod_security::pod(),
        "containers": [container],
        "volumes": [{"name": "serving-cert", "secret": {"secretName": SERVING_SECRET}}],
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

/// The port the webhook configurations and CRD conversions name on the hub's Service: the pods'
/// own, but for a hosted hub's webhooks at an address the user exposes (upstream's port there).
#[must_use]
pub fn webhook_port(v: &Validated) -> i32 {
    v.hosted
        .as_ref()
        .map_or(i32::from(WEBHOOK_PORT), webhook_port_of)
}

/// [`webhook_port`] of a hosted hub.
#[must_use]
pub fn webhook_port_of(webhook: &HostedWebhook) -> i32 {
    match webhook {
        HostedWebhook::Ip { port, .. } | HostedWebhook::Name { port, .. } => *port,
        HostedWebhook::PodAddresses => i32::from(WEBHOOK_PORT),
    }
}

/// The Service the API server reaches every hub pod's webhooks through.
#[must_use]
pub fn service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "namespace": HUB_NAMESPACE},
        "spec": {
            "selector": {"app": NAME},
            "ports": [{"name": "webhook", "port": WEBHOOK_PORT, "targetPort": WEBHOOK_PORT}],
        },
    }))
    .expect("a valid Service")
}

/// Upstream's Service of its placement debug server (`PlacementDebugServer`): its name and port
/// (9443), to the port the hub pods serve the endpoint on.
#[must_use]
pub fn placement_debug_service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": PLACEMENT_DEBUG_SERVICE, "namespace": HUB_NAMESPACE},
        "spec": {
            "selector": {"app": NAME},
            "ports": [{"name": "https", "port": 9443, "targetPort": PLACEMENT_DEBUG_PORT, "protocol": "TCP"}],
        },
    }))
    .expect("a valid Service")
}

/// Who may connect to the hub pods: the webhook port (the API server, whose address is not a
/// pod's, so from anywhere; TLS, answering reviews only), the authenticated metrics port and,
/// with `PlacementDebugServer`, the authenticated placement debug port. The plain-HTTP probe
/// port is not opened: the kubelet probes from the node, which network policy implementations
/// let through, and no other pod can hold its connections.
#[must_use]
pub fn network_policy(v: &Validated) -> k8s_openapi::api::networking::v1::NetworkPolicy {
    let mut ports = vec![
        json!({"protocol": "TCP", "port": WEBHOOK_PORT}),
        json!({"protocol": "TCP", "port": METRICS_PORT}),
    ];
    if v.placement_debug_server() {
        ports.push(json!({"protocol": "TCP", "port": PLACEMENT_DEBUG_PORT}));
    }
    serde_json::from_value(json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": NAME, "namespace": HUB_NAMESPACE},
        "spec": {
            "podSelector": {"matchLabels": {"app": NAME}},
            "policyTypes": ["Ingress"],
            "ingress": [{"ports": ports}],
        },
    }))
    .expect("a valid NetworkPolicy")
}

/// The Service's DNS name, which its serving certificate names.
#[must_use]
pub fn service_dns() -> String {
    format!("{NAME}.{HUB_NAMESPACE}.svc")
}

/// Points an add-on CRD's conversion at Service `name` in the hub namespace, on `port`,
/// trusting `ca_bundle` (PEM): our hub pods', or upstream's add-on webhook's.
pub fn convert_through_service(
    crd: &mut CustomResourceDefinition,
    name: &str,
    port: i32,
    ca_bundle: &[u8],
) {
    crd.spec.conversion = Some(
        serde_json::from_value(json!({
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {
                        "namespace": HUB_NAMESPACE,
                        "name": name,
                        "path": ocm_hub::conversion::PATH,
                        "port": port,
                    },
                    "caBundle": base64::Engine::encode(&base64::engine::general_purpose::STANDARD, ca_bundle),
                },
            },
        }))
        .expect("a valid CustomResourceConversion"),
    );
}
