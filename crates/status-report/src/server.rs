//! The manager's endpoint: `POST /status` over HTTPS, from agents holding a certificate of the
//! add-on's CA. The cluster is the certificate's ([`ocm_addon_framework::identity::cluster_of`]),
//! never the request's: an agent reports for its own cluster only. Each report makes the add-on
//! `Available` on that cluster; a cluster silent for [`SILENCE`] goes `Unknown`.
//!
//! Bounded against whoever can connect: [`MAX_CONNECTIONS`] at once (more are closed at once),
//! [`HANDSHAKE_TIMEOUT`] for the TLS handshake, [`TIMEOUT`] for a request, [`MAX_BODY`] bytes of
//! it. The serving certificate is issued again every day ([`RENEW_SERVING`]).
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use kube::Client;
use kube::api::{Api, ListParams};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;

use ocm_addon_framework::api::ManagedClusterAddOn;
use ocm_addon_framework::{CertKey, Shutdown, identity, set_available, signer};

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 64;
/// For a TLS handshake, and for a request's head and body.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest report.
pub const MAX_BODY: usize = 4096;
/// How long a cluster may stay silent before its add-on is `Unknown`.
pub const SILENCE: Duration = Duration::from_secs(90);

/// What every connection shares: the hub, the add-on's name, each cluster's last report.
struct Shared {
    hub: Client,
    addon: String,
    last: Mutex<HashMap<String, Instant>>,
}

/// The manager's TLS: its serving certificate is issued from the add-on's CA for `dns_names`,
/// again every [`RENEW_SERVING`] (it is valid 30 days).
pub struct Tls {
    /// The add-on's CA.
    pub ca: CertKey,
    /// The names and addresses agents reach the manager by.
    pub dns_names: Vec<String>,
}

impl Tls {
    fn acceptor(&self) -> anyhow::Result<TlsAcceptor> {
        let serving = signer::serving(&self.ca, &self.dns_names)?;
        Ok(TlsAcceptor::from(Arc::new(signer::server_config(
            &self.ca, &serving,
        )?)))
    }
}

/// How often the serving certificate is issued again.
pub const RENEW_SERVING: Duration = Duration::from_secs(24 * 3600);
/// For a TLS handshake: short, since it is what a caller without a certificate can hold.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(3);

/// Serves `listener` with `tls` until `shutdown` is cancelled, writing add-on `addon`'s health on
/// the hub. A connection beyond [`MAX_CONNECTIONS`] is closed at once.
pub async fn serve(
    listener: TcpListener,
    tls: Tls,
    hub: Client,
    addon: String,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let mut acceptor = tls.acceptor()?;
    let mut issued = Instant::now();
    let shared = Arc::new(Shared {
        hub,
        addon,
        last: Mutex::default(),
    });
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    // Every cluster the add-on is on is expected to report from now: one whose agent stopped
    // while no manager ran goes Unknown too.
    let enabled = Api::<ManagedClusterAddOn>::all(shared.hub.clone())
        .list_metadata(&ListParams::default().fields(&format!("metadata.name={}", shared.addon)))
        .await?;
    shared
        .last
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .extend(
            enabled
                .items
                .into_iter()
                .filter_map(|m| m.metadata.namespace)
                .map(|cluster| (cluster, Instant::now())),
        );
    tokio::spawn(mark_silent(Arc::clone(&shared), shutdown.clone()));
    loop {
        let stream = tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::debug!("accept: {e}");
                    continue;
                }
            },
        };
        let Ok(permit) = Arc::clone(&slots).try_acquire_owned() else {
            continue; // full: dropped, closing it
        };
        if issued.elapsed() > RENEW_SERVING {
            match tls.acceptor() {
                Ok(fresh) => (acceptor, issued) = (fresh, Instant::now()),
                Err(e) => tracing::warn!("issuing the serving certificate again: {e:#}"),
            }
        }
        let (acceptor, shared) = (acceptor.clone(), Arc::clone(&shared));
        tokio::spawn(async move {
            let _permit = permit;
            let Ok(Ok(tls)) =
                tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
            else {
                return;
            };
            let cluster = tls
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|leaf| identity::cluster_of(leaf, &shared.addon));
            let service = hyper::service::service_fn(move |request| {
                let (shared, cluster) = (Arc::clone(&shared), cluster.clone());
                async move { Ok::<_, std::convert::Infallible>(handle(request, cluster, &shared).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(TIMEOUT)
                .serve_connection(TokioIo::new(tls), service);
            let _ = tokio::time::timeout(TIMEOUT * 3, connection).await;
        });
    }
}

async fn handle(
    request: Request<Incoming>,
    cluster: Option<String>,
    shared: &Shared,
) -> Response<Full<Bytes>> {
    let reply = |code: StatusCode, text: &str| {
        let mut response = Response::new(Full::new(Bytes::from(text.to_owned())));
        *response.status_mut() = code;
        response
    };
    if request.method() != Method::POST || request.uri().path() != "/status" {
        return reply(StatusCode::NOT_FOUND, "POST /status only\n");
    }
    let Some(cluster) = cluster else {
        return reply(
            StatusCode::FORBIDDEN,
            "the certificate names no cluster of this add-on\n",
        );
    };
    let body = tokio::time::timeout(
        TIMEOUT,
        Limited::new(request.into_body(), MAX_BODY).collect(),
    )
    .await;
    let Ok(Ok(body)) = body else {
        return reply(
            StatusCode::BAD_REQUEST,
            "a report is at most 4 KiB, sent within 10 s\n",
        );
    };
    let Ok(report) = serde_json::from_slice::<serde_json::Value>(&body.to_bytes()) else {
        return reply(StatusCode::BAD_REQUEST, "a report is JSON\n");
    };
    let version = report["kubernetesVersion"].as_str().unwrap_or("unknown");
    let message = format!("the agent reports Kubernetes {version}");
    match set_available(
        &shared.hub,
        &shared.addon,
        &cluster,
        Some(true),
        "StatusReported",
        &message,
    )
    .await
    {
        Ok(()) => {
            shared
                .last
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(cluster.clone(), Instant::now());
            tracing::info!(%cluster, %version, "status reported");
            reply(StatusCode::NO_CONTENT, "")
        }
        Err(e) => {
            tracing::warn!(%cluster, "recording a report: {e}");
            reply(
                StatusCode::SERVICE_UNAVAILABLE,
                "the report could not be recorded\n",
            )
        }
    }
}

/// Every tenth of [`SILENCE`], makes the add-on `Unknown` on each cluster silent for longer.
async fn mark_silent(shared: Arc<Shared>, shutdown: Shutdown) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(SILENCE / 10) => {}
        }
        let silent: Vec<String> = shared
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, at)| at.elapsed() > SILENCE)
            .map(|(cluster, _)| cluster.clone())
            .collect();
        for cluster in silent {
            let message = format!("no report for {}s", SILENCE.as_secs());
            let marked = set_available(
                &shared.hub,
                &shared.addon,
                &cluster,
                None,
                "StatusReportMissing",
                &message,
            )
            .await;
            // Marked, or the add-on is gone from that cluster: either way not looked at again.
            if marked.is_ok() || matches!(&marked, Err(kube::Error::Api(e)) if e.code == 404) {
                shared
                    .last
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&cluster);
            }
        }
    }
}
