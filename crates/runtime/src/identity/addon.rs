//! Add-on agent identities: the subject an add-on's agent on a cluster registers with (upstream's
//! defaults when the hub's registration leaves them out), and the check the hub runs before it
//! approves an add-on CSR. Pure: no I/O.
use std::collections::BTreeSet;

use super::{ALLOWED_USAGES, CsrFacts, PREFIX, cluster_group};
use ocm_api::addon::RegistrationConfig;
use ocm_api::names::CLIENT_SIGNER;

/// The group of every agent of `addon` on `cluster` (upstream's `DefaultOrganization`).
#[must_use]
pub fn default_group(cluster: &str, addon: &str) -> String {
    format!("{PREFIX}cluster:{cluster}:addon:{addon}")
}

/// The group of every agent of `addon` on every cluster.
#[must_use]
pub fn addon_group(addon: &str) -> String {
    format!("{PREFIX}addon:{addon}")
}

/// The user of the agent of `addon` on `cluster` (upstream's `DefaultCommonName`).
#[must_use]
pub fn default_user(cluster: &str, addon: &str) -> String {
    format!("{}:agent:{addon}", default_group(cluster, addon))
}

/// The identity an add-on agent asks for: a user and its groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddonSubject {
    /// The certificate's CN.
    pub user: String,
    /// The certificate's Os.
    pub groups: Vec<String>,
    /// The certificate's OUs (a template's `customSigner.subject.organizationUnit`).
    pub organization_units: Vec<String>,
}

/// The subject of `registration` for `addon` on `cluster`: as the hub registered it, with
/// upstream's defaults for a missing user or groups.
#[must_use]
pub fn subject(registration: &RegistrationConfig, cluster: &str, addon: &str) -> AddonSubject {
    let given = registration.subject.as_ref();
    let user = given
        .and_then(|s| s.user.clone())
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| default_user(cluster, addon));
    let groups = given
        .map(|s| s.groups.clone())
        .filter(|g| !g.is_empty())
        .unwrap_or_else(|| vec![default_group(cluster, addon)]);
    let organization_units = given
        .map(|s| s.organization_units.clone())
        .unwrap_or_default();
    AddonSubject {
        user,
        groups,
        organization_units,
    }
}

/// Whether the hub may approve `csr` for `addon` on `cluster`, whose ManagedClusterAddOn
/// registers `registrations`: the hub's client signer, registered for this add-on; a requester
/// that is an agent of this cluster; exactly the registered subject, no more groups; a bounded
/// validity and client usages only.
pub fn check(
    csr: &CsrFacts,
    cluster: &str,
    addon: &str,
    registrations: &[RegistrationConfig],
) -> Result<(), String> {
    check_with_signers(csr, cluster, addon, registrations, &[])
}

/// [`check`], also allowing the custom signers in `hub_signers`: those the add-on's template —
/// the hub's word, not the status its agent may write — registers; for them the caller passes
/// the template's registration (its subject is then the only one approved, whatever it is). A
/// `kubernetes.io/` signer other than the client signer is never an add-on's.
pub fn check_with_signers(
    csr: &CsrFacts,
    cluster: &str,
    addon: &str,
    registrations: &[RegistrationConfig],
    hub_signers: &[String],
) -> Result<(), String> {
    let custom = hub_signers.contains(&csr.signer) && !csr.signer.starts_with("kubernetes.io/");
    if csr.signer != CLIENT_SIGNER && !custom {
        return Err(format!(
            "its signer is {}: the hub approves only {CLIENT_SIGNER} and the custom signers of the add-on's template",
            csr.signer
        ));
    }
    let registration = registrations
        .iter()
        .find(|r| r.signer_name == csr.signer)
        .ok_or_else(|| format!("add-on {addon} registers no {} identity", csr.signer))?;
    let agent = csr
        .username
        .strip_prefix(&format!("{PREFIX}{cluster}:"))
        .filter(|a| !a.is_empty() && !a.contains(':'));
    if agent.is_none() || !csr.groups.contains(&cluster_group(cluster)) {
        return Err(format!(
            "its requester {} is not an agent of cluster {cluster}",
            csr.username
        ));
    }
    if let Some(s) = csr
        .expiration_seconds
        .filter(|s| *s > super::MAX_CERT_SECONDS)
    {
        return Err(format!(
            "it asks for a certificate valid {s} s, over a year"
        ));
    }
    if let Some(u) = csr
        .usages
        .iter()
        .find(|u| !ALLOWED_USAGES.contains(&u.as_str()))
    {
        return Err(format!("it asks for usage {u:?}"));
    }
    let asked = csr.subject.as_ref().map_err(Clone::clone)?;
    let wanted = subject(registration, cluster, addon);
    if asked.common_name != wanted.user {
        return Err(format!(
            "its subject CN {:?} is not the add-on's user {:?}",
            asked.common_name, wanted.user
        ));
    }
    let allowed: BTreeSet<&String> = wanted.groups.iter().collect();
    if let Some(extra) = asked.organizations.iter().find(|o| !allowed.contains(o)) {
        return Err(format!("its subject asks for group O={extra}"));
    }
    if custom {
        // Signed by the add-on's own CA, which the hub's API server does not trust: the subject
        // the template registers (checked exactly above) names no hub user, so it need not be
        // one of the add-on's (upstream approves every CSR of a registered custom signer).
        return Ok(());
    }
    within_addon(asked, cluster, addon)
}

