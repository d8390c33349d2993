//! ClusterClaim (cluster.open-cluster-management.io/v1alpha1): a fact a managed cluster states
//! about itself (for example `id.k8s.io`); installed on managed clusters by the klusterlet.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A fact about the managed cluster, named by the object's name.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1alpha1",
    kind = "ClusterClaim"
)]
#[kube(doc = "A fact a managed cluster states about itself.")]
#[serde(rename_all = "camelCase")]
pub struct ClusterClaimSpec {
    /// The claimed value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub value: Option<String>,
}
