//! The webhooks' HTTPS server, bounded against anything that can connect to its port: the API
//! server presents no client certificate, so a connection is not known to be the API server's
//! until it sends a review. Before these bounds, idle sockets could exhaust the hub process's
//! file descriptors and one large POST its memory. Each review is answered by the [`Routes`] for
//! its path.
//!
//! Every resource a connection can hold is capped, and held only for a bounded time:
//! - sockets: [`MAX_CONNECTIONS`], the longest idle closed when a new one arrives at the cap
//!   (`slots`);
//! - time: [`HANDSHAKE_TIMEOUT`] for TLS, [`HEADER_TIMEOUT`] for a request's head (and between
//!   requests of a kept-alive connection), [`REQUEST_TIMEOUT`] for its body;
//! - memory: [`MAX_BODY`] per review (413 beyond, before reading when the length is declared),
//!   [`BODY_BUDGET`] across all reviews being read or converted (503 when it stays exhausted),
//!   and a [`READ_BUFFER`] per connection for request heads.
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;

use super::Routes;
use super::slots::{Slot, Slots};
use ocm_runtime::Shutdown;

/// Connections open at once. The API server keeps a few per hub process; the rest of the cap is
/// headroom, and it bounds the file descriptors the webhook can take to this plus the listener.
pub const MAX_CONNECTIONS: usize = 256;
/// From accepting a connection to the end of its TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// For a request's head; hyper runs the same timer while a kept-alive connection waits for its
/// next request, so this is also the idle timeout. The API server redials a closed connection.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// From a request's head to the last byte of its body. The API server gives a webhook 30 s at most;
/// even a [`MAX_BODY`] review needs only 1.6 MB/s to arrive in time.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest ConversionReview accepted. One object is at most 1.5 MiB (etcd's limit), but the
/// API server converts a list in one review (a garbage-collector or `kubectl get -A` list at
/// `v1beta1`), so this leaves room for about five thousand add-ons of 3 KiB in one review.
pub const MAX_BODY: usize = 16 << 20;
/// Request bytes held at once across all connections, while read and while converted (the
/// parsed JSON takes a few times its text on top). Reserved as bytes arrive, so declaring a
/// length reserves nothing.
pub const BODY_BUDGET: usize = 32 << 20;
/// hyper's read buffer per connection, which bounds a request head: a review's head is a few
/// hundred bytes, and bodies stream through it.
pub const READ_BUFFER: usize = 64 << 10;
/// The pause after a failed accept (out of file descriptors, say), so the loop does not spin.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

// A review of the largest size fits in the budget, and its size in a u32 of permits.
const _: () = assert!(MAX_BODY <= BODY_BUDGET && MAX_BODY <= u32::MAX as usize);
// The API server gives a webhook 30 s at most: answer or refuse before it gives up.
const _: () = assert!(HEADER_TIMEOUT.as_secs() + REQUEST_TIMEOUT.as_secs() < 30);

/// Why a request got no ConversionReview back.
#[derive(Debug, thiserror::Error)]
enum Rejected {
    /// A path no webhook is served on.
    #[error("not found")]
    NotFound,
    /// Another method than POST.
    #[error("a review is POSTed")]
    Method,
    /// A body over [`MAX_BODY`].
    #[error("a review is at most {MAX_BODY} bytes")]
    TooLarge,
    /// The body did not arrive within [`REQUEST_TIMEOUT`].
    #[error("the request body did not arrive within {REQUEST_TIMEOUT:?}")]
    Timeout,
    /// [`BODY_BUDGET`] stayed exhausted by other requests for [`REQUEST_TIMEOUT`].
    #[error("busy: {BODY_BUDGET} bytes of other reviews are in flight")]
    Busy,
    /// The connection failed while the body was read.
    #[error("reading the request body")]
    Body(#[source] hyper::Error),
    /// The body is not JSON.
    #[error("not a review")]
    NotJson(#[source] serde_json::Error),
}

impl Rejected {
    fn status(&self) -> StatusCode {
        match self {
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Method => StatusCode::METHOD_NOT_ALLOWED,
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Timeout => StatusCode::REQUEST_TIMEOUT,
            Self::Busy => StatusCode::SERVICE_UNAVAILABLE,
            Self::Body(_) | Self::NotJson(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// What every connection shares.
struct Shared {
    tls: TlsAcceptor,
    routes: std::sync::Arc<dyn Routes>,
    slots: Arc<Slots>,
    budget: Arc<Semaphore>,
}

/// Serves `listener` with `tls` until `shutdown` is cancelled; connections then finish the
/// request they are in (within [`REQUEST_TIMEOUT`]) and close.
pub(super) fn spawn(
    listener: TcpListener,
    tls: TlsAcceptor,
    routes: Arc<dyn Routes>,
    shutdown: Shutdown,
) {
    let shared = Arc::new(Shared {
        tls,
        routes,
        slots: Slots::new(MAX_CONNECTIONS),
        budget: Arc::new(Semaphore::new(BODY_BUDGET)),
    });
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = shutdown.cancelled() => return,
                a = listener.accept() => a,
            };
            match accepted {
                Ok((stream, _)) => {
                    let slot = shared.slots.admit();
                    tokio::spawn(connection(
                        stream,
                        slot,
                        Arc::clone(&shared),
                        shutdown.clone(),
                    ));
                }
                Err(e) => {
                    tracing::debug!("webhook accept: {e}");
                    tokio::select! {
                        () = shutdown.cancelled() => return,
                        () = tokio::time::sleep(ACCEPT_ERROR_PAUSE) => {}
                    }
                }
            }
        }
    });
}

/// One connection, from the TLS handshake to its close: by its peer, a timeout, eviction, or
/// shutdown.
async fn connection(stream: TcpStream, slot: Slot, shared: Arc<Shared>, shutdown: Shutdown) {
    let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, shared.tls.accept(stream));
    let stream = tokio::select! {
        () = slot.evicted() => return,
        () = shutdown.cancelled() => return,
        r = handshake => match r {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => return tracing::debug!("webhook handshake: {e}"),
            Err(_) => return tracing::debug!("webhook handshake timed out"),
        },
    };
    slot.touch();
    let slot = Arc::new(slot);
    let service = {
        let (slot, shared) = (Arc::clone(&slot), Arc::clone(&shared));
        hyper::service::service_fn(move |request| {
            let (slot, shared) = (Arc::clone(&slot), Arc::clone(&shared));
            async move { Ok::<_, Infallible>(handle(request, &slot, &shared).await) }
        })
    };
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_buf_size(READ_BUFFER)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        () = slot.evicted() => return,
        () = shutdown.cancelled() => {
            conn.as_mut().graceful_shutdown();
            match tokio::time::timeout(REQUEST_TIMEOUT, conn).await {
                Ok(r) => r,
                Err(_) => return,
            }
        }
    };
    if let Err(e) = result {
        tracing::debug!("webhook connection: {e}");
    }
}

