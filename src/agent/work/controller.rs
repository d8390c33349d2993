//! The work agent's controller: one watch of the ManifestWorks in the cluster's namespace on the
//! hub, a reconcile per work ([`super::sync`]), a periodic resync that repairs drift on the
//! managed cluster, and a sweep of records whose work vanished without cleanup.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::watcher;
use kube::{Client, ResourceExt as _};
use serde_json::json;

use super::discovery::Discovery;
use super::{Error, build, sweep, sync};
use crate::api::work::{MANIFEST_WORK_FINALIZER, ManifestWork};
use crate::runtime::Shutdown;

/// Default period after which every work is re-applied (repairing drift on the managed cluster).
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(60);
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
        }
    }
}

/// Shared state of the reconciles.
pub(crate) struct Context {
    pub hub: Client,
    pub managed: Client,
    pub cluster: String,
    pub hub_hash: String,
    pub agent_id: String,
    pub resync: Duration,
    pub discovery: Discovery,
    /// Per work UID: the generation last synced and when it is due again. Status updates and
    /// finalizer edits wake the reconcile too; this keeps them from re-applying everything.
    synced: Mutex<HashMap<String, (Option<i64>, Instant)>>,
}

impl Context {
    fn due_in(&self, uid: &str, generation: Option<i64>) -> Option<Duration> {
        let synced = self.synced.lock().expect("memo lock");
        let (g, due) = synced.get(uid)?;
        (*g == generation).then(|| due.checked_duration_since(Instant::now()))?
    }

    fn mark(&self, uid: &str, generation: Option<i64>, next: Duration) {
        let mut synced = self.synced.lock().expect("memo lock");
        synced.insert(uid.to_owned(), (generation, Instant::now() + next));
    }

    pub(crate) fn forget(&self, uid: &str) {
        self.synced.lock().expect("memo lock").remove(uid);
    }

    pub(crate) fn works(&self) -> Api<ManifestWork> {
        Api::namespaced(self.hub.clone(), &self.cluster)
    }
}

/// Runs the work agent until `shutdown` completes. Errors of single works are logged and
/// retried; this returns only on shutdown.
pub async fn run(opts: WorkAgentOptions, shutdown: Shutdown) -> anyhow::Result<()> {
    let ctx = Arc::new(Context {
        hub_hash: build::hub_hash(opts.hub_url.trim_end_matches('/')),
        discovery: Discovery::new(opts.managed.clone()),
        hub: opts.hub,
        managed: opts.managed,
        cluster: opts.cluster_name,
        agent_id: opts.agent_id,
        resync: opts.resync,
        synced: Mutex::new(HashMap::new()),
    });
    tracing::info!(cluster = %ctx.cluster, hub_hash = %ctx.hub_hash, "work agent starting");
    let controller = Controller::new(ctx.works(), watcher::Config::default())
        .with_config(Config::default().concurrency(opts.concurrency));
    let sweeper = tokio::spawn(sweep::run(ctx.clone(), controller.store()));
    controller
        .graceful_shutdown_on(crate::runtime::shutdown::cancelled(&shutdown))
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::warn!("work agent: {}", super::chain(&e));
            }
        })
        .await;
    sweeper.abort();
    tracing::info!("work agent stopped");
    Ok(())
}

fn has_finalizer(work: &ManifestWork) -> bool {
    work.finalizers()
        .iter()
        .any(|f| f == MANIFEST_WORK_FINALIZER)
}

async fn reconcile(work: Arc<ManifestWork>, ctx: Arc<Context>) -> Result<Action, Error> {
    let uid = work.uid().unwrap_or_default();
    if work.metadata.deletion_timestamp.is_some() {
        if has_finalizer(&work) {
            sync::finalize(&work, &ctx).await?;
            set_finalizer(&ctx, &work, false).await?;
            ctx.forget(&uid);
        }
        return Ok(Action::await_change());
    }
    if !has_finalizer(&work) {
        set_finalizer(&ctx, &work, true).await?;
    }
    let generation = work.metadata.generation;
    if let Some(due) = ctx.due_in(&uid, generation) {
        return Ok(Action::requeue(due));
    }
    let next = sync::sync(&work, &ctx).await?;
    ctx.mark(&uid, generation, next);
    Ok(Action::requeue(next))
}

// The signature `Controller::run` expects.
#[allow(clippy::needless_pass_by_value)]
fn error_policy(work: Arc<ManifestWork>, err: &Error, _ctx: Arc<Context>) -> Action {
    tracing::warn!(work = %work.name_any(), "{}", super::chain(err));
    Action::requeue(RETRY)
}

/// Adds or removes the agent's finalizer; the resourceVersion makes it a compare-and-swap.
async fn set_finalizer(ctx: &Context, work: &ManifestWork, present: bool) -> Result<(), Error> {
    let mut finalizers: Vec<String> = work
        .finalizers()
        .iter()
        .filter(|f| *f != MANIFEST_WORK_FINALIZER)
        .cloned()
        .collect();
    if present {
        finalizers.push(MANIFEST_WORK_FINALIZER.into());
    }
    let patch =
        json!({"metadata": {"finalizers": finalizers, "resourceVersion": work.resource_version()}});
    let name = work.name_any();
    match ctx
        .works()
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Err(kube::Error::Api(s)) if s.is_not_found() && !present => Ok(()),
        other => other.map(drop).map_err(Error::hub(format!(
            "updating the finalizer of ManifestWork {name}"
        ))),
    }
}
