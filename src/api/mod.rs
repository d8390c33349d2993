//! Rust types of the OCM APIs. The CRDs this tool installs are generated from them.
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Every CRD this tool generates, in install order.
#[must_use]
pub fn all_crds() -> Vec<CustomResourceDefinition> {
    Vec::new()
}
