//! Custom signers of template add-ons, as upstream's template agent signs them: an approved CSR
//! for a signer the add-on's AddOnTemplate registers (`CustomSigner`) is signed here with the CA
//! in the template's `signingCA` secret (`tls.crt`, `tls.key`; in the hub namespace unless it
//! names another), valid for a day, client usage only. kube-controller-manager signs only the
//! `kubernetes.io/` signers, so nothing else would.
//!
//! The CA is read as upstream's add-on manager reads it, as ServiceAccount
//! `open-cluster-management-hub/addon-manager-controller-sa` (impersonated): that identity holds
//! no Secret unless the user grants it the CA's, as upstream's e2e suite does with a Role and
//! RoleBinding, so the hub's own identity needs no right on Secrets at all.
//!
//! Whoever approved the CSR (this hub, or anyone allowed to approve CSRs), it is signed only while
//! it still asks for exactly an identity the add-on registered ([`may_sign`]): the CA's
//! certificate is what the add-on's backends trust, and an approval is not a subject check.
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt as _};
use rcgen::{ExtendedKeyUsagePurpose, KeyUsagePurpose};

use ocm_api::addon::{
    AddOnTemplate, CustomSignerRegistration, RegistrationConfig, RegistrationType,
};
use ocm_api::names::{ADDON_MANAGER_SA, HUB_NAMESPACE};
use ocm_runtime::identity::{CsrFacts, addon};

/// How long a custom-signed certificate lasts (upstream's template agent: 24 hours).
const VALIDITY_SECONDS: i64 = 24 * 3600;

/// The custom signers the template registers.
#[must_use]
pub fn custom_signers(template: &AddOnTemplate) -> Vec<&CustomSignerRegistration> {
    template
        .spec
        .registration
        .iter()
        .filter(|r| r.type_ == RegistrationType::CustomSigner)
        .filter_map(|r| r.custom_signer.as_ref())
        .collect()
}

/// Whether the hub signs the approved CSR `csr` of `addon` on `cluster` with one of the custom
/// signers in `hub_signers` (the add-on template's): the same check as approval
/// ([`addon::check_with_signers`]: requester, signer, validity, usages, exactly the registered
/// subject), run again because the approval may not have been this hub's.
pub fn may_sign(
    csr: &CsrFacts,
    cluster: &str,
    addon: &str,
    registrations: &[RegistrationConfig],
    hub_signers: &[String],
) -> Result<(), String> {
    if !csr.approved {
        return Err("it is not approved".into());
    }
    if !hub_signers.contains(&csr.signer) {
        return Err(format!(
            "its signer {} is not a custom signer of the add-on's template",
            csr.signer
        ));
    }
    addon::check_with_signers(csr, cluster, addon, registrations, hub_signers)
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

/// Signs `csr` with `signer`'s CA and writes the certificate to its status.
pub async fn sign(
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
    let (user, _) = ocm_runtime::impersonate::service_account(HUB_NAMESPACE, ADDON_MANAGER_SA);
    let as_addon_manager = ocm_runtime::impersonate::as_user(client, &user, &[]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::addon::Subject as RegisteredSubject;
    use ocm_runtime::identity::{PREFIX, Subject, cluster_group};

    const SIGNER: &str = "example.com/hello";

    fn approved(cn: &str, groups: &[&str]) -> CsrFacts {
        CsrFacts {
            name: "addon-c1-hello-x".into(),
            cluster: Some("c1".into()),
            username: format!("{PREFIX}c1:ab12c"),
            groups: vec![cluster_group("c1")],
            signer: SIGNER.into(),
            usages: vec!["client auth".into()],
            subject: Ok(Subject {
                common_name: cn.into(),
                organizations: groups.iter().map(ToString::to_string).collect(),
            }),
            pending: false,
            approved: true,
            expiration_seconds: None,
            created: None,
        }
    }

    fn registrations() -> Vec<RegistrationConfig> {
        vec![RegistrationConfig {
            signer_name: SIGNER.into(),
            subject: Some(RegisteredSubject {
                user: Some(addon::default_user("c1", "hello")),
                groups: vec![addon::default_group("c1", "hello")],
                ..RegisteredSubject::default()
            }),
        }]
    }

    #[test]
    fn an_approved_csr_with_a_foreign_subject_is_not_signed() {
        let signers = [SIGNER.to_string()];
        let user = addon::default_user("c1", "hello");
        let group = addon::default_group("c1", "hello");
        let ok = approved(&user, &[&group]);
        assert_eq!(
            may_sign(&ok, "c1", "hello", &registrations(), &signers),
            Ok(())
        );
        let admin = approved("admin", &["system:masters"]);
        let why = may_sign(&admin, "c1", "hello", &registrations(), &signers).unwrap_err();
        assert!(why.contains("not the add-on's user"), "{why}");
        let other_cluster = approved(
            &addon::default_user("c2", "hello"),
            &[&addon::default_group("c2", "hello")],
        );
        assert!(may_sign(&other_cluster, "c1", "hello", &registrations(), &signers).is_err());
        let extra_group = approved(&user, &[&group, "system:masters"]);
        assert!(
            may_sign(&extra_group, "c1", "hello", &registrations(), &signers)
                .unwrap_err()
                .contains("O=system:masters")
        );
        let mut stranger = approved(&user, &[&group]);
        stranger.username = "mallory".into();
        stranger.groups = vec![];
        assert!(may_sign(&stranger, "c1", "hello", &registrations(), &signers).is_err());
        let mut unapproved = approved(&user, &[&group]);
        unapproved.approved = false;
        assert!(may_sign(&unapproved, "c1", "hello", &registrations(), &signers).is_err());
        assert!(may_sign(&ok, "c1", "hello", &registrations(), &[]).is_err());
    }

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
