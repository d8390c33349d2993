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

use ocm_api::addon::CustomSignerRegistration;
use ocm_api::names::HUB_NAMESPACE;

/// Reason written on the CSRs this controller approves.
const REASON: &str = "AutoApprovedByHubAddonRegistration";

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
    let ca = ocm_runtime::pki::webhook::CertKey {
        cert: field("tls.crt")?,
        key: field("tls.key")?,
    };
    let cert = ocm_runtime::pki::webhook::sign_client_request(&request, &ca, now)?;
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
