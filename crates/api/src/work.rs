//! `work.open-cluster-management.io/v1`: ManifestWork (on the hub, in a cluster's namespace: the
//! objects to apply on that cluster) and AppliedManifestWork (on the managed cluster: what the work
//! agent applied, so it can clean up). This file holds the ManifestWork spec; its status is in
//! `work/status.rs` and AppliedManifestWork in `work/applied.rs`, both re-exported here.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod applied;
pub mod identifier;
mod replicaset;
mod status;
pub use applied::*;
pub use replicaset::*;
pub use status::*;

/// Finalizer the work agent puts on a ManifestWork until its resources are removed.
pub const MANIFEST_WORK_FINALIZER: &str =
    "cluster.open-cluster-management.io/manifest-work-cleanup";
/// Finalizer the work agent puts on an AppliedManifestWork until its resources are removed.
pub const APPLIED_MANIFEST_WORK_FINALIZER: &str =
    "cluster.open-cluster-management.io/applied-manifest-work-cleanup";
/// Field manager the work agent uses for server-side apply.
pub const WORK_AGENT_FIELD_MANAGER: &str = "work-agent";
/// ManifestWork condition: every manifest has run to completion (the completion rules set it,
/// `CleanUpCompletedManifestWork` reads it).
pub const COMPLETE: &str = "Complete";
/// The most manifest bytes a ManifestWork may hold (upstream's webhook limit).
pub const MAX_MANIFESTS_BYTES: usize = 500 * 1024;
/// ManifestWork condition: the work is being deleted.
pub const DELETING: &str = "Deleting";
/// Per-manifest condition: status feedback was collected.
pub const STATUS_FEEDBACK_SYNCED: &str = "StatusFeedbackSynced";

/// Objects to apply on the managed cluster whose namespace holds this ManifestWork.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "work.open-cluster-management.io",
    version = "v1",
    kind = "ManifestWork"
)]
#[kube(doc = "Objects the work agent applies on the cluster named by this object's namespace.")]
#[kube(
    namespaced,
    status = "ManifestWorkStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkSpec {
    /// The objects.
    #[serde(default, skip_serializing_if = "ManifestsTemplate::is_empty")]
    pub workload: ManifestsTemplate,
    /// What happens to the objects when the work is deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete_option: Option<DeleteOption>,
    /// Per-object apply, feedback and condition settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifest_configs: Vec<ManifestConfigOption>,
    /// Identity the agent applies as.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executor: Option<ManifestWorkExecutor>,
}

/// A list of whole Kubernetes objects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestsTemplate {
    /// The objects, each with apiVersion, kind and metadata.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::schema::embedded_objects")]
    pub manifests: Vec<serde_json::Value>,
}

impl ManifestsTemplate {
    /// Whether there are no manifests.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.manifests.is_empty()
    }
}

/// Deletion behaviour of a ManifestWork.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteOption {
    /// Whether applied objects are deleted or left behind.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Foreground"))]
    pub propagation_policy: Option<PropagationPolicy>,
    /// Objects left behind (policy SelectivelyOrphan).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selectively_orphans: Option<SelectivelyOrphan>,
    /// Delete the work this long after it completes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i64>,
}

/// What deleting a ManifestWork does to its objects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PropagationPolicy {
    /// Delete them and wait.
    #[default]
    Foreground,
    /// Leave them all.
    Orphan,
    /// Leave the listed ones.
    SelectivelyOrphan,
}

/// Objects left behind on deletion.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelectivelyOrphan {
    /// The objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orphaning_rules: Vec<ResourceIdentifier>,
}

/// Identifies one applied object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceIdentifier {
    /// API group (empty for core).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Resource (plural).
    pub resource: String,
    /// Object name.
    pub name: String,
    /// Namespace, if namespaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// Settings for one object of the work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestConfigOption {
    /// The object.
    pub resource_identifier: ResourceIdentifier,
    /// Status fields reported back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feedback_rules: Vec<FeedbackRule>,
    /// How the object is applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<UpdateStrategy>,
    /// Extra conditions computed for the object.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["condition"]))]
    pub condition_rules: Vec<ConditionRule>,
    /// Whether feedback is polled or watched.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Poll"))]
    pub feedback_scrape_type: Option<FeedbackScrapeType>,
}

