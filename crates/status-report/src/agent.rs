//! The agent: every [`EVERY`], the Kubernetes version of its cluster, sent to the manager's
//! `POST /status` with the client certificate the registration agent keeps for it (read again
//! each time: it is renewed), trusting only the add-on's CA.
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use kube::Client;
use tokio_rustls::TlsConnector;

use ocm_addon_framework::{CertKey, Shutdown, signer};

/// How often the agent reports (the manager marks a cluster `Unknown` after 90 s of silence).
pub const EVERY: Duration = Duration::from_secs(30);

/// Where the agent reports from.
#[derive(Debug, Clone)]
pub struct Options {
    /// The manager, `https://host:port`.
    pub manager: String,
    /// The add-on's CA (PEM).
    pub ca_file: PathBuf,
    /// The directory of `tls.crt` and `tls.key` (the mounted certificate Secret).
    pub cert_dir: PathBuf,
}

/// Reports every [`EVERY`] until `shutdown` is cancelled; `managed` is the cluster reported on.
pub async fn run(opts: Options, managed: Client, shutdown: Shutdown) {
    loop {
        match report_version(&opts, &managed).await {
            Ok(()) => tracing::info!(manager = %opts.manager, "reported"),
            Err(e) => tracing::warn!(manager = %opts.manager, "reporting: {e:#}"),
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(EVERY) => {}
        }
    }
}

async fn report_version(opts: &Options, managed: &Client) -> anyhow::Result<()> {
    let version = managed.apiserver_version().await?.git_version;
    let ca = tokio::fs::read_to_string(&opts.ca_file).await?;
    let client = CertKey {
        cert: tokio::fs::read_to_string(opts.cert_dir.join("tls.crt")).await?,
        key: tokio::fs::read_to_string(opts.cert_dir.join("tls.key")).await?,
    };
    report(
        &opts.manager,
        signer::client_config(&ca, &client)?,
        &version,
    )
    .await
}

/// How long one report may take, connection included: a manager that accepts the connection but
/// never answers (its endpoint not serving yet) must not stall the agent's loop.
const REPORT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// Sends one report of `version` to `manager` over `tls`; an error unless it is taken (204)
/// within [`REPORT_TIMEOUT`].
pub async fn report(manager: &str, tls: rustls::ClientConfig, version: &str) -> anyhow::Result<()> {
    tokio::time::timeout(REPORT_TIMEOUT, send(manager, tls, version))
        .await
        .map_err(|_| anyhow::anyhow!("{manager} did not answer within {REPORT_TIMEOUT:?}"))?
}

async fn send(manager: &str, tls: rustls::ClientConfig, version: &str) -> anyhow::Result<()> {
    let uri: hyper::Uri = format!("{manager}/status").parse()?;
    let host = uri
        .host()
        .ok_or_else(|| anyhow::anyhow!("{manager} names no host"))?;
    let port = uri.port_u16().unwrap_or(443);
    let name = rustls::pki_types::ServerName::try_from(host.trim_matches(['[', ']']).to_owned())?;
    let tcp = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port)).await?;
    let stream = TlsConnector::from(Arc::new(tls)).connect(name, tcp).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let body = serde_json::json!({"kubernetesVersion": version}).to_string();
    let request = hyper::Request::post(&uri)
        .header(hyper::header::HOST, host)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    if status == hyper::StatusCode::NO_CONTENT {
        return Ok(());
    }
    let text = response.into_body().collect().await?.to_bytes();
    anyhow::bail!("{status}: {}", String::from_utf8_lossy(&text).trim())
}
