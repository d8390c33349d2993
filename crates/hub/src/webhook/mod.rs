//! The hub's webhooks, served by the hub process itself: the add-on API's conversion
//! ([`crate::conversion`]) and upstream's admission webhooks ([`crate::admission`]), on
//! one HTTPS server ([`server`]) that routes each review by its path ([`Routes`]).
//!
//! **Where it listens.** In-process, on the address this host reaches the API server from, on a
//! port the system picks, with a serving certificate for that address from a CA made at start
//! (the key never leaves memory). For an API server on loopback (the test control plane, a local
//! cluster) that is the loopback address the API server's URL names, so nothing off this host can
//! connect. For a remote one it is the one local address routed towards it, not every interface:
//! anything that can route to that address can connect, since the API server presents no client
//! certificate to tell it apart. [`server`] bounds what such a connection can take: sockets, time,
//! memory. As pods, every replica serves on [`mounted::PORT`] behind the hub's Service with the
//! operator's certificate ([`mounted`]).
//!
//! **Who points the API server at it.** In-process, only the holder of the hub's Lease
//! ([`run`]): it points the add-on CRDs' conversion ([`crate::conversion::crd`]) and the
//! admission webhook configurations ([`crate::admission::configurations`]) at itself, and on
//! shutdown (stepping down included) sets them back while they still name this process, each
//! write a compare-and-swap. As pods, the operator points them at the Service.
pub mod mounted;
pub mod server;
mod slots;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use futures::future::BoxFuture;
use kube::Client;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::{admission, conversion};
use ocm_runtime::Shutdown;
use ocm_runtime::pki::webhook as certs;

/// How long a stopping hub spends ending the configurations' pass in flight and setting the API
/// server back, so stepping down stays bounded when the API server is what failed: within the
/// process's stop deadline ([`ocm_runtime::shutdown::STOP_DEADLINE`]).
const RESET_TIMEOUT: Duration = Duration::from_millis(3500);

/// What the server answers: a review POSTed at a path, answered with a review.
pub trait Routes: Send + Sync + 'static {
    /// Whether a webhook is served at `path` (asked before the body is read).
    fn serves(&self, path: &str) -> bool;

    /// The answer to `review` POSTed at `path`, or `None` for a path not served here.
    fn answer(&self, path: &str, review: Value) -> Option<BoxFuture<'static, Value>>;
}

/// Every webhook of the hub: conversion at [`conversion::PATH`], admission at upstream's paths.
pub struct HubRoutes {
    admission: admission::Reviewer,
}

impl HubRoutes {
    /// The routes, with admission reviewed as `reviewer` says.
    #[must_use]
    pub fn new(admission: admission::Reviewer) -> Arc<Self> {
        Arc::new(Self { admission })
    }
}

impl Routes for HubRoutes {
    fn serves(&self, path: &str) -> bool {
        path == conversion::PATH || admission::serves(path)
    }

    fn answer(&self, path: &str, review: Value) -> Option<BoxFuture<'static, Value>> {
        if path == conversion::PATH {
            return Some(Box::pin(async move { conversion::review_response(review) }));
        }
        self.admission.answer(path, review)
    }
}

/// A running in-process webhook server: where the API server reaches it and the CA that signed
/// its certificate.
pub struct Serving {
    /// `https://<ip>:<port>`, without a path.
    pub base: String,
    /// PEM of the CA, for `caBundle`.
    pub ca: String,
}

