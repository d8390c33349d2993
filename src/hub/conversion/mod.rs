//! The add-on API's conversion webhook, served by the in-process hub: upstream serves `v1alpha1`
//! and `v1beta1` of ClusterManagementAddOn and ManagedClusterAddOn and converts between them in
//! its add-on webhook; here the hub process does it ([`convert`]).
//!
//! **Where it listens.** On the address this host reaches the API server from, on a port the
//! system picks, with a serving certificate for that address from a CA made at start (the
//! operator's certificate code; the key never leaves memory). For an API server on loopback
//! (the test control plane, a local cluster) that is the loopback address the API server's URL
//! names, so nothing off this host can connect. For a remote one it is the one local address
//! routed towards it, not every interface: anything that can route to that address can connect,
//! since the API server presents no client certificate to tell it apart. [`server`] bounds what
//! such a connection can take: sockets, time, memory.
//!
//! **Who points the CRDs at it.** Only the holder of the hub's Lease runs this
//! ([`crate::inprocess::hub`]). It points both CRDs' `spec.conversion` at itself with that CA
//! ([`crd::point_at`]), and on shutdown (stepping down included) sets them back to `None` only
//! while they still name this process's webhook ([`crd::reset_if_ours`]), each write a
//! compare-and-swap: a stepping-down leader never overwrites the next leader's `url`/`caBundle`.
//! The server keeps answering until that reset is done. Under `None` the API server relabels objects without converting them:
//! `v1alpha1` (the stored version) and metadata-only readers (namespace deletion, garbage
//! collection) keep working, `v1beta1` readers get `v1alpha1` shapes: `v1beta1` needs the hub.
//!
//! **A crash fails closed.** A hub killed before its reset leaves the CRDs naming a webhook that
//! is gone. `v1alpha1` keeps working (stored objects need no conversion), and `v1beta1` requests,
//! and lists at the preferred version (`v1beta1`: namespace deletion and garbage collection of
//! add-ons stall), fail with the API server's "conversion webhook ... failed" error instead of
//! being served unconverted. The next hub to take the Lease points the CRDs at itself at once.
pub mod convert;
pub mod crd;
pub mod mounted;
pub mod server;
mod slots;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use kube::Client;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::pki::webhook as certs;
use crate::runtime::Shutdown;

/// The CRDs whose versions this webhook converts.
pub const CRDS: [&str; 2] = [
    "clustermanagementaddons.addon.open-cluster-management.io",
    "managedclusteraddons.addon.open-cluster-management.io",
];
/// The path the webhook answers on.
pub const PATH: &str = "/convert";
/// How long a stopping hub spends setting the CRDs back, so stepping down stays bounded when the
/// API server is what failed: within the process's stop deadline
/// ([`crate::runtime::shutdown::STOP_DEADLINE`]).
const RESET_TIMEOUT: Duration = Duration::from_secs(3);

