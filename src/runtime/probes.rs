//! The plain-HTTP endpoint a kubelet and Prometheus read in a pod: `/healthz` (the process
//! answers), `/readyz` (it reached its API server and its loops run), `/metrics`
//! ([`crate::runtime::metrics`]). Nothing secret is served, so no TLS; every connection is bounded
//! in time and count, as anything on the pod network can reach the port.
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::runtime::Shutdown;

/// Connections served at once; probes and scrapes need a handful.
const MAX_CONNECTIONS: usize = 32;
/// For a request's head, and as the idle timeout of a kept-alive connection.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the process is ready, as `/readyz` reports it.
#[derive(Debug, Default)]
pub struct Readiness(AtomicBool);

impl Readiness {
    /// Marks the process ready.
    pub fn set_ready(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_ready(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Binds `addr` and serves the probes until `shutdown` is cancelled.
pub async fn serve(
    addr: SocketAddr,
    readiness: Arc<Readiness>,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let listener = TcpListener::bind(addr).await.map_err(|e| {
        anyhow::anyhow!("cannot listen on {addr} for the health and metrics endpoint: {e}")
    })?;
    tracing::info!(
        "serving /healthz, /readyz and /metrics on http://{}",
        listener.local_addr()?
    );
    tokio::spawn(accept(listener, readiness, shutdown));
    Ok(())
}

async fn accept(listener: TcpListener, readiness: Arc<Readiness>, shutdown: Shutdown) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::debug!("accepting a probe connection: {e}");
                    continue;
                }
            },
        };
        // At the cap, the newcomer is dropped: a kubelet retries its probe.
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            continue;
        };
        let readiness = readiness.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |req| {
                std::future::ready(Ok::<_, Infallible>(respond(&req, &readiness)))
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = conn => {},
                () = shutdown.cancelled() => {},
            }
        });
    }
}

fn respond(req: &Request<Incoming>, readiness: &Readiness) -> Response<Full<Bytes>> {
    let (status, body, content_type) = match req.uri().path() {
        "/healthz" | "/livez" => (StatusCode::OK, "ok".to_owned(), "text/plain"),
        "/readyz" if readiness.is_ready() => (StatusCode::OK, "ok".to_owned(), "text/plain"),
        "/readyz" => (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready".to_owned(),
            "text/plain",
        ),
        "/metrics" => (
            StatusCode::OK,
            super::metrics::text(),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        ),
        _ => (StatusCode::NOT_FOUND, "not found".to_owned(), "text/plain"),
    };
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}
