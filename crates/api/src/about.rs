//! ClusterProperty (`about.k8s.io/v1alpha1`, SIG-Multicluster's About API, KEP-2149): a named fact
//! about a cluster, stated on the cluster itself. With the klusterlet's `ClusterProperty` gate on,
//! the Klusterlet operator installs the CRD and the registration agent reports the properties in
//! the ManagedCluster's `status.clusterClaims` beside the ClusterClaims (a property wins over a
//! claim of the same name), as upstream's agent does.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The CRD's name.
pub const CRD_NAME: &str = "clusterproperties.about.k8s.io";
/// The API review that approved the group (a CRD in a `k8s.io` group must name it).
pub const API_APPROVAL: &str = "https://github.com/kubernetes/enhancements/pull/3084";

/// A fact about the cluster, named by the object's name.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "about.k8s.io",
    version = "v1alpha1",
    kind = "ClusterProperty",
    status = "ClusterPropertyStatus",
    printcolumn = r#"{"name": "value", "type": "string", "jsonPath": ".spec.value"}"#,
    printcolumn = r#"{"name": "age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[kube(doc = "A fact about the cluster.")]
pub struct ClusterPropertySpec {
    /// The value.
    #[schemars(length(min = 1))]
    pub value: String,
}

/// Nothing is reported on a property yet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClusterPropertyStatus {}
