//! `/metrics` over HTTPS to callers the API server vouches for, as upstream's components serve
//! it: the caller's bearer token is checked with a TokenReview, and its user must be allowed `get`
//! on the non-resource URL `/metrics` (a SubjectAccessReview), which the usual monitoring role
//! grants. The certificate is self-signed, made at start, as controller-runtime's default is:
//! the token is what is secret, and TLS keeps it off the wire. The plain-HTTP probe port serves no
//! metrics, so that an unauthenticated client learns nothing there.
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};

use super::Shutdown;
use super::callers::{Decision, Reviewer, serve_https};

/// The port the pods serve `/metrics` on (upstream's components' secure port).
pub const PORT: i32 = 8443;
/// The path, and the non-resource URL a caller must be allowed to `get`.
pub const PATH: &str = "/metrics";
/// From accepting a connection to the end of its TLS handshake, and for a request's head.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `/metrics` on `addr`, checking callers with `client`'s API server, until `shutdown`.
/// Returns the address bound (`addr` may ask for any port).
///
/// # Errors
/// The address cannot be bound, or no certificate could be made.
pub async fn serve(
    addr: SocketAddr,
    client: kube::Client,
    shutdown: Shutdown,
) -> anyhow::Result<SocketAddr> {
    let reviewer: Arc<Reviewer> = Reviewer::new(client);
    serve_https(addr, PATH, HANDSHAKE_TIMEOUT, shutdown, move |req| {
        let reviewer = reviewer.clone();
        async move { respond(&req, &reviewer).await }
    })
    .await
}

async fn respond(req: &Request<Incoming>, reviewer: &Reviewer) -> Response<Full<Bytes>> {
    let answer = |status: StatusCode, body: String, content_type: &str| {
        Response::builder()
            .status(status)
            .header("content-type", content_type)
            .body(Full::new(Bytes::from(body)))
            .expect("a valid response")
    };
    if req.uri().path() != PATH || req.method() != Method::GET {
        return answer(StatusCode::NOT_FOUND, "not found".into(), "text/plain");
    }
    match reviewer.decide(req, PATH, "get").await {
        Decision::Allowed(_) => answer(
            StatusCode::OK,
            super::metrics::text(),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        ),
        Decision::Unauthenticated(why) => answer(StatusCode::UNAUTHORIZED, why, "text/plain"),
        Decision::Forbidden(why) => answer(StatusCode::FORBIDDEN, why, "text/plain"),
    }
}
