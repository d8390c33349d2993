//! Status of a ManifestWork as the work agent reports it: conditions of the whole work and, per
//! manifest, its identity, conditions and the status fields asked for by feedback rules.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::conditions::Condition;

/// Observed state of a ManifestWork, reported by the work agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkStatus {
    /// Conditions of the whole work.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::conditions::schema")]
    pub conditions: Vec<Condition>,
    /// Per-object status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_status: Option<ManifestResourceStatus>,
}

/// Per-object status of a work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestResourceStatus {
    /// One entry per manifest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifests: Vec<ManifestCondition>,
}

/// Status of one manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestCondition {
    /// Which manifest.
    pub resource_meta: ManifestResourceMeta,
    /// Reported status fields.
    #[serde(rename = "statusFeedback", skip_serializing_if = "Option::is_none")]
    pub status_feedback: Option<StatusFeedbackResult>,
    /// Conditions of the object.
    #[schemars(schema_with = "crate::conditions::schema")]
    pub conditions: Vec<Condition>,
}

/// Identity of a manifest within a work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestResourceMeta {
    /// Index in `spec.workload.manifests`.
    pub ordinal: i32,
    /// API group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Resource (plural).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Object name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace, if namespaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// Status fields reported for one object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusFeedbackResult {
    /// The values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub values: Vec<FeedbackValue>,
}

/// One reported value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackValue {
    /// Name from the feedback rule.
    pub name: String,
    /// The value.
    pub field_value: FieldValue,
}

/// A typed value; the field matching `type` is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldValue {
    /// Which field holds the value.
    #[serde(rename = "type")]
    pub type_: ValueType,
    /// Integer value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integer: Option<i64>,
    /// String value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub string: Option<String>,
    /// Boolean value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boolean: Option<bool>,
    /// Raw JSON value (at most 1 KiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub json_raw: Option<String>,
}

/// Type of a reported value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ValueType {
    /// `integer`.
    #[default]
    Integer,
    /// `string`.
    String,
    /// `boolean`.
    Boolean,
    /// `jsonRaw`.
    JsonRaw,
}
