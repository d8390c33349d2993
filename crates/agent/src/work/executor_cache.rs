//! Cached SubjectAccessReview answers for work executors, as upstream's `ExecutorValidatingCaches`
//! (`pkg/work/spoke/auth/cache`): without it every pass over a work — every resync — sends four
//! or five reviews per manifest. An answer is kept per executor and resource (group, version,
//! resource, namespace, name, and whether `delete` was asked too) and forgotten when RBAC on the
//! managed cluster changes, so a granted or revoked permission is seen on the next pass.
//!
//! What invalidates it ([`watch`]): a Role or RoleBinding event in a namespace forgets the
//! answers about objects in that namespace (such objects grant nothing elsewhere); a ClusterRole
//! or ClusterRoleBinding event forgets everything. Nothing is cached unless all four watches have
//! listed and are watching, so an agent that may not watch RBAC (or loses a watch) asks every
//! time, as before. An answer that was being fetched while RBAC changed is not stored. Unlike
//! upstream, which re-runs the reviews of the executors a binding names, this simply forgets; and
//! it is always on: the in-process work agent has no feature gates. The escalation dry-run
//! ([`super::executor`]) is not cached, as upstream does not cache it.
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::StreamExt as _;
use futures::stream::BoxStream;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, PartialObjectMeta};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};

/// More answers than this and the cache starts over (answers about objects of deleted works are
/// otherwise kept until the next RBAC change).
const MAX_ENTRIES: usize = 10_000;

/// What one cached answer is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Dimension {
    /// Namespace of the executor's ServiceAccount.
    pub executor_namespace: String,
    /// Name of the executor's ServiceAccount.
    pub executor_name: String,
    /// API group of the object (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
    /// Namespace of the object (`""` when cluster-scoped).
    pub namespace: String,
    /// Object name.
    pub name: String,
    /// Whether `delete` was reviewed too (the work owns the object).
    pub delete: bool,
}

/// The RBAC kinds whose watches keep the cache honest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RbacKind {
    /// `Role`: namespaced.
    Role,
    /// `RoleBinding`: namespaced.
    RoleBinding,
    /// `ClusterRole`.
    ClusterRole,
    /// `ClusterRoleBinding`.
    ClusterRoleBinding,
}

impl RbacKind {
    const ALL: [Self; 4] = [
        Self::Role,
        Self::RoleBinding,
        Self::ClusterRole,
        Self::ClusterRoleBinding,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// Whether objects of this kind grant only in their own namespace.
    fn namespaced(self) -> bool {
        matches!(self, Self::Role | Self::RoleBinding)
    }
}

#[derive(Default)]
struct State {
    entries: HashMap<Dimension, bool>,
    /// Bumped by every RBAC change: an answer fetched across a bump is not stored.
    generation: u64,
    /// Which watches have listed and are watching.
    synced: [bool; 4],
}

/// Review answers per executor and resource.
#[derive(Default)]
pub struct SarCache {
    state: Mutex<State>,
}

impl SarCache {
    /// An empty cache that stores nothing until [`watch`] has synced all four RBAC kinds.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent even if a holder panicked: every update is one statement.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The cached answer for `dimension`, or else `review`'s, stored when RBAC did not change
    /// meanwhile. Errors are returned, never cached.
    pub async fn check_with<F, Fut, E>(&self, dimension: Dimension, review: F) -> Result<bool, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<bool, E>>,
    {
        let generation = {
            let state = self.state();
            if let Some(&allowed) = state.entries.get(&dimension) {
                tracing::trace!(?dimension, allowed, "executor review from the cache");
                return Ok(allowed);
            }
            state.generation
        };
        let allowed = review().await?;
        let mut state = self.state();
        if state.generation == generation && state.synced.iter().all(|s| *s) {
            if state.entries.len() >= MAX_ENTRIES {
                state.entries.clear();
            }
            state.entries.insert(dimension, allowed);
        }
        Ok(allowed)
    }

    /// An object of `kind` changed in `namespace` (cluster-scoped kinds: `None`): forgets the
    /// answers it may have changed.
    pub fn changed(&self, kind: RbacKind, namespace: Option<&str>) {
        let mut state = self.state();
        state.generation += 1;
        match namespace.filter(|_| kind.namespaced()) {
            Some(ns) => state.entries.retain(|d, _| d.namespace != ns),
            None => state.entries.clear(),
        }
    }

    /// The watch of `kind` is in sync (`true`) or (re)listing (`false`); either way what was
    /// cached may be stale, and nothing is cached while any watch is out of sync.
    pub fn synced(&self, kind: RbacKind, synced: bool) {
        let mut state = self.state();
        state.generation += 1;
        state.entries.clear();
        state.synced[kind.index()] = synced;
    }

    /// How many answers are cached.
    #[must_use]
    pub fn len(&self) -> usize {
        self.state().entries.len()
    }

