//! The work agent's controller: one watch of the ManifestWorks in the cluster's namespace on the
//! hub, a reconcile per work ([`super::sync`]), a periodic resync that repairs drift on the
//! managed cluster, and a sweep that evicts records no work manages any more, after a grace period.
use std::sync::Arc;
use std::time::Duration;

use kube::ResourceExt as _;
use kube::runtime::PredicateConfig;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector;
use kube::runtime::{Predicate as _, predicates};
use kube::runtime::{WatchStreamExt as _, watcher};
use tokio_util::task::AbortOnDropHandle;

use super::context::{Context, WorkAgentOptions};
use super::decide::{self, Stage};
use super::executor_cache;
use super::{Error, sweep, sync, writer};
use ocm_api::work::ManifestWork;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::queue_depth::Wakes;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "work agent";

/// Runs the work agent until `shutdown` completes. Errors of single works are logged and
/// retried; this returns only on shutdown.
pub async fn run(opts: WorkAgentOptions, shutdown: Shutdown) -> anyhow::Result<()> {
    let (watched, woken) = super::watched::Watched::new(opts.managed.clone(), &opts.cluster_name);
    let ctx = Arc::new(Context::new(&opts, watched));
    tracing::info!(cluster = %ctx.cluster, hub_hash = %ctx.hub_hash, "work agent starting");
    // Only a new generation (spec edits and deletion bump it) or a finalizer change wakes a work:
    // the agent's own status writes do not re-apply everything. Drift is repaired by the
    // requeue every `resync`.
    let (store, writer) = reflector::store();
    let works = watcher(ctx.works(), watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .applied_objects()
        .predicate_filter(
            predicates::generation.combine(predicates::finalizers),
            PredicateConfig::default(),
        );
    // Aborted when this future ends or is dropped (an aborted agent task too): a sweeper left
    // running would judge records against a store nobody updates any more.
    let _sweeper = AbortOnDropHandle::new(tokio::spawn(sweep::run(ctx.clone(), store.clone())));
    // The cache stores nothing until this watch has synced: without it every apply asks.
    let _rbac = opts.executor_caches.then(|| {
        AbortOnDropHandle::new(tokio::spawn(executor_cache::watch(
            ctx.managed.clone(),
            ctx.executor_cache.clone(),
        )))
    });
    // A watched object's change wakes its work (feedback read again at once).
    let controller = Controller::for_stream(works, store).reconcile_on(woken);
    Runner::new(CONTROLLER, controller)
        .wakes(Wakes::OnSpec)
        .concurrency(opts.concurrency)
        .backoff(Duration::from_secs(1), Duration::from_secs(30))
        .run(reconcile, ctx, shutdown)
        .await;
    tracing::info!("work agent stopped");
    Ok(())
}

/// One pass by the work's [`Stage`]: the finalizer is added before anything is applied, and
/// removed only once what the work applied is gone from the managed cluster.
async fn reconcile(work: Arc<ManifestWork>, ctx: Arc<Context>) -> Result<Action, Error> {
    match decide::stage(&work) {
        Stage::AddFinalizer => {
            writer::add_finalizer(&ctx.works(), &work).await?;
            // Applied once the change wakes the work again.
            Ok(Action::await_change())
        }
        Stage::Apply => {
            let started = std::time::Instant::now();
            let synced = sync::sync(&work, &ctx).await;
            ocm_runtime::metrics::work_applied(started.elapsed().as_secs_f64());
            synced.map(Action::requeue)
        }
        Stage::Finalize { index } => {
            sync::finalize(&work, &ctx).await?;
            writer::remove_finalizer(&ctx.works(), &work.name_any(), index).await?;
            Ok(Action::await_change())
        }
        Stage::Gone => Ok(Action::await_change()),
    }
}
