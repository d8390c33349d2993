//! Where cluster-proxy's proxy server runs: its ClusterManagementAddOn says the add-on is
//! installed, its ManagedProxyConfiguration (`cluster-proxy`, as upstream's clusteradm reads it)
//! names the namespace of the server's pods and Secrets.
use anyhow::Context as _;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};

use super::ADDON;
use crate::api::addon::ClusterManagementAddOn;
use crate::error::UserError;

/// The ManagedProxyConfiguration upstream's clusteradm reads.
pub const CONFIGURATION: &str = "cluster-proxy";

/// The add-on's proxy server on the hub.
#[derive(Clone, Debug)]
pub struct ProxyServer {
    /// The namespace of its pods and its Secrets (`proxy-server-ca`, `proxy-client`).
    pub namespace: String,
}

/// The ManagedProxyConfiguration API (`proxy.open-cluster-management.io/v1alpha1`, cluster-scoped).
fn configurations() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(
            "proxy.open-cluster-management.io",
            "v1alpha1",
            "ManagedProxyConfiguration",
        ),
        "managedproxyconfigurations",
    )
}

/// Finds the proxy server, or says how to install the add-on.
pub async fn find(client: &Client) -> anyhow::Result<ProxyServer> {
    let not_installed = || {
        UserError::new(
            "the cluster-proxy add-on is not installed on this hub",
            "install it (its Helm chart: https://open-cluster-management.io/getting-started/integration/cluster-proxy/) and enable it on the clusters",
        )
    };
    let addons: Api<ClusterManagementAddOn> = Api::all(client.clone());
    addons
        .get_opt(ADDON)
        .await
        .map_err(crate::error::ocm_api_missing)
        .context("reading the cluster-proxy ClusterManagementAddOn")?
        .ok_or_else(not_installed)?;
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &configurations());
    let configuration = match api.get_opt(CONFIGURATION).await {
        Ok(Some(found)) => found,
        Ok(None) => return Err(not_installed().into()),
        Err(kube::Error::Api(status)) if status.code == 404 => return Err(not_installed().into()),
        Err(e) => {
            return Err(e).context("reading the ManagedProxyConfiguration cluster-proxy");
        }
    };
    let namespace = configuration.data["spec"]["proxyServer"]["namespace"]
        .as_str()
        .filter(|n| !n.is_empty())
        .with_context(|| {
            format!(
                "the ManagedProxyConfiguration {CONFIGURATION} names no spec.proxyServer.namespace"
            )
        })?;
    Ok(ProxyServer {
        namespace: namespace.to_string(),
    })
}
