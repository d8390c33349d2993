//! `operator.open-cluster-management.io/v1`: ClusterManager (installs the hub) and Klusterlet
//! (installs the agents on a managed cluster). Both are cluster-scoped singletons by convention.
//! This file holds the names and types both share; the kinds live in `operator/cluster_manager.rs`
//! and `operator/klusterlet.rs`, re-exported here.
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ResourceRequirements, Toleration};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::conditions::Condition;

mod cluster_manager;
mod klusterlet;
pub use cluster_manager::*;
pub use klusterlet::*;

/// The name `clusteradm init` gives the ClusterManager.
pub const CLUSTER_MANAGER_NAME: &str = "cluster-manager";
/// The name `clusteradm join` gives the Klusterlet.
pub const KLUSTERLET_NAME: &str = "klusterlet";
/// Finalizer the hub operator puts on a ClusterManager.
pub const CLUSTER_MANAGER_FINALIZER: &str =
    "operator.open-cluster-management.io/cluster-manager-cleanup";
/// Finalizer the klusterlet operator puts on a Klusterlet.
pub const KLUSTERLET_FINALIZER: &str = "operator.open-cluster-management.io/klusterlet-cleanup";
/// Finalizer the klusterlet operator puts on a Klusterlet in Hosted mode.
pub const KLUSTERLET_HOSTED_FINALIZER: &str =
    "operator.open-cluster-management.io/klusterlet-hosted-cleanup";

/// ClusterManager condition: the hub registration controller is unhealthy.
pub const HUB_REGISTRATION_DEGRADED: &str = "HubRegistrationDegraded";
/// ClusterManager condition: the placement controller is unhealthy.
pub const HUB_PLACEMENT_DEGRADED: &str = "HubPlacementDegraded";
/// ClusterManager condition: stored CRD versions were migrated.
pub const MIGRATION_SUCCEEDED: &str = "MigrationSucceeded";
/// Operator condition: every requested feature gate is known.
pub const VALID_FEATURE_GATES: &str = "ValidFeatureGates";
/// Klusterlet condition: the operator has what it needs to deploy the agents.
pub const READY_TO_APPLY: &str = "ReadyToApply";
/// Klusterlet condition: the agents cannot reach or authenticate to the hub.
pub const HUB_CONNECTION_DEGRADED: &str = "HubConnectionDegraded";
/// Klusterlet condition: the registration agent is not running as desired.
pub const REGISTRATION_DESIRED_DEGRADED: &str = "RegistrationDesiredDegraded";
/// Klusterlet condition: the work agent is not running as desired.
pub const WORK_DESIRED_DEGRADED: &str = "WorkDesiredDegraded";

/// Klusterlet mode: agents run on the managed cluster, one deployment each.
pub const MODE_DEFAULT: &str = "Default";
/// Klusterlet mode: agents run on a management cluster.
pub const MODE_HOSTED: &str = "Hosted";
/// Klusterlet mode: one combined agent on the managed cluster.
pub const MODE_SINGLETON: &str = "Singleton";
/// Klusterlet mode: one combined agent on a management cluster.
pub const MODE_SINGLETON_HOSTED: &str = "SingletonHosted";

/// Node selector and tolerations for operator-managed pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePlacement {
    /// Labels a node must carry.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Taints the pods tolerate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::schema::tolerations")]
    pub tolerations: Vec<Toleration>,
}

/// One feature gate switched on or off.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureGate {
    /// Gate name.
    pub feature: String,
    /// Whether the gate is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Disable"))]
    pub mode: Option<FeatureGateMode>,
}

impl FeatureGate {
    /// Whether the gate is on (no mode is `Disable`).
    #[must_use]
    pub fn enabled(&self) -> bool {
        self.mode.unwrap_or_default() == FeatureGateMode::Enable
    }

    /// Whether `gates` switch `name` on or off, if they name it (the last mention wins).
    #[must_use]
    pub fn setting(gates: &[Self], name: &str) -> Option<bool> {
        gates
            .iter()
            .rev()
            .find(|g| g.feature == name)
            .map(Self::enabled)
    }
}

/// State of a feature gate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FeatureGateMode {
    /// On.
    Enable,
    /// Off.
    #[default]
    Disable,
}

/// A component configured only through feature gates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureGatesConfiguration {
    /// Feature gates of the component.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<FeatureGate>,
}

/// How an agent authenticates when it registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RegistrationAuthType {
    /// Client certificate from a CertificateSigningRequest.
    #[default]
    Csr,
    /// AWS IAM roles for service accounts.
    Awsirsa,
    /// Through the gRPC server.
    Grpc,
}

/// Resource QoS of operator-managed pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRequirement {
    /// QoS class.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Default"))]
    pub type_: Option<ResourceQosClass>,
    /// Explicit requests and limits (with type ResourceRequirement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::schema::resource_requirements")]
    pub resource_requirements: Option<ResourceRequirements>,
}

/// QoS class of operator-managed pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ResourceQosClass {
    /// Small built-in requests.
    #[default]
    Default,
    /// No requests or limits.
    BestEffort,
    /// The given `resourceRequirements`.
    ResourceRequirement,
}

/// Observed state written by the operators (ClusterManager and Klusterlet share it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatorStatus {
    /// Generation of the spec last acted on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::conditions::schema")]
    pub conditions: Vec<Condition>,
    /// Generations of the deployed workloads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generations: Vec<GenerationStatus>,
    /// Objects the operator manages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_resources: Vec<RelatedResourceMeta>,
}

/// Last generation of a managed workload the operator saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GenerationStatus {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource (plural).
    pub resource: String,
    /// Namespace, if namespaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
    /// Generation seen.
    pub last_generation: i64,
}

/// An object the operator manages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelatedResourceMeta {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource (plural).
    pub resource: String,
    /// Namespace, if namespaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
}

/// How the hub's admission rules are enforced ([`ADMISSION_ANNOTATION`](crate::names::ADMISSION_ANNOTATION)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Admission {
    /// Upstream's webhooks (the default): served by upstream's webhook Deployments, our hub pods,
    /// or the in-process hub.
    #[default]
    Webhooks,
    /// ValidatingAdmissionPolicies the API server enforces itself; no webhook server.
    Policies,
}

impl Admission {
    /// The annotation value.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Webhooks => "webhooks",
            Self::Policies => "policies",
        }
    }

    /// The mode an annotation value names.
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        [Self::Webhooks, Self::Policies]
            .into_iter()
            .find(|mode| mode.as_str() == value)
    }
}
