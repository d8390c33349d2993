//! The hub registration controller: a kube-runtime `Controller` over the shared ManagedCluster
//! store ([`ocm_runtime::informers`]), woken by the cluster agents' CSRs as well. One reconcile per
//! cluster at a time; [`decide`] chooses what the cluster needs from the stores and the
//! [`writer`] does it.
//!
//! On accept it creates the cluster namespace, the agent's RBAC ([`rbac`]) and the cluster's
//! `managed-cluster-lease`, adds the cleanup finalizer and sets `HubAcceptedManagedCluster`; it
//! approves certificate renewals that come from an accepted cluster's own agent; it marks
//! `ManagedClusterConditionAvailable=Unknown` when the lease is not renewed for five lease
//! durations (the reconcile is requeued at that deadline, so there is no poll); it revokes the
//! RBAC when `hubAcceptsClient` turns false; and it cleans up before letting a deleted
//! ManagedCluster go.
pub mod decide;
pub mod defaults;
pub mod rbac;
mod release;
pub mod writer;

pub use release::{release_all, remove_shared_roles};

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use kube::runtime::controller::{Action as Requeue, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};

use crate::settings::Watched;
use decide::{Action, Observed};
use ocm_api::addon::ADDON_NAME_LABEL;
use ocm_api::cluster::{CLUSTER_LEASE_NAME, CLUSTER_NAME_LABEL, ManagedCluster};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::identity::CsrFacts;
use ocm_runtime::informers::Informers;
use writer::Writer;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "hub registration controller";
/// How many clusters are reconciled at once.
pub const CONCURRENCY: u16 = 16;
/// Cap of the per-cluster retry backoff after a failed write.
pub const MAX_RETRY: Duration = Duration::from_secs(60);

/// What every reconcile shares.
struct Context {
    writer: Writer,
    csrs: Store<CertificateSigningRequest>,
    leases: Store<Lease>,
    /// Clusters whose namespace and RBAC this process applied (after a restart they are applied
    /// once more: server-side apply makes that a no-op on the server).
    granted: Mutex<HashSet<String>>,
    /// The ClusterManager's settings: who is approved without `accept`.
    settings: Watched,
    /// Per cluster, the lease renew time whose clock was judged last (see
    /// [`decide::Observed::new_renewal`]).
    judged: Mutex<HashMap<String, k8s_openapi::jiff::Timestamp>>,
}

/// Runs the hub registration controller alone, on watches of its own, until `shutdown` is
/// cancelled. A hub with more controllers builds them all from one [`Informers`] and runs them
/// with [`run_with`].
pub async fn run(hub: Client, shutdown: Shutdown) -> anyhow::Result<()> {
    let informers = Informers::new(hub.clone());
    let settings = crate::settings::from_informers(&informers, shutdown.clone());
    let controller = run_with(hub, &informers, settings, shutdown.clone());
    let (result, ()) = tokio::join!(controller, informers.run(shutdown));
    result
}

/// The controller over `informers`' ManagedClusters, CSRs and Leases, running until `shutdown`
/// is cancelled once the returned future is polled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    settings: Watched,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let (clusters, cluster_events) = informers.feed::<ManagedCluster>();
    let (csrs, csr_events) = informers.feed::<CertificateSigningRequest>();
    let leases = informers.store::<Lease>();
    // A renewal wakes its cluster, for the clock check; the lease's other changes do not.
    let renewals =
        informers.changes_of::<Lease, _>(|l| l.spec.as_ref().and_then(|s| s.renew_time.clone()));
    let controller = Controller::for_shared_stream(cluster_events, clusters)
        // Add-on CSRs carry the cluster label too; they are the add-on controller's to judge.
        .watches_shared_stream(csr_events, |csr| {
            let cluster = csr
                .labels()
                .get(CLUSTER_NAME_LABEL)
                .filter(|_| own_csr(&csr))?;
            Some(ObjectRef::new(cluster))
        })
        .watches_shared_stream(renewals, |lease| {
            (lease.name_any() == CLUSTER_LEASE_NAME)
                .then(|| lease.namespace())
                .flatten()
                .map(|cluster| ObjectRef::new(&cluster))
        })
        // Every cluster again when a setting its decision reads changes (a gate switched, the
        // auto-approved users edited).
        .reconcile_all_on(settings.changes());
    let ctx = Arc::new(Context {
        writer: Writer::new(hub),
        csrs: csrs.clone(),
        leases: leases.clone(),
        granted: Mutex::new(HashSet::new()),
        settings,
        judged: Mutex::default(),
    });
    // Decide only from complete stores: a lease not yet listed must not look missing.
    let run = Runner::new(CONTROLLER, controller)
        .concurrency(CONCURRENCY)
        .backoff(Duration::from_millis(500), MAX_RETRY)
        .after(&csrs)
        .after(&leases)
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

/// Whether `csr` is a cluster agent's own, not an add-on's.
fn own_csr(csr: &CertificateSigningRequest) -> bool {
    !csr.labels().contains_key(ADDON_NAME_LABEL)
}

async fn reconcile(mc: Arc<ManagedCluster>, ctx: Arc<Context>) -> Result<Requeue, writer::Error> {
    // Nothing is decided before the ClusterManager has been read (its first read wakes every
    // cluster): a default taken meanwhile could clean up what `ResourceCleanup=false` keeps.
    let Some(settings) = ctx.settings.peek() else {
        return Ok(Requeue::await_change());
    };
    let name = mc.name_any();
    let lease = ctx
        .leases
        .get(&ObjectRef::new(CLUSTER_LEASE_NAME).within(&name));
    let pending_csrs = ctx
        .csrs
        .state()
        .iter()
        .filter(|csr| csr.labels().get(CLUSTER_NAME_LABEL) == Some(&name) && own_csr(csr))
        .map(|csr| CsrFacts::of(csr))
        .filter(|f| f.pending)
        .collect();
    let granted = lock(&ctx.granted).contains(&name);
    let renewed = lease
        .as_ref()
        .and_then(|l| l.spec.as_ref()?.renew_time.as_ref())
        .map(|t| t.0);
    let new_renewal = renewed.is_some_and(|r| lock(&ctx.judged).get(&name) != Some(&r));
    let (resource_cleanup, default_cluster_set) =
        (settings.resource_cleanup, settings.default_cluster_set);
    let auto_approve = settings.auto_approve;
    let observed = Observed {
        cluster: &mc,
        pending_csrs,
        lease: lease.as_deref(),
        granted,
        auto_approve: auto_approve.as_deref(),
        resource_cleanup,
        default_cluster_set,
        new_renewal,
    };
    let decision = decide::decide(&observed, k8s_openapi::jiff::Timestamp::now());
    for action in &decision.actions {
        ctx.writer.apply(action).await?;
        match action {
            Action::Accept(c) => {
                lock(&ctx.granted).insert(c.clone());
            }
            Action::Deny(c) | Action::Cleanup(c) | Action::Unregister(c) => {
                lock(&ctx.granted).remove(c);
                lock(&ctx.judged).remove(c);
            }
            _ => {}
        }
    }
    // Judged once written (a failed write is judged again on the retry).
    if let (true, Some(renewed)) = (new_renewal, renewed) {
        lock(&ctx.judged).insert(name, renewed);
    }
    Ok(decision.recheck_in.map_or_else(Requeue::await_change, |d| {
        Requeue::requeue(d.max(Duration::from_secs(1)))
    }))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
