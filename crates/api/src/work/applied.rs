//! The AppliedManifestWork kind: kept on the managed cluster by the work agent, one per
//! ManifestWork of one hub, listing what was applied so it can be removed later.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the work agent applied for one ManifestWork of one hub.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "work.open-cluster-management.io",
    version = "v1",
    kind = "AppliedManifestWork"
)]
#[kube(
    doc = "The objects the work agent applied for one ManifestWork, kept on the managed cluster."
)]
#[kube(
    status = "AppliedManifestWorkStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct AppliedManifestWorkSpec {
    /// Hash of the hub apiserver URL.
    pub hub_hash: String,
    /// Id of the agent that applied it.
    #[serde(rename = "agentID", skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Name of the ManifestWork on the hub.
    pub manifest_work_name: String,
}

/// Objects applied for a ManifestWork.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedManifestWorkStatus {
    /// The applied objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_resources: Vec<AppliedManifestResourceMeta>,
    /// When eviction of this (orphaned) record started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::time")]
    pub eviction_start_time: Option<Time>,
}

/// One applied object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedManifestResourceMeta {
    /// API group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version.
    pub version: String,
    /// Resource (plural).
    pub resource: String,
    /// Namespace, if namespaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
    /// Object UID, to tell a recreated object apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}
