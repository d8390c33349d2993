//! What every pass of the work agent is handed: the options it is started with
//! ([`WorkAgentOptions`], the Klusterlet's [`Settings`]), and the [`Context`] built from them once
//! — both clients, the names it writes under, and the caches kept between passes (discovery,
//! executors' review answers, the feedback watches).
use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use kube::api::Api;

use super::build;
use super::discovery::Discovery;
use super::executor_cache::SarCache;
use ocm_api::work::ManifestWork;

/// Default period after which every work is re-applied (repairing drift on the managed cluster).
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(60);
/// How often a work with status feedback rules is read again, unless the Klusterlet says
/// otherwise (upstream's status sync interval).
pub const STATUS_SYNC: Duration = Duration::from_secs(10);
/// Delay before retrying a failed reconcile or a work with failed manifests.
pub const RETRY: Duration = Duration::from_secs(5);
/// How long one reconcile waits for a deleted resource to disappear before retrying later.
pub const DELETE_WAIT: Duration = Duration::from_secs(30);

/// What a Klusterlet's `workConfiguration` tells our work agent (upstream's work agent takes
/// each as a flag of the same meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `appliedManifestWorkEvictionGracePeriod` ([`super::eviction`]).
    pub eviction_grace: Duration,
    /// `statusSyncInterval`: how often a work with status feedback or condition rules is read
    /// again for them.
    pub status_sync: Duration,
    /// `hubKubeAPIQPS`/`hubKubeAPIBurst`: the rate of the agent's requests to the hub (none:
    /// unlimited).
    pub hub_rate: Option<ocm_runtime::rate::Rate>,
}

impl Default for Settings {
    /// Upstream's defaults.
    fn default() -> Self {
        Self {
            eviction_grace: super::eviction::DEFAULT_GRACE,
            status_sync: STATUS_SYNC,
            hub_rate: None,
        }
    }
}

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
    pub settings: Settings,
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
            settings: Settings::default(),
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
    pub settings: Settings,
    pub discovery: Discovery,
    /// Executors' review answers, kept in step with RBAC by [`super::executor_cache::watch`].
    pub executor_cache: Arc<SarCache>,
    /// How status feedback is read.
    pub feedback: super::feedback::Reader,
    /// The objects watched for feedback (`feedbackScrapeType: Watch`).
    pub watched: Arc<super::watched::Watched>,
}

impl Context {
    /// The context of an agent started with `opts`, its feedback watches in `watched`.
    pub(crate) fn new(opts: &WorkAgentOptions, watched: Arc<super::watched::Watched>) -> Self {
        Self {
            watched,
            hub_hash: build::hub_hash(opts.hub_url.trim_end_matches('/')),
            applied_names: opts.applied_names,
            discovery: Discovery::new(opts.managed.clone()),
            hub: opts.hub.clone(),
            managed: opts.managed.clone(),
            cluster: opts.cluster_name.clone(),
            agent_id: opts.agent_id.clone(),
            resync: opts.resync,
            settings: opts.settings,
            executor_cache: Arc::new(SarCache::new()),
            feedback: opts.feedback,
        }
    }

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
