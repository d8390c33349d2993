//! The ClusterManager kind: desired state of the hub (controllers, webhooks, registration drivers,
//! the optional agent server).
use k8s_openapi::ByteString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    FeatureGate, FeatureGatesConfiguration, NodePlacement, OperatorStatus, RegistrationAuthType,
    ResourceRequirement,
};

/// Desired state of the OCM hub.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "operator.open-cluster-management.io",
    version = "v1",
    kind = "ClusterManager"
)]
#[kube(doc = "The OCM hub installation, reconciled by the hub operator.")]
#[kube(status = "OperatorStatus", derive = "Default", derive = "PartialEq")]
#[serde(rename_all = "camelCase")]
#[schemars(extend("default" = {"deployOption": {"mode": "Default"}}))]
pub struct ClusterManagerSpec {
    /// Image of the registration controller and webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "quay.io/open-cluster-management/registration"))]
    pub registration_image_pull_spec: Option<String>,
    /// Image of the work webhook and controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "quay.io/open-cluster-management/work"))]
    pub work_image_pull_spec: Option<String>,
    /// Image of the placement controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "quay.io/open-cluster-management/placement"))]
    pub placement_image_pull_spec: Option<String>,
    /// Image of the add-on manager.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "quay.io/open-cluster-management/addon-manager"))]
    pub add_on_manager_image_pull_spec: Option<String>,
    /// Where the hub pods may be scheduled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_placement: Option<NodePlacement>,
    /// How the hub is deployed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"mode": "Default"}))]
    pub deploy_option: Option<ClusterManagerDeployOption>,
    /// Registration controller settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_configuration: Option<RegistrationHubConfiguration>,
    /// Work controller settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"workDriver": "kube"}))]
    pub work_configuration: Option<HubWorkConfiguration>,
    /// Add-on manager settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on_manager_configuration: Option<FeatureGatesConfiguration>,
    /// Placement controller settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_configuration: Option<FeatureGatesConfiguration>,
    /// Settings of the optional gRPC/HTTPS server for agents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_configuration: Option<ServerConfiguration>,
    /// Resource requests and limits of the hub pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_requirement: Option<ResourceRequirement>,
}

/// Hub deploy mode and per-mode settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterManagerDeployOption {
    /// Deploy mode.
    #[schemars(extend("default" = "Default"))]
    pub mode: HubInstallMode,
    /// Settings for Default mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<DefaultHubConfiguration>,
    /// Settings for Hosted mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosted: Option<HostedHubConfiguration>,
}

/// Where the hub controllers run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum HubInstallMode {
    /// On the hub cluster itself.
    #[default]
    Default,
    /// On a separate management cluster.
    Hosted,
}

/// Webhook settings for Default mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DefaultHubConfiguration {
    /// Registration webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_webhook_configuration: Option<DefaultWebhookConfiguration>,
    /// Work webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_webhook_configuration: Option<DefaultWebhookConfiguration>,
    /// Add-on webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addon_webhook_configuration: Option<DefaultWebhookConfiguration>,
}

/// A webhook served from the hub cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DefaultWebhookConfiguration {
    /// Ports the webhook pod binds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_configuration: Option<BindConfiguration>,
}

/// Webhook settings for Hosted mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostedHubConfiguration {
    /// Registration webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_webhook_configuration: Option<HostedWebhookConfiguration>,
    /// Work webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_webhook_configuration: Option<HostedWebhookConfiguration>,
}

/// A webhook the hub apiserver reaches at an external address.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostedWebhookConfiguration {
    /// DNS name of the webhook.
    #[schemars(pattern(crate::schema::HOSTNAME))]
    pub address: String,
    /// Port of the webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 443, "maximum" = 65535))]
    pub port: Option<i32>,
    /// Ports the webhook pod binds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_configuration: Option<BindConfiguration>,
}

