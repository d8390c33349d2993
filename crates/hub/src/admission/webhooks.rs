//! The admission webhook configurations: ManagedCluster validation and mutation, cluster-set
//! binding validation (registration webhook) and ManifestWork validation (work webhook), and,
//! where our hub serves them, ManifestWorkReplicaSet validation (upstream serves that webhook but
//! no configuration routes to it). All fail closed, as upstream; they are served by upstream's
//! webhook Deployments, our hub pods' Service, or an in-process hub at a URL ([`Endpoint`]).
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use serde_json::{Value, json};

use crate::admission as paths;
use ocm_api::names::{HUB_NAMESPACE, HUB_SERVICE, REGISTRATION_WEBHOOK, WORK_WEBHOOK};

/// ManagedCluster validation.
pub const MANAGED_CLUSTER_VALIDATOR: &str =
    "managedclustervalidators.admission.cluster.open-cluster-management.io";
/// ManagedCluster defaulting.
pub const MANAGED_CLUSTER_MUTATOR: &str =
    "managedclustermutators.admission.cluster.open-cluster-management.io";
/// ManagedClusterSetBinding validation.
pub const CLUSTER_SET_BINDING_VALIDATOR: &str =
    "managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io";
/// ManifestWork validation.
pub const MANIFEST_WORK_VALIDATOR: &str =
    "manifestworkvalidators.admission.work.open-cluster-management.io";
/// ManifestWorkReplicaSet validation (ours: upstream has no such configuration).
pub const REPLICA_SET_VALIDATOR: &str =
    "manifestworkreplicasetvalidators.admission.work.open-cluster-management.io";

/// Every validating configuration's name, whoever serves it.
pub const VALIDATORS: [&str; 4] = [
    MANAGED_CLUSTER_VALIDATOR,
    CLUSTER_SET_BINDING_VALIDATOR,
    MANIFEST_WORK_VALIDATOR,
    REPLICA_SET_VALIDATOR,
];

/// Who serves the webhooks.
#[derive(Debug, Clone, Copy)]
pub enum Endpoint<'a> {
    /// Upstream's webhook Deployments, behind their Services on these ports.
    Upstream {
        /// The registration webhook's port.
        registration_port: i32,
        /// The work webhook's port.
        work_port: i32,
    },
    /// Our hub pods, every webhook behind the hub's Service, on this port (9443 but for a
    /// hosted hub's address).
    HubService(i32),
    /// An in-process hub at this base URL (`https://<ip>:<port>`).
    Url(&'a str),
}

/// Which of upstream's webhook servers serves a configuration.
#[derive(Debug, Clone, Copy)]
enum Server {
    Registration,
    Work,
}

impl Endpoint<'_> {
    /// The `clientConfig` reaching the webhook at `path`, served by `server` upstream.
    fn client_config(self, server: Server, path: &str, ca_bundle: &[u8]) -> Value {
        let ca = ByteString(ca_bundle.to_vec());
        match self {
            Self::Upstream {
                registration_port,
                work_port,
            } => {
                let (name, port) = match server {
                    Server::Work => (WORK_WEBHOOK, work_port),
                    Server::Registration => (REGISTRATION_WEBHOOK, registration_port),
                };
                json!({
                    "service": {"namespace": HUB_NAMESPACE, "name": name, "path": path, "port": port},
                    "caBundle": ca,
                })
            }
            Self::HubService(port) => json!({
                "service": {"namespace": HUB_NAMESPACE, "name": HUB_SERVICE, "path": path, "port": port},
                "caBundle": ca,
            }),
            Self::Url(base) => json!({"url": format!("{base}{path}"), "caBundle": ca}),
        }
    }

    /// Whether this endpoint serves ManifestWorkReplicaSet validation (ours do).
    fn validates_replica_sets(self) -> bool {
        !matches!(self, Self::Upstream { .. })
    }
}

/// One webhook entry: `name`, reached through `client_config`, for `resource` of `group`.
fn webhook(
    name: &str,
    client_config: &Value,
    group: &str,
    versions: &str,
    resource: &str,
) -> Value {
    json!({
        "name": name,
        "failurePolicy": "Fail",
        "clientConfig": client_config,
        "rules": [{
            "operations": ["CREATE", "UPDATE"],
            "apiGroups": [group],
            "apiVersions": [versions],
            "resources": [resource],
        }],
        "admissionReviewVersions": ["v1beta1", "v1"],
        "sideEffects": "None",
        "timeoutSeconds": 10,
    })
}

fn configuration(kind: &str, name: &str, hook: &Value) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [hook],
    })
}

/// The validating configurations for `endpoint`, trusting `ca_bundle` (PEM).
#[must_use]
pub fn validating(endpoint: Endpoint<'_>, ca_bundle: &[u8]) -> Vec<ValidatingWebhookConfiguration> {
    let cluster = "cluster.open-cluster-management.io";
    let work = "work.open-cluster-management.io";
    let mut hooks = vec![
        (
            MANAGED_CLUSTER_VALIDATOR,
            Server::Registration,
            paths::VALIDATE_MANAGED_CLUSTER,
            cluster,
            "*",
            "managedclusters",
        ),
        (
            CLUSTER_SET_BINDING_VALIDATOR,
            Server::Registration,
            paths::VALIDATE_CLUSTER_SET_BINDING,
            cluster,
            "v1beta2",
            "managedclustersetbindings",
        ),
        (
            MANIFEST_WORK_VALIDATOR,
            Server::Work,
            paths::VALIDATE_MANIFEST_WORK,
            work,
            "*",
            "manifestworks",
        ),
    ];
    if endpoint.validates_replica_sets() {
        hooks.push((
            REPLICA_SET_VALIDATOR,
            Server::Work,
            paths::VALIDATE_REPLICA_SET,
            work,
            "v1alpha1",
            "manifestworkreplicasets",
        ));
    }
    hooks
        .into_iter()
        .map(|(name, server, path, group, versions, resource)| {
            let config = endpoint.client_config(server, path, ca_bundle);
            let hook = webhook(name, &config, group, versions, resource);
            serde_json::from_value(configuration("ValidatingWebhookConfiguration", name, &hook))
                .expect("a valid ValidatingWebhookConfiguration")
        })
        .collect()
}

/// The mutating configuration (ManagedCluster defaults) for `endpoint`.
#[must_use]
pub fn mutating(endpoint: Endpoint<'_>, ca_bundle: &[u8]) -> Vec<MutatingWebhookConfiguration> {
    let config = endpoint.client_config(
        Server::Registration,
        paths::MUTATE_MANAGED_CLUSTER,
        ca_bundle,
    );
    let hook = webhook(
        MANAGED_CLUSTER_MUTATOR,
        &config,
        "cluster.open-cluster-management.io",
        "*",
        "managedclusters",
    );
    vec![
        serde_json::from_value(configuration(
            "MutatingWebhookConfiguration",
            MANAGED_CLUSTER_MUTATOR,
            &hook,
        ))
        .expect("a valid MutatingWebhookConfiguration"),
    ]
}
