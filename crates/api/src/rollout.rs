//! Rollout strategies (`cluster.open-cluster-management.io/v1alpha1` in upstream's API): how a
//! change to an add-on's configuration or a ManifestWorkReplicaSet's template reaches the clusters
//! a placement decided — all at once, some at a time, or one decision group at a time.
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a change rolls out over the clusters a placement decided.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStrategy {
    /// Rollout kind.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "All"))]
    pub type_: Option<RolloutType>,
    /// Settings for type All.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all: Option<RolloutConfig>,
    /// Settings for type Progressive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progressive: Option<RolloutProgressive>,
    /// Settings for type ProgressivePerGroup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progressive_per_group: Option<RolloutProgressivePerGroup>,
}

/// Kind of rollout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RolloutType {
    /// Everywhere at once.
    #[default]
    All,
    /// A few clusters at a time.
    Progressive,
    /// One decision group at a time.
    ProgressivePerGroup,
}

/// Timing and failure budget of a rollout.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutConfig {
    /// How long a cluster must stay healthy to count as done (e.g. `5m`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "0"))]
    pub min_success_time: Option<String>,
    /// How long a cluster may take before it counts as failed (`None`: forever).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "None"), pattern(crate::schema::DEADLINE))]
    pub progress_deadline: Option<String>,
    /// Failures tolerated: a count or a percentage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        schema_with = "crate::schema::int_or_string",
        extend("default" = 0, "pattern" = crate::schema::COUNT_OR_PERCENT)
    )]
    pub max_failures: Option<IntOrString>,
}

/// Progressive rollout settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutProgressive {
    /// Timing and failure budget.
    #[serde(flatten)]
    pub config: RolloutConfig,
    /// Groups that must succeed first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mandatory_decision_groups: Vec<MandatoryDecisionGroup>,
    /// Clusters updated at once: a count or a percentage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::int_or_string", extend("pattern" = crate::schema::COUNT_OR_PERCENT))]
    pub max_concurrency: Option<IntOrString>,
}

/// Per-group rollout settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutProgressivePerGroup {
    /// Timing and failure budget.
    #[serde(flatten)]
    pub config: RolloutConfig,
    /// Groups that must succeed first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mandatory_decision_groups: Vec<MandatoryDecisionGroup>,
}

/// A decision group by name or index.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MandatoryDecisionGroup {
    /// Group name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_name: Option<String>,
    /// Group index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_index: Option<i32>,
}