/// Ports a webhook pod binds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BindConfiguration {
    /// Webhook port.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 9443, "maximum" = 65535))]
    pub port: Option<i32>,
    /// Health probe port.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 8000, "maximum" = 65535))]
    pub health_probe_port: Option<i32>,
    /// Metrics port.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 8080, "maximum" = 65535))]
    pub metrics_port: Option<i32>,
    /// Whether the pod uses the host network.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_network: Option<bool>,
}

/// Hub registration settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationHubConfiguration {
    /// Users whose cluster registrations are approved automatically.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auto_approve_users: Vec<String>,
    /// Feature gates of the registration controller.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<FeatureGate>,
    /// Authentication drivers agents may register with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["authType"]))]
    pub registration_drivers: Vec<RegistrationDriverHub>,
    /// Cluster importer settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub importer_configuration: Option<ImporterConfiguration>,
}

/// Settings of the cluster importer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImporterConfiguration {
    /// Renderers producing the import manifests, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renderers: Vec<String>,
}

/// One registration driver enabled on the hub.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationDriverHub {
    /// Driver kind.
    #[schemars(extend("default" = "csr"))]
    pub auth_type: RegistrationAuthType,
    /// CSR driver settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csr: Option<AutoApproval>,
    /// AWS IRSA driver settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awsirsa: Option<AwsIrsaHubConfig>,
    /// gRPC driver settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpc: Option<AutoApproval>,
}

/// Identities approved without a human.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutoApproval {
    /// Approved identities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auto_approved_identities: Vec<String>,
}

/// Hub side of the AWS IRSA driver.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AwsIrsaHubConfig {
    /// ARN of the hub EKS cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(crate::schema::EKS_ARN))]
    pub hub_cluster_arn: Option<String>,
    /// Managed-cluster ARN patterns approved automatically.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auto_approved_identities: Vec<String>,
    /// Tags put on the AWS resources created.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// Hub work settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HubWorkConfiguration {
    /// Feature gates of the work controller.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<FeatureGate>,
    /// Transport between hub and work agents.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "kube"))]
    pub work_driver: Option<WorkDriver>,
}

/// Transport that carries ManifestWorks to agents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorkDriver {
    /// The hub apiserver.
    #[default]
    Kube,
    /// An MQTT broker.
    Mqtt,
    /// The gRPC server.
    Grpc,
}

/// The hub server agents may talk to instead of the apiserver.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerConfiguration {
    /// Server image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_pull_spec: Option<String>,
    /// Feature gates of the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<FeatureGate>,
    /// How the server is exposed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints_exposure: Vec<EndpointExposure>,
}

/// One exposed server endpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointExposure {
    /// Protocol served.
    #[schemars(extend("default" = "grpc"))]
    pub protocol: EndpointProtocol,
    /// gRPC endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpc: Option<Endpoint>,
    /// HTTPS endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub https: Option<Endpoint>,
    /// What the endpoint is used for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
}

/// Protocol of an exposed endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EndpointProtocol {
    /// gRPC.
    #[default]
    Grpc,
    /// HTTPS.
    Https,
}

/// How one endpoint is reached.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// Exposure kind.
    #[serde(rename = "type")]
    #[schemars(extend("default" = "hostname"))]
    pub type_: EndpointType,
    /// Fixed host name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<HostnameEndpoint>,
    /// Load-balancer service.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_balancer: Option<HostEndpoint>,
    /// OpenShift route.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<HostEndpoint>,
}

/// Exposure kind of an endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EndpointType {
    /// A host name set by the user.
    #[default]
    Hostname,
    /// A load-balancer service.
    LoadBalancer,
    /// An OpenShift route.
    Route,
}

/// An endpoint at a given host name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostnameEndpoint {
    /// Host name.
    pub host: String,
    /// CA bundle clients trust.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
}

/// An endpoint whose host may be discovered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostEndpoint {
    /// Host name, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// CA bundle clients trust.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
}