/// A set of status fields to report back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackRule {
    /// Well-known fields or JSON paths.
    #[serde(rename = "type")]
    pub type_: FeedbackType,
    /// The JSON paths (type JSONPaths).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub json_paths: Vec<JsonPath>,
}

/// Kind of feedback rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FeedbackType {
    /// The agent's built-in fields for common kinds.
    #[default]
    WellKnownStatus,
    /// The given JSON paths.
    #[serde(rename = "JSONPaths")]
    JsonPaths,
}

/// A named JSON path into the object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JsonPath {
    /// Name of the reported value.
    pub name: String,
    /// API version to read the object at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The path.
    pub path: String,
}

/// How feedback is collected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FeedbackScrapeType {
    /// Periodically.
    #[default]
    Poll,
    /// On every change.
    Watch,
}

/// How one object is applied.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStrategy {
    /// Apply mode.
    #[serde(rename = "type")]
    #[schemars(extend("default" = "Update"))]
    pub type_: UpdateStrategyType,
    /// Server-side apply settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_side_apply: Option<ServerSideApplyConfig>,
}

/// Apply mode of an object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum UpdateStrategyType {
    /// Create, then update to match.
    #[default]
    Update,
    /// Create once, never update.
    CreateOnly,
    /// Server-side apply.
    ServerSideApply,
    /// Never write, only report status.
    ReadOnly,
}

/// Server-side apply settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerSideApplyConfig {
    /// Take over conflicting fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
    /// Field manager (must start with `work-agent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "work-agent", "pattern" = "^work-agent"))]
    pub field_manager: Option<String>,
    /// Fields the agent leaves alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["condition"]))]
    pub ignore_fields: Vec<IgnoreField>,
}

/// Fields ignored under a condition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IgnoreField {
    /// When the fields are ignored.
    #[schemars(extend("default" = "OnSpokePresent"))]
    pub condition: IgnoreFieldCondition,
    /// Fields as JSON paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json_paths: Vec<String>,
    /// Fields as jq path expressions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jq_path_expressions: Vec<String>,
    /// Fields as JSON pointers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json_pointers: Vec<String>,
}

/// When ignored fields are ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum IgnoreFieldCondition {
    /// Whenever the object exists on the cluster.
    #[default]
    OnSpokePresent,
    /// Only when changed on the cluster.
    OnSpokeChange,
}

/// A condition computed for an object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"rule": "self.type != 'CEL' || self.condition != \"\"", "message": "a CEL rule needs a condition name"}]))]
pub struct ConditionRule {
    /// Condition type to set.
    pub condition: String,
    /// How the condition is computed.
    #[serde(rename = "type")]
    pub type_: ConditionRuleType,
    /// CEL expressions, AND-ed (type CEL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cel_expressions: Vec<String>,
    /// Fixed message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// CEL expression producing the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_expression: Option<String>,
}

/// How a condition rule is evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ConditionRuleType {
    /// The agent's built-in logic for common kinds.
    #[default]
    WellKnownConditions,
    /// CEL expressions.
    #[serde(rename = "CEL")]
    Cel,
}

/// Identity the work agent applies as.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkExecutor {
    /// The identity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<ManifestWorkExecutorSubject>,
}

/// An executor identity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkExecutorSubject {
    /// Kind of identity.
    #[serde(rename = "type")]
    pub type_: ExecutorSubjectType,
    /// The service account (type ServiceAccount).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account: Option<ServiceAccountSubject>,
}

/// Kind of executor identity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ExecutorSubjectType {
    /// A service account on the managed cluster.
    #[default]
    ServiceAccount,
}

/// A service account on the managed cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountSubject {
    /// Namespace.
    #[schemars(length(min = 1, max = 253), pattern(super::schema::DNS_SUBDOMAIN))]
    pub namespace: String,
    /// Name.
    #[schemars(length(min = 1, max = 253), pattern(super::schema::DNS_SUBDOMAIN))]
    pub name: String,
}
