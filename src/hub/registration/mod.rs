//! The hub registration controller, built for thousands of clusters: one watch per kind for all
//! clusters (ManagedClusters; CSRs with the cluster-name label; Leases named
//! `managed-cluster-lease`), an [`index`] that decides, a [`writer`] that acts, and one timer
//! queue for lease deadlines and retries — no per-cluster watch, loop or poll.
//!
//! On accept it creates the cluster namespace and the agent's RBAC ([`rbac`]), adds the cleanup
//! finalizer and sets `HubAcceptedManagedCluster`; it approves certificate renewals that come from
//! an accepted cluster's own agent; it marks `ManagedClusterConditionAvailable=Unknown` when a
//! lease is not renewed for five lease durations; it revokes the RBAC when `hubAcceptsClient`
//! turns false; and it cleans up before letting a deleted ManagedCluster go.
pub mod index;
pub mod rbac;
mod release;
pub mod writer;

pub use release::release_all;

use std::collections::{HashMap, HashSet};
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::time::{DelayQueue, delay_queue};

use crate::api::cluster::{CLUSTER_LEASE_NAME, CLUSTER_NAME_LABEL, ManagedCluster};
use index::{Action, Index};
use writer::Writer;

/// How many writes run at once.
pub const WRITE_CONCURRENCY: usize = 16;
/// Cap of the per-cluster retry backoff after failed writes.
pub const MAX_RETRY: Duration = Duration::from_secs(60);

/// Runs the hub registration controller until `shutdown` completes.
pub async fn run(hub: Client, shutdown: crate::runtime::Shutdown) -> anyhow::Result<()> {
    let shutdown = shutdown.cancelled_owned();
    let clusters = watch(
        Api::<ManagedCluster>::all(hub.clone()),
        watcher::Config::default(),
    );
    let csrs = watch(
        Api::<CertificateSigningRequest>::all(hub.clone()),
        watcher::Config::default().labels(CLUSTER_NAME_LABEL),
    );
    let leases = watch(
        Api::<Lease>::all(hub.clone()),
        watcher::Config::default().fields(&format!("metadata.name={CLUSTER_LEASE_NAME}")),
    );
    let (mut clusters, mut csrs, mut leases) = (pin!(clusters), pin!(csrs), pin!(leases));
    let mut shutdown = pin!(shutdown);
    let mut state = Loop {
        index: Index::new(),
        writer: Writer::new(hub),
        writes: JoinSet::new(),
        permits: Arc::new(tokio::sync::Semaphore::new(WRITE_CONCURRENCY)),
        timers: DelayQueue::new(),
        lease_timers: HashMap::new(),
        retry_timers: HashMap::new(),
        failures: HashMap::new(),
        relists: [Relist::default(), Relist::default(), Relist::default()],
    };
    tracing::info!("hub registration controller started");
    loop {
        let now = Instant::now();
        let touched: Vec<(String, Vec<Action>)> = tokio::select! {
            () = &mut shutdown => break,
            Some(event) = clusters.next() => state.on_event(0, event, now, ResourceExt::name_any,
                Index::apply_cluster, Index::delete_cluster, Index::cluster_names),
            Some(event) = csrs.next() => state.on_event(1, event, now, ResourceExt::name_any,
                |index, csr, _| index.apply_csr(csr), Index::delete_csr, Index::csr_names),
            Some(event) = leases.next() => state.on_event(2, event, now, |l| l.namespace().unwrap_or_default(),
                |index, l, now| index.apply_lease(&l.namespace().unwrap_or_default(), l, now),
                Index::delete_lease, Index::lease_names),
            Some(expired) = state.timers.next() => {
                let timer = expired.into_inner();
                match &timer {
                    Timer::Lease(c) => { state.lease_timers.remove(c); }
                    Timer::Retry(c) => { state.retry_timers.remove(c); }
                }
                let c = timer.cluster().to_string();
                let actions = state.index.retry(&c, now);
                vec![(c, actions)]
            }
            Some(joined) = state.writes.join_next() => {
                let Ok((action, result)) = joined else { continue };
                vec![state.finished(&action, result, now)]
            }
        };
        for (cluster, actions) in touched {
            state.dispatch(actions);
            let more = state.sync_timer(&cluster, now);
            state.dispatch(more);
        }
    }
    tracing::info!("hub registration controller stopped");
    Ok(())
}

