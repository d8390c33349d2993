//! The add-on API's conversion webhook, served by the in-process hub: upstream serves `v1alpha1`
//! and `v1beta1` of ClusterManagementAddOn and ManagedClusterAddOn and converts between them in
//! its add-on webhook; here the hub process does it ([`convert`]).
//!
//! The server listens on the address this host reaches the API server from (loopback for a local
//! one), on a port the system picks, with a serving certificate for that address from a CA made
//! at start (the operator's certificate code; the key never leaves memory). It then points both
//! CRDs' `spec.conversion` at itself with that CA, and on shutdown sets them back to `None`, so
//! `v1alpha1` (the stored version) keeps working without it; `v1beta1` needs the hub running.
pub mod convert;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use anyhow::Context as _;
use base64::Engine as _;
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::operator::cluster_manager::certs;
use crate::runtime::Shutdown;

/// The CRDs whose versions this webhook converts.
pub const CRDS: [&str; 2] = [
    "clustermanagementaddons.addon.open-cluster-management.io",
    "managedclusteraddons.addon.open-cluster-management.io",
];
const PATH: &str = "/convert";

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
    let now = crate::agent::registration::rotate::now_seconds();
    let signer = certs::issue_signer(now)?;
    let serving = certs::issue_serving(&certs::issuer(&signer)?, &[ip.to_string()], now)?;
    let tls = tls_config(&serving)?;
    let acceptor = TlsAcceptor::from(Arc::new(tls));
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = shutdown.cancelled() => return,
                a = listener.accept() => a,
            };
            let Ok((stream, _)) = accepted else { continue };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let service = hyper::service::service_fn(handle);
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!("conversion webhook connection: {e}");
                }
            });
        }
    });
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

async fn handle(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    if request.uri().path() != PATH {
        return Ok(reply(
            StatusCode::NOT_FOUND,
            Bytes::from_static(b"not found"),
        ));
    }
    let body = request.into_body().collect().await?.to_bytes();
    let review: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return Ok(reply(
                StatusCode::BAD_REQUEST,
                Bytes::from(format!("not a ConversionReview: {e}")),
            ));
        }
    };
    let response = review_response(&review);
    Ok(reply(StatusCode::OK, Bytes::from(response.to_string())))
}

/// The ConversionReview answering `review`: every object converted, or a failure naming why.
#[must_use]
pub fn review_response(review: &Value) -> Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let objects = request["objects"].as_array().cloned().unwrap_or_default();
    let converted: Result<Vec<Value>, String> = objects
        .into_iter()
        .map(|o| convert::convert(o, desired))
        .collect();
    let (objects, result) = match converted {
        Ok(objects) => (objects, json!({"status": "Success"})),
        Err(message) => (Vec::new(), json!({"status": "Failure", "message": message})),
    };
    json!({
        "apiVersion": review["apiVersion"].as_str().unwrap_or("apiextensions.k8s.io/v1"),
        "kind": "ConversionReview",
        "response": {"uid": request["uid"], "convertedObjects": objects, "result": result},
    })
}

fn reply(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Serves the webhook and keeps both CRDs pointed at it until `shutdown` is cancelled, then
/// points them back to no conversion. The CRDs may not exist yet (the operator installs them):
/// it retries until they do.
pub async fn run(hub: Client, url: http::Uri, shutdown: Shutdown) -> anyhow::Result<()> {
    let serving = serve(&url, shutdown.child_token())
        .await
        .context("starting the add-on conversion webhook")?;
    let mut backoff = crate::runtime::Backoff::capped(std::time::Duration::from_secs(10));
    loop {
        match configure(&hub, Some(&serving)).await {
            Ok(()) => break,
            Err(e) => tracing::debug!("pointing the add-on CRDs at the conversion webhook: {e}"),
        }
        tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            () = tokio::time::sleep(backoff.next_delay()) => {}
        }
    }
    shutdown.cancelled().await;
    if let Err(e) = configure(&hub, None).await {
        tracing::warn!("setting the add-on CRDs back to no conversion: {e}");
    }
    Ok(())
}

/// Points both CRDs' conversion at `serving` (`Some`) or back to none (`None`).
pub async fn configure(hub: &Client, serving: Option<&Serving>) -> Result<(), kube::Error> {
    let conversion = match serving {
        Some(s) => json!({
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": s.url,
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(&s.ca),
                },
            },
        }),
        None => json!({"strategy": "None", "webhook": null}),
    };
    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    for name in CRDS {
        crds.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"conversion": conversion}})),
        )
        .await?;
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
        let response = review_response(&review);
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
        let response = review_response(&review);
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
