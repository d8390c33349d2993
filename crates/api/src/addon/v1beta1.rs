//! `addon.open-cluster-management.io/v1beta1` of ClusterManagementAddOn and ManagedClusterAddOn,
//! served beside `v1alpha1` (the stored version), as upstream serves both: upstream's v1.3
//! agents and add-on managers read `v1beta1`, its `clusteradm` writes `v1alpha1`. What differs:
//! the default configs of an add-on are one flat list, a ManagedClusterAddOn's install namespace
//! is an annotation, and each registration says its type. The hub converts between the two
//! (the hub's `conversion` module).
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    AddOnConfig, AddOnMeta, ConfigGroupResource, ConfigSpecHash, HealthCheck, InstallProgression,
    InstallStrategy, ObjectReference,
};
use crate::conditions::Condition;

/// Annotation carrying a `v1alpha1` ManagedClusterAddOn's `spec.installNamespace` in `v1beta1`.
pub const INSTALL_NAMESPACE_ANNOTATION: &str =
    "addon.open-cluster-management.io/v1alpha1-install-namespace";
/// A default config name meaning "no default" (a `v1alpha1` supported config without one).
pub const NO_DEFAULT_CONFIG: &str = "__reserved_no_default__";

/// An add-on the hub manages (`v1beta1`).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1beta1",
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
#[serde(rename_all = "camelCase")]
pub struct ClusterManagementAddOnSpec {
    /// Display name and description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on_meta: Option<AddOnMeta>,
    /// Config kinds the add-on accepts, each with its default object.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["group", "resource"]))]
    pub default_configs: Vec<AddOnConfig>,
    /// Where the hub installs the add-on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"type": "Manual"}))]
    pub install_strategy: Option<InstallStrategy>,
}

/// Observed state of a ClusterManagementAddOn (`v1beta1`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterManagementAddOnStatus {
    /// Resolved default configs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default_config_references: Vec<super::DefaultConfigReference>,
    /// Rollout progress per placement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub install_progressions: Vec<InstallProgression>,
}

/// An add-on enabled on one managed cluster (`v1beta1`).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1beta1",
    kind = "ManagedClusterAddOn"
)]
#[kube(doc = "An add-on enabled on the managed cluster named by this object's namespace.")]
#[kube(
    namespaced,
    status = "ManagedClusterAddOnStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[kube(shortname = "mca", shortname = "mcas")]
#[kube(
    printcolumn = r#"{"name": "Available", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Available\")].status"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Degraded", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Degraded\")].status"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Progressing", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Progressing\")].status"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterAddOnSpec {
    /// Configs for this cluster, overriding the defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<AddOnConfig>,
}

/// Observed state of an add-on on a cluster (`v1beta1`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterAddOnStatus {
    /// Current conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::conditions::schema")]
    pub conditions: Vec<Condition>,
    /// Objects that make up the add-on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_objects: Vec<ObjectReference>,
    /// Display name and description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on_meta: Option<AddOnMeta>,
    /// Config kinds the add-on accepts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["group", "resource"]))]
    pub supported_configs: Vec<ConfigGroupResource>,
    /// Configs in effect and their rollout state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_references: Vec<ConfigReference>,
    /// Namespace the agent runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Hub credentials the agent needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registrations: Vec<RegistrationConfig>,
    /// How add-on health is judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_check: Option<HealthCheck>,
}

/// A config in effect on the cluster (`v1beta1`: its object only in `desiredConfig`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReference {
    /// API group (empty for core).
    #[serde(default)]
    pub group: String,
    /// Resource (plural).
    #[schemars(length(min = 1))]
    pub resource: String,
    /// Generation of the object last seen (legacy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_observed_generation: Option<i64>,
    /// Wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_config: Option<ConfigSpecHash>,
    /// Last applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_applied_config: Option<ConfigSpecHash>,
}

/// A credential the add-on agent needs (`v1beta1`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationConfig {
    /// `kubeClient` or `customSigner`.
    #[serde(rename = "type")]
    pub type_: RegistrationType,
    /// A client of the hub's API server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kube_client: Option<KubeClientConfig>,
    /// A certificate of another signer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_signer: Option<CustomSignerConfig>,
}

/// Kind of registration (`v1beta1`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RegistrationType {
    /// A client of the hub's API server.
    #[default]
    KubeClient,
    /// A certificate of another signer.
    CustomSigner,
}

/// A hub client identity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeClientConfig {
    /// How the credential is obtained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<KubeClientDriver>,
    /// Whom.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<KubeClientSubject>,
}

/// How a hub client credential is obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum KubeClientDriver {
    /// A signed CSR.
    Csr,
    /// A service-account token.
    Token,
}

/// User and groups of a hub client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeClientSubject {
    /// User name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

/// A certificate of a custom signer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomSignerConfig {
    /// The signer.
    #[schemars(
        length(min = 5, max = 571),
        pattern(r"^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$")
    )]
    pub signer_name: String,
    /// The certificate's subject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<CustomSignerSubject>,
}

/// Subject of a custom-signer certificate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomSignerSubject {
    /// User (CN).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Groups (O).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Organizational units (OU).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub organization_units: Vec<String>,
}