fn watch<K>(
    api: Api<K>,
    config: watcher::Config,
) -> impl Stream<Item = Result<watcher::Event<K>, watcher::Error>>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
{
    watcher(api, config).default_backoff()
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Timer {
    Lease(String),
    Retry(String),
}

impl Timer {
    fn cluster(&self) -> &str {
        match self {
            Self::Lease(c) | Self::Retry(c) => c,
        }
    }
}

/// Names seen since a watcher restarted, so objects deleted meanwhile are noticed at `InitDone`.
#[derive(Default)]
struct Relist {
    seen: Option<HashSet<String>>,
}

type WriteResult = (Action, Result<(), kube::Error>);

struct Loop {
    index: Index,
    writer: Writer,
    writes: JoinSet<WriteResult>,
    permits: Arc<tokio::sync::Semaphore>,
    timers: DelayQueue<Timer>,
    lease_timers: HashMap<String, delay_queue::Key>,
    retry_timers: HashMap<String, delay_queue::Key>,
    failures: HashMap<String, u32>,
    relists: [Relist; 3],
}

impl Loop {
    /// Feeds one watch event of one kind into the index.
    #[allow(clippy::too_many_arguments)]
    fn on_event<K>(
        &mut self,
        kind: usize,
        event: Result<watcher::Event<K>, watcher::Error>,
        now: Instant,
        key: impl Fn(&K) -> String,
        apply: impl Fn(&mut Index, &K, Instant) -> Vec<Action>,
        delete: impl Fn(&mut Index, &str) -> Vec<Action>,
        known: impl Fn(&Index) -> Vec<String>,
    ) -> Vec<(String, Vec<Action>)> {
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("hub registration watch: {e}");
                return vec![];
            }
        };
        match event {
            watcher::Event::Init => {
                self.relists[kind].seen = Some(HashSet::new());
                vec![]
            }
            watcher::Event::InitApply(obj) => {
                let k = key(&obj);
                if let Some(seen) = self.relists[kind].seen.as_mut() {
                    seen.insert(k.clone());
                }
                vec![(k, apply(&mut self.index, &obj, now))]
            }
            watcher::Event::Apply(obj) => vec![(key(&obj), apply(&mut self.index, &obj, now))],
            watcher::Event::Delete(obj) => {
                let k = key(&obj);
                let actions = delete(&mut self.index, &k);
                vec![(k, actions)]
            }
            watcher::Event::InitDone => {
                let seen = self.relists[kind].seen.take().unwrap_or_default();
                known(&self.index)
                    .into_iter()
                    .filter(|k| !seen.contains(k))
                    .map(|k| {
                        let actions = delete(&mut self.index, &k);
                        (k, actions)
                    })
                    .collect()
            }
        }
    }

    fn dispatch(&mut self, actions: Vec<Action>) {
        for action in actions {
            let writer = self.writer.clone();
            let permits = self.permits.clone();
            self.writes.spawn(async move {
                let _permit = permits.acquire_owned().await.expect("never closed");
                let result = writer.apply(&action).await;
                (action, result)
            });
        }
    }

    /// Records a finished write; a failure schedules a re-decision for its cluster.
    fn finished(
        &mut self,
        action: &Action,
        result: Result<(), kube::Error>,
        now: Instant,
    ) -> (String, Vec<Action>) {
        let cluster = action.cluster().to_string();
        self.index.done(action, result.is_ok());
        match result {
            Ok(()) => {
                self.failures.remove(&cluster);
            }
            Err(e) => {
                let n = self.failures.entry(cluster.clone()).or_default();
                *n = n.saturating_add(1);
                let delay = Duration::from_millis(500)
                    .saturating_mul(1 << (*n).min(8))
                    .min(MAX_RETRY);
                tracing::warn!(cluster = %cluster, "{action:?} failed: {e}; retrying in {delay:?}");
                if !self.retry_timers.contains_key(&cluster) {
                    let key = self
                        .timers
                        .insert_at(Timer::Retry(cluster.clone()), now + delay);
                    self.retry_timers.insert(cluster.clone(), key);
                }
            }
        }
        (cluster, vec![])
    }

    /// Keeps the lease timer of `cluster` at its deadline; a deadline already past acts now.
    fn sync_timer(&mut self, cluster: &str, now: Instant) -> Vec<Action> {
        let deadline = self.index.deadline(cluster);
        match (deadline, self.lease_timers.get(cluster)) {
            (Some(d), Some(key)) if d > now => self.timers.reset_at(key, d),
            (Some(d), None) if d > now => {
                let key = self.timers.insert_at(Timer::Lease(cluster.to_string()), d);
                self.lease_timers.insert(cluster.to_string(), key);
            }
            (Some(_), _) => {
                if let Some(key) = self.lease_timers.remove(cluster) {
                    self.timers.remove(&key);
                }
                return self.index.lease_expired(cluster, now);
            }
            (None, _) => {
                if let Some(key) = self.lease_timers.remove(cluster) {
                    self.timers.remove(&key);
                }
            }
        }
        vec![]
    }
}
