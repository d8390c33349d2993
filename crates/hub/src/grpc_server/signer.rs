//! Signs the approved CSRs of upstream's gRPC signer (`open-cluster-management.io/grpc`) with the
//! gRPC server's CA, as upstream's registration hub driver does: the certificate an agent then
//! presents to the server (its client CA is this CA). Approval stays with `accept` and the hub's
//! auto-approval; only approved CSRs without a certificate are signed.
use std::time::Duration;

use futures::TryStreamExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use rcgen::{
    CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    SubjectPublicKeyInfo,
};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::prelude::FromDer as _;

pub use ocm_api::names::GRPC_SIGNER;

/// The CA that signs, and how long a certificate lasts at most.
pub struct Signer {
    issuer: Issuer<'static, KeyPair>,
    max_validity: Duration,
}

impl Signer {
    /// A signer of this CA (PEM certificate and key).
    pub fn new(ca_pem: &str, key_pem: &str, max_validity: Duration) -> anyhow::Result<Self> {
        let key = KeyPair::from_pem(key_pem)?;
        Ok(Self {
            issuer: Issuer::from_ca_cert_pem(ca_pem, key)?,
            max_validity,
        })
    }

    /// The PEM certificate for this CSR's request: client auth only, no CA, valid from now for
    /// the shorter of what it asks (`spec.expirationSeconds`) and the signer's maximum.
    pub fn sign(&self, csr: &CertificateSigningRequest) -> anyhow::Result<String> {
        let (mut params, public_key) = read_request(&csr.spec.request.0)?;
        let asked = csr
            .spec
            .expiration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(self.max_validity, Duration::from_secs);
        let now = time::OffsetDateTime::now_utc();
        // A little back-dating tolerates clocks a little apart, as Kubernetes' signer does.
        params.not_before = now - time::Duration::minutes(5);
        params.not_after = now + asked.min(self.max_validity);
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.use_authority_key_identifier_extension = true;
        Ok(params.signed_by(&public_key, &self.issuer)?.pem())
    }
}

/// The subject (CN and O, what Kubernetes reads as user and groups) and public key of a PEM
/// request whose signature holds. Read here rather than by rcgen, which refuses the
/// multi-valued name Go's agents write (both O values in one RDN).
fn read_request(pem: &[u8]) -> anyhow::Result<(CertificateParams, SubjectPublicKeyInfo)> {
    let (_, pem) = x509_parser::pem::parse_x509_pem(pem)
        .map_err(|e| anyhow::anyhow!("the request is not PEM: {e}"))?;
    let (_, request) = X509CertificationRequest::from_der(&pem.contents)
        .map_err(|e| anyhow::anyhow!("the request does not parse: {e}"))?;
    request
        .verify_signature()
        .map_err(|e| anyhow::anyhow!("the request's signature does not hold: {e}"))?;
    let info = &request.certification_request_info;
    let names = |values: Vec<&x509_parser::x509::AttributeTypeAndValue<'_>>| -> anyhow::Result<Vec<String>> {
        values.into_iter().map(|v| Ok(v.as_str()?.to_string())).collect()
    };
    let cns = names(info.subject.iter_common_name().collect())?;
    let groups = names(info.subject.iter_organization().collect())?;
    let [user] = cns.as_slice() else {
        anyhow::bail!("the request names {} users (CN), not one", cns.len());
    };
    // Two groups at most: the cluster's and the managed clusters' (and what the name can hold).
    if groups.len() > 2 {
        anyhow::bail!(
            "the request asks for {} groups (O), more than an agent's two",
            groups.len()
        );
    }
    let mut params = CertificateParams::default();
    params.distinguished_name = ocm_runtime::identity::request::subject_name(user, &groups, &[]);
    let public_key = SubjectPublicKeyInfo::from_der(info.subject_pki.raw)?;
    Ok((params, public_key))
}

/// Whether this CSR waits for this signer: ours, approved, not signed yet.
#[must_use]
pub fn awaits_signature(csr: &CertificateSigningRequest) -> bool {
    let status = csr.status.as_ref();
    let approved = status.and_then(|s| s.conditions.as_ref()).is_some_and(|c| {
        c.iter()
            .any(|c| c.type_ == "Approved" && c.status == "True")
    });
    let signed = status
        .and_then(|s| s.certificate.as_ref())
        .is_some_and(|c| !c.0.is_empty());
    csr.spec.signer_name == GRPC_SIGNER && approved && !signed
}

/// Signs every approved gRPC CSR as it appears, until the process ends.
pub async fn run(client: kube::Client, signer: Signer) {
    let csrs: Api<CertificateSigningRequest> = Api::all(client);
    let ours = watcher::Config::default().fields(&format!("spec.signerName={GRPC_SIGNER}"));
    let mut changes = std::pin::pin!(
        watcher(csrs.clone(), ours)
            .default_backoff()
            .applied_objects()
    );
    loop {
        match changes.try_next().await {
            Ok(Some(csr)) if awaits_signature(&csr) => {
                let name = csr.metadata.name.clone().unwrap_or_default();
                if let Err(error) = sign_one(&csrs, &signer, &csr).await {
                    tracing::warn!(csr = %name, %error, "signing a gRPC client certificate");
                } else {
                    tracing::info!(csr = %name, "signed a gRPC client certificate");
                }
            }
            Ok(Some(_)) => {}
            Ok(None) => return,
            Err(error) => tracing::warn!(%error, "watching gRPC CSRs"),
        }
    }
}

