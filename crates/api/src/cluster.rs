//! `cluster.open-cluster-management.io`: ManagedCluster (v1, a registered cluster as the hub sees
//! it), ManagedClusterSet and ManagedClusterSetBinding (v1beta2, grouping clusters and granting a
//! namespace access to a group). Placement and PlacementDecision (v1beta1) live in
//! `cluster/placement.rs` and are re-exported here.
use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::conditions::Condition;

mod claim;
mod placement;
mod score;
pub use claim::*;
pub use placement::*;
pub use score::*;

/// Label naming the managed cluster an object belongs to (CSRs, leases, add-on objects).
pub const CLUSTER_NAME_LABEL: &str = "open-cluster-management.io/cluster-name";
/// Label putting a ManagedCluster into a ManagedClusterSet.
pub const CLUSTER_SET_LABEL: &str = "cluster.open-cluster-management.io/clusterset";
/// Finalizer the hub puts on an accepted ManagedCluster to clean up its RBAC and namespace.
pub const CLUSTER_CLEANUP_FINALIZER: &str =
    "cluster.open-cluster-management.io/api-resource-cleanup";
/// Annotation on a ManagedCluster with the image mirrors for its add-ons' agents, as JSON
/// `{"registries": [{"source": …, "mirror": …}]}` (upstream's `ClusterImageRegistriesAnnotationKey`);
/// an AddOnDeploymentConfig's own registries take precedence.
pub const IMAGE_REGISTRIES_ANNOTATION: &str = "open-cluster-management.io/image-registries";
/// Lease the registration agent renews in the cluster namespace on the hub.
pub const CLUSTER_LEASE_NAME: &str = "managed-cluster-lease";
/// Cluster set every cluster lands in when the `DefaultClusterSet` gate is on.
pub const DEFAULT_CLUSTER_SET: &str = "default";
/// Cluster set that selects every cluster.
pub const GLOBAL_CLUSTER_SET: &str = "global";
/// Taint the hub puts on a cluster whose `ManagedClusterConditionAvailable` is False.
pub const UNAVAILABLE_TAINT: &str = "cluster.open-cluster-management.io/unavailable";
/// Taint the hub puts on a cluster whose `ManagedClusterConditionAvailable` is Unknown or missing.
pub const UNREACHABLE_TAINT: &str = "cluster.open-cluster-management.io/unreachable";

/// ManagedCluster condition: the hub admin accepted the cluster.
pub const HUB_ACCEPTED_MANAGED_CLUSTER: &str = "HubAcceptedManagedCluster";
/// ManagedCluster condition: the hub admin denied the cluster.
pub const HUB_DENIED_MANAGED_CLUSTER: &str = "HubDeniedManagedCluster";
/// ManagedCluster condition: the agent has joined with hub-signed credentials.
pub const MANAGED_CLUSTER_JOINED: &str = "ManagedClusterJoined";
/// ManagedCluster condition: the cluster's apiserver is healthy and its lease is fresh.
pub const MANAGED_CLUSTER_CONDITION_AVAILABLE: &str = "ManagedClusterConditionAvailable";
/// ManagedCluster condition: the agent's clock agrees with the hub's.
pub const MANAGED_CLUSTER_CONDITION_CLOCK_SYNCED: &str = "ManagedClusterConditionClockSynced";
/// ManagedClusterSet condition: the set selects no cluster.
pub const CLUSTER_SET_EMPTY: &str = "ClusterSetEmpty";
/// ManagedClusterSetBinding condition: the bound set exists.
pub const CLUSTER_SET_BOUND: &str = "Bound";

/// A cluster registered with the hub.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1",
    kind = "ManagedCluster"
)]
#[kube(doc = "A cluster registered with (or asking to join) the hub.")]
#[kube(
    status = "ManagedClusterStatus",
    derive = "Default",
    derive = "PartialEq",
    shortname = "mcl",
    shortname = "mcls"
)]
#[kube(
    printcolumn = r#"{"name": "Hub Accepted", "type": "boolean", "jsonPath": ".spec.hubAcceptsClient"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Managed Cluster URLs", "type": "string", "jsonPath": ".spec.managedClusterClientConfigs[*].url"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Joined", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"ManagedClusterJoined\")].status"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Available", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"ManagedClusterConditionAvailable\")].status"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterSpec {
    /// How the hub can reach this cluster's apiserver.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub managed_cluster_client_configs: Vec<ClientConfig>,
    /// Set by the hub admin to accept the cluster.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hub_accepts_client: bool,
    /// Seconds between lease renewals by the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 60))]
    pub lease_duration_seconds: Option<i32>,
    /// Taints that keep placements away unless tolerated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
}

