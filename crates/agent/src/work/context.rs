//! What every pass of the work agent is handed: the options it is started with
//! ([`WorkAgentOptions`], the Klusterlet's [`Settings`]), and the `Context` built from them once
//! — both clients, the names it writes under, and the caches kept between passes (the
//! AppliedManifestWork records, read from the shared store with the agent's own writes over it
//! (`Records`), discovery, executors' review answers, the feedback watches).
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};

use super::build;
use super::discovery::Discovery;
use super::executor_cache::SarCache;
use ocm_api::work::{AppliedManifestWork, ManifestWork};

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
    /// The AppliedManifestWorks, from the shared store and this agent's own writes.
    pub records: Records,
}

impl Context {
    /// The context of an agent started with `opts`, its feedback watches in `watched`, its
    /// records in `records`.
    pub(crate) fn new(
        opts: &WorkAgentOptions,
        watched: Arc<super::watched::Watched>,
        records: Store<AppliedManifestWork>,
    ) -> Self {
        Self {
            watched,
            records: Records::new(records),
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

    /// What the names of this agent's AppliedManifestWorks start with.
    pub(crate) fn applied_work_prefix(&self) -> String {
        self.applied_work_name("")
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

/// The AppliedManifestWorks as the shared store shows them, with this agent's own writes laid
/// over it until the store shows them too. The store catches up with a write a moment later, and
/// a pass that read a record from before the agent's own last write would act on a list that
/// write replaced: a resource recorded by the previous pass and dropped from the work in this one
/// would never be deleted. Which of the two is newer is told by their resourceVersions, compared
/// as numbers, as client-go's mutation cache compares them; a version that is not a number
/// leaves the store's view.
pub(crate) struct Records {
    store: Store<AppliedManifestWork>,
    written: Mutex<HashMap<String, Written>>,
}

/// What this agent last knew of one record from its own requests.
#[derive(Debug, Clone)]
enum Written {
    /// The record as a write (or a fresh read) returned it.
    Object(Arc<AppliedManifestWork>),
    /// Deleted; it was at this version when last seen.
    Deleted(Option<u64>),
}

impl Records {
    /// Records read from `store`.
    pub(crate) fn new(store: Store<AppliedManifestWork>) -> Self {
        Self {
            store,
            written: Mutex::default(),
        }
    }

    /// The record `name`, as last known.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<AppliedManifestWork>> {
        let stored = self.store.get(&ObjectRef::new(name));
        let mut written = self.lock();
        let Some(mine) = written.get(name) else {
            return stored;
        };
        if newer(mine, stored.as_deref()) {
            return match mine {
                Written::Object(record) => Some(record.clone()),
                Written::Deleted(_) => None,
            };
        }
        // The store shows the write now (or a later change): it is the one to read.
        written.remove(name);
        stored
    }

    /// Every record, as last known.
    pub(crate) fn all(&self) -> Vec<Arc<AppliedManifestWork>> {
        let mut names: Vec<String> = self.store.state().iter().map(|r| r.name_any()).collect();
        names.extend(self.lock().keys().cloned());
        names.sort();
        names.dedup();
        names.iter().filter_map(|name| self.get(name)).collect()
    }

    /// Notes `record` as a request of this agent (a write, or a fresh read) returned it, unless
    /// what is noted already is newer.
    pub(crate) fn note(&self, record: AppliedManifestWork) {
        let mut written = self.lock();
        let name = record.name_any();
        let record = Written::Object(Arc::new(record));
        let keep = written
            .get(&name)
            .is_some_and(|known| version_of(known) > version_of(&record));
        if !keep {
            written.insert(name, record);
        }
    }

    /// Notes that the record `name` is deleted; `last` is what was last seen of it.
    pub(crate) fn deleted(&self, name: &str, last: &AppliedManifestWork) {
        self.lock()
            .insert(name.to_owned(), Written::Deleted(version(last)));
    }

    /// Forgets what this agent wrote of `name` (a write failed: the store is read again).
    pub(crate) fn forget(&self, name: &str) {
        self.lock().remove(name);
    }

    /// `record` was deleted (the store says so now): what this agent wrote of it is forgotten,
    /// but not what it wrote of one made again since under the same name.
    pub(crate) fn gone(&self, record: &AppliedManifestWork) {
        let mut written = self.lock();
        let name = record.name_any();
        let same = match written.get(&name) {
            Some(Written::Object(mine)) => mine.uid() == record.uid(),
            Some(Written::Deleted(_)) => true,
            None => false,
        };
        if same {
            written.remove(&name);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Written>> {
        self.written.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A record's resourceVersion, as a number.
fn version(record: &AppliedManifestWork) -> Option<u64> {
    record.resource_version()?.parse().ok()
}

fn version_of(written: &Written) -> Option<u64> {
    match written {
        Written::Object(record) => version(record),
        Written::Deleted(at) => *at,
    }
}

/// Whether what this agent wrote is newer than what the store shows.
fn newer(written: &Written, stored: Option<&AppliedManifestWork>) -> bool {
    match (written, stored.map(version)) {
        // Created, and not in the store yet.
        (Written::Object(_), None) => true,
        (Written::Object(record), Some(Some(shown))) => version(record).is_some_and(|v| v > shown),
        // Still the deleted object, not one made again since.
        (Written::Deleted(at), Some(Some(shown))) => at.is_some_and(|at| shown <= at),
        // The store shows the deletion too; or a version that says nothing.
        (Written::Deleted(_), None) | (_, Some(None)) => false,
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;

    use super::*;
    use ocm_api::work::AppliedManifestWorkSpec;

    fn record(name: &str, version: &str) -> AppliedManifestWork {
        let mut r = AppliedManifestWork::new(name, AppliedManifestWorkSpec::default());
        r.metadata.resource_version = Some(version.into());
        r
    }

    fn shown(records: &Records, name: &str) -> Option<String> {
        records.get(name).and_then(|r| r.resource_version())
    }

    #[test]
    fn a_write_is_read_back_until_the_store_shows_it() {
        let (store, mut writer) = reflector::store();
        let records = Records::new(store);
        writer.apply_watcher_event(&Event::Apply(record("a", "10")));
        records.note(record("a", "12"));
        assert_eq!(shown(&records, "a").as_deref(), Some("12"));
        // An older write returning late does not replace it.
        records.note(record("a", "11"));
        assert_eq!(shown(&records, "a").as_deref(), Some("12"));
        writer.apply_watcher_event(&Event::Apply(record("a", "12")));
        assert_eq!(shown(&records, "a").as_deref(), Some("12"));
        assert!(records.lock().is_empty(), "caught up: the store is read");
        // Someone else's later change is the store's.
        records.note(record("a", "13"));
        writer.apply_watcher_event(&Event::Apply(record("a", "14")));
        assert_eq!(shown(&records, "a").as_deref(), Some("14"));
    }

    #[test]
    fn a_created_record_is_there_and_a_deleted_one_gone_before_the_store_says_so() {
        let (store, mut writer) = reflector::store();
        let records = Records::new(store);
        records.note(record("new", "5"));
        assert_eq!(shown(&records, "new").as_deref(), Some("5"));
        assert_eq!(records.all().len(), 1);
        writer.apply_watcher_event(&Event::Apply(record("old", "3")));
        records.deleted("old", &record("old", "4"));
        assert_eq!(shown(&records, "old"), None);
        assert_eq!(records.all().len(), 1);
        // Made again since: the store's.
        writer.apply_watcher_event(&Event::Apply(record("old", "9")));
        assert_eq!(shown(&records, "old").as_deref(), Some("9"));
        // A version that is not a number: the store's.
        records.note(record("odd", "x"));
        writer.apply_watcher_event(&Event::Apply(record("odd", "1")));
        assert_eq!(shown(&records, "odd").as_deref(), Some("1"));
        // Deleted by someone else: forgotten, unless what was written is another object.
        let mut made = record("made", "20");
        made.metadata.uid = Some("second".into());
        records.note(made);
        let mut first = record("made", "15");
        first.metadata.uid = Some("first".into());
        records.gone(&first);
        assert_eq!(shown(&records, "made").as_deref(), Some("20"));
        first.metadata.uid = Some("second".into());
        records.gone(&first);
        assert_eq!(shown(&records, "made"), None);
        records.forget("new");
        assert!(records.lock().is_empty());
    }
}
