//! TLS to a managed cluster's API server at the end of a tunnel. The tunnel reaches it as
//! `<cluster>:443`, a name its certificate does not carry, so upstream's clusteradm skips
//! verification. Here the certificate is verified against the CA bundle the cluster's agent
//! reported (`spec.managedClusterClientConfigs`), for `kubernetes.default.svc`: the name every
//! API server's certificate carries for its in-cluster clients.
use anyhow::Context as _;
use kube::ResourceExt as _;
use rustls::pki_types::ServerName;

use crate::api::cluster::ManagedCluster;
use crate::error::UserError;

/// The name the API server's certificate is checked for.
pub const SERVER_NAME: &str = "kubernetes.default.svc";

/// The CA bundle (PEM) `cluster` reported for its API server.
pub fn ca_bundle(cluster: &ManagedCluster) -> anyhow::Result<Vec<u8>> {
    cluster
        .spec
        .managed_cluster_client_configs
        .iter()
        .find_map(|c| c.ca_bundle.as_ref().filter(|b| !b.0.is_empty()))
        .map(|b| b.0.clone())
        .ok_or_else(|| {
            UserError::new(
                format!(
                    "managed cluster {} reports no CA bundle for its API server, so its certificate cannot be verified",
                    cluster.name_any()
                ),
                "its agent reports one from the managed kubeconfig it runs with (spec.managedClusterClientConfigs); re-join the cluster with a kubeconfig that names its CA",
            )
            .into()
        })
}

/// A TLS client trusting only `ca_pem`, presenting no certificate.
pub fn client_config(ca_pem: &[u8]) -> anyhow::Result<rustls::ClientConfig> {
    crate::pki::tls::client_config(ca_pem, None).context("the cluster's CA bundle")
}

/// The server name to verify.
#[must_use]
pub fn server_name() -> ServerName<'static> {
    ServerName::try_from(SERVER_NAME).expect("a valid DNS name")
}