/// An apiserver URL and the CA that signs it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientConfig {
    /// HTTPS URL.
    pub url: String,
    /// CA bundle for the URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
}

/// A taint on a managed cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// Taint key.
    #[schemars(length(max = 316), pattern(super::schema::QUALIFIED_NAME))]
    pub key: String,
    /// Taint value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub value: Option<String>,
    /// What the taint does to placements.
    pub effect: TaintEffect,
    // Nullable in the CRD, like upstream (Go writes null when unset): see `api::hub_crds`.
    /// When the taint was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::schema::time")]
    pub time_added: Option<Time>,
}

/// Effect of a cluster taint on placement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TaintEffect {
    /// Never selected unless tolerated.
    #[default]
    NoSelect,
    /// Avoided when possible.
    PreferNoSelect,
    /// Not newly selected; existing decisions stay.
    NoSelectIfNew,
}

/// Observed state of a managed cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterStatus {
    /// Current conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::conditions::schema")]
    pub conditions: Vec<Condition>,
    /// Total resources of the cluster.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "super::schema::quantities")]
    pub capacity: BTreeMap<String, Quantity>,
    /// Resources available to workloads.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "super::schema::quantities")]
    pub allocatable: BTreeMap<String, Quantity>,
    /// Software versions of the cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<ManagedClusterVersion>,
    /// Facts the agent reports about the cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_claims: Vec<ManagedClusterClaim>,
    /// Namespaces the cluster's sets ask it to create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["clusterSet", "name"]))]
    pub managed_namespaces: Vec<ClusterSetManagedNamespace>,
}

/// Software versions of a managed cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterVersion {
    /// Kubernetes version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<String>,
}

/// A reported cluster claim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterClaim {
    /// Claim name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub name: Option<String>,
    /// Claim value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub value: Option<String>,
}

/// A namespace a cluster set asks this cluster to manage, and how that went.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSetManagedNamespace {
    /// Namespace name.
    #[schemars(length(max = 63), pattern(super::schema::DNS_LABEL))]
    pub name: String,
    /// Cluster set that asked for it.
    pub cluster_set: String,
    /// Conditions of the namespace on the cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::conditions::schema")]
    pub conditions: Vec<Condition>,
}

/// A group of managed clusters.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1beta2",
    kind = "ManagedClusterSet"
)]
#[kube(doc = "A group of managed clusters, chosen by label.")]
#[kube(
    status = "ClusterSetStatus",
    derive = "Default",
    derive = "PartialEq",
    shortname = "mclset",
    shortname = "mclsets"
)]
#[kube(
    printcolumn = r#"{"name": "Empty", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"ClusterSetEmpty\")].status"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("default" = {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}))]
pub struct ManagedClusterSetSpec {
    /// Which clusters belong to the set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"selectorType": "ExclusiveClusterSetLabel"}))]
    pub cluster_selector: Option<ManagedClusterSelector>,
    /// Namespaces every member cluster should create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub managed_namespaces: Vec<ManagedNamespace>,
}

/// Membership rule of a cluster set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterSelector {
    /// Kind of rule.
    #[schemars(extend("default" = "ExclusiveClusterSetLabel"))]
    pub selector_type: SelectorType,
    /// Label selector (selector type LabelSelector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::schema::label_selector")]
    pub label_selector: Option<LabelSelector>,
}

/// Kind of cluster set membership rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SelectorType {
    /// Clusters labelled with this set's name (one set per cluster).
    #[default]
    ExclusiveClusterSetLabel,
    /// Clusters matching a label selector.
    LabelSelector,
}

/// A namespace name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedNamespace {
    /// Namespace name.
    #[schemars(length(max = 63), pattern(super::schema::DNS_LABEL))]
    pub name: String,
}

/// Observed state of a cluster set or binding.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSetStatus {
    /// Current conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::conditions::schema_atomic")]
    pub conditions: Vec<Condition>,
}

/// Grants the namespace it lives in access to a cluster set.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1beta2",
    kind = "ManagedClusterSetBinding"
)]
#[kube(doc = "Lets placements in its namespace select clusters of one cluster set.")]
#[kube(
    namespaced,
    status = "ClusterSetStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[kube(shortname = "mclsetbinding", shortname = "mclsetbindings")]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterSetBindingSpec {
    /// Name of the bound cluster set (must equal the binding's name).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1))]
    pub cluster_set: String,
}
