//! The hub's side of add-on registration: a `Controller` over ManagedClusterAddOns, woken by
//! add-on CSRs, that approves a CSR only when it asks for exactly an identity its add-on
//! registered on that cluster ([`ocm_runtime::identity::addon::check`]), from that cluster's agent,
//! and only while the cluster is accepted. A refused CSR stays pending, as upstream leaves it,
//! and is logged with the reason. An approved custom-signer CSR is signed only after the same
//! check ([`signer::may_sign`]), whoever approved it. What the identity may then do is the
//! add-on's hub RBAC.
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};

use super::template::signer;
use ocm_api::addon::{
    ADDON_NAME_LABEL, AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn,
};
use ocm_api::cluster::{CLUSTER_NAME_LABEL, ManagedCluster};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::identity::{CsrFacts, addon};
use ocm_runtime::informers::Informers;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on registration controller";
/// How soon a refused CSR is looked at again (its cluster may be accepted by then).
const RETRY: Duration = Duration::from_secs(5);
/// Reason written on the CSRs this controller approves.
const REASON: &str = "AutoApprovedByHubAddonRegistration";

struct Context {
    client: Client,
    clusters: Store<ManagedCluster>,
    csrs: Store<CertificateSigningRequest>,
    /// Add-ons and templates: which custom signers an add-on's template registers.
    cmas: Store<ClusterManagementAddOn>,
    templates: Store<AddOnTemplate>,
    /// CSRs already reported as refused: each is said once, not on every wake-up.
    reported: Mutex<HashSet<String>>,
}

/// Refused CSRs remembered before the memo starts over (the API server deletes them in a day).
const REPORTED_MAX: usize = 10_000;

/// The controller over `informers`' add-ons and their agents' CSRs, running until `shutdown`
/// is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    gate: ocm_runtime::controller::Gate,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let clusters = informers.store::<ManagedCluster>();
    let (addons, addon_events) = informers.feed::<ManagedClusterAddOn>();
    let (csrs, csr_events) = informers.feed::<CertificateSigningRequest>();
    let (cmas, templates) = (informers.store(), informers.store());
    let ctx = Arc::new(Context {
        client: hub,
        clusters: clusters.clone(),
        csrs: csrs.clone(),
        cmas,
        templates,
        reported: Mutex::default(),
    });
    let controller = Controller::for_shared_stream(addon_events, addons.clone())
        .watches_shared_stream(csr_events, |csr| {
            let labels = csr.labels();
            let (cluster, addon) = (
                labels.get(CLUSTER_NAME_LABEL)?,
                labels.get(ADDON_NAME_LABEL)?,
            );
            Some(ObjectRef::new(addon).within(cluster))
        });
    let run = Runner::new(CONTROLLER, controller)
        .gated(gate)
        .after(&clusters)
        .after(&addons)
        .after(&csrs)
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

async fn reconcile(
    mca: Arc<ManagedClusterAddOn>,
    ctx: Arc<Context>,
) -> Result<Action, kube::Error> {
    let (name, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    let accepted = ctx
        .clusters
        .get(&ObjectRef::new(&cluster))
        .is_some_and(|mc| mc.spec.hub_accepts_client && mc.metadata.deletion_timestamp.is_none());
    if !accepted || mca.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let registrations = mca
        .status
        .as_ref()
        .map(|s| s.registrations.as_slice())
        .unwrap_or_default();
    let template = ctx
        .cmas
        .get(&ObjectRef::new(&name))
        .and_then(|cma| super::template::template_name(&mca, &cma))
        .and_then(|t| ctx.templates.get(&ObjectRef::new(&t)));
    let custom = template
        .as_deref()
        .map(signer::custom_signers)
        .unwrap_or_default();
    let hub_signers: Vec<String> = custom.iter().map(|c| c.signer_name.clone()).collect();
    // A custom signer's identity is the template's (the hub's word, as the manager lists it in
    // the status), never the status's, which the cluster's agent may write: the add-on's CA
    // signs whatever subject is approved.
    let from_template = template
        .as_deref()
        .map(|t| super::template::registrations(t, &cluster, &name))
        .unwrap_or_default();
    let registrations: &Vec<ocm_api::addon::RegistrationConfig> = &registrations
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
        .collect();
    let ours = ctx.csrs.state().into_iter().filter(|csr| {
        let labels = csr.labels();
        labels.get(CLUSTER_NAME_LABEL) == Some(&cluster)
            && labels.get(ADDON_NAME_LABEL) == Some(&name)
    });
    // A custom-signer CSR that could not be signed yet (its CA missing, say) is tried again.
    let mut unsigned_left = false;
    for csr in ours {
        let facts = CsrFacts::of(&csr);
        let unsigned = csr.status.as_ref().is_none_or(|s| s.certificate.is_none());
        let custom_signer = custom.iter().find(|c| c.signer_name == facts.signer);
        if facts.approved
            && unsigned
            && let Some(signer) = custom_signer
        {
            // Approved, perhaps not by this hub: signed only if it still asks for the identity.
            match signer::may_sign(&facts, &cluster, &name, registrations, &hub_signers) {
                Ok(()) => unsigned_left |= !sign(&ctx, &csr, signer).await,
                Err(why) => report_refused(&ctx, &cluster, &name, &facts.name, "signing", &why),
            }
            continue;
        }
        if !facts.pending {
            continue;
        }
        match addon::check_with_signers(&facts, &cluster, &name, registrations, &hub_signers) {
            Ok(()) => {
                let message =
                    format!("add-on {name} of cluster {cluster}: the identity it registered");
                ocm_runtime::apply::approve::approve_csr(
                    &ctx.client,
                    &facts.name,
                    REASON,
                    &message,
                )
                .await?;
                tracing::info!(%cluster, addon = %name, csr = %facts.name, "approved an add-on CSR");
                if let Some(signer) = custom_signer {
                    unsigned_left |= !sign(&ctx, &csr, signer).await;
                }
            }
            Err(why) => report_refused(&ctx, &cluster, &name, &facts.name, "approving", &why),
        }
    }
    Ok(if unsigned_left {
        Action::requeue(RETRY)
    } else {
        Action::await_change()
    })
}

/// Logs once per CSR why it is not approved (or not signed).
fn report_refused(ctx: &Context, cluster: &str, addon: &str, csr: &str, doing: &str, why: &str) {
    let mut reported = ctx.reported.lock().unwrap_or_else(PoisonError::into_inner);
    if reported.len() >= REPORTED_MAX {
        reported.clear();
    }
    if reported.insert(csr.to_string()) {
        tracing::info!(%cluster, %addon, %csr, "not {doing} an add-on CSR: {why}");
    }
}

/// Signs an approved custom-signer CSR; `false` (and logged) when it could not.
async fn sign(
    ctx: &Context,
    csr: &CertificateSigningRequest,
    signer: &ocm_api::addon::CustomSignerRegistration,
) -> bool {
    match signer::sign(&ctx.client, csr, signer).await {
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
