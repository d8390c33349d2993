//! The Konnectivity client to cluster-proxy's proxy server: TLS with the add-on's client
//! certificate (its `proxy-client` Secret, or files), to the server's pods through the API
//! server's port-forward (as upstream's clusteradm, so the server needs no address the user can
//! reach), or to an address the user names.
use anyhow::Context as _;
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use rustls::pki_types::ServerName;

use super::installation::ProxyServer;
use crate::error::UserError;

/// The port the proxy server takes clients on.
pub const SERVER_PORT: u16 = 8090;
/// The label of the proxy server's pods (cluster-proxy's `component-name`).
pub const SERVER_SELECTOR: &str = "proxy.open-cluster-management.io/component-name=proxy-server";
/// The Secret with the CA the proxy server's certificate is signed by (`ca.crt`).
pub const CA_SECRET: &str = "proxy-server-ca";
/// The Secret with the client certificate the add-on issues for clients (`tls.crt`, `tls.key`).
pub const CLIENT_SECRET: &str = "proxy-client";

/// The PEMs a client needs.
pub struct Credentials {
    /// The proxy server's CA.
    pub ca: Vec<u8>,
    /// The client certificate.
    pub cert: Vec<u8>,
    /// Its key.
    pub key: Vec<u8>,
}

impl Credentials {
    /// The add-on's own, from its Secrets on the hub (as upstream's clusteradm reads them).
    pub async fn in_cluster(client: &Client, server: &ProxyServer) -> anyhow::Result<Self> {
        let secrets: Api<Secret> = Api::namespaced(client.clone(), &server.namespace);
        let field = |name: &str, secret: &Option<Secret>, key: &str| {
            secret
                .as_ref()
                .and_then(|s| s.data.as_ref()?.get(key))
                .map(|b| b.0.clone())
                .ok_or_else(|| {
                    UserError::new(
                        format!("the Secret {}/{name} has no {key}", server.namespace),
                        "the cluster-proxy add-on makes it: check its manager is running, or pass --proxy-ca-cert, --proxy-cert and --proxy-key",
                    )
                })
        };
        let read = |name: &'static str| {
            let secrets = secrets.clone();
            async move {
                secrets
                    .get_opt(name)
                    .await
                    .with_context(|| format!("reading the Secret {name} of cluster-proxy"))
            }
        };
        let (ca, client_pair) = (read(CA_SECRET).await?, read(CLIENT_SECRET).await?);
        Ok(Self {
            ca: field(CA_SECRET, &ca, "ca.crt")?,
            cert: field(CLIENT_SECRET, &client_pair, "tls.crt")?,
            key: field(CLIENT_SECRET, &client_pair, "tls.key")?,
        })
    }

    /// From PEM files.
    pub fn from_files(
        ca: &std::path::Path,
        cert: &std::path::Path,
        key: &std::path::Path,
    ) -> anyhow::Result<Self> {
        let read = |path: &std::path::Path| {
            std::fs::read(path).with_context(|| format!("reading {}", path.display()))
        };
        Ok(Self {
            ca: read(ca)?,
            cert: read(cert)?,
            key: read(key)?,
        })
    }

    /// TLS trusting only the proxy server's CA and presenting the client certificate.
    fn tls(&self) -> anyhow::Result<rustls::ClientConfig> {
        crate::pki::tls::client_config(&self.ca, Some((&self.cert, &self.key)))
            .context("the proxy server's CA or the proxy client certificate")
    }
}

/// Where the proxy server is reached.
#[derive(Clone, Debug)]
pub enum Route {
    /// Through a port-forward to `port` of one of its pods (the server's certificate is checked
    /// for `localhost`, as upstream's clusteradm does).
    PortForward {
        /// The pod's port.
        port: u16,
    },
    /// At `host:port`, its certificate checked for `host`.
    Address {
        /// A DNS name or IP address.
        host: String,
        /// The port.
        port: u16,
    },
}

/// A Konnectivity client to the proxy server.
pub async fn connect(
    client: &Client,
    server: &ProxyServer,
    route: &Route,
    credentials: &Credentials,
) -> anyhow::Result<konnectivity::Client> {
    let tls = credentials.tls()?;
    let channel = match route {
        Route::PortForward { port } => {
            let port = *port;
            let pod = ready_server_pod(client, server).await?;
            let pods: Api<Pod> = Api::namespaced(client.clone(), &server.namespace);
            let open = move || {
                let (pods, pod) = (pods.clone(), pod.clone());
                async move {
                    let mut forward = pods
                        .portforward(&pod, &[port])
                        .await
                        .map_err(std::io::Error::other)?;
                    forward
                        .take_stream(port)
                        .ok_or_else(|| std::io::Error::other("the port-forward gave no stream"))
                }
            };
            konnectivity::connect(open, tls, server_name("localhost")?).await
        }
        Route::Address { host, port } => {
            let address = (host.clone(), *port);
            let open = move || tokio::net::TcpStream::connect(address.clone());
            konnectivity::connect(open, tls, server_name(host)?).await
        }
    };
    let channel = channel.with_context(|| match route {
        Route::PortForward { .. } => format!(
            "connecting to cluster-proxy's proxy server in {} through a port-forward",
            server.namespace
        ),
        Route::Address { host, port } => {
            format!("connecting to cluster-proxy's proxy server at {host}:{port}")
        }
    })?;
    Ok(konnectivity::Client::new(channel))
}

fn server_name(host: &str) -> anyhow::Result<ServerName<'static>> {
    ServerName::try_from(host.trim_matches(['[', ']']).to_string())
        .with_context(|| format!("{host} is not a host name or IP address"))
}

/// A running, ready proxy server pod.
async fn ready_server_pod(client: &Client, server: &ProxyServer) -> anyhow::Result<String> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &server.namespace);
    let listed = pods
        .list(&ListParams::default().labels(SERVER_SELECTOR))
        .await
        .with_context(|| {
            format!(
                "listing cluster-proxy's proxy server pods in {}",
                server.namespace
            )
        })?;
    listed
        .items
        .iter()
        .find(|pod| {
            pod.status.as_ref().is_some_and(|s| {
                s.phase.as_deref() == Some("Running")
                    && s.conditions
                        .iter()
                        .flatten()
                        .any(|c| c.type_ == "Ready" && c.status == "True")
            })
        })
        .map(ResourceExt::name_any)
        .ok_or_else(|| {
            UserError::new(
                format!(
                    "no ready cluster-proxy proxy server pod in {} ({SERVER_SELECTOR})",
                    server.namespace
                ),
                "check the add-on's proxy server Deployment on the hub, or pass --proxy-server-host with an address of it",
            )
            .into()
        })
}
