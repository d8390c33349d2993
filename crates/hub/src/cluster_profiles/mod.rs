//! The hub's ClusterProfile controller (upstream's `ClusterProfile` gate: its lifecycle and status
//! controllers in one loop): while the ClusterManager switches the gate on, each namespace with a
//! bound ManagedClusterSetBinding holds a ClusterProfile (`multicluster.x-k8s.io/v1alpha1`) per
//! cluster of the set, mirroring the ManagedCluster. Switched off, it stops and leaves the
//! profiles as they are, as upstream's hub does (its controller is not started then).
//!
//! It reads the hub's shared cluster, set and binding watches ([`ocm_runtime::informers`]) and
//! watches the profiles it wrote itself, only while the gate is on: the CRD exists only once the
//! operator installed it for the gate. Every change runs one pass over all of them ([`decide`]
//! lists the writes, the [`writer`] makes them): the profiles are few (clusters × namespaces that
//! ask) and the pass is in memory, so a per-key queue would buy nothing.
pub mod decide;
pub mod writer;

use std::time::Duration;

use futures::stream::BoxStream;
use futures::{FutureExt as _, StreamExt as _};
use kube::Client;
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};

use crate::settings::Watched;
use ocm_api::cluster::{ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::inventory::{ClusterProfile, LABEL_CLUSTER_MANAGER, OCM_CLUSTER_MANAGER};
use ocm_runtime::Shutdown;
use ocm_runtime::informers::Informers;

/// Changes arriving within this are written in one pass (a relist reports every object).
const GATHER: Duration = Duration::from_millis(50);
/// How often everything is looked at again without a change (a write that failed, a namespace
/// that was being deleted).
const RESYNC: Duration = Duration::from_secs(60);
/// Retry after a pass with a failed write, doubling while passes keep failing, up to
/// [`RESYNC`].
const RETRY: Duration = Duration::from_secs(5);

/// A wake-up from one of the shared watches.
type Wakes = BoxStream<'static, ()>;

/// The hub's caches the controller reads.
struct Stores {
    clusters: Store<ManagedCluster>,
    sets: Store<ManagedClusterSet>,
    bindings: Store<ManagedClusterSetBinding>,
}

/// The controller over `informers`' clusters, sets and bindings, following the ClusterManager's
/// gate in `settings`, until `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    mut settings: Watched,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let stores = Stores {
        clusters: informers.store(),
        sets: informers.store(),
        bindings: informers.store(),
    };
    let mut wakes: Wakes = futures::stream::select_all([
        informers.changes::<ManagedCluster>().map(drop).boxed(),
        informers.deletions::<ManagedCluster>().map(drop).boxed(),
        informers.changes::<ManagedClusterSet>().map(drop).boxed(),
        informers.deletions::<ManagedClusterSet>().map(drop).boxed(),
        informers
            .changes::<ManagedClusterSetBinding>()
            .map(drop)
            .boxed(),
        informers
            .deletions::<ManagedClusterSetBinding>()
            .map(drop)
            .boxed(),
    ])
    .boxed();
    async move {
        loop {
            // Off: the watches' news is read and dropped, so nothing piles up.
            while !settings.peek().is_some_and(|s| s.cluster_profile) {
                tokio::select! {
                    () = shutdown.cancelled() => return Ok(()),
                    changed = settings.changed() => if changed.is_none() { return Ok(()) },
                    wake = wakes.next() => if wake.is_none() { return Ok(()) },
                }
            }
            tracing::info!("the ClusterProfile gate is on: writing ClusterProfiles");
            if !write_profiles(&hub, &stores, &mut wakes, &mut settings, &shutdown).await {
                return Ok(());
            }
            tracing::info!("the ClusterProfile gate is off: ClusterProfiles are left as they are");
        }
    }
}

