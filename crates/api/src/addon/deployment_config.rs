//! The AddOnDeploymentConfig kind: how an add-on's agent is deployed on the clusters that use it —
//! variables for its template, its install namespace, node placement, image registries, proxy and
//! resources. `v1alpha1` (stored) and `v1beta1` have the same schema, so the API server converts
//! between them by the version name alone.
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Resource name of AddOnDeploymentConfigs, as configs name them.
pub const ADDON_DEPLOYMENT_CONFIGS: &str = "addondeploymentconfigs";

/// How an add-on's agent is deployed.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1alpha1",
    kind = "AddOnDeploymentConfig",
    namespaced
)]
#[kube(doc = "How an add-on's agent is deployed: variables, namespace, placement, registries.")]
#[kube(derive = "Default", derive = "PartialEq")]
#[serde(rename_all = "camelCase")]
pub struct AddOnDeploymentConfigSpec {
    /// Values for the template's `{{NAME}}` variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub customized_variables: Vec<CustomizedVariable>,
    /// Node selector and tolerations of the agent's pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_placement: Option<NodePlacement>,
    /// Image registry mirrors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registries: Vec<ImageMirror>,
    /// Proxy settings of the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_config: Option<ProxyConfig>,
    /// Namespace the agent is installed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "open-cluster-management-agent-addon"), length(max = 63), pattern(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$"))]
    pub agent_install_namespace: Option<String>,
    /// Resources of the agent's containers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["containerID"]))]
    pub resource_requirements: Vec<ContainerResourceRequirements>,
}

/// A template variable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CustomizedVariable {
    /// Name, as `{{NAME}}` in the template.
    #[schemars(length(max = 255), pattern(r"^[a-zA-Z_][_a-zA-Z0-9]*$"))]
    pub name: String,
    /// Value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub value: Option<String>,
}

/// Where the agent's pods may run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePlacement {
    /// Node labels the pods require.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Node taints the pods tolerate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<PodToleration>,
}

/// A pod toleration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodToleration {
    /// Taint key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `Equal` or `Exists`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Taint value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Taint effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// How long a `NoExecute` taint is tolerated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// An image registry and its mirror.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImageMirror {
    /// The mirror images are pulled from.
    pub mirror: String,
    /// The registry (image prefix) it replaces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Proxy settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxyConfig {
    /// HTTP proxy URL.
    #[serde(rename = "httpProxy", skip_serializing_if = "Option::is_none")]
    pub http_proxy: Option<String>,
    /// HTTPS proxy URL.
    #[serde(rename = "httpsProxy", skip_serializing_if = "Option::is_none")]
    pub https_proxy: Option<String>,
    /// Hosts reached without the proxy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_proxy: Option<String>,
    /// CA of the HTTPS proxy.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "byte"))]
    pub ca_bundle: Option<String>,
}

/// Resources of the containers an ID matches.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResourceRequirements {
    /// `<resource>:<name>:<container>`, each part a regular expression.
    #[serde(rename = "containerID")]
    #[schemars(pattern(
        r"^(deployments|daemonsets|statefulsets|replicasets|jobs|cronjobs|pods|\*):.+:.+$"
    ))]
    pub container_id: String,
    /// Requests and limits.
    pub resources: Resources,
}

/// Requests, limits and claims of a container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Resources {
    /// Dynamic resource claims.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub claims: Vec<ResourceClaim>,
    /// Upper bounds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "crate::schema::quantities")]
    pub limits: BTreeMap<String, Quantity>,
    /// What is reserved.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "crate::schema::quantities")]
    pub requests: BTreeMap<String, Quantity>,
}

/// A claim of a container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceClaim {
    /// The claim's name in the pod.
    pub name: String,
    /// The request within it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}
