//! The work agent: for one managed cluster, it watches the ManifestWorks in that cluster's
//! namespace on the hub and, for each one, applies its manifests on the managed cluster, records
//! what it applied in an AppliedManifestWork, reports conditions back on the hub, and removes what
//! it applied when a manifest leaves the work or the work is deleted.
//!
//! Its watches are a shared [`Informers`]' (one watch per kind, whoever else reads it). Each pass
//! reads (here: the work from the store, its record, the objects as applying returns them),
//! [`decide`] chooses (with [`build`] for each manifest and [`status`] for the conditions),
//! and the [`writer`] is the only place that writes. The parts:
//!
//! - [`context`]: the options, the Klusterlet's [`Settings`] and what every pass is handed;
//! - [`decide`]: what a pass does, decided purely from what was read;
//! - [`build`]: pure decisions about one manifest — parsing it, matching `manifestConfigs`, hub
//!   hash, which applied resources are orphaned on deletion;
//! - [`status`]: pure computation of per-manifest and work conditions;
//! - [`eviction`]: when a record no work manages any more is evicted (pure), applied by the sweep;
//! - [`discovery`]: kind → resource on the managed cluster, refreshed when a kind is unknown;
//! - [`apply`]: one manifest onto the managed cluster, by its update strategy;
//! - [`delete`]: removing or orphaning applied resources;
//! - [`executor`] / [`executor_cache`]: whether a work's executor may apply a manifest, and the
//!   cached review answers (forgotten when RBAC changes);
//! - [`feedback`]: status feedback values read from applied objects by their rules, and
//!   [`condition_rules`]: the conditions their condition rules set; [`ignore_fields`]: what a
//!   server-side apply leaves to the cluster; [`watched`]: the objects watched for feedback;
//! - [`writer`]: every write of the agent, on the hub and on the managed cluster;
//! - [`supervisor`]: runs the agent with the credential the registration agent earns, and
//!   restarts it when that credential changes.
pub mod apply;
pub mod build;
pub mod condition_rules;
pub mod context;
pub mod decide;
pub mod delete;
pub mod discovery;
pub mod eviction;
pub mod executor;
pub mod executor_cache;
pub mod feedback;
pub mod ignore_fields;
pub mod status;
pub mod supervisor;
pub mod watched;
pub mod writer;

mod sweep;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use futures::{Stream, StreamExt as _};
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::{Resource as _, ResourceExt as _};
use tokio_util::task::AbortOnDropHandle;

use apply::{Outcome, Owner};
use build::Key;
use context::{Context, DELETE_WAIT, RETRY};
use decide::{Record, Stage};
use delete::Removal;
use ocm_api::work::{AppliedManifestWork, AppliedManifestWorkSpec, ManifestWork};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use ocm_runtime::queue_depth::Wakes;

pub use context::{AppliedNames, Settings, WorkAgentOptions};

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "work agent";

/// A failure of one reconcile; the controller logs it and retries with a delay.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the hub failed.
    #[error("hub: {what}")]
    Hub {
        /// What was being done.
        what: String,
        /// The failed request.
        #[source]
        source: kube::Error,
    },
    /// A request to the managed cluster failed.
    #[error("managed cluster: {what}")]
    Managed {
        /// What was being done.
        what: String,
        /// The failed request.
        #[source]
        source: kube::Error,
    },
    /// Applied resources are still being deleted (or could not be); the work keeps its finalizer.
    #[error("{pending} applied resources of work {work} are not removed yet")]
    Pending {
        /// The ManifestWork.
        work: String,
        /// How many resources remain.
        pending: usize,
    },
}

impl ocm_runtime::controller::Failure for Error {
    fn retry(&self) -> ocm_runtime::controller::Retry {
        match self {
            // Waiting for the managed cluster to finish deleting, not failing.
            Self::Pending { .. } => ocm_runtime::controller::Retry::After(RETRY),
            _ => ocm_runtime::controller::Retry::Backoff,
        }
    }
}

impl Error {
    /// A hub failure while doing `what`.
    pub(crate) fn hub(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let what = what.into();
        move |source| Self::Hub { what, source }
    }

    /// A managed-cluster failure while doing `what`.
    pub(crate) fn managed(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let what = what.into();
        move |source| Self::Managed { what, source }
    }
}

