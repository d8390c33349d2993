//! Placement (which clusters a workload should go to) and PlacementDecision (the clusters the
//! placement controller chose), `cluster.open-cluster-management.io/v1beta1`.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::TaintEffect;
use crate::conditions::Condition;

/// Label on a PlacementDecision naming its Placement.
pub const PLACEMENT_LABEL: &str = "cluster.open-cluster-management.io/placement";
/// Label on a PlacementDecision carrying its decision group index.
pub const DECISION_GROUP_INDEX_LABEL: &str =
    "cluster.open-cluster-management.io/decision-group-index";
/// Label on a PlacementDecision carrying its decision group name.
pub const DECISION_GROUP_NAME_LABEL: &str =
    "cluster.open-cluster-management.io/decision-group-name";
/// Placement condition: enough clusters were selected.
pub const PLACEMENT_SATISFIED: &str = "PlacementSatisfied";
/// Placement condition: the spec cannot be acted on.
pub const PLACEMENT_MISCONFIGURED: &str = "PlacementMisconfigured";

/// Rules choosing managed clusters from the cluster sets bound to the namespace.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1beta1",
    kind = "Placement"
)]
#[kube(doc = "Rules that choose managed clusters; results go to PlacementDecisions.")]
#[kube(
    namespaced,
    status = "PlacementStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[kube(
    printcolumn = r#"{"name": "Succeeded", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"PlacementSatisfied\")].status"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Reason", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"PlacementSatisfied\")].reason"}"#
)]
#[kube(
    printcolumn = r#"{"name": "SelectedClusters", "type": "integer", "jsonPath": ".status.numberOfSelectedClusters"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct PlacementSpec {
    /// Cluster sets to choose from (all bound sets when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_sets: Vec<String>,
    /// How many clusters to choose (all matching when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_of_clusters: Option<i32>,
    /// Cluster filters, OR-ed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub predicates: Vec<ClusterPredicate>,
    /// How clusters are scored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prioritizer_policy: Option<PrioritizerPolicy>,
    /// How chosen clusters spread over topologies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread_policy: Option<SpreadPolicy>,
    /// Cluster taints this placement tolerates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// How decisions are split into groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_strategy: Option<DecisionStrategy>,
    /// Order of clusters in the decisions.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "ClusterName"))]
    pub sort_by: Option<SortBy>,
    /// Least time between re-scorings (e.g. `1m`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "1m"), pattern(r"^[0-9]+[hms]$"))]
    pub score_rate_limit: Option<String>,
}

/// One cluster filter.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPredicate {
    /// Selector a cluster must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_cluster_selector: Option<ClusterSelector>,
}

/// Label, claim and CEL conditions on a cluster, AND-ed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSelector {
    /// Cluster labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::label_selector")]
    pub label_selector: Option<LabelSelector>,
    /// Cluster claims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_selector: Option<ClusterClaimSelector>,
    /// CEL expressions over the ManagedCluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cel_selector: Option<ClusterCelSelector>,
}

/// Requirements on cluster claims.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClaimSelector {
    /// Requirements, AND-ed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::schema::selector_requirements")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// CEL expressions over a cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterCelSelector {
    /// Expressions, AND-ed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cel_expressions: Vec<String>,
}

/// Scoring of candidate clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrioritizerPolicy {
    /// `Additive` (defaults plus these) or `Exact` (only these).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Additive"))]
    pub mode: Option<String>,
    /// Weighted prioritizers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configurations: Vec<PrioritizerConfig>,
}

/// One weighted prioritizer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrioritizerConfig {
    /// Where the score comes from.
    pub score_coordinate: ScoreCoordinate,
    /// Weight, -10 to 10.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1, "minimum" = -10, "maximum" = 10))]
    pub weight: Option<i32>,
}

/// Source of a score.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScoreCoordinate {
    /// Built-in prioritizer or add-on score.
    #[serde(rename = "type")]
    #[schemars(extend("default" = "BuiltIn"))]
    pub type_: ScoreCoordinateType,
    /// Built-in prioritizer name (e.g. `Balance`, `Steady`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built_in: Option<String>,
    /// Add-on score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on: Option<AddOnScore>,
}

