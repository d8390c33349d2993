//! The agent's CertificateSigningRequest: an ECDSA P-256 key, a request for
//! `CN=system:open-cluster-management:<cluster>:<agent>`, `O=system:open-cluster-management:<cluster>`,
//! `O=system:open-cluster-management:managed-clusters`, sent with `generateName: <cluster>-`, the
//! cluster-name label and the kube-apiserver-client signer; then a watch until it is signed.
use std::collections::BTreeMap;
use std::pin::pin;

use futures::StreamExt as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestSpec,
};
use kube::api::{Api, ObjectMeta};
use kube::runtime::{WatchStreamExt as _, watcher};
use ocm_runtime::Shutdown;

use super::{AgentOptions, Error};
use ocm_api::cluster::CLUSTER_NAME_LABEL;
use ocm_api::names::CLIENT_SIGNER;
use ocm_runtime::identity;

/// The usages the agent asks for (upstream's).
pub const USAGES: [&str; 3] = ["digital signature", "key encipherment", "client auth"];

/// A PEM certificate request for the agent's identity, signed by `key`.
pub fn request_pem(cluster: &str, agent: &str, key: &rcgen::KeyPair) -> Result<String, Error> {
    identity::request::cluster_agent(cluster, agent, key)
        .map_err(|e| Error::Other(format!("building the CSR: {e}")))
}

pub use identity::request::subject_request;

/// The CSR object for a PEM request.
#[must_use]
pub fn object(
    cluster: &str,
    request_pem: &str,
    expiration_seconds: Option<i32>,
) -> CertificateSigningRequest {
    CertificateSigningRequest {
        metadata: ObjectMeta {
            generate_name: Some(format!("{cluster}-")),
            labels: Some(BTreeMap::from([(
                CLUSTER_NAME_LABEL.to_string(),
                cluster.to_string(),
            )])),
            ..Default::default()
        },
        spec: CertificateSigningRequestSpec {
            request: ByteString(request_pem.as_bytes().to_vec()),
            signer_name: CLIENT_SIGNER.into(),
            usages: Some(USAGES.iter().map(ToString::to_string).collect()),
            expiration_seconds,
            ..Default::default()
        },
        status: None,
    }
}

/// What a CSR's status says: `Some(certificate)` once signed, an error once denied or failed.
pub fn outcome(csr: &CertificateSigningRequest) -> Result<Option<String>, Error> {
    let Some(status) = &csr.status else {
        return Ok(None);
    };
    let name = csr.metadata.name.clone().unwrap_or_default();
    for c in status.conditions.iter().flatten() {
        match (c.type_.as_str(), c.status.as_str()) {
            ("Denied", "True") => {
                return Err(Error::CsrRefused {
                    name,
                    outcome: "denied",
                });
            }
            ("Failed", "True") => {
                return Err(Error::CsrRefused {
                    name,
                    outcome: "failed",
                });
            }
            _ => {}
        }
    }
    Ok(status
        .certificate
        .as_ref()
        .filter(|c| !c.0.is_empty())
        .map(|c| String::from_utf8_lossy(&c.0).into_owned()))
}

/// Sends a CSR for the agent's identity with `hub` and waits until it is signed; returns the
/// certificate and key (PEM). Waiting has no deadline: approval is a human decision.
pub async fn issue(
    hub: &kube::Client,
    opts: &AgentOptions,
    agent: &str,
    cancel: &Shutdown,
) -> Result<(String, String), Error> {
    let key =
        rcgen::KeyPair::generate().map_err(|e| Error::Other(format!("generating a key: {e}")))?;
    let pem = request_pem(&opts.cluster_name, agent, &key)?;
    let api: Api<CertificateSigningRequest> = Api::all(hub.clone());
    let name = super::writer::send_csr(
        &api,
        &object(
            &opts.cluster_name,
            &pem,
            opts.settings.cert_expiration_seconds,
        ),
    )
    .await?;
    tracing::info!(cluster = %opts.cluster_name, csr = %name, "waiting for the CSR to be approved and signed");
    let cert = tokio::select! {
        r = wait_signed(api, &name) => r?,
        () = cancel.cancelled() => return Err(Error::Other("shutting down".into())),
    };
    Ok((cert, key.serialize_pem()))
}

/// Watches one CSR until it is signed, denied, failed or deleted.
pub async fn wait_signed(api: Api<CertificateSigningRequest>, name: &str) -> Result<String, Error> {
    let config = watcher::Config::default()
        .fields(&format!("metadata.name={name}"))
        .timeout(45);
    let mut events = pin!(watcher(api, config).default_backoff());
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Apply(csr) | watcher::Event::InitApply(csr)) => {
                if let Some(cert) = outcome(&csr)? {
                    return Ok(cert);
                }
            }
            Ok(watcher::Event::Delete(_)) => {
                return Err(Error::Other(format!(
                    "CSR {name} was deleted before it was signed"
                )));
            }
            Ok(_) => {}
            Err(e) if is_unauthorized(&e) => return Err(Error::Unauthorized),
            Err(e) => tracing::debug!(csr = %name, "watching the CSR: {e}"),
        }
    }
    Err(Error::Other(format!("the watch of CSR {name} ended")))
}

/// Whether a watcher error is the hub rejecting the credential.
#[must_use]
pub fn is_unauthorized(err: &watcher::Error) -> bool {
    match err {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => matches!(e, kube::Error::Api(s) if s.code == 401),
        watcher::Error::WatchError(s) => s.code == 401,
        watcher::Error::NoResourceVersion => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_carries_exactly_the_agent_identity() {
        let key = rcgen::KeyPair::generate().unwrap();
        let pem = request_pem("c1", "ab12c", &key).unwrap();
        let subject = identity::parse_request(pem.as_bytes()).unwrap();
        assert_eq!(
            subject.common_name,
            "system:open-cluster-management:c1:ab12c"
        );
        assert_eq!(
            subject.organizations,
            [
                "system:open-cluster-management:c1",
                identity::MANAGED_CLUSTERS_GROUP
            ]
        );
        assert_eq!(identity::check_subject(&subject, "c1"), Ok(()));
    }

    #[test]
    fn the_object_is_labelled_and_names_the_client_signer() {
        let csr = object("c1", "PEM", Some(600));
        assert_eq!(csr.metadata.generate_name.as_deref(), Some("c1-"));
        assert_eq!(csr.metadata.labels.unwrap()[CLUSTER_NAME_LABEL], "c1");
        assert_eq!(csr.spec.signer_name, CLIENT_SIGNER);
        assert_eq!(csr.spec.expiration_seconds, Some(600));
        assert_eq!(
            csr.spec.usages.unwrap(),
            ["digital signature", "key encipherment", "client auth"]
        );
    }

    #[test]
    fn outcome_reads_certificate_and_denial() {
        let mut csr = object("c1", "PEM", None);
        assert!(matches!(outcome(&csr), Ok(None)));
        csr.status =
            Some(serde_json::from_value(serde_json::json!({"certificate": "Q0VSVA=="})).unwrap());
        assert_eq!(outcome(&csr).unwrap().as_deref(), Some("CERT"));
        csr.status = Some(
            serde_json::from_value(
                serde_json::json!({"conditions": [{"type": "Denied", "status": "True"}]}),
            )
            .unwrap(),
        );
        assert!(matches!(
            outcome(&csr),
            Err(Error::CsrRefused {
                outcome: "denied",
                ..
            })
        ));
    }
}
