//! The Klusterlet kind: desired state of the agents (registration, work) on one managed cluster.
use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    FeatureGate, NodePlacement, OperatorStatus, RegistrationAuthType, ResourceRequirement,
};

/// Desired state of the agents on a managed cluster.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "operator.open-cluster-management.io",
    version = "v1",
    kind = "Klusterlet"
)]
#[kube(doc = "The OCM agents of one managed cluster, reconciled by the klusterlet operator.")]
#[kube(status = "OperatorStatus", derive = "Default", derive = "PartialEq")]
#[serde(rename_all = "camelCase")]
pub struct KlusterletSpec {
    /// Namespace of the agents (default `open-cluster-management-agent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 57),
        pattern(r"^open-cluster-management-[-a-z0-9]*[a-z0-9]$")
    )]
    pub namespace: Option<String>,
    /// Image of the registration agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_image_pull_spec: Option<String>,
    /// Image of the work agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_image_pull_spec: Option<String>,
    /// Image of the combined agent (Singleton modes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_pull_spec: Option<String>,
    /// Name the cluster registers under.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63), pattern(crate::schema::DNS_LABEL))]
    pub cluster_name: Option<String>,
    /// API server URLs of this cluster reported to the hub.
    #[serde(
        rename = "externalServerURLs",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub external_server_urls: Vec<ServerUrl>,
    /// Where the agent pods may be scheduled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_placement: Option<NodePlacement>,
    /// How the agents are deployed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deploy_option: Option<KlusterletDeployOption>,
    /// A host alias that lets agents resolve the hub apiserver.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hub_api_server_host_alias: Option<HubApiServerHostAlias>,
    /// Registration agent settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_configuration: Option<KlusterletRegistrationConfiguration>,
    /// Work agent settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_configuration: Option<KlusterletWorkConfiguration>,
    /// Priority class of the agent pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// Resource requests and limits of the agent pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_requirement: Option<ResourceRequirement>,
}

/// An API server URL and the CA that signs it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerUrl {
    /// HTTPS URL.
    pub url: String,
    /// CA bundle for the URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
}

/// Agent deploy mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KlusterletDeployOption {
    /// One of the `MODE_*` constants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// Static name resolution of the hub apiserver in agent pods.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HubApiServerHostAlias {
    /// IPv4 address.
    #[schemars(pattern(crate::schema::IPV4))]
    pub ip: String,
    /// Host name it resolves.
    #[schemars(pattern(crate::schema::HOSTNAME))]
    pub hostname: String,
}

/// Registration agent settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KlusterletRegistrationConfiguration {
    /// Requested lifetime of the agent's client certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cert_expiration_seconds: Option<i32>,
    /// Feature gates of the registration agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<FeatureGate>,
    /// Annotations put on the ManagedCluster.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cluster_annotations: BTreeMap<String, String>,
    /// Labels put on the ManagedCluster.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cluster_labels: BTreeMap<String, String>,
    /// Client QPS towards the managed cluster.
    #[serde(rename = "kubeAPIQPS", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 50))]
    pub kube_api_qps: Option<i32>,
    /// Client burst towards the managed cluster.
    #[serde(rename = "kubeAPIBurst", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 100))]
    pub kube_api_burst: Option<i32>,
    /// Bootstrap kubeconfigs to try, for switching hubs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_kube_configs: Option<BootstrapKubeConfigs>,
    /// How the agent authenticates to the hub.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_driver: Option<RegistrationDriver>,
    /// Limits on custom ClusterClaims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_claim_configuration: Option<ClusterClaimConfiguration>,
    /// How add-on agents get hub credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on_kube_client_registration_driver: Option<AddOnKubeClientRegistrationDriver>,
}

/// Bootstrap kubeconfig sources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapKubeConfigs {
    /// Source kind.
    #[serde(rename = "type")]
    #[schemars(extend("default" = "None"))]
    pub type_: BootstrapKubeConfigType,
    /// Secrets to try in order (type LocalSecrets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_secrets_config: Option<LocalSecretsConfig>,
}

/// Source of bootstrap kubeconfigs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum BootstrapKubeConfigType {
    /// Only the default bootstrap secret.
    #[default]
    None,
    /// A list of local secrets.
    LocalSecrets,
}

/// Bootstrap kubeconfig secrets in the agent namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalSecretsConfig {
    /// Secrets, tried in order.
    pub kube_config_secrets: Vec<KubeConfigSecret>,
    /// Seconds without a hub connection before the next secret is tried.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 600, "minimum" = 180))]
    pub hub_connection_timeout_seconds: Option<i32>,
}

/// A secret holding a kubeconfig.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeConfigSecret {
    /// Secret name.
    pub name: String,
}

/// Agent side of registration authentication.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationDriver {
    /// Driver kind.
    #[schemars(extend("default" = "csr"))]
    pub auth_type: RegistrationAuthType,
    /// AWS IRSA settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aws_irsa: Option<AwsIrsa>,
}

/// EKS clusters of the AWS IRSA driver.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AwsIrsa {
    /// ARN of the hub EKS cluster.
    #[schemars(length(min = 1), pattern(crate::schema::EKS_ARN))]
    pub hub_cluster_arn: String,
    /// ARN of this EKS cluster.
    #[schemars(length(min = 1), pattern(crate::schema::EKS_ARN))]
    pub managed_cluster_arn: String,
}

/// Limits on custom ClusterClaims.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClaimConfiguration {
    /// Most custom claims reported.
    #[schemars(extend("default" = 20))]
    pub max_custom_cluster_claims: i32,
    /// Claim name suffixes kept for built-in claims.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 10), inner(length(min = 1, max = 64)))]
    pub reserved_cluster_claim_suffixes: Vec<String>,
}

/// How add-on agents get hub credentials.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnKubeClientRegistrationDriver {
    /// Credential kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_type: Option<AddOnAuthType>,
    /// Token settings (auth type token).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<TokenConfiguration>,
}

/// Credential kind of add-on agents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AddOnAuthType {
    /// Client certificate from a CSR.
    #[default]
    Csr,
    /// Service account token.
    Token,
}

/// Service account token settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenConfiguration {
    /// Requested token lifetime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_seconds: Option<i64>,
}

/// Work agent settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KlusterletWorkConfiguration {
    /// Feature gates of the work agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<FeatureGate>,
    /// Client QPS towards the managed cluster.
    #[serde(rename = "kubeAPIQPS", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 50))]
    pub kube_api_qps: Option<i32>,
    /// Client burst towards the managed cluster.
    #[serde(rename = "kubeAPIBurst", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 100))]
    pub kube_api_burst: Option<i32>,
    /// Client QPS towards the hub.
    #[serde(rename = "hubKubeAPIQPS", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 50))]
    pub hub_kube_api_qps: Option<i32>,
    /// Client burst towards the hub.
    #[serde(rename = "hubKubeAPIBurst", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 100))]
    pub hub_kube_api_burst: Option<i32>,
    /// How long an AppliedManifestWork of an unknown hub is kept (e.g. `60m`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(crate::schema::DURATION))]
    pub applied_manifest_work_eviction_grace_period: Option<String>,
    /// How often resource status is sent back (e.g. `10s`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(crate::schema::DURATION))]
    pub status_sync_interval: Option<String>,
}
