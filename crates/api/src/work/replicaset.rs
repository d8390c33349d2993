//! ManifestWorkReplicaSet (`work.open-cluster-management.io/v1alpha1`): one ManifestWork template
//! kept on every cluster that the referenced placements decide, rolled out by each placement's
//! strategy. The hub work controller (`hub::replicaset`) does the keeping.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ManifestWorkSpec;
use crate::conditions::Condition;
use crate::rollout::RolloutStrategy;

/// Label on each ManifestWork of a replica set: `<namespace>.<name>` of the set.
pub const REPLICA_SET_LABEL: &str = "work.open-cluster-management.io/manifestworkreplicaset";
/// Label on each ManifestWork of a replica set: the placement that chose its cluster.
pub const REPLICA_SET_PLACEMENT_LABEL: &str = "work.open-cluster-management.io/placementname";
/// Finalizer on a replica set until its ManifestWorks are deleted.
pub const REPLICA_SET_FINALIZER: &str = "work.open-cluster-management.io/manifest-work-cleanup";
/// Replica set condition: every referenced placement exists.
pub const PLACEMENT_VERIFIED: &str = "PlacementVerified";
/// Replica set condition: the rollout of every placement has finished.
pub const PLACEMENT_ROLLED_OUT: &str = "PlacementRolledOut";
/// Replica set condition: every ManifestWork is applied.
pub const MANIFEST_WORK_APPLIED: &str = "ManifestworkApplied";

/// A ManifestWork template and the placements whose clusters get it.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "work.open-cluster-management.io",
    version = "v1alpha1",
    kind = "ManifestWorkReplicaSet",
    shortname = "mwrs"
)]
#[kube(doc = "A ManifestWork template kept on every cluster its placements decide.")]
#[kube(
    namespaced,
    status = "ManifestWorkReplicaSetStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[kube(
    printcolumn = r#"{"name": "Placement", "type": "string", "description": "Reason", "jsonPath": ".status.conditions[?(@.type==\"PlacementVerified\")].reason"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Found", "type": "string", "description": "Configured", "jsonPath": ".status.conditions[?(@.type==\"PlacementVerified\")].status"}"#
)]
#[kube(
    printcolumn = r#"{"name": "ManifestWorks", "type": "string", "description": "Reason", "jsonPath": ".status.conditions[?(@.type==\"ManifestworkApplied\")].reason"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Applied", "type": "string", "description": "Applied", "jsonPath": ".status.conditions[?(@.type==\"ManifestworkApplied\")].status"}"#
)]
#[serde(rename_all = "camelCase")]
// Required as upstream's (the API server defaults it), yet read leniently here.
#[schemars(transform = |s: &mut schemars::Schema| crate::schema::require(s, "cascadeDeletionPolicy"))]
pub struct ManifestWorkReplicaSetSpec {
    /// The ManifestWork each decided cluster gets.
    #[serde(default)]
    #[schemars(transform = crate::schema::no_default)]
    pub manifest_work_template: ManifestWorkSpec,
    /// Placements choosing the clusters, each with its rollout strategy.
    #[schemars(length(min = 1))]
    pub placement_refs: Vec<LocalPlacementReference>,
    /// How the ManifestWorks are deleted with the replica set.
    #[serde(default)]
    pub cascade_deletion_policy: CascadeDeletionPolicy,
}

/// A placement in the replica set's namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalPlacementReference {
    /// Placement name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// How template changes reach its clusters.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"type": "All", "all": {"progressDeadline": "None"}}))]
    pub rollout_strategy: Option<RolloutStrategy>,
}

/// Deletion of a replica set's ManifestWorks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CascadeDeletionPolicy {
    /// The set goes at once; its works are deleted after.
    #[default]
    Background,
    /// The set stays until its works are gone.
    Foreground,
}

/// Observed state of a replica set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkReplicaSetStatus {
    /// PlacementVerified, PlacementRolledOut, ManifestworkApplied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::conditions::schema")]
    pub conditions: Vec<Condition>,
    /// Per placement: its rollout and its works.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement_summary: Vec<PlacementSummary>,
    /// Over all placements.
    #[serde(default)]
    #[schemars(transform = crate::schema::no_default)]
    pub summary: ManifestWorkReplicaSetSummary,
}

/// One placement's part of a replica set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
#[schemars(transform = crate::schema::no_property_defaults)]
pub struct PlacementSummary {
    /// Placement name.
    pub name: String,
    /// Decision groups rolled out so far, e.g. `2 (4 / 10 clusters applied)`.
    pub available_decision_groups: String,
    /// Its works.
    pub summary: ManifestWorkReplicaSetSummary,
}

/// Counts of ManifestWorks by condition.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
#[schemars(transform = crate::schema::no_property_defaults)]
pub struct ManifestWorkReplicaSetSummary {
    /// Works that exist.
    #[schemars(schema_with = "crate::schema::count")]
    pub total: i64,
    /// Works wanted: in the API, but OCM v1.3.1's controller never sets it, so neither does ours
    /// (always 0).
    #[schemars(schema_with = "crate::schema::count")]
    pub desired_total: i64,
    /// Works Applied.
    #[schemars(schema_with = "crate::schema::count")]
    pub applied: i64,
    /// Works Available.
    #[schemars(schema_with = "crate::schema::count")]
    pub available: i64,
    /// Works Degraded.
    #[schemars(schema_with = "crate::schema::count")]
    pub degraded: i64,
    /// Works Progressing.
    #[schemars(schema_with = "crate::schema::count")]
    pub progressing: i64,
    /// Works carrying the current template: as `desiredTotal`, never set (always 0).
    #[schemars(schema_with = "crate::schema::count")]
    pub updated: i64,
}
