//! Fixtures for the unit tests: a ClusterManager from a YAML snippet, fresh certificates.
use ocm_api::operator::ClusterManager;

use super::certs::{self, Certs, Existing};
use super::desired::serving_specs;

/// A spec naming an image for each hub component.
pub const IMAGES: &str = "spec:
  registrationImagePullSpec: example.com/registration:v9
  workImagePullSpec: example.com/work:v9
  placementImagePullSpec: example.com/placement:v9
  addOnManagerImagePullSpec: example.com/addon-manager:v9";

/// Unix time the fixtures are issued at.
pub const NOW: i64 = 1_800_000_000;

/// A ClusterManager `cluster-manager` (generation 3) with the spec of `yaml` (`spec: {...}`).
#[must_use]
pub fn cluster_manager(yaml: &str) -> ClusterManager {
    let mut doc: serde_json::Value = ocm_api::yaml::from_str(yaml).expect("fixture YAML");
    doc["apiVersion"] = "operator.open-cluster-management.io/v1".into();
    doc["kind"] = "ClusterManager".into();
    doc["metadata"] = serde_json::json!({"name": "cluster-manager", "generation": 3});
    serde_json::from_value(doc).expect("a ClusterManager")
}

/// Certificates for a fresh hub.
#[must_use]
pub fn certs() -> Certs {
    certs::plan(&Existing::default(), &serving_specs(true), NOW).expect("certificates")
}
