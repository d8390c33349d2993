//! The admission webhook configurations: ManagedCluster validation and mutation, cluster-set
//! binding validation (registration webhook) and ManifestWork validation (work webhook). All fail
//! closed, as upstream; their `caBundle` is the operator's CA bundle.
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use serde_json::{Value, json};

use super::Component;
use crate::api::names::HUB_NAMESPACE;

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

/// One webhook entry: `name`, served by `component` at `path`, for `resources` of `group`.
#[allow(clippy::too_many_arguments)]
fn webhook(
    name: &str,
    component: Component,
    port: i32,
    path: &str,
    group: &str,
    versions: &str,
    resource: &str,
    ca_bundle: &[u8],
) -> Value {
    json!({
        "name": name,
        "failurePolicy": "Fail",
        "clientConfig": {
            "service": {"namespace": HUB_NAMESPACE, "name": component.deployment(), "path": path, "port": port},
            "caBundle": ByteString(ca_bundle.to_vec()),
        },
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

/// The validating configurations, given the webhook ports and the CA bundle.
#[must_use]
pub fn validating(
    registration_port: i32,
    work_port: i32,
    ca_bundle: &[u8],
) -> Vec<ValidatingWebhookConfiguration> {
    let cluster = "cluster.open-cluster-management.io";
    [
        (
            MANAGED_CLUSTER_VALIDATOR,
            Component::RegistrationWebhook,
            registration_port,
            "/validate-cluster-open-cluster-management-io-v1-managedcluster",
            cluster,
            "*",
            "managedclusters",
        ),
        (
            CLUSTER_SET_BINDING_VALIDATOR,
            Component::RegistrationWebhook,
            registration_port,
            "/validate-cluster-open-cluster-management-io-v1beta2-managedclustersetbinding",
            cluster,
            "v1beta2",
            "managedclustersetbindings",
        ),
        (
            MANIFEST_WORK_VALIDATOR,
            Component::WorkWebhook,
            work_port,
            "/validate-work-open-cluster-management-io-v1-manifestwork",
            "work.open-cluster-management.io",
            "*",
            "manifestworks",
        ),
    ]
    .into_iter()
    .map(|(name, c, port, path, group, versions, resource)| {
        let hook = webhook(name, c, port, path, group, versions, resource, ca_bundle);
        serde_json::from_value(configuration("ValidatingWebhookConfiguration", name, &hook))
            .expect("a valid ValidatingWebhookConfiguration")
    })
    .collect()
}

/// The mutating configuration (ManagedCluster defaults).
#[must_use]
pub fn mutating(registration_port: i32, ca_bundle: &[u8]) -> Vec<MutatingWebhookConfiguration> {
    let hook = webhook(
        MANAGED_CLUSTER_MUTATOR,
        Component::RegistrationWebhook,
        registration_port,
        "/mutate-cluster-open-cluster-management-io-v1-managedcluster",
        "cluster.open-cluster-management.io",
        "*",
        "managedclusters",
        ca_bundle,
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