impl Serving {
    /// The URL of the webhook at `path`.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// The local address this host uses to reach `server` (the API server's URL).
async fn local_ip_towards(server: &http::Uri) -> anyhow::Result<IpAddr> {
    let host = server.host().context("the hub URL has no host")?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = server.port_u16().unwrap_or(443);
    let target = tokio::net::lookup_host((host, port))
        .await?
        .next()
        .context("the hub's host does not resolve")?;
    if target.ip().is_loopback() {
        return Ok(target.ip());
    }
    // No packet is sent: connecting a UDP socket only picks the route and its source address.
    let probe = std::net::UdpSocket::bind(SocketAddr::new(
        if target.is_ipv4() {
            IpAddr::from([0, 0, 0, 0])
        } else {
            IpAddr::from([0u16; 8])
        },
        0,
    ))?;
    probe.connect(target)?;
    Ok(probe.local_addr()?.ip())
}

/// Starts serving `routes` for the API server at `url`, until `shutdown` is cancelled.
pub async fn serve(
    url: &http::Uri,
    routes: Arc<dyn Routes>,
    shutdown: Shutdown,
) -> anyhow::Result<Serving> {
    let ip = local_ip_towards(url).await?;
    let listener = TcpListener::bind(SocketAddr::new(ip, 0)).await?;
    let addr = listener.local_addr()?;
    let now = ocm_runtime::pki::now_seconds();
    let signer = certs::issue_signer(now)?;
    let serving = certs::issue_serving(&certs::issuer(&signer)?, &[ip.to_string()], now)?;
    let tls = tls_config(&serving)?;
    server::spawn(listener, TlsAcceptor::from(Arc::new(tls)), routes, shutdown);
    // A socket address prints an IPv6 host in brackets, as a URL needs it.
    let base = format!("https://{addr}");
    tracing::info!("hub webhooks (add-on conversion, admission) serving at {base}");
    Ok(Serving {
        base,
        ca: signer.cert,
    })
}

fn tls_config(serving: &certs::CertKey) -> anyhow::Result<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = ocm_runtime::pki::certificates_der(serving.cert.as_bytes())?
        .into_iter()
        .map(CertificateDer::from)
        .collect();
    let key = PrivateKeyDer::from_pem_slice(serving.key.as_bytes())?;
    Ok(rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(chain, key)?)
}

/// Who serves the webhooks and points the API server at them.
#[derive(Clone, Debug)]
pub enum Webhook {
    /// The leading hub process, on the address it reaches the API server (at this URL) from,
    /// pointing the CRDs and admission configurations at itself while it leads: in-process.
    Leader(http::Uri),
    /// Every hub pod, behind the hub's Service ([`mounted`]); the operator points the CRDs and
    /// configurations at the Service, so the leader does nothing here. The pod's reviewer
    /// watches the ClusterManager already: its settings serve the leader's controllers too.
    Service(crate::settings::Watched),
}

/// As the leader: serves the webhooks and keeps the add-on CRDs' conversion, and the admission
/// configurations while the ClusterManager asks for webhook admission, pointed at them until
/// `shutdown` is cancelled; then points them back (conversion to none, configurations removed)
/// where they still name this process, and only then stops serving. The CRDs may not exist yet
/// (the operator installs them): it retries until they do. Behind the Service there is nothing
/// to do while leading.
pub async fn run(
    hub: Client,
    webhook: Webhook,
    settings: crate::settings::Watched,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let url = match webhook {
        Webhook::Leader(url) => url,
        Webhook::Service(_) => {
            shutdown.cancelled().await;
            return Ok(());
        }
    };
    // Not a child of `shutdown`: the webhooks answer until nothing names them.
    let stop_serving = Shutdown::new();
    let _stop_serving = stop_serving.clone().drop_guard();
    let reviewer = admission::Reviewer::with_settings(hub.clone(), settings);
    let settings = reviewer.settings();
    let serving = serve(&url, HubRoutes::new(reviewer), stop_serving)
        .await
        .context("starting the hub's webhooks")?;
    // The keepers stop when told and finish the pass they are in, so that no write of theirs
    // lands after the reset below has read (it would leave the API server naming this process
    // once it is gone). A conversion write dropped in flight can still land, but only on the
    // resourceVersion it read: never over a newer leader's.
    let keepers = Shutdown::new();
    let conversion = conversion::keep_pointed(&hub, &serving);
    let admission =
        admission::configurations::keep_pointed(&hub, &serving, settings, keepers.clone());
    tokio::pin!(admission);
    tokio::select! {
        () = shutdown.cancelled() => {},
        () = async { tokio::join!(conversion, &mut admission); } => shutdown.cancelled().await,
    }
    keepers.cancel();
    // In order, on one budget: the pass in flight ends (its writes land), then the reset reads
    // what it left. A reset racing the pass could miss a configuration it was still creating.
    let reset = async {
        admission.await;
        let (c, a) = tokio::join!(
            conversion::crd::reset_if_ours(&hub, &serving),
            admission::configurations::remove_if_ours(&hub, &serving),
        );
        c.context("setting the add-on CRDs back to no conversion")?;
        a.context("removing the admission webhook configurations")
    };
    match tokio::time::timeout(RESET_TIMEOUT, reset).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("{e:#}"),
        Err(_) => tracing::warn!(
            "setting the API server back from the hub's webhooks: no answer within {RESET_TIMEOUT:?}"
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_loopback_hub_is_served_on_loopback() {
        let ip = local_ip_towards(&"https://127.0.0.1:6443".parse().unwrap())
            .await
            .unwrap();
        assert!(ip.is_loopback());
    }
}
