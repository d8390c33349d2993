//! Who is calling an endpoint our pods serve over HTTPS, and what they may do, as the API server
//! says: the caller's bearer token is checked with a TokenReview and each permission with a
//! SubjectAccessReview, as upstream's components (controller-runtime's and the generic API
//! server's delegated authentication and authorisation) check theirs. Used by `/metrics`
//! ([`super::metrics_server`]) and the placement debug endpoint
//! (the placement debug endpoint).
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::PostParams;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use super::Shutdown;
use super::probes::{accept_capped, serve_http1};

/// Reviews asked of the API server at once: a flood of bogus tokens waits here instead of
/// becoming a flood of TokenReviews.
const REVIEWS_IN_FLIGHT: usize = 4;

/// What a caller may do, as the API server says.
#[derive(Debug, PartialEq)]
pub enum Decision {
    /// Authenticated as this user, and allowed.
    Allowed(UserInfo),
    /// No token, or one the API server does not take.
    Unauthenticated(String),
    /// Authenticated, not allowed.
    Forbidden(String),
}

/// Asks the API server who a token is and what it may do.
pub struct Reviewer {
    client: kube::Client,
    in_flight: Semaphore,
}

impl Reviewer {
    /// Reviews with `client`'s API server.
    #[must_use]
    pub fn new(client: kube::Client) -> Arc<Self> {
        Arc::new(Self {
            client,
            in_flight: Semaphore::new(REVIEWS_IN_FLIGHT),
        })
    }

    /// Whether the bearer token of `req` may `verb` the non-resource URL `path`.
    pub async fn decide<B>(&self, req: &Request<B>, path: &str, verb: &str) -> Decision {
        let Some(token) = bearer(req) else {
            return Decision::Unauthenticated("a bearer token is required".into());
        };
        let Ok(_permit) = self.in_flight.acquire().await else {
            return Decision::Unauthenticated("shutting down".into());
        };
        match self.review(token, path, verb).await {
            Ok(decision) => decision,
            Err(e) => {
                tracing::warn!("reviewing a caller of {path}: {e}");
                Decision::Unauthenticated("the caller could not be reviewed".into())
            }
        }
    }

    async fn review(&self, token: &str, path: &str, verb: &str) -> Result<Decision, kube::Error> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_owned(),
                audiences: None,
            },
            ..Default::default()
        };
        let reviewed = kube::Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let status = reviewed.status.unwrap_or_default();
        let Some(user) = status.user.filter(|_| status.authenticated == Some(true)) else {
            return Ok(Decision::Unauthenticated("the token is not valid".into()));
        };
        let access = NonResourceAttributes {
            path: Some(path.into()),
            verb: Some(verb.into()),
        };
        let allowed = self.may(&user, None, Some(access)).await?;
        Ok(if allowed.0 {
            Decision::Allowed(user)
        } else {
            let name = user.username.unwrap_or_default();
            Decision::Forbidden(format!("{name} may not {verb} {path}"))
        })
    }

    /// Whether `user` may do what `resource` (or `non_resource`) says, and the API server's
    /// reason when not.
    ///
    /// # Errors
    /// The review could not be made.
    pub async fn may(
        &self,
        user: &UserInfo,
        resource: Option<ResourceAttributes>,
        non_resource: Option<NonResourceAttributes>,
    ) -> Result<(bool, String), kube::Error> {
        let access = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username.clone(),
                groups: user.groups.clone(),
                uid: user.uid.clone(),
                extra: user
                    .extra
                    .clone()
                    .map(|e| e.into_iter().collect::<std::collections::BTreeMap<_, _>>()),
                resource_attributes: resource,
                non_resource_attributes: non_resource,
            },
            ..Default::default()
        };
        let answered = kube::Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &access)
            .await?;
        Ok(answered
            .status
            .map(|s| (s.allowed, s.reason.unwrap_or_default()))
            .unwrap_or_default())
    }
}

/// The bearer token of `req`'s `Authorization` header.
fn bearer<B>(req: &Request<B>) -> Option<&str> {
    req.headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .filter(|t| !t.is_empty())
}

/// A TLS server configuration with a certificate made now and signed by itself, as
/// controller-runtime's default: the caller's token is what is secret, and TLS keeps it off
/// the wire. `what` names the endpoint in the error.
///
/// # Errors
/// No certificate could be made.
pub fn self_signed(what: &str) -> anyhow::Result<rustls::ServerConfig> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let pair = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])
        .with_context(|| format!("making {what}'s self-signed certificate"))?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pair.signing_key.serialize_der()));
    Ok(rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(vec![CertificateDer::from(pair.cert.der().to_vec())], key)?)
}

/// Serves HTTPS on `addr` with a [`self_signed`] certificate until `shutdown`, each request
/// answered by `respond`; `timeout` bounds a TLS handshake and a request's head. `what` names
/// the endpoint in logs and errors. Returns the address bound (`addr` may ask for any port).
///
/// # Errors
/// The address cannot be bound, or no certificate could be made.
pub async fn serve_https<F, Fut>(
    addr: SocketAddr,
    what: &'static str,
    timeout: Duration,
    shutdown: Shutdown,
    respond: F,
) -> anyhow::Result<SocketAddr>
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let tls = TlsAcceptor::from(Arc::new(self_signed(what)?));
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} for {what}"))?;
    let bound = listener.local_addr()?;
    tracing::info!("serving {what} on https://{bound}");
    tokio::spawn(accept_capped(listener, what, shutdown, move |stream| {
        let (tls, respond) = (tls.clone(), respond.clone());
        async move {
            let Ok(Ok(stream)) = tokio::time::timeout(timeout, tls.accept(stream)).await else {
                return;
            };
            let service = hyper::service::service_fn(move |req| {
                let respond = respond.clone();
                async move { Ok::<_, Infallible>(respond(req).await) }
            });
            serve_http1(TokioIo::new(stream), service, timeout).await;
        }
    }));
    Ok(bound)
}