/// Keeps the profiles in line until the gate goes off (`true`) or the hub stops (`false`).
async fn write_profiles(
    hub: &Client,
    stores: &Stores,
    wakes: &mut Wakes,
    settings: &mut Watched,
    shutdown: &Shutdown,
) -> bool {
    let (profiles, writer) = reflector::store::<ClusterProfile>();
    let (tx, mut profile_events) = tokio::sync::mpsc::channel::<()>(1);
    let config = watcher::Config::default()
        .labels(&format!("{LABEL_CLUSTER_MANAGER}={OCM_CLUSTER_MANAGER}"));
    let watch = reflector::reflector(
        writer,
        watcher(Api::<ClusterProfile>::all(hub.clone()), config).default_backoff(),
    )
    .for_each(move |event| {
        if let Err(e) = event {
            // Until the operator has installed the CRD, and on any other watch failure.
            tracing::debug!("ClusterProfile watch: {e}");
        }
        // Full means a pass is due already.
        let _ = tx.try_send(());
        std::future::ready(())
    });
    let _watch = AbortOnDrop(tokio::spawn(watch));
    // Until every cache is filled (the profiles' once the CRD is there), news only wakes.
    let mut filled = std::pin::pin!(ready(stores, &profiles));
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return false,
            off = gate_off(settings) => return off,
            wake = wakes.next() => if wake.is_none() { return false },
            () = &mut filled => break,
        }
    }
    let now = tokio::time::Instant::now;
    // The first pass at once; then one per burst of news, and one a minute without.
    let mut due = Some(now());
    let mut retry = ocm_runtime::Backoff::new(RETRY, RESYNC);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return false,
            off = gate_off(settings) => return off,
            wake = wakes.next() => {
                if wake.is_none() {
                    return false;
                }
                due.get_or_insert(now() + GATHER);
            }
            Some(()) = profile_events.recv() => { due.get_or_insert(now() + GATHER); }
            () = tokio::time::sleep_until(due.unwrap_or(now() + RESYNC)) => {
                while let Some(Some(())) = wakes.next().now_or_never() {}
                due = if pass(hub, stores, &profiles).await {
                    Some(now() + retry.next_delay())
                } else {
                    retry.reset();
                    None
                };
            }
        }
    }
}

/// Completes when the gate goes off (`true`) or nothing watches the settings any more (`false`).
async fn gate_off(settings: &mut Watched) -> bool {
    loop {
        match settings.changed().await {
            None => return false,
            Some(s) if !s.as_ref().is_some_and(|s| s.cluster_profile) => return true,
            Some(_) => {}
        }
    }
}

/// Completes once every cache has been filled.
async fn ready(stores: &Stores, profiles: &Store<ClusterProfile>) {
    let _ = ocm_runtime::ready::until_ready(&stores.clusters).await;
    let _ = ocm_runtime::ready::until_ready(&stores.sets).await;
    let _ = ocm_runtime::ready::until_ready(&stores.bindings).await;
    let _ = ocm_runtime::ready::until_ready(profiles).await;
}

/// One pass: every write the caches call for. Returns whether one failed (to be retried).
async fn pass(hub: &Client, stores: &Stores, profiles: &Store<ClusterProfile>) -> bool {
    let (clusters, sets, bindings, profiles) = (
        stores.clusters.state(),
        stores.sets.state(),
        stores.bindings.state(),
        profiles.state(),
    );
    let actions = decide::plan(&decide::World {
        clusters: &clusters,
        sets: &sets,
        bindings: &bindings,
        profiles: &profiles,
    });
    let count = actions.len();
    // Owned per write: a borrowing closure here defeats the compiler's `Send` proof.
    let writes = actions.into_iter().map(|action| {
        let hub = hub.clone();
        async move { writer::apply(&hub, &action).await }
    });
    let results = ocm_runtime::fan_out::all(writes).await;
    let failed: Vec<_> = results.into_iter().filter_map(Result::err).collect();
    if let Some(first) = failed.first() {
        tracing::warn!(
            failed = failed.len(),
            of = count,
            "writing ClusterProfiles: {first}"
        );
        return true;
    }
    false
}

/// Aborts the task when dropped: the profile watch ends with the gate.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
