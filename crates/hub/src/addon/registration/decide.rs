//! Which of an add-on's CSRs the hub approves and which it signs, decided from what the stores
//! show (no I/O): on an accepted cluster, a pending CSR from the add-on's agent is approved only
//! when it asks for exactly an identity the add-on registered
//! ([`ocm_runtime::identity::addon::check_with_signers`]); an approved CSR of one of the
//! template's custom signers is signed only after the same check ([`signer::may_sign`]),
//! whoever approved it. Anything else is refused, saying why.
use std::sync::Arc;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::ResourceExt as _;

use crate::addon::template::{self, signer};
use ocm_api::addon::{
    ADDON_NAME_LABEL, AddOnTemplate, CustomSignerRegistration, ManagedClusterAddOn,
    RegistrationConfig,
};
use ocm_api::cluster::{CLUSTER_NAME_LABEL, ManagedCluster};
use ocm_runtime::identity::{CsrFacts, addon};

/// What becomes of one CSR.
#[derive(Debug)]
pub enum Step {
    /// Approve it, then sign it with `sign` when that is one of the template's custom signers.
    Approve {
        /// The CSR's name.
        name: String,
        /// The approval's message.
        message: String,
        /// The template's custom signer it asks for, which the hub signs with.
        sign: Option<(Arc<CertificateSigningRequest>, CustomSignerRegistration)>,
    },
    /// Sign it (approved, not yet signed) with the template's custom signer.
    Sign(Arc<CertificateSigningRequest>, CustomSignerRegistration),
    /// Leave it as it is, saying why.
    Refuse {
        /// The CSR's name.
        name: String,
        /// What is not done (`approving`, `signing`).
        doing: &'static str,
        /// Why not.
        why: String,
    },
}

/// What becomes of the CSRs of add-on `mca` (from `csrs`, all the store has) on its cluster
/// (`managed`), its `template` registering custom signers; nothing unless the cluster is accepted
/// and the add-on not being deleted.
#[must_use]
pub fn decide(
    mca: &ManagedClusterAddOn,
    managed: Option<&ManagedCluster>,
    template: Option<&AddOnTemplate>,
    csrs: &[Arc<CertificateSigningRequest>],
) -> Vec<Step> {
    let (name, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    let accepted = managed
        .is_some_and(|mc| mc.spec.hub_accepts_client && mc.metadata.deletion_timestamp.is_none());
    if !accepted || mca.metadata.deletion_timestamp.is_some() {
        return Vec::new();
    }
    let custom = template.map(signer::custom_signers).unwrap_or_default();
    let hub_signers: Vec<String> = custom.iter().map(|c| c.signer_name.clone()).collect();
    let registrations = &registrations(mca, template, &hub_signers);
    let ours = csrs.iter().filter(|csr| {
        let labels = csr.labels();
        labels.get(CLUSTER_NAME_LABEL) == Some(&cluster)
            && labels.get(ADDON_NAME_LABEL) == Some(&name)
    });
    let mut steps = Vec::new();
    for csr in ours {
        let facts = CsrFacts::of(csr);
        let unsigned = csr.status.as_ref().is_none_or(|s| s.certificate.is_none());
        let custom_signer = custom.iter().find(|c| c.signer_name == facts.signer);
        if facts.approved
            && unsigned
            && let Some(signer) = custom_signer
        {
            // Approved, perhaps not by this hub: signed only if it still asks for the identity.
            steps.push(
                match signer::may_sign(&facts, &cluster, &name, registrations, &hub_signers) {
                    Ok(()) => Step::Sign(csr.clone(), (*signer).clone()),
                    Err(why) => refuse(facts.name, "signing", why),
                },
            );
            continue;
        }
        if !facts.pending {
            continue;
        }
        steps.push(
            match addon::check_with_signers(&facts, &cluster, &name, registrations, &hub_signers) {
                Ok(()) => Step::Approve {
                    name: facts.name,
                    message: format!(
                        "add-on {name} of cluster {cluster}: the identity it registered"
                    ),
                    sign: custom_signer.map(|s| (csr.clone(), (*s).clone())),
                },
                Err(why) => refuse(facts.name, "approving", why),
            },
        );
    }
    steps
}

fn refuse(name: String, doing: &'static str, why: String) -> Step {
    Step::Refuse { name, doing, why }
}

/// The identities the add-on registered, as its status lists them; a custom signer's identity is
/// the template's (the hub's word, as the manager lists it in the status), never the status's,
/// which the cluster's agent may write: the add-on's CA signs whatever subject is approved.
fn registrations(
    mca: &ManagedClusterAddOn,
    template: Option<&AddOnTemplate>,
    hub_signers: &[String],
) -> Vec<RegistrationConfig> {
    let (name, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    let registrations = mca
        .status
        .as_ref()
        .map(|s| s.registrations.as_slice())
        .unwrap_or_default();
    let from_template = template
        .map(|t| template::registrations(t, &cluster, &name, None))
        .unwrap_or_default();
    registrations
        .iter()
        .filter_map(|r| {
            if hub_signers.contains(&r.signer_name) {
                from_template
                    .iter()
                    .find(|t| t.signer_name == r.signer_name)
                    .cloned()
            } else {
                Some(r.clone())
            }
        })
        .collect()
}
