//! Custom signers of template add-ons, as upstream's template agent signs them: an approved CSR
//! for a signer the add-on's AddOnTemplate registers (`CustomSigner`) is signed by the hub with
//! the CA in the template's `signingCA` secret (the add-on registration controller's writer,
//! [`crate::addon::registration::writer`], signs it). kube-controller-manager signs only the
//! `kubernetes.io/` signers, so nothing else would. Pure: which signers a template registers, and
//! which CSRs the hub may sign.
//!
//! Whoever approved the CSR (this hub, or anyone allowed to approve CSRs), it is signed only while
//! it still asks for exactly an identity the add-on registered ([`may_sign`]): the CA's
//! certificate is what the add-on's backends trust, and an approval is not a subject check.
use ocm_api::addon::{
    AddOnTemplate, CustomSignerRegistration, RegistrationConfig, RegistrationType,
};
use ocm_runtime::identity::{CsrFacts, addon};

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
}
