//! The add-on registration controller's writes, the only place it changes the hub: CSRs
//! approved and certificates of the templates' custom signers issued, as [`super::decide`] says.
//!
//! A custom signer's certificate is signed with the CA in the template's `signingCA` secret
//! (`tls.crt`, `tls.key`; in the hub namespace unless it names another), valid for a day, client
//! usage only, as upstream's template agent signs it. The CA is read as upstream's add-on manager
//! reads it, as ServiceAccount `open-cluster-management-hub/addon-manager-controller-sa`
//! (impersonated): that identity holds no Secret unless the user grants it the CA's, as
//! upstream's e2e suite does with a Role and RoleBinding, so the hub's own identity needs no right
//! on Secrets at all.
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt as _};
use rcgen::{ExtendedKeyUsagePurpose, KeyUsagePurpose};

use ocm_api::addon::CustomSignerRegistration;
use ocm_api::names::HUB_NAMESPACE;

/// Reason written on the CSRs this controller approves.
const REASON: &str = "AutoApprovedByHubAddonRegistration";
/// How long a custom-signed certificate lasts (upstream's template agent: 24 hours).
const VALIDITY_SECONDS: i64 = 24 * 3600;

/// The registration controller's client.
pub struct Writer {
    client: Client,
}

impl Writer {
    /// Writes with `client`.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Approves CSR `csr` of `addon` on `cluster` with `message`.
    pub async fn approve(
        &self,
        cluster: &str,
        addon: &str,
        csr: &str,
        message: &str,
    ) -> Result<(), kube::Error> {
        ocm_runtime::apply::approve::approve_csr(&self.client, csr, REASON, message).await?;
        tracing::info!(%cluster, %addon, %csr, "approved an add-on CSR");
        Ok(())
    }

    /// Signs an approved custom-signer CSR; `false` (and logged) when it could not.
    pub async fn sign(
        &self,
        csr: &CertificateSigningRequest,
        signer: &CustomSignerRegistration,
    ) -> bool {
        match issue(&self.client, csr, signer).await {
            Ok(()) => {
                tracing::info!(csr = %csr.name_any(), signer = %signer.signer_name, "signed an add-on CSR");
                true
            }
            Err(e) => {
                tracing::warn!(csr = %csr.name_any(), signer = %signer.signer_name, "signing an add-on CSR: {e:#}");
                false
            }
        }
    }
}

/// Signs `csr` with `signer`'s CA and writes the certificate to its status.
async fn issue(
    client: &Client,
    csr: &CertificateSigningRequest,
    signer: &CustomSignerRegistration,
) -> anyhow::Result<()> {
    let namespace = signer
        .signing_ca
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| HUB_NAMESPACE.to_string());
    let (as_addon_manager, user) = crate::addon::as_addon_manager(client);
    let secret = Api::<Secret>::namespaced(as_addon_manager, &namespace)
        .get(&signer.signing_ca.name)
        .await
        .map_err(|e| {
            let grant = if matches!(&e, kube::Error::Api(s) if s.code == 403) {
                format!(" (grant {user} `get` on it, as upstream's add-on manager needs)")
            } else {
                String::new()
            };
            anyhow::anyhow!(
                "reading the signing CA {namespace}/{}: {e}{grant}",
                signer.signing_ca.name
            )
        })?;
    let field = |key: &str| {
        ocm_runtime::secrets::field(&secret, key).ok_or_else(|| {
            anyhow::anyhow!(
                "the signing CA {namespace}/{} has no {key}",
                signer.signing_ca.name
            )
        })
    };
    let request = String::from_utf8(csr.spec.request.0.clone())?;
    let now = ocm_runtime::pki::now_seconds();
    let cert = sign_pem(&request, &field("tls.crt")?, &field("tls.key")?, now)?;
    // An update guarded by the resourceVersion, as upstream's signer: RBAC grants `update` on
    // `certificatesigningrequests/status`, not `patch`.
    let mut issued = csr.clone();
    issued
        .status
        .get_or_insert_with(Default::default)
        .certificate = Some(k8s_openapi::ByteString(cert.into_bytes()));
    Api::<CertificateSigningRequest>::all(client.clone())
        .replace_status(&csr.name_any(), &PostParams::default(), &issued)
        .await?;
    Ok(())
}

/// A certificate for the PEM request `request`, signed by the CA (`ca_cert`, `ca_key`, PEM),
/// valid from `now` for a day.
pub fn sign_pem(request: &str, ca_cert: &str, ca_key: &str, now: i64) -> anyhow::Result<String> {
    let mut csr = rcgen::CertificateSigningRequestParams::from_pem(request)?;
    let at = |t: i64| time::OffsetDateTime::from_unix_timestamp(t);
    csr.params.not_before = at(now - 60)?;
    csr.params.not_after = at(now + VALIDITY_SECONDS)?;
    csr.params.is_ca = rcgen::IsCa::ExplicitNoCa;
    csr.params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    csr.params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    csr.params.use_authority_key_identifier_extension = true;
    let key = rcgen::KeyPair::from_pem(ca_key)?;
    let issuer = rcgen::Issuer::from_ca_cert_pem(ca_cert, key)?;
    Ok(csr.signed_by(&issuer)?.pem())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_signed_by_the_ca_for_a_day_as_a_client() {
        let ca = ocm_runtime::pki::webhook::issue_signer(1_700_000_000).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::default();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "agent");
        let request = params.serialize_request(&key).unwrap().pem().unwrap();
        let pem = sign_pem(&request, &ca.cert, &ca.key, 1_700_000_100).unwrap();
        let der = ocm_runtime::pki::certificates_der(pem.as_bytes())
            .unwrap()
            .remove(0);
        let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        assert_eq!(
            cert.subject()
                .iter_common_name()
                .next()
                .unwrap()
                .as_str()
                .unwrap(),
            "agent"
        );
        assert!(
            cert.issuer()
                .to_string()
                .contains("cluster-manager-webhook@1700000000")
        );
        assert_eq!(
            cert.validity().not_after.timestamp(),
            1_700_000_100 + VALIDITY_SECONDS
        );
        assert!(
            cert.extended_key_usage()
                .unwrap()
                .unwrap()
                .value
                .client_auth
        );
    }
}