async fn handle(request: Request<Incoming>, slot: &Slot, shared: &Shared) -> Response<Full<Bytes>> {
    slot.touch();
    let path = request.uri().path().to_owned();
    let answered = match review(request, slot, shared).await {
        // The budget stays held until the answer is built: the parsed review takes memory too.
        Ok((review, held)) => match shared.routes.answer(&path, review) {
            Some(answer) => Ok((answer.await, held)),
            None => Err(Rejected::NotFound),
        },
        Err(rejected) => Err(rejected),
    };
    let response = match answered {
        Ok((answer, _held)) => reply(StatusCode::OK, Bytes::from(answer.to_string())),
        Err(rejected) => {
            let message = ocm_runtime::report::chain(&rejected);
            let mut response = reply(rejected.status(), Bytes::from(message));
            // An unread body leaves the connection unusable: say so before hyper closes it.
            response.headers_mut().insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
            response
        }
    };
    slot.touch();
    response
}

/// The review in `request`, read within the limits, with the budget its bytes hold.
async fn review(
    request: Request<Incoming>,
    slot: &Slot,
    shared: &Shared,
) -> Result<(serde_json::Value, Option<OwnedSemaphorePermit>), Rejected> {
    if !shared.routes.serves(request.uri().path()) {
        return Err(Rejected::NotFound);
    }
    if request.method() != Method::POST {
        return Err(Rejected::Method);
    }
    if declared_length(&request).is_some_and(|n| n > MAX_BODY as u64) {
        return Err(Rejected::TooLarge);
    }
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let (body, held) = read_body(request.into_body(), deadline, slot, &shared.budget).await?;
    let review = serde_json::from_slice(&body).map_err(Rejected::NotJson)?;
    Ok((review, held))
}

/// The `Content-Length` a request declares, if any (hyper has already rejected a malformed one).
fn declared_length<B>(request: &Request<B>) -> Option<u64> {
    request
        .headers()
        .get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Reads `body` by `deadline`, at most [`MAX_BODY`], reserving [`BODY_BUDGET`] as bytes arrive.
async fn read_body(
    mut body: Incoming,
    deadline: Instant,
    slot: &Slot,
    budget: &Arc<Semaphore>,
) -> Result<(Vec<u8>, Option<OwnedSemaphorePermit>), Rejected> {
    let mut bytes = Vec::new();
    let mut held: Option<OwnedSemaphorePermit> = None;
    loop {
        let frame = tokio::time::timeout_at(deadline, body.frame())
            .await
            .map_err(|_| Rejected::Timeout)?;
        let Some(frame) = frame else {
            return Ok((bytes, held));
        };
        let Ok(data) = frame.map_err(Rejected::Body)?.into_data() else {
            continue; // trailers
        };
        if bytes.len() + data.len() > MAX_BODY {
            return Err(Rejected::TooLarge);
        }
        // At most MAX_BODY, so it fits in u32.
        let n = u32::try_from(data.len()).map_err(|_| Rejected::TooLarge)?;
        let permit = tokio::time::timeout_at(deadline, Arc::clone(budget).acquire_many_owned(n))
            .await
            .map_err(|_| Rejected::Busy)?
            .map_err(|_| Rejected::Busy)?;
        match &mut held {
            Some(h) => h.merge(permit),
            None => held = Some(permit),
        }
        bytes.extend_from_slice(&data);
        slot.touch();
    }
}

fn reply(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let content_type = if status == StatusCode::OK {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rejection_has_its_status() {
        assert_eq!(Rejected::TooLarge.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(Rejected::Timeout.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(Rejected::Busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(Rejected::Method.status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    #[test]
    fn a_declared_length_is_read_from_the_header() {
        let request = Request::builder()
            .header(http::header::CONTENT_LENGTH, "104857600")
            .body(())
            .unwrap();
        assert_eq!(declared_length(&request), Some(100 << 20));
        assert_eq!(declared_length(&Request::new(())), None);
    }
}
