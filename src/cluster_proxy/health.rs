//! A managed cluster's API server probed through the tunnel: `GET /healthz`, anonymous (no
//! credential crosses the tunnel), over TLS verified as [`super::managed_tls`] says.
use std::time::{Duration, Instant};

use http_body_util::{BodyExt as _, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use kube::ResourceExt as _;

use super::managed_tls;
use crate::api::cluster::ManagedCluster;

/// How long one probe may take, dial included.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// What a probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    /// `/healthz` answered `ok`, in this long (dial, TLS and request).
    Healthy(Duration),
    /// It answered something else.
    Unhealthy(String),
    /// No answer: the reason.
    Unknown(String),
}

/// Probes `cluster`'s API server through `tunnel`.
pub async fn probe(tunnel: &konnectivity::Client, cluster: &ManagedCluster) -> Health {
    match tokio::time::timeout(PROBE_TIMEOUT, attempt(tunnel, cluster)).await {
        Ok(Ok(health)) => health,
        Ok(Err(e)) => Health::Unknown(format!("{e:#}")),
        Err(_) => Health::Unknown(format!("no answer within {}s", PROBE_TIMEOUT.as_secs())),
    }
}

async fn attempt(
    tunnel: &konnectivity::Client,
    cluster: &ManagedCluster,
) -> anyhow::Result<Health> {
    let tls = managed_tls::client_config(&managed_tls::ca_bundle(cluster)?)?;
    let start = Instant::now();
    let stream = tunnel
        .dial(&super::api_server_address(&cluster.name_any()))
        .await?;
    let stream = tokio_rustls::TlsConnector::from(std::sync::Arc::new(tls))
        .connect(managed_tls::server_name(), stream)
        .await
        .map_err(|e| anyhow::anyhow!("TLS with the cluster's API server: {e}"))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let request = http::Request::get("/healthz")
        .header(http::header::HOST, managed_tls::SERVER_NAME)
        .header(http::header::USER_AGENT, crate::cli::USER_AGENT)
        .body(Empty::<Bytes>::new())?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    let elapsed = start.elapsed();
    Ok(if status.is_success() && body.as_ref() == b"ok" {
        Health::Healthy(elapsed)
    } else {
        Health::Unhealthy(format!(
            "{status}: {}",
            String::from_utf8_lossy(&body)
                .chars()
                .take(200)
                .collect::<String>()
        ))
    })
}
