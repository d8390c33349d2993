//! AddOnPlacementScore (cluster.open-cluster-management.io/v1alpha1): scores an add-on publishes
//! for one managed cluster, in that cluster's namespace on the hub, for placement prioritizers of
//! type `AddOn`. Upstream's kind has no spec: its status sits on the root.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::conditions::Condition;

/// Scores of one managed cluster, published by an add-on.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1alpha1",
    kind = "AddOnPlacementScore"
)]
#[kube(doc = "Scores an add-on publishes for the cluster whose namespace holds this object.")]
#[kube(namespaced, no_spec, status = "AddOnPlacementScoreStatus")]
pub struct AddOnPlacementScoreFields {}

/// The scores and how long they hold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnPlacementScoreStatus {
    /// State of the scores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::conditions::schema")]
    pub conditions: Vec<Condition>,
    /// Named scores, -100 to 100.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub scores: Vec<AddOnPlacementScoreItem>,
    /// After this the scores are not used (never, when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<Time>,
}

/// One named score.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnPlacementScoreItem {
    /// Score name.
    pub name: String,
    /// Score, -100 to 100.
    #[schemars(range(min = -100, max = 100))]
    pub value: i32,
}
