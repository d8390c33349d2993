//! The plain-HTTP endpoint a kubelet reads in a pod: `/healthz` (the process answers) and
//! `/readyz` (it reached its API server and its loops run). `/metrics` is served apart, to
//! authenticated callers only ([`crate::metrics_server`]). Nothing secret is served
//! here, so no TLS; every connection is bounded
//! in time and count, as anything on the pod network can reach the port. The count is kept per
//! source address as well as in all: a client holding connections open (slowly sending, or not
//! at all) fills only its own share, so the kubelet's probes, from the node's address, are still
//! answered and the pod is not restarted for another client's sake.
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};

use crate::Shutdown;

/// Connections served at once from all sources.
const MAX_CONNECTIONS: usize = 1024;
/// Connections served at once from one source address: probes and scrapes need a handful.
const MAX_PER_SOURCE: usize = 8;
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
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr} for the health endpoint: {e}"))?;
    tracing::info!(
        "serving /healthz and /readyz on http://{}",
        listener.local_addr()?
    );
    tokio::spawn(accept(listener, readiness, shutdown));
    Ok(())
}

/// The connections open, per source address.
#[derive(Default)]
struct Open(Mutex<HashMap<IpAddr, usize>>);

/// One open connection, counted until dropped.
struct Slot {
    open: Arc<Open>,
    source: IpAddr,
}

impl Open {
    /// A slot for a connection from `source`, unless that source or everyone is at the cap.
    fn take(self: &Arc<Self>, source: IpAddr) -> Option<Slot> {
        let mut open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let total: usize = open.values().sum();
        let mine = open.entry(source).or_default();
        if *mine >= MAX_PER_SOURCE || total >= MAX_CONNECTIONS {
            return None;
        }
        *mine += 1;
        Some(Slot {
            open: self.clone(),
            source,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.open.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.source) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.source);
            }
        }
    }
}

async fn accept(listener: TcpListener, readiness: Arc<Readiness>, shutdown: Shutdown) {
    accept_capped(listener, "probe", shutdown, move |stream| {
        let readiness = readiness.clone();
        let service = hyper::service::service_fn(move |req| {
            std::future::ready(Ok::<_, Infallible>(respond(&req, &readiness)))
        });
        serve_http1(TokioIo::new(stream), service, HEADER_TIMEOUT)
    })
    .await;
}

/// Accepts connections on `listener` until `shutdown`, each within the caps of [`Open`] (at a
/// cap the newcomer is dropped: a kubelet retries its probe), and runs `serve`'s future for each
/// on a task of its own, which holds the connection's slot until it ends or `shutdown`. `what`
/// names the endpoint in logs.
pub(super) async fn accept_capped<F, Fut>(
    listener: TcpListener,
    what: &str,
    shutdown: Shutdown,
    serve: F,
) where
    F: Fn(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let open = Arc::new(Open::default());
    loop {
        let (stream, source) = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => (stream, peer.ip()),
                Err(e) => {
                    tracing::debug!("accepting a {what} connection: {e}");
                    continue;
                }
            },
        };
        let Some(permit) = open.take(source) else {
            continue;
        };
        let connection = serve(stream);
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let _permit = permit;
            tokio::select! {
                () = connection => {},
                () = shutdown.cancelled() => {},
            }
        });
    }
}

/// Serves HTTP/1 on `io` with `service`, a request head due within `header_timeout` (also the
/// idle timeout between kept-alive requests).
pub(super) async fn serve_http1<I, S>(io: I, service: S, header_timeout: Duration)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Full<Bytes>>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(io, service)
        .await;
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
        _ => (StatusCode::NOT_FOUND, "not found".to_owned(), "text/plain"),
    };
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::{TcpSocket, TcpStream};

    use super::*;

    async fn get(addr: SocketAddr, path: &str) -> String {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(
                format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").as_bytes(),
            )
            .await
            .unwrap();
        let mut out = String::new();
        let _ = stream.read_to_string(&mut out).await;
        out
    }

    /// 200 clients from one address hold connections open, sending half a request: the probes
    /// from another address (the kubelet's, the node's) are all answered meanwhile.
    #[tokio::test]
    async fn slow_clients_of_one_source_do_not_starve_the_probes() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let readiness = Arc::new(Readiness::default());
        readiness.set_ready();
        let shutdown = Shutdown::new();
        tokio::spawn(accept(listener, readiness, shutdown.clone()));
        let mut slow = Vec::new();
        for _ in 0..200 {
            let socket = TcpSocket::new_v4().unwrap();
            socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
            let mut stream = socket.connect(addr).await.unwrap();
            let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\n").await;
            slow.push(stream);
        }
        for _ in 0..20 {
            let answer = tokio::time::timeout(Duration::from_secs(1), get(addr, "/readyz"))
                .await
                .expect("a probe was not answered within a second");
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        }
        // Past its share, a flooding source's connections are closed at once.
        let mut last = slow.pop().unwrap();
        let mut buf = [0u8; 1];
        let closed = tokio::time::timeout(Duration::from_secs(1), last.read(&mut buf)).await;
        assert!(matches!(closed, Ok(Ok(0) | Err(_))), "{closed:?}");
        shutdown.cancel();
    }
}
