//! The work agent's controller: one watch of the ManifestWorks in the cluster's namespace on the
//! hub, a reconcile per work ([`super::sync`]), a periodic resync that repairs drift on the
//! managed cluster, and a sweep that evicts records no work manages any more, after a grace period.
use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use kube::api::Api;
use kube::runtime::PredicateConfig;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::reflector;
use kube::runtime::{Predicate as _, predicates};
use kube::runtime::{WatchStreamExt as _, watcher};
use tokio_util::task::AbortOnDropHandle;

use super::discovery::Discovery;
use super::executor_cache::{self, SarCache};
use super::{Error, build, sweep, sync};
use ocm_api::work::{MANIFEST_WORK_FINALIZER, ManifestWork};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::queue_depth::Wakes;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "work agent";
/// Default period after which every work is re-applied (repairing drift on the managed cluster).
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(60);
/// How often a work with status feedback rules is read again, unless the Klusterlet says
/// otherwise (upstream's status sync interval).
pub const STATUS_SYNC: Duration = Duration::from_secs(10);
/// Delay before retrying a failed reconcile or a work with failed manifests.
pub const RETRY: Duration = Duration::from_secs(5);
/// How long one reconcile waits for a deleted resource to disappear before retrying later.
pub const DELETE_WAIT: Duration = Duration::from_secs(30);

/// What the work agent needs.
#[derive(Clone)]
pub struct WorkAgentOptions {
    /// Client for the hub, with the agent's credential (rights in its cluster namespace only).
    pub hub: Client,
    /// The hub apiserver URL as the hub kubeconfig names it (its hash names the
    /// AppliedManifestWorks, as upstream's does; a trailing `/` is ignored).
    pub hub_url: String,
    /// Client for the managed cluster.
    pub managed: Client,
    /// The cluster's name: the hub namespace whose ManifestWorks are applied.
    pub cluster_name: String,
    /// The agent's id, recorded in AppliedManifestWorks. Keep it stable across restarts (for
    /// example `<cluster>-work-agent`): only records with this id are swept.
    pub agent_id: String,
    /// How often every work is re-applied.
    pub resync: Duration,
    /// How many works are reconciled at once.
    pub concurrency: u16,
    /// How AppliedManifestWorks are named on the managed cluster.
    pub applied_names: AppliedNames,
    /// How status feedback is read (the Klusterlet's `RawFeedbackJsonString` gate).
    pub feedback: super::feedback::Reader,
    /// Cache executors' access reviews until RBAC changes (the Klusterlet's
    /// `ExecutorValidatingCaches` gate, off by default as upstream's): off, every apply asks.
    pub executor_caches: bool,
    /// The Klusterlet's work settings: the eviction grace period ([`super::eviction`]) and the
    /// status sync interval.
    pub settings: super::Settings,
}

/// How AppliedManifestWorks are named. They are cluster-scoped on the managed cluster, so agents
/// of several clusters that share one managed API server (hosted agents of several clusters
/// pointed at one cluster, or `scripts/scale`'s fleet) need names that say which cluster's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AppliedNames {
    /// `<hub hash>-<work>`, as upstream: one cluster per managed API server.
    #[default]
    PerHub,
    /// `<hub hash>-<cluster>-<work>`: several clusters per managed API server.
    PerCluster,
}

impl WorkAgentOptions {
    /// Options with the default resync period and concurrency.
    #[must_use]
    pub fn new(
        hub: Client,
        hub_url: impl Into<String>,
        managed: Client,
        cluster_name: impl Into<String>,
        agent_id: impl Into<String>,
    ) -> Self {
        Self {
            hub,
            hub_url: hub_url.into(),
            managed,
            cluster_name: cluster_name.into(),
            agent_id: agent_id.into(),
            resync: DEFAULT_RESYNC,
            concurrency: 10,
            applied_names: AppliedNames::PerHub,
            feedback: super::feedback::Reader::default(),
            executor_caches: false,
            settings: super::Settings::default(),
        }
    }
}

/// Shared state of the reconciles.
pub(crate) struct Context {
    pub hub: Client,
    pub managed: Client,
    pub cluster: String,
    pub hub_hash: String,
    pub applied_names: AppliedNames,
    pub agent_id: String,
    pub resync: Duration,
    /// The Klusterlet's work settings.
    pub settings: super::Settings,
    pub discovery: Discovery,
    /// Executors' review answers, kept in step with RBAC by [`super::executor_cache::watch`].
    pub executor_cache: Arc<SarCache>,
    /// How status feedback is read.
    pub feedback: super::feedback::Reader,
    /// The objects watched for feedback (`feedbackScrapeType: Watch`).
    pub watched: Arc<super::watched::Watched>,
}

impl Context {
    pub(crate) fn works(&self) -> Api<ManifestWork> {
        Api::namespaced(self.hub.clone(), &self.cluster)
    }

    /// The name of the AppliedManifestWork of `work`.
    pub(crate) fn applied_work_name(&self, work: &str) -> String {
        match self.applied_names {
            AppliedNames::PerHub => build::applied_work_name(&self.hub_hash, work),
            AppliedNames::PerCluster => {
                build::cluster_applied_work_name(&self.hub_hash, &self.cluster, work)
            }
        }
    }
}

/// Runs the work agent until `shutdown` completes. Errors of single works are logged and
/// retried; this returns only on shutdown.
pub async fn run(opts: WorkAgentOptions, shutdown: Shutdown) -> anyhow::Result<()> {
    let (watched, woken) = super::watched::Watched::new(opts.managed.clone(), &opts.cluster_name);
    let ctx = Arc::new(Context {
        watched,
        hub_hash: build::hub_hash(opts.hub_url.trim_end_matches('/')),
        applied_names: opts.applied_names,
        discovery: Discovery::new(opts.managed.clone()),
        hub: opts.hub,
        managed: opts.managed,
        cluster: opts.cluster_name,
        agent_id: opts.agent_id,
        resync: opts.resync,
        settings: opts.settings,
        executor_cache: Arc::new(SarCache::new()),
        feedback: opts.feedback,
    });
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

/// Under kube's finalizer helper: the finalizer is added before anything is applied, and removed
/// only once what the work applied is gone from the managed cluster.
async fn reconcile(
    work: Arc<ManifestWork>,
    ctx: Arc<Context>,
) -> Result<Action, finalizer::Error<Error>> {
    finalizer(&ctx.works(), MANIFEST_WORK_FINALIZER, work, |event| async {
        match event {
            finalizer::Event::Apply(work) => {
                let started = std::time::Instant::now();
                let synced = sync::sync(&work, &ctx).await;
                ocm_runtime::metrics::work_applied(started.elapsed().as_secs_f64());
                synced.map(Action::requeue)
            }
            finalizer::Event::Cleanup(work) => {
                sync::finalize(&work, &ctx).await?;
                Ok(Action::await_change())
            }
        }
    })
    .await
}