/// The agent may write its ManagedClusterAddOn's status, registrations included: whatever they
/// say, an add-on identity stays one of this add-on on this cluster (upstream's approver checks
/// the same prefix and groups).
fn within_addon(asked: &super::Subject, cluster: &str, addon: &str) -> Result<(), String> {
    let prefix = format!("{}:agent:", default_group(cluster, addon));
    if !asked.common_name.starts_with(&prefix) || asked.common_name.len() == prefix.len() {
        return Err(format!(
            "its subject CN {:?} is not an agent of add-on {addon} on cluster {cluster}",
            asked.common_name
        ));
    }
    let groups = [
        default_group(cluster, addon),
        addon_group(addon),
        "system:authenticated".to_string(),
    ];
    match asked.organizations.iter().find(|o| !groups.contains(o)) {
        Some(other) => Err(format!("its subject asks for group O={other}")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Subject;
    use ocm_api::addon::Subject as RegisteredSubject;

    fn registration() -> RegistrationConfig {
        RegistrationConfig {
            signer_name: CLIENT_SIGNER.into(),
            subject: None,
        }
    }

    fn csr(cluster_of_requester: &str, cn: &str, groups: &[&str]) -> CsrFacts {
        CsrFacts {
            name: "addon-c1-hello-x".into(),
            cluster: Some("c1".into()),
            username: format!("{PREFIX}{cluster_of_requester}:ab12c"),
            groups: vec![cluster_group(cluster_of_requester)],
            signer: CLIENT_SIGNER.into(),
            usages: vec!["client auth".into()],
            subject: Ok(Subject {
                common_name: cn.into(),
                organizations: groups.iter().map(ToString::to_string).collect(),
            }),
            pending: true,
            approved: false,
            expiration_seconds: None,
            created: None,
        }
    }

    #[test]
    fn the_default_subject_is_upstreams() {
        let s = subject(&registration(), "c1", "hello");
        assert_eq!(
            s.user,
            "system:open-cluster-management:cluster:c1:addon:hello:agent:hello"
        );
        assert_eq!(
            s.groups,
            ["system:open-cluster-management:cluster:c1:addon:hello"]
        );
    }

    #[test]
    fn the_agent_of_the_cluster_gets_the_registered_identity() {
        let ok = csr(
            "c1",
            &default_user("c1", "hello"),
            &[&default_group("c1", "hello")],
        );
        assert_eq!(check(&ok, "c1", "hello", &[registration()]), Ok(()));
    }

    #[test]
    fn another_clusters_identity_extra_groups_or_signers_are_refused() {
        let regs = [registration()];
        let other_cluster = csr(
            "c1",
            &default_user("c2", "hello"),
            &[&default_group("c2", "hello")],
        );
        assert!(
            check(&other_cluster, "c1", "hello", &regs)
                .unwrap_err()
                .contains("not the add-on's user")
        );
        let other_addon = csr(
            "c1",
            &default_user("c1", "other"),
            &[&default_group("c1", "hello")],
        );
        assert!(check(&other_addon, "c1", "hello", &regs).is_err());
        let extra = csr(
            "c1",
            &default_user("c1", "hello"),
            &[&default_group("c1", "hello"), "system:masters"],
        );
        assert!(
            check(&extra, "c1", "hello", &regs)
                .unwrap_err()
                .contains("O=system:masters")
        );
        let mut signer = csr("c1", &default_user("c1", "hello"), &[]);
        signer.signer = "example.com/custom".into();
        assert!(
            check(&signer, "c1", "hello", &regs)
                .unwrap_err()
                .contains("signer")
        );
        let stranger = csr("c2", &default_user("c1", "hello"), &[]);
        assert!(
            check(&stranger, "c1", "hello", &regs)
                .unwrap_err()
                .contains("not an agent of cluster c1")
        );
        let ok = csr("c1", &default_user("c1", "hello"), &[]);
        assert!(
            check(&ok, "c1", "hello", &[])
                .unwrap_err()
                .contains("registers no")
        );
    }

    fn registered(user: &str, groups: &[&str]) -> RegistrationConfig {
        RegistrationConfig {
            signer_name: CLIENT_SIGNER.into(),
            subject: Some(RegisteredSubject {
                user: Some(user.into()),
                groups: groups.iter().map(ToString::to_string).collect(),
                ..RegisteredSubject::default()
            }),
        }
    }

    #[test]
    fn a_registered_subject_replaces_the_defaults_within_the_addons_identities() {
        let user = format!("{}:agent:hello-agent", default_group("c1", "hello"));
        let groups = [default_group("c1", "hello"), addon_group("hello")];
        let groups: Vec<&str> = groups.iter().map(String::as_str).collect();
        let reg = registered(&user, &groups);
        assert_eq!(subject(&reg, "c1", "hello").user, user);
        assert_eq!(
            check(&csr("c1", &user, &groups), "c1", "hello", &[reg]),
            Ok(())
        );
    }

    #[test]
    fn a_custom_signer_gets_the_subject_registered_for_it_and_only_that() {
        // As upstream's e2e template: user1 in g1 and g2, signed by the add-on's own CA.
        let mut reg = registered("user1", &["g1", "g2"]);
        reg.signer_name = "example.com/signer-name".into();
        let signers = ["example.com/signer-name".to_string()];
        let mut asked = csr("c1", "user1", &["g1", "g2"]);
        asked.signer = "example.com/signer-name".into();
        asked.usages = vec!["digital signature".into(), "key encipherment".into()];
        assert_eq!(
            check_with_signers(&asked, "c1", "hello", std::slice::from_ref(&reg), &signers),
            Ok(())
        );
        let mut more = asked.clone();
        more.subject = Ok(Subject {
            common_name: "user1".into(),
            organizations: vec!["g1".into(), "system:masters".into()],
        });
        assert!(
            check_with_signers(&more, "c1", "hello", std::slice::from_ref(&reg), &signers).is_err()
        );
        // The hub's client signer never signs such a subject.
        let mut client = asked.clone();
        client.signer = CLIENT_SIGNER.into();
        let client_reg = registered("user1", &["g1", "g2"]);
        assert!(check_with_signers(&client, "c1", "hello", &[client_reg], &signers).is_err());
    }

    #[test]
    fn a_status_registering_a_foreign_identity_does_not_get_it_signed() {
        // The cluster's agent may write its add-on's status: that must not mint cluster-admins.
        let reg = registered("admin", &["system:masters"]);
        let asked = csr("c1", "admin", &["system:masters"]);
        assert!(
            check(&asked, "c1", "hello", &[reg])
                .unwrap_err()
                .contains("not an agent of add-on hello")
        );
        let user = default_user("c1", "hello");
        let reg = registered(&user, &["system:masters"]);
        let asked = csr("c1", &user, &["system:masters"]);
        assert!(
            check(&asked, "c1", "hello", &[reg])
                .unwrap_err()
                .contains("O=system:masters")
        );
    }
}
