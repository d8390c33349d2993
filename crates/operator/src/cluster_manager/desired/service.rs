//! The Services the apiserver calls the admission webhooks through.
use k8s_openapi::api::core::v1::Service;
use serde_json::json;

use super::Component;
use ocm_api::names::HUB_NAMESPACE;

/// The Service of webhook component `c`, listening on `port`.
#[must_use]
pub fn service(c: Component, port: i32) -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": c.deployment(), "namespace": HUB_NAMESPACE},
        "spec": {
            "selector": {"app": c.pod_label()},
            "ports": [{"name": "webhook", "port": port, "targetPort": port}],
        },
    }))
    .expect("a valid Service")
}
