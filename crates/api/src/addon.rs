//! `addon.open-cluster-management.io/v1alpha1`: ClusterManagementAddOn (an add-on known to the hub
//! and where to install it) and ManagedClusterAddOn (the add-on on one cluster, in its namespace;
//! in `addon/managed.rs`, re-exported here).
use super::rollout::RolloutStrategy;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::conditions::Condition;

mod deployment_config;
pub mod hosted;
mod managed;
mod template;
pub use deployment_config::*;
pub mod token;
pub mod v1beta1;
pub use managed::*;
pub use template::*;

/// Where an add-on's agent is installed on the managed cluster unless its ManagedClusterAddOn
/// says otherwise (upstream's default).
pub const DEFAULT_INSTALL_NAMESPACE: &str = "open-cluster-management-agent-addon";
/// Label naming the add-on an object belongs to (add-on CSRs, leases).
pub const ADDON_NAME_LABEL: &str = "open-cluster-management.io/addon-name";
/// Label on objects the add-on manager makes from an AddOnTemplate (its hub role bindings).
pub const ADDON_TEMPLATE_LABEL: &str = "open-cluster-management.io/addon-template-name";
/// ClusterManagementAddOn annotation: who installs the add-on (`addon-manager`, the default, or
/// `self`, an add-on with its own manager).
pub const LIFECYCLE_ANNOTATION: &str = "addon.open-cluster-management.io/lifecycle";
/// [`LIFECYCLE_ANNOTATION`] value: the hub's add-on manager installs it.
pub const LIFECYCLE_ADDON_MANAGER: &str = "addon-manager";
/// ManagedClusterAddOn condition: a rollout of the agent is under way.
pub const PROGRESSING: &str = "Progressing";
/// ManagedClusterAddOn condition: the add-on's configs are resolved.
pub const CONFIGURED: &str = "Configured";
/// ManagedClusterAddOn condition: the agent manifests were applied.
pub const MANIFEST_APPLIED: &str = "ManifestApplied";
/// ManagedClusterAddOn condition: the agent's hub credentials are set up.
pub const REGISTRATION_APPLIED: &str = "RegistrationApplied";
/// ManagedClusterAddOn condition: the pre-delete hook ran to completion.
pub const HOOK_MANIFEST_COMPLETED: &str = "HookManifestCompleted";
/// Annotation (or label) marking a Job or Pod of an add-on's manifests as its pre-delete hook: run
/// when the add-on is removed from a cluster, before the rest goes.
pub const PRE_DELETE_HOOK_KEY: &str = "addon.open-cluster-management.io/addon-pre-delete";
/// Finalizer that holds a ManagedClusterAddOn with a pre-delete hook until the hook completed.
pub const PRE_DELETE_HOOK_FINALIZER: &str = "addon.open-cluster-management.io/addon-pre-delete";
/// The finalizer older releases used for the same ([`PRE_DELETE_HOOK_FINALIZER`] replaces it).
pub const DEPRECATED_PRE_DELETE_HOOK_FINALIZER: &str =
    "cluster.open-cluster-management.io/addon-pre-delete";

/// ManagedClusterAddOn annotation: the managed cluster (by its name on the hub) whose node runs
/// the add-on's agent, which acts on its own cluster from there (Hosted mode).
pub const HOSTING_CLUSTER_ANNOTATION: &str =
    "addon.open-cluster-management.io/hosting-cluster-name";
/// Annotation (or label) on an add-on manifest: in Hosted mode, whether it goes to the `managed`
/// cluster (the default), the `hosting` cluster or `none`.
pub const HOSTED_MANIFEST_LOCATION_KEY: &str =
    "addon.open-cluster-management.io/hosted-manifest-location";
/// Label on a hosting cluster's deploy work naming the cluster whose add-on it deploys.
pub const ADDON_NAMESPACE_LABEL: &str = "addon.open-cluster-management.io/namespace";
/// Finalizer that holds a hosted add-on until its work on the hosting cluster is removed.
pub const HOSTING_MANIFEST_FINALIZER: &str =
    "addon.open-cluster-management.io/hosting-manifests-cleanup";
/// ManagedClusterAddOn condition: the hosting cluster is a managed cluster of the hub.
pub const HOSTING_CLUSTER_VALIDITY: &str = "HostingClusterValidity";
/// ManagedClusterAddOn condition: the manifests for the hosting cluster were applied.
pub const HOSTING_MANIFEST_APPLIED: &str = "HostingManifestApplied";

