//! ClusterProfile (`multicluster.x-k8s.io/v1alpha1`, SIG-Multicluster's ClusterInventory API,
//! cluster-inventory-api v0.1.0 as upstream OCM v1.3.1 vendors it): one object per managed cluster
//! in each namespace whose bound cluster sets hold it, so tools that read the inventory (Argo CD,
//! MultiKueue and the like) find the fleet without knowing OCM. Written by the hub when the
//! `ClusterProfile` gate is on (the hub's `cluster_profiles` controller).
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::conditions::Condition;

/// The API group.
pub const GROUP: &str = "multicluster.x-k8s.io";
/// The CRD's name.
pub const CRD_NAME: &str = "clusterprofiles.multicluster.x-k8s.io";
/// The label naming the cluster manager that wrote a profile (`x-k8s.io/cluster-manager`).
pub const LABEL_CLUSTER_MANAGER: &str = "x-k8s.io/cluster-manager";
/// The label naming the profile's cluster set (`multicluster.x-k8s.io/clusterset`).
pub const LABEL_CLUSTER_SET: &str = "multicluster.x-k8s.io/clusterset";
/// The name OCM's hub writes as the profile's cluster manager (label and `spec.clusterManager`).
pub const OCM_CLUSTER_MANAGER: &str = "open-cluster-management";
/// The condition mirroring the ManagedCluster's `ManagedClusterConditionAvailable`.
pub const CONTROL_PLANE_HEALTHY: &str = "ControlPlaneHealthy";
/// The condition mirroring the ManagedCluster's `ManagedClusterJoined`.
pub const JOINED: &str = "Joined";
/// The kubeconfig extension an exec credential plugin receives as `spec.cluster.config`
/// (client-go's `provideClusterInfo`).
pub const EXEC_EXTENSION: &str = "client.authentication.k8s.io/exec";

/// A cluster as the inventory lists it.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "multicluster.x-k8s.io",
    version = "v1alpha1",
    kind = "ClusterProfile",
    namespaced,
    status = "ClusterProfileStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[kube(doc = "One cluster of a multi-cluster inventory.")]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfileSpec {
    /// A name for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    /// Who manages the cluster; never changes.
    #[schemars(extend("x-kubernetes-validations" = [{"message": "ClusterManager is immutable", "rule": "self == oldSelf"}]))]
    pub cluster_manager: ClusterManager,
}

/// The cluster manager of a profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClusterManager {
    /// Its name.
    pub name: String,
}

/// What the cluster manager observes of the cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfileStatus {
    /// Health and membership.
    #[serde(default)]
    #[schemars(schema_with = "super::conditions::schema_atomic", transform = super::schema::no_default)]
    pub conditions: Vec<Condition>,
    /// Versions.
    #[serde(default, skip_serializing_if = "ClusterVersion::is_empty")]
    pub version: ClusterVersion,
    /// Facts about the cluster (OCM: its ClusterClaims).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
    /// The earlier name of `accessProviders`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_providers: Vec<AccessProvider>,
    /// How a consumer reaches the cluster's API server, per provider of credentials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_providers: Vec<AccessProvider>,
}

/// Versions of the cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClusterVersion {
    /// The Kubernetes version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kubernetes: String,
}

impl ClusterVersion {
    fn is_empty(&self) -> bool {
        self.kubernetes.is_empty()
    }
}

/// A named fact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Property {
    /// Its name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Its value.
    #[schemars(length(min = 1, max = 1024))]
    pub value: String,
    /// When it was last seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::schema::time")]
    pub last_observed_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
}

/// A provider of credentials and the cluster as its plugin reaches it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AccessProvider {
    /// The provider's name, which a consumer maps to its exec plugin.
    pub name: String,
    /// The cluster, as a kubeconfig's `clusters[].cluster`.
    #[serde(default)]
    #[schemars(transform = super::schema::no_default)]
    pub cluster: KubeconfigCluster,
}

/// A kubeconfig cluster entry (client-go's `clientcmd/api/v1.Cluster`), with its dashed keys.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub struct KubeconfigCluster {
    /// The API server's URL.
    pub server: String,
    /// The name the server's certificate is checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_server_name: Option<String>,
    /// Skip checking the server's certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure_skip_tls_verify: Option<bool>,
    /// A CA file path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_authority: Option<String>,
    /// The CA certificates (PEM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::schema::bytes")]
    pub certificate_authority_data: Option<k8s_openapi::ByteString>,
    /// A proxy for every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<String>,
    /// Ask the server not to compress responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_compression: Option<bool>,
    /// Data for extenders, such as the exec plugin's per-cluster configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<NamedExtension>,
}

/// A named kubeconfig extension.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NamedExtension {
    /// Its name.
    pub name: String,
    /// Its content, kept as written.
    #[schemars(schema_with = "super::schema::free_object")]
    pub extension: serde_json::Value,
}

/// cluster-proxy's user server Service (its `UserServerServiceName`) and port. Its ClusterProfile
/// controller writes `https://<service>.<namespace>:9092/<cluster>` as the
/// `open-cluster-management` access provider's server: the cluster's API server through the
/// add-on's tunnel, for consumers that cannot reach the cluster itself.
pub const CLUSTER_PROXY_USER_SERVICE: &str = "cluster-proxy-addon-user";
/// The user server's port.
pub const CLUSTER_PROXY_USER_PORT: u16 = 9092;

/// The proxy server's namespace and the cluster a cluster-proxy user-server URL names, if
/// `server` is one (as cluster-proxy's controller writes it: the Service by `<name>.<namespace>`,
/// the cluster as the whole path).
#[must_use]
pub fn cluster_proxy_user_server(server: &str) -> Option<(String, String)> {
    let rest = server.strip_prefix("https://")?;
    let (authority, cluster) = rest.split_once('/')?;
    let host = authority.strip_suffix(&format!(":{CLUSTER_PROXY_USER_PORT}"))?;
    let namespace = host
        .strip_prefix(CLUSTER_PROXY_USER_SERVICE)?
        .strip_prefix('.')?;
    let cluster = cluster.strip_suffix('/').unwrap_or(cluster);
    let label = |s: &str| {
        !s.is_empty()
            && s.len() <= 63
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    (label(namespace) && !cluster.is_empty() && !cluster.contains('/') && !cluster.contains('?'))
        .then(|| (namespace.to_string(), cluster.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_proxy_user_server_names_its_namespace_and_cluster() {
        assert_eq!(
            cluster_proxy_user_server("https://cluster-proxy-addon-user.ocm-proxy:9092/c1"),
            Some(("ocm-proxy".into(), "c1".into()))
        );
        assert_eq!(
            cluster_proxy_user_server("https://cluster-proxy-addon-user.ns:9092/c1/"),
            Some(("ns".into(), "c1".into()))
        );
        for other in [
            "https://10.0.0.1:6443",
            "https://cluster-proxy-addon-user.ns:9092/",
            "https://cluster-proxy-addon-user.ns:443/c1",
            "http://cluster-proxy-addon-user.ns:9092/c1",
            "https://cluster-proxy-addon-user.a.b:9092/c1",
            "https://evil.example/cluster-proxy-addon-user.ns:9092/c1",
            "https://cluster-proxy-addon-user.ns:9092/c1/api",
        ] {
            assert_eq!(cluster_proxy_user_server(other), None, "{other}");
        }
    }
}