    /// Whether nothing is cached.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

type Events = BoxStream<
    'static,
    (
        RbacKind,
        Result<watcher::Event<Option<String>>, watcher::Error>,
    ),
>;

/// The namespaces of `K`'s objects as they change (metadata only).
fn events<K>(client: &Client, kind: RbacKind) -> Events
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    K: Send + Sync + 'static,
{
    use watcher::Event;
    let namespace = |event: Event<PartialObjectMeta<K>>| match event {
        Event::Apply(o) => Event::Apply(o.namespace()),
        Event::Delete(o) => Event::Delete(o.namespace()),
        Event::Init => Event::Init,
        Event::InitApply(o) => Event::InitApply(o.namespace()),
        Event::InitDone => Event::InitDone,
    };
    let api = Api::<PartialObjectMeta<K>>::all(client.clone());
    watcher(api, watcher::Config::default())
        .default_backoff()
        .map(move |e| (kind, e.map(namespace)))
        .boxed()
}

/// Keeps `cache` in step with RBAC on the managed cluster until aborted.
pub async fn watch(client: Client, cache: Arc<SarCache>) {
    let mut all = futures::stream::select_all([
        events::<Role>(&client, RbacKind::Role),
        events::<RoleBinding>(&client, RbacKind::RoleBinding),
        events::<ClusterRole>(&client, RbacKind::ClusterRole),
        events::<ClusterRoleBinding>(&client, RbacKind::ClusterRoleBinding),
    ]);
    while let Some((kind, event)) = all.next().await {
        match event {
            Ok(watcher::Event::Apply(ns) | watcher::Event::Delete(ns)) => {
                cache.changed(kind, ns.as_deref());
            }
            Ok(watcher::Event::Init) => cache.synced(kind, false),
            Ok(watcher::Event::InitApply(_)) => {}
            Ok(watcher::Event::InitDone) => cache.synced(kind, true),
            Err(err) => {
                // The watch resumes where it was, or relists (`Init`); forget meanwhile.
                tracing::debug!(?kind, "watching RBAC for the executor cache: {err}");
                cache.changed(kind, None);
            }
        }
    }
    for kind in RbacKind::ALL {
        cache.synced(kind, false);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn dim(namespace: &str, name: &str) -> Dimension {
        Dimension {
            executor_namespace: "ns".into(),
            executor_name: "runner".into(),
            group: String::new(),
            version: "v1".into(),
            resource: "configmaps".into(),
            namespace: namespace.into(),
            name: name.into(),
            delete: true,
        }
    }

    fn synced() -> SarCache {
        let cache = SarCache::new();
        for kind in RbacKind::ALL {
            cache.synced(kind, true);
        }
        cache
    }

    /// Asks `cache` about `d`; the answer is `allowed`, counted in `calls` when really asked.
    async fn ask(cache: &SarCache, d: &Dimension, calls: &AtomicUsize, allowed: bool) -> bool {
        cache
            .check_with(d.clone(), || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ()>(allowed)
            })
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_second_pass_is_answered_from_the_cache() {
        let (cache, calls) = (synced(), AtomicUsize::new(0));
        assert!(ask(&cache, &dim("a", "x"), &calls, true).await);
        assert!(ask(&cache, &dim("a", "x"), &calls, false).await, "cached");
        assert!(!ask(&cache, &dim("a", "y"), &calls, false).await);
        assert!(
            !ask(&cache, &dim("a", "y"), &calls, true).await,
            "denials too"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn errors_are_not_cached() {
        let cache = synced();
        let failed = cache.check_with(dim("a", "x"), || async { Err("boom") });
        assert_eq!(failed.await, Err("boom"));
        assert!(cache.is_empty());
    }

    #[tokio::test]
    async fn a_namespaced_change_forgets_only_that_namespace() {
        let (cache, calls) = (synced(), AtomicUsize::new(0));
        ask(&cache, &dim("a", "x"), &calls, true).await;
        ask(&cache, &dim("b", "x"), &calls, true).await;
        ask(&cache, &dim("", "x"), &calls, true).await;
        cache.changed(RbacKind::RoleBinding, Some("a"));
        assert_eq!(cache.len(), 2);
        assert!(
            !ask(&cache, &dim("a", "x"), &calls, false).await,
            "asked again"
        );
        cache.changed(RbacKind::Role, Some("b"));
        assert_eq!(cache.len(), 2, "a and the cluster-scoped one");
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_cluster_wide_change_forgets_everything() {
        for kind in [RbacKind::ClusterRole, RbacKind::ClusterRoleBinding] {
            let (cache, calls) = (synced(), AtomicUsize::new(0));
            ask(&cache, &dim("a", "x"), &calls, true).await;
            ask(&cache, &dim("", "x"), &calls, true).await;
            cache.changed(kind, None);
            assert!(cache.is_empty(), "{kind:?}");
        }
    }

    #[tokio::test]
    async fn nothing_is_cached_until_every_watch_is_synced() {
        let (cache, calls) = (SarCache::new(), AtomicUsize::new(0));
        for kind in &RbacKind::ALL[..3] {
            cache.synced(*kind, true);
        }
        ask(&cache, &dim("a", "x"), &calls, true).await;
        ask(&cache, &dim("a", "x"), &calls, true).await;
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        cache.synced(RbacKind::ClusterRoleBinding, true);
        ask(&cache, &dim("a", "x"), &calls, true).await;
        ask(&cache, &dim("a", "x"), &calls, true).await;
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        cache.synced(RbacKind::Role, false);
        assert!(cache.is_empty(), "a relist forgets");
    }

    #[tokio::test]
    async fn an_answer_fetched_across_a_change_is_not_stored() {
        let cache = synced();
        let allowed = cache
            .check_with(dim("b", "x"), || async {
                // RBAC changes while the review is on its way (elsewhere, even).
                cache.changed(RbacKind::RoleBinding, Some("a"));
                Ok::<_, ()>(true)
            })
            .await;
        assert_eq!(allowed, Ok(true));
        assert!(cache.is_empty());
    }
}