/// A running webhook: where the API server reaches it and the CA that signed its certificate.
pub struct Serving {
    /// `https://<ip>:<port>/convert`.
    pub url: String,
    /// PEM of the CA, for `caBundle`.
    pub ca: String,
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

/// Starts the webhook for the API server at `url`; it serves until `shutdown` is cancelled.
pub async fn serve(url: &http::Uri, shutdown: Shutdown) -> anyhow::Result<Serving> {
    let ip = local_ip_towards(url).await?;
    let listener = TcpListener::bind(SocketAddr::new(ip, 0)).await?;
    let addr = listener.local_addr()?;
    let now = crate::pki::now_seconds();
    let signer = certs::issue_signer(now)?;
    let serving = certs::issue_serving(&certs::issuer(&signer)?, &[ip.to_string()], now)?;
    let tls = tls_config(&serving)?;
    server::spawn(listener, TlsAcceptor::from(Arc::new(tls)), shutdown);
    // A socket address prints an IPv6 host in brackets, as a URL needs it.
    let url = format!("https://{addr}{PATH}");
    tracing::info!("add-on conversion webhook serving at {url}");
    Ok(Serving {
        url,
        ca: signer.cert,
    })
}

fn tls_config(serving: &certs::CertKey) -> anyhow::Result<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = crate::pki::certificates_der(serving.cert.as_bytes())?
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

/// The ConversionReview answering `review`: every object converted, or a failure naming why.
/// Takes the review by value so that its objects are converted in place, not copied.
#[must_use]
pub fn review_response(mut review: Value) -> Value {
    let request = &mut review["request"];
    let desired = request["desiredAPIVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let objects = match request["objects"].take() {
        Value::Array(objects) => objects,
        _ => Vec::new(),
    };
    let converted: Result<Vec<Value>, String> = objects
        .into_iter()
        .map(|o| convert::convert(o, &desired))
        .collect();
    let (objects, result) = match converted {
        Ok(objects) => (objects, json!({"status": "Success"})),
        Err(message) => (Vec::new(), json!({"status": "Failure", "message": message})),
    };
    let uid = review["request"]["uid"].take();
    json!({
        "apiVersion": review["apiVersion"].as_str().unwrap_or("apiextensions.k8s.io/v1"),
        "kind": "ConversionReview",
        "response": {"uid": uid, "convertedObjects": objects, "result": result},
    })
}

/// Who serves the webhook and points the CRDs at it.
#[derive(Clone, Debug)]
pub enum Webhook {
    /// The leading hub process, on the address it reaches the API server (at this URL) from,
    /// pointing the CRDs at itself while it leads: the in-process modes.
    Leader(http::Uri),
    /// Every hub pod, behind the hub's Service ([`mounted`]); the operator points the CRDs at
    /// the Service, so the leader does nothing here.
    Service,
}

/// As the leader: serves the webhook and keeps both CRDs pointed at it until `shutdown` is
/// cancelled, then points them back to no conversion if they still name it, and only then stops
/// serving. The CRDs may not exist yet (the operator installs them): it retries until they do.
/// Behind the Service there is nothing to do while leading.
pub async fn run(hub: Client, webhook: Webhook, shutdown: Shutdown) -> anyhow::Result<()> {
    let url = match webhook {
        Webhook::Leader(url) => url,
        Webhook::Service => {
            shutdown.cancelled().await;
            return Ok(());
        }
    };
    // Not a child of `shutdown`: the webhook answers until the CRDs no longer name it.
    let stop_serving = Shutdown::new();
    let _stop_serving = stop_serving.clone().drop_guard();
    let serving = serve(&url, stop_serving)
        .await
        .context("starting the add-on conversion webhook")?;
    let pointed = async {
        let mut backoff = crate::runtime::Backoff::capped(Duration::from_secs(10));
        loop {
            match crd::point_at(&hub, &serving).await {
                Ok(()) => return,
                Err(e) => tracing::debug!(
                    "pointing the add-on CRDs at the conversion webhook: {}",
                    crate::runtime::report::chain(&e)
                ),
            }
            tokio::time::sleep(backoff.next_delay()).await;
        }
    };
    // A write dropped in flight can still land, but only on the resourceVersion it read: never
    // over a newer leader's. At worst it lands after the reset below has read, and the CRDs name
    // this webhook once it is gone: as after a crash, until the next hub points them at itself.
    tokio::select! {
        () = shutdown.cancelled() => {},
        () = pointed => shutdown.cancelled().await,
    }
    match tokio::time::timeout(RESET_TIMEOUT, crd::reset_if_ours(&hub, &serving)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(
            "setting the add-on CRDs back to no conversion: {}",
            crate::runtime::report::chain(&e)
        ),
        Err(_) => tracing::warn!(
            "setting the add-on CRDs back to no conversion: no answer within {RESET_TIMEOUT:?}"
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_is_answered_with_its_uid_and_the_converted_objects() {
        let review = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "abc", "desiredAPIVersion": "addon.open-cluster-management.io/v1beta1", "objects": [
                {"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn", "metadata": {"name": "a"}, "spec": {}}
            ]},
        });
        let response = review_response(review);
        assert_eq!(response["response"]["uid"], "abc");
        assert_eq!(response["response"]["result"]["status"], "Success");
        assert_eq!(
            response["response"]["convertedObjects"][0]["apiVersion"],
            "addon.open-cluster-management.io/v1beta1"
        );
    }

    #[test]
    fn a_review_with_another_kind_fails_whole() {
        let review = json!({"request": {"uid": "x", "desiredAPIVersion": "v9", "objects": [{"apiVersion": "v1", "kind": "Pod"}]}});
        let response = review_response(review);
        assert_eq!(response["response"]["result"]["status"], "Failure");
        assert_eq!(response["response"]["convertedObjects"], json!([]));
    }

    #[tokio::test]
    async fn a_loopback_hub_is_served_on_loopback() {
        let ip = local_ip_towards(&"https://127.0.0.1:6443".parse().unwrap())
            .await
            .unwrap();
        assert!(ip.is_loopback());
    }
}