async fn sign_one(
    csrs: &Api<CertificateSigningRequest>,
    signer: &Signer,
    csr: &CertificateSigningRequest,
) -> anyhow::Result<()> {
    let certificate = signer.sign(csr)?;
    let name = csr.metadata.name.as_deref().unwrap_or_default();
    let patch =
        serde_json::json!({"status": {"certificate": ByteString(certificate.into_bytes())}});
    csrs.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{BasicConstraints, DnType};

    fn csr(request: &str, signer: &str, approved: bool) -> CertificateSigningRequest {
        use base64::Engine as _;
        let conditions = if approved {
            serde_json::json!([{"type": "Approved", "status": "True"}])
        } else {
            serde_json::json!([])
        };
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c1-abc"},
            "spec": {"request": base64::engine::general_purpose::STANDARD.encode(request), "signerName": signer,
                     "expirationSeconds": 3600},
            "status": {"conditions": conditions},
        }))
        .unwrap()
    }

    #[test]
    fn an_approved_request_is_signed_for_client_auth_within_its_validity() {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "test-grpc-ca");
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let signer = Signer::new(
            &ca.pem(),
            &ca_key.serialize_pem(),
            Duration::from_secs(30 * 86400),
        )
        .unwrap();
        let agent_key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "system:open-cluster-management:c1:a1");
        params.distinguished_name.push(
            DnType::OrganizationName,
            "system:open-cluster-management:c1",
        );
        let request = params.serialize_request(&agent_key).unwrap().pem().unwrap();

        assert!(
            !awaits_signature(&csr(&request, GRPC_SIGNER, false)),
            "unapproved"
        );
        assert!(
            !awaits_signature(&csr(&request, "kubernetes.io/kube-apiserver-client", true)),
            "not ours"
        );
        let approved = csr(&request, GRPC_SIGNER, true);
        assert!(awaits_signature(&approved));

        let pem = signer.sign(&approved).unwrap();
        let (_, der) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
        let cert = der.parse_x509().unwrap();
        let cn = cert
            .subject()
            .iter_common_name()
            .next()
            .unwrap()
            .as_str()
            .unwrap();
        assert_eq!(cn, "system:open-cluster-management:c1:a1");
        let groups: Vec<&str> = cert
            .subject()
            .iter_organization()
            .map(|o| o.as_str().unwrap())
            .collect();
        assert_eq!(groups, ["system:open-cluster-management:c1"]);
        let lifetime =
            cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp();
        assert_eq!(lifetime, 3600 + 300, "asked an hour (plus the back-dating)");
        let eku = cert.extended_key_usage().unwrap().unwrap().value;
        assert!(eku.client_auth && !eku.server_auth);
        let issuer = cert
            .issuer()
            .iter_common_name()
            .next()
            .unwrap()
            .as_str()
            .unwrap();
        assert_eq!(issuer, "test-grpc-ca");
    }

    /// A request upstream's (Go) registration agent made: both O values in one RDN.
    const GO_REQUEST: &str = "-----BEGIN CERTIFICATE REQUEST-----
MIIBVjCB/AIBADCBmTFiMCgGA1UEChMhc3lzdGVtOm9wZW4tY2x1c3Rlci1tYW5h
Z2VtZW50OmcxMDYGA1UEChMvc3lzdGVtOm9wZW4tY2x1c3Rlci1tYW5hZ2VtZW50
Om1hbmFnZWQtY2x1c3RlcnMxMzAxBgNVBAMTKnN5c3RlbTpvcGVuLWNsdXN0ZXIt
bWFuYWdlbWVudDpnMTpnMS1hZ2VudDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IA
BM0fnwu6Pflur6uY8iq+eZTYIWT9PQgK7Lbu+ueI3nAcm7HHfT9fDKuRW7+YMCaL
eGnxgm5NDYxmRzOAMfRDXiagADAKBggqhkjOPQQDAgNJADBGAiEAr/wZD6NR/nG+
SJ4sXpdWONLqmmltNG9RXvd4GA4qt1MCIQDcrZwEq3kHEPqh1FMAp22rKsc5EB6y
mnNkvmbStRXgqQ==
-----END CERTIFICATE REQUEST-----
";

    #[test]
    fn a_request_as_go_writes_it_is_read() {
        let (params, _) = read_request(GO_REQUEST.as_bytes()).unwrap();
        let names: Vec<String> = params
            .distinguished_name
            .iter()
            .map(|(_, v)| match v {
                rcgen::DnValue::Utf8String(s) => s.clone(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            names,
            [
                "system:open-cluster-management:g1:g1-agent",
                "system:open-cluster-management:g1",
                "system:open-cluster-management:managed-clusters"
            ]
        );
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let signer = Signer::new(
            &ca.pem(),
            &ca_key.serialize_pem(),
            Duration::from_secs(3600),
        )
        .unwrap();
        let csr = csr(GO_REQUEST, GRPC_SIGNER, true);
        let pem = signer.sign(&csr).unwrap();
        let (_, der) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
        let cert = der.parse_x509().unwrap();
        let groups: Vec<&str> = cert
            .subject()
            .iter_organization()
            .map(|o| o.as_str().unwrap())
            .collect();
        assert_eq!(
            groups,
            [
                "system:open-cluster-management:g1",
                "system:open-cluster-management:managed-clusters"
            ]
        );
        let mut tampered = GO_REQUEST.replace("mnNkvmbStRXgqQ", "mnNkvmbStRXgqA");
        tampered.push('\n');
        assert!(
            read_request(tampered.as_bytes()).is_err(),
            "a bad signature is refused"
        );
    }
}