/// An error and its causes on one line, for logs.
pub(crate) fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&match cause.downcast_ref::<kube::Error>() {
            Some(e) => apply::describe(e),
            None => cause.to_string(),
        });
        source = cause.source();
        if source.is_some() && cause.downcast_ref::<kube::Error>().is_some() {
            break; // describe() already said what the status says
        }
    }
    text
}

/// Runs the work agent until `shutdown` completes, on watches of its own ([`run_with`]): of the
/// ManifestWorks in the cluster's namespace on the hub and of the AppliedManifestWorks on the
/// managed cluster. Errors of single works are logged and retried; this returns only on shutdown.
pub async fn run(opts: WorkAgentOptions, shutdown: Shutdown) -> anyhow::Result<()> {
    let hub = Informers::namespaced(opts.hub.clone(), &opts.cluster_name);
    let managed = Informers::new(opts.managed.clone());
    let agent = run_with(&opts, &hub, &managed, shutdown.clone());
    tokio::join!(agent, hub.run(shutdown.clone()), managed.run(shutdown));
    tracing::info!("work agent stopped");
    Ok(())
}

/// The work agent over `hub`'s watch of the ManifestWorks in the cluster's namespace and
/// `managed`'s of the AppliedManifestWorks (of which `managed` keeps only those that concern
/// this agent: [`decide::concerns`]): a reconcile per work, a periodic resync that repairs drift
/// on the managed cluster, and a sweep that evicts records no work manages any more, after a
/// grace period. It runs until `shutdown` is cancelled once the returned future is polled, and
/// reconciles nothing before both have listed.
pub fn run_with(
    opts: &WorkAgentOptions,
    hub: &Informers,
    managed: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = ()> + Send + 'static {
    let (watched, woken) = watched::Watched::new(opts.managed.clone(), &opts.cluster_name);
    let records = managed.store::<AppliedManifestWork>();
    let ctx = Arc::new(Context::new(opts, watched, records.clone()));
    tracing::info!(cluster = %ctx.cluster, hub_hash = %ctx.hub_hash, "work agent starting");
    let (agent_id, prefix) = (ctx.agent_id.clone(), ctx.applied_work_prefix());
    managed.only(move |record| decide::concerns(record, &agent_id, &prefix));
    let works = hub.store::<ManifestWork>();
    // A sweeper or an RBAC watch left running would act for an agent that is gone: both are
    // aborted when the returned future ends or is dropped.
    let sweeper = sweep::run(ctx.clone(), works.clone(), records.clone());
    // The cache stores nothing until this watch has synced: without it every apply asks.
    let rbac = opts
        .executor_caches
        .then(|| executor_cache::watch(ctx.managed.clone(), ctx.executor_cache.clone()));
    // A watched object's change wakes its work (feedback read again at once). Drift is repaired
    // by the requeue every `resync`.
    let controller =
        Controller::for_shared_stream(spec_changes(hub), works.clone()).reconcile_on(woken);
    let runner = Runner::new(CONTROLLER, controller)
        .wakes(Wakes::OnSpec)
        .concurrency(opts.concurrency)
        .backoff(Duration::from_secs(1), Duration::from_secs(30))
        .after(&works)
        .after(&records)
        .run(reconcile, ctx.clone(), shutdown);
    // A record deleted by someone else before the store showed this agent's last write of it
    // would otherwise be read as that write.
    let gone = managed
        .deletions::<AppliedManifestWork>()
        .for_each(move |record| {
            ctx.records.gone(&record);
            std::future::ready(())
        });
    async move {
        let _sweeper = AbortOnDropHandle::new(tokio::spawn(sweeper));
        let _rbac = rbac.map(|watch| AbortOnDropHandle::new(tokio::spawn(watch)));
        let _gone = AbortOnDropHandle::new(tokio::spawn(gone));
        runner.await;
    }
}

