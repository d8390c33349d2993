//! `/metrics` over HTTPS to callers the API server vouches for, as upstream's components serve
//! it: the caller's bearer token is checked with a TokenReview, and its user must be allowed `get`
//! on the non-resource URL `/metrics` (a SubjectAccessReview), which the usual monitoring role
//! grants. The certificate is self-signed, made at start, as controller-runtime's default is:
//! the token is what is secret, and TLS keeps it off the wire. The plain-HTTP probe port serves no
//! metrics, so that an unauthenticated client learns nothing there.
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use super::Shutdown;
use super::probes::{accept_capped, serve_http1};

/// The port the pods serve `/metrics` on (upstream's components' secure port).
pub const PORT: i32 = 8443;
/// The path, and the non-resource URL a caller must be allowed to `get`.
pub const PATH: &str = "/metrics";
/// From accepting a connection to the end of its TLS handshake, and for a request's head.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Reviews asked of the API server at once: a flood of bogus tokens waits here instead of
/// becoming a flood of TokenReviews.
const REVIEWS_IN_FLIGHT: usize = 4;

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
    let tls = TlsAcceptor::from(Arc::new(self_signed()?));
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} for /metrics"))?;
    let bound = listener.local_addr()?;
    tracing::info!("serving {PATH} on https://{bound} to callers allowed to get it");
    let reviewer = Arc::new(Reviewer {
        client,
        in_flight: Semaphore::new(REVIEWS_IN_FLIGHT),
    });
    tokio::spawn(accept(listener, tls, reviewer, shutdown));
    Ok(bound)
}

fn self_signed() -> anyhow::Result<rustls::ServerConfig> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let pair = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])
        .context("making /metrics' self-signed certificate")?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pair.signing_key.serialize_der()));
    Ok(rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(vec![CertificateDer::from(pair.cert.der().to_vec())], key)?)
}

async fn accept(
    listener: TcpListener,
    tls: TlsAcceptor,
    reviewer: Arc<Reviewer>,
    shutdown: Shutdown,
) {
    accept_capped(listener, "metrics", shutdown, move |stream| {
        let (tls, reviewer) = (tls.clone(), reviewer.clone());
        async move {
            let Ok(Ok(stream)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.accept(stream)).await
            else {
                return;
            };
            let service = hyper::service::service_fn(move |req| {
                let reviewer = reviewer.clone();
                async move { Ok::<_, Infallible>(respond(&req, &reviewer).await) }
            });
            serve_http1(TokioIo::new(stream), service, HANDSHAKE_TIMEOUT).await;
        }
    })
    .await;
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
    let token = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match reviewer.decide(token).await {
        Decision::Allowed => answer(
            StatusCode::OK,
            super::metrics::text(),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        ),
        Decision::Unauthenticated(why) => answer(StatusCode::UNAUTHORIZED, why, "text/plain"),
        Decision::Forbidden(why) => answer(StatusCode::FORBIDDEN, why, "text/plain"),
    }
}

/// What a caller may do, as the API server says.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    Allowed,
    Unauthenticated(String),
    Forbidden(String),
}

/// Asks the API server who a token is and whether it may read the metrics.
struct Reviewer {
    client: kube::Client,
    in_flight: Semaphore,
}

impl Reviewer {
    async fn decide(&self, token: Option<&str>) -> Decision {
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return Decision::Unauthenticated("a bearer token is required".into());
        };
        let Ok(_permit) = self.in_flight.acquire().await else {
            return Decision::Unauthenticated("shutting down".into());
        };
        match self.review(token).await {
            Ok(decision) => decision,
            Err(e) => {
                tracing::warn!("reviewing a /metrics caller: {e}");
                Decision::Unauthenticated("the caller could not be reviewed".into())
            }
        }
    }

    async fn review(&self, token: &str) -> Result<Decision, kube::Error> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_owned(),
                audiences: None,
            },
            ..Default::default()
        };
        let reviewed = kube::Api::<TokenReview>::all(self.client.clone())
            .create(&kube::api::PostParams::default(), &review)
            .await?;
        let status = reviewed.status.unwrap_or_default();
        let Some(user) = status.user.filter(|_| status.authenticated == Some(true)) else {
            return Ok(Decision::Unauthenticated("the token is not valid".into()));
        };
        let access = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username.clone(),
                groups: user.groups,
                uid: user.uid,
                extra: user
                    .extra
                    .map(|e| e.into_iter().collect::<std::collections::BTreeMap<_, _>>()),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(PATH.into()),
                    verb: Some("get".into()),
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answered = kube::Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&kube::api::PostParams::default(), &access)
            .await?;
        let name = user.username.unwrap_or_default();
        Ok(match answered.status {
            Some(s) if s.allowed => Decision::Allowed,
            _ => Decision::Forbidden(format!("{name} may not get {PATH}")),
        })
    }
}