/// Kind of score source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ScoreCoordinateType {
    /// A prioritizer of the placement controller.
    #[default]
    BuiltIn,
    /// An AddOnPlacementScore.
    AddOn,
}

/// A score published by an add-on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnScore {
    /// AddOnPlacementScore name.
    pub resource_name: String,
    /// Score within it.
    pub score_name: String,
}

/// Spread of chosen clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpreadPolicy {
    /// Constraints, at most 8.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    pub spread_constraints: Vec<SpreadConstraint>,
}

/// One spread constraint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpreadConstraint {
    /// Label or claim name defining the topology.
    #[schemars(
        length(max = 316),
        pattern(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
    )]
    pub topology_key: String,
    /// Whether the key is a label or a claim.
    pub topology_key_type: TopologyKeyType,
    /// Largest allowed imbalance.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1, "minimum" = 1))]
    pub max_skew: Option<i32>,
    /// What to do when the constraint cannot hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "ScheduleAnyway"))]
    pub when_unsatisfiable: Option<WhenUnsatisfiable>,
}

/// Kind of topology key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TopologyKeyType {
    /// A cluster label.
    #[default]
    Label,
    /// A cluster claim.
    Claim,
}

/// Reaction to an unsatisfiable spread constraint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum WhenUnsatisfiable {
    /// Choose fewer clusters.
    DoNotSchedule,
    /// Choose anyway, minimising skew.
    #[default]
    ScheduleAnyway,
}

/// Sort order of decisions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SortBy {
    /// By cluster name.
    #[default]
    ClusterName,
    /// By score, best first.
    Score,
}

/// A tolerated cluster taint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    /// Taint key (all keys when empty with `Exists`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 316), pattern(crate::schema::QUALIFIED_NAME))]
    pub key: Option<String>,
    /// `Equal` or `Exists`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Equal"))]
    pub operator: Option<String>,
    /// Taint value to match.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub value: Option<String>,
    /// Taint effect to match (all when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,
    /// How long the taint is tolerated after it appears.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// Splitting of decisions into groups.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionStrategy {
    /// Group rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_strategy: Option<GroupStrategy>,
}

/// Group rules of decisions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupStrategy {
    /// Named groups, filled first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decision_groups: Vec<DecisionGroup>,
    /// Size of the remaining groups: a count or a percentage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        schema_with = "crate::schema::int_or_string",
        extend("default" = "100%", "pattern" = r"^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$")
    )]
    pub clusters_per_decision_group: Option<IntOrString>,
}

/// A named decision group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionGroup {
    /// Group name.
    #[schemars(pattern(r"^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$"))]
    pub group_name: String,
    /// Clusters in the group.
    pub group_cluster_selector: GroupClusterSelector,
}

/// Label and claim conditions on a cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupClusterSelector {
    /// Cluster labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::label_selector")]
    pub label_selector: Option<LabelSelector>,
    /// Cluster claims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_selector: Option<ClusterClaimSelector>,
}

/// Observed state of a placement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementStatus {
    /// How many clusters are selected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_of_selected_clusters: Option<i32>,
    /// The decision groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decision_groups: Vec<DecisionGroupStatus>,
    /// Current conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::conditions::schema")]
    pub conditions: Vec<Condition>,
    /// When scores were last refreshed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::time")]
    pub last_score_update_time: Option<Time>,
}

/// One decision group and its PlacementDecisions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionGroupStatus {
    /// Group index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_group_index: Option<i32>,
    /// Group name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_group_name: Option<String>,
    /// PlacementDecision names of the group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<String>,
    /// Clusters in the group.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 0))]
    pub cluster_count: Option<i32>,
}

/// A page of clusters chosen by a placement (it has no spec: everything is status).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1beta1",
    kind = "PlacementDecision"
)]
#[kube(doc = "Clusters chosen by a Placement, written by the placement controller.")]
#[kube(
    namespaced,
    no_spec,
    status = "PlacementDecisionStatus",
    derive = "Default",
    derive = "PartialEq"
)]
pub struct PlacementDecisionSpec {}

/// The chosen clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementDecisionStatus {
    /// Chosen clusters.
    pub decisions: Vec<ClusterDecision>,
}

/// One chosen cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterDecision {
    /// ManagedCluster name.
    pub cluster_name: String,
    /// Why it was chosen.
    pub reason: String,
    /// Its score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
}