/// The works that are new, or whose generation (spec edits and deletion bump it) or finalizers
/// changed: the agent's own status writes do not wake a work and re-apply everything.
fn spec_changes(hub: &Informers) -> impl Stream<Item = Arc<ManifestWork>> + Send + 'static {
    let mut seen = HashMap::new();
    let present = hub.changes::<ManifestWork>().map(|w| (w, true));
    let gone = hub.deletions::<ManifestWork>().map(|w| (w, false));
    futures::stream::select(present, gone).filter_map(move |(work, present)| {
        // By UID too: a work deleted and made again under its name is new.
        let key = (work.name_any(), work.uid());
        let woken = if present {
            let aspect = (work.metadata.generation, work.finalizers().to_vec());
            seen.insert(key, aspect.clone()).as_ref() != Some(&aspect)
        } else {
            seen.remove(&key);
            false
        };
        std::future::ready(woken.then_some(work))
    })
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
            let synced = sync(&work, &ctx).await;
            ocm_runtime::metrics::work_applied(started.elapsed().as_secs_f64());
            synced.map(Action::requeue)
        }
        Stage::Finalize { index } => {
            finalize(&work, &ctx).await?;
            writer::remove_finalizer(&ctx.works(), &work.name_any(), index).await?;
            Ok(Action::await_change())
        }
        Stage::Gone => Ok(Action::await_change()),
    }
}

/// The AppliedManifestWork `name` as the API server has it now (noted in the records).
async fn read_record(ctx: &Context, name: &str) -> Result<Arc<AppliedManifestWork>, Error> {
    let now = Api::<AppliedManifestWork>::all(ctx.managed.clone())
        .get(name)
        .await
        .map_err(Error::managed(format!(
            "reading AppliedManifestWork {name}"
        )))?;
    ctx.records.note(now.clone());
    Ok(Arc::new(now))
}

/// The AppliedManifestWork of `work`, created, or fixed as [`decide::record`] says.
async fn ensure_record(
    ctx: &Context,
    name: &str,
    work: &str,
) -> Result<Arc<AppliedManifestWork>, Error> {
    let spec = AppliedManifestWorkSpec {
        hub_hash: ctx.hub_hash.clone(),
        agent_id: Some(ctx.agent_id.clone()),
        manifest_work_name: work.to_owned(),
    };
    let existing = if let Some(existing) = ctx.records.get(name) {
        existing
    } else {
        let created = writer::create_record(&ctx.managed, &ctx.records, name, spec.clone());
        if let Some(created) = created.await? {
            return Ok(created);
        }
        // Made meanwhile, or not in the store yet: kept or fixed as it is now.
        read_record(ctx, name).await?
    };
    match decide::record(&existing, &spec) {
        Record::Keep => Ok(existing),
        Record::Fix { finalizers } => {
            writer::fix_record(&ctx.managed, &ctx.records, &existing, &finalizers, &spec).await
        }
    }
}

/// One pass over a live work: ensure its AppliedManifestWork, apply every manifest (in
/// dependency tiers, concurrently within a tier), delete what left the work, record what was
/// applied, and report status on the hub. Returns when the work is due again.
async fn sync(work: &ManifestWork, ctx: &Context) -> Result<Duration, Error> {
    let name = work.name_any();
    let amw_name = ctx.applied_work_name(&name);
    let amw = ensure_record(ctx, &amw_name, &name).await?;
    let owner = Owner {
        name: amw_name.clone(),
        uid: amw.uid().unwrap_or_default(),
    };
    let previous = amw.status.clone().unwrap_or_default().applied_resources;
    if amw.metadata.deletion_timestamp.is_some() {
        // The record was deleted by hand: clean up as its finalizer promises, then start over.
        tracing::info!(work = %name, "AppliedManifestWork {amw_name} is being deleted; removing its resources");
        let removals =
            delete::remove_all(&ctx.managed, &previous, &owner.uid, None, DELETE_WAIT).await;
        ensure_removed(&name, &removals)?;
        writer::remove_record(&ctx.managed, &ctx.records, &amw, &decide::released(&amw)).await?;
        return Ok(Duration::ZERO);
    }

    let outcomes = apply_all(work, ctx, &owner).await;
    let wanted: Vec<Key> = outcomes.iter().filter_map(|o| o.key.clone()).collect();
    let applied_now: Vec<_> = outcomes.iter().filter_map(|o| o.record.clone()).collect();
    let stale = decide::stale(&previous, &wanted);
    let removals = delete::remove_all(
        &ctx.managed,
        &stale,
        &owner.uid,
        work.spec.delete_option.as_ref(),
        DELETE_WAIT,
    )
    .await;
    for (res, removal) in stale.iter().zip(&removals) {
        if *removal != Removal::Done {
            tracing::warn!(work = %name, resource = %res.name, "removing a dropped resource: {removal:?}");
        }
    }
    let pending = decide::left(&removals) > 0;
    let next = decide::next_applied(&previous, &applied_now, &wanted);
    if let Some(next) = decide::recorded(&previous, next, &stale, &removals) {
        writer::record(&ctx.managed, &ctx.records, &amw_name, &next).await?;
    }

    let results: Vec<_> = outcomes.into_iter().map(|o| o.result).collect();
    ctx.watched.set(
        &name,
        watched::targets(&work.spec.manifest_configs, &results),
    );
    let failed = results.iter().any(|r| r.applied.is_err());
    let new_status = status::work_status(
        work.status.as_ref(),
        &results,
        work.meta().generation,
        &status::now(),
    );
    if work.status.as_ref() != Some(&new_status) {
        writer::work_status(&ctx.works(), &name, &new_status).await?;
    }
    tracing::debug!(work = %name, manifests = results.len(), failed, "work synced");
    Ok(decide::due(
        failed || pending,
        decide::wants_feedback(work),
        ctx.resync,
        RETRY,
        ctx.settings.status_sync,
    ))
}