/// An add-on the hub manages.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1alpha1",
    kind = "ClusterManagementAddOn"
)]
#[kube(doc = "An add-on registered on the hub: its configs and where it is installed.")]
#[kube(
    status = "ClusterManagementAddOnStatus",
    derive = "Default",
    derive = "PartialEq",
    shortname = "cma",
    shortname = "cmas"
)]
#[kube(
    printcolumn = r#"{"name": "DISPLAY NAME", "type": "string", "jsonPath": ".spec.addOnMeta.displayName"}"#
)]
#[kube(
    printcolumn = r#"{"name": "CRD NAME", "type": "string", "jsonPath": ".spec.addOnConfiguration.crdName"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterManagementAddOnSpec {
    /// Display name and description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on_meta: Option<AddOnMeta>,
    /// Legacy single config CRD (deprecated upstream).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on_configuration: Option<ConfigCoordinates>,
    /// Config kinds the add-on accepts, with defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["group", "resource"]))]
    pub supported_configs: Vec<ConfigMeta>,
    /// Where the hub installs the add-on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"type": "Manual"}))]
    pub install_strategy: Option<InstallStrategy>,
}

/// Human-facing add-on info.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnMeta {
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A config CRD and object (legacy).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigCoordinates {
    /// CRD name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crd_name: Option<String>,
    /// Object name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cr_name: Option<String>,
    /// Generation of the object last seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_observed_generation: Option<i64>,
}

/// A config kind and its default object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMeta {
    /// API group (empty for core).
    #[serde(default)]
    pub group: String,
    /// Resource (plural).
    #[schemars(length(min = 1))]
    pub resource: String,
    /// Object used when a cluster names none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_config: Option<ConfigReferent>,
}

/// Namespace and name of a config object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReferent {
    /// Namespace (empty when cluster-scoped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    #[schemars(length(min = 1))]
    pub name: String,
}

/// A config object by group, resource, namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnConfig {
    /// API group (empty for core).
    #[serde(default)]
    pub group: String,
    /// Resource (plural).
    #[schemars(length(min = 1))]
    pub resource: String,
    /// Namespace (empty when cluster-scoped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    #[schemars(length(min = 1))]
    pub name: String,
}

/// How the hub decides where the add-on goes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallStrategy {
    /// By hand or by placements.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Manual"))]
    pub type_: Option<InstallStrategyType>,
    /// Placements whose clusters get the add-on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["namespace", "name"]))]
    pub placements: Vec<PlacementStrategy>,
}

/// Kind of install strategy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum InstallStrategyType {
    /// Users create ManagedClusterAddOns themselves.
    #[default]
    Manual,
    /// The hub creates them for the placements' clusters.
    Placements,
}

/// A placement, its configs and rollout.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementStrategy {
    /// Placement namespace.
    #[schemars(length(min = 1))]
    pub namespace: String,
    /// Placement name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Configs for these clusters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<AddOnConfig>,
    /// How changes roll out.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"type": "All"}))]
    pub rollout_strategy: Option<RolloutStrategy>,
}

/// Observed state of a ClusterManagementAddOn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterManagementAddOnStatus {
    /// Resolved default configs.
    #[serde(
        rename = "defaultconfigReferences",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub default_config_references: Vec<DefaultConfigReference>,
    /// Rollout progress per placement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub install_progressions: Vec<InstallProgression>,
}

/// A config object and the hash of its spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSpecHash {
    /// Namespace (empty when cluster-scoped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Hash of the object's spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_hash: Option<String>,
}

/// A resolved default config.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DefaultConfigReference {
    /// API group (empty for core).
    #[serde(default)]
    pub group: String,
    /// Resource (plural).
    #[schemars(length(min = 1))]
    pub resource: String,
    /// The config wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_config: Option<ConfigSpecHash>,
}

/// Rollout progress of one placement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallProgression {
    /// Placement namespace.
    #[schemars(length(min = 1))]
    pub namespace: String,
    /// Placement name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Configs of the placement and their rollout state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_references: Vec<InstallConfigReference>,
    /// Conditions of the rollout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::conditions::schema")]
    pub conditions: Vec<Condition>,
}

/// A config's desired, applied and last good versions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallConfigReference {
    /// API group (empty for core).
    #[serde(default)]
    pub group: String,
    /// Resource (plural).
    #[schemars(length(min = 1))]
    pub resource: String,
    /// Wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_config: Option<ConfigSpecHash>,
    /// Last applied everywhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_applied_config: Option<ConfigSpecHash>,
    /// Last that rolled out without failures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_known_good_config: Option<ConfigSpecHash>,
}
