//! The hub's side of add-on registration: a `Controller` over ManagedClusterAddOns, woken by
//! add-on CSRs, that approves a CSR only when it asks for exactly an identity its add-on
//! registered on that cluster ([`ocm_runtime::identity::addon::check`]), from that cluster's agent,
//! and only while the cluster is accepted. A refused CSR stays pending, as upstream leaves it,
//! and is logged with the reason. An approved custom-signer CSR is signed only after the same
//! check ([`crate::addon::template::signer::may_sign`]), whoever approved it. What the identity
//! may then do is the add-on's hub RBAC.
//!
//! The reconcile reads the stores (here), [`decide`] says what becomes of each CSR, and the
//! [`writer`] is the only place that writes.
pub mod decide;
pub mod writer;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};

use super::template;
use decide::Step;
use ocm_api::addon::{
    ADDON_NAME_LABEL, AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn,
};
use ocm_api::cluster::{CLUSTER_NAME_LABEL, ManagedCluster};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use writer::Writer;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on registration controller";
/// How soon a CSR that could not be signed is looked at again (its CA may be there by then).
const RETRY: Duration = Duration::from_secs(5);

struct Context {
    writer: Writer,
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
        writer: Writer::new(hub),
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
    let template = ctx
        .cmas
        .get(&ObjectRef::new(&name))
        .and_then(|cma| template::template_name(&mca, &cma))
        .and_then(|t| ctx.templates.get(&ObjectRef::new(&t)));
    let steps = decide::decide(
        &mca,
        ctx.clusters.get(&ObjectRef::new(&cluster)).as_deref(),
        template.as_deref(),
        &ctx.csrs.state(),
    );
    // A custom-signer CSR that could not be signed yet (its CA missing, say) is tried again.
    let mut unsigned_left = false;
    for step in steps {
        match step {
            Step::Approve {
                name: csr,
                message,
                sign,
            } => {
                ctx.writer.approve(&cluster, &name, &csr, &message).await?;
                if let Some((csr, signer)) = sign {
                    unsigned_left |= !ctx.writer.sign(&csr, &signer).await;
                }
            }
            Step::Sign(csr, signer) => unsigned_left |= !ctx.writer.sign(&csr, &signer).await,
            Step::Refuse {
                name: csr,
                doing,
                why,
            } => report_refused(&ctx, &cluster, &name, &csr, doing, &why),
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