/// Applies the manifests tier by tier (namespaces and CRDs before what lives in them); returns
/// the outcomes in manifest order.
async fn apply_all(work: &ManifestWork, ctx: &Context, owner: &Owner) -> Vec<Outcome> {
    let manifests = &work.spec.workload.manifests;
    let configs = &work.spec.manifest_configs;
    let mut tiers: BTreeMap<u8, Vec<usize>> = BTreeMap::new();
    for (i, m) in manifests.iter().enumerate() {
        let tier = build::parse(m).map_or(u8::MAX, |p| ocm_runtime::apply::order::tier(&p.gvk));
        tiers.entry(tier).or_default().push(i);
    }
    let subject = executor::subject(work.spec.executor.as_ref());
    let executor = subject.as_ref().map(|subject| executor::Executor {
        client: &ctx.managed,
        cache: &ctx.executor_cache,
        subject: subject.as_ref().map_err(String::as_str).copied(),
        delete_option: work.spec.delete_option.as_ref(),
    });
    let mut outcomes: Vec<Option<Outcome>> = vec![None; manifests.len()];
    for ordinals in tiers.values() {
        let done = join_all(ordinals.iter().map(|&i| {
            apply::apply_manifest(
                ctx.feedback,
                &ctx.discovery,
                i,
                &manifests[i],
                configs,
                owner,
                executor,
            )
        }))
        .await;
        for (&i, outcome) in ordinals.iter().zip(done) {
            outcomes[i] = Some(outcome);
        }
    }
    outcomes.into_iter().flatten().collect()
}

/// `Ok` once every removal is done; the failures are logged.
fn ensure_removed(work: &str, removals: &[Removal]) -> Result<(), Error> {
    for r in removals.iter().filter(|r| matches!(r, Removal::Failed(_))) {
        tracing::warn!(work, "removing an applied resource: {r:?}");
    }
    match decide::left(removals) {
        0 => Ok(()),
        pending => Err(Error::Pending {
            work: work.to_owned(),
            pending,
        }),
    }
}

/// Removes what a deleted work applied (deleting or orphaning per its delete option), then its
/// AppliedManifestWork. Errs while anything is left, so the work keeps its finalizer.
async fn finalize(work: &ManifestWork, ctx: &Context) -> Result<(), Error> {
    let name = work.name_any();
    ctx.watched.set(&name, Vec::new());
    let amw_name = ctx.applied_work_name(&name);
    let Some(amw) = ctx.records.get(&amw_name) else {
        return Ok(());
    };
    let resources = amw.status.clone().unwrap_or_default().applied_resources;
    let owner_uid = amw.uid().unwrap_or_default();
    let removals = delete::remove_all(
        &ctx.managed,
        &resources,
        &owner_uid,
        work.spec.delete_option.as_ref(),
        DELETE_WAIT,
    )
    .await;
    ensure_removed(&name, &removals)?;
    writer::remove_record(&ctx.managed, &ctx.records, &amw, &decide::released(&amw)).await?;
    tracing::info!(work = %name, resources = resources.len(), "work deleted, its resources removed");
    Ok(())
}
