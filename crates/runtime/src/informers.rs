//! One watch and one store per kind for a whole process, as upstream's shared informer factory:
//! every controller takes the stores and subscriptions it needs from one [`Informers`] built
//! where the hub (or an agent) starts, and no controller opens a watch of its own. [`Informed`]
//! lists, in one place, every kind watched this way and which of its objects (the hub's
//! selectors; an agent watches one namespace with [`Informers::namespaced`], and keeps only its
//! own objects of a kind no selector can tell apart with [`Informers::only`]).
//!
//! The fan-out is ours, not kube-runtime's `reflect_shared`: its subscriber hands out references
//! looked up in the store, and one for an object deleted before the subscriber read it makes the
//! subscription return `Pending` with no waker registered. That subscription then never wakes,
//! its buffer fills and the one watch stops for every controller. In the test suite, clusters
//! that came and went at start-up stalled the hub for good. A [`Fanout`] hands out the objects
//! themselves, without bound, so a deleted object is delivered as last seen and no reader can
//! stall the watch or another reader.
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::future::BoxFuture;
use futures::{FutureExt as _, StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};

use crate::{Backoff, Shutdown};
use ocm_api::addon::{
    AddOnDeploymentConfig, AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn,
};
use ocm_api::cluster::{
    AddOnPlacementScore, CLUSTER_LEASE_NAME, CLUSTER_NAME_LABEL, ManagedCluster, ManagedClusterSet,
    ManagedClusterSetBinding, PLACEMENT_LABEL, Placement, PlacementDecision,
};
use ocm_api::work::{AppliedManifestWork, ManifestWork, ManifestWorkReplicaSet};

/// A failed watch is retried from this delay, doubling up to the cap (a missing CRD, an API
/// server away).
const WATCH_RETRY_FLOOR: std::time::Duration = std::time::Duration::from_millis(800);
const WATCH_RETRY_CAP: std::time::Duration = std::time::Duration::from_secs(5);

/// A kind the hub watches, and which of its objects: the one watch every controller shares.
pub trait Informed:
    kube::Resource<DynamicType = ()>
    + Clone
    + std::fmt::Debug
    + serde::de::DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// The watch's selectors; every object by default.
    #[must_use]
    fn config() -> watcher::Config {
        watcher::Config::default()
    }

    /// Where the watch looks: everywhere, unless a namespaced kind is asked for one namespace
    /// ([`Informers::namespaced`]).
    #[must_use]
    fn api(client: Client, _namespace: Option<&str>) -> Api<Self> {
        Api::all(client)
    }
}

/// A namespaced kind's [`Informed::api`].
fn within<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
{
    namespace.map_or_else(
        || Api::all(client.clone()),
        |ns| Api::namespaced(client.clone(), ns),
    )
}

impl Informed for ManagedCluster {}
impl Informed for ManagedClusterSet {}
impl Informed for ManagedClusterSetBinding {}
impl Informed for Placement {}
impl Informed for AddOnPlacementScore {}
/// An agent watches its cluster's only.
impl Informed for ManagedClusterAddOn {
    fn api(client: Client, namespace: Option<&str>) -> Api<Self> {
        within(&client, namespace)
    }
}
impl Informed for ClusterManagementAddOn {}
impl Informed for AddOnTemplate {}
impl Informed for AddOnDeploymentConfig {}
impl Informed for ManifestWorkReplicaSet {}
/// Every work: the replica sets' and the add-ons' (one label each, and a selector cannot say
/// "either"); each controller picks its own by label. A work agent watches its cluster's only.
impl Informed for ManifestWork {
    fn api(client: Client, namespace: Option<&str>) -> Api<Self> {
        within(&client, namespace)
    }
}
/// A work agent's records on its managed cluster: cluster-scoped, and shared by the agents of
/// every cluster that managed API server serves (each keeps its own with [`Informers::only`]).
impl Informed for AppliedManifestWork {}
/// Those of a placement; placement, replica sets and add-on installs read them.
impl Informed for PlacementDecision {
    fn config() -> watcher::Config {
        watcher::Config::default().labels(PLACEMENT_LABEL)
    }
}
/// Those of a cluster's agents, registration's and add-ons' alike (each controller keeps to its
/// own by the add-on label); kubelets' and others' are not the hub's.
impl Informed for CertificateSigningRequest {
    fn config() -> watcher::Config {
        watcher::Config::default().labels(CLUSTER_NAME_LABEL)
    }
}
/// The one ClusterManager: its settings (admission, auto-approval) for the hub controllers.
impl Informed for ocm_api::operator::ClusterManager {
    fn config() -> watcher::Config {
        watcher::Config::default().fields(&format!(
            "metadata.name={}",
            ocm_api::operator::CLUSTER_MANAGER_NAME
        ))
    }
}
/// The ServiceAccounts, Roles and RoleBindings of token-based add-on registration only (by their
/// label): the hub's token infrastructure controller makes them again when they change or go.
impl Informed for k8s_openapi::api::core::v1::ServiceAccount {
    fn config() -> watcher::Config {
        token_infrastructure()
    }
}
impl Informed for k8s_openapi::api::rbac::v1::Role {
    fn config() -> watcher::Config {
        token_infrastructure()
    }
}
impl Informed for k8s_openapi::api::rbac::v1::RoleBinding {
    fn config() -> watcher::Config {
        token_infrastructure()
    }
}
fn token_infrastructure() -> watcher::Config {
    watcher::Config::default().labels(&format!(
        "{}=true",
        ocm_api::addon::token::INFRASTRUCTURE_LABEL
    ))
}
/// The agents' heartbeats, one per cluster namespace.
impl Informed for Lease {
    fn config() -> watcher::Config {
        watcher::Config::default().fields(&format!("metadata.name={CLUSTER_LEASE_NAME}"))
    }
}

/// What a controller sharing a kind takes: the store, and its subscription to the changes.
pub type Feed<K> = (Store<K>, UnboundedReceiver<Arc<K>>);

/// Sees every raw watch event of a kind (deletions and relists too) before the store does.
type Observer<K> = Box<dyn FnMut(&watcher::Event<K>) + Send>;

/// Which objects of a kind the store keeps ([`Informers::only`]).
type Keep<K> = Box<dyn Fn(&K) -> bool + Send + Sync>;

/// Every watch of the hub process, each started once by [`Informers::run`]. Take stores and
/// subscriptions first: `run` consumes the set, so nothing can subscribe after a watch started
/// (and miss what it already delivered).
pub struct Informers {
    client: Client,
    /// Only this namespace's objects (an agent's cluster namespace on the hub); all if `None`.
    namespace: Option<String>,
    kinds: Mutex<HashMap<TypeId, Kind>>,
}

struct Kind {
    informer: Arc<dyn Any + Send + Sync>,
    watch: Box<dyn FnOnce(Client, Option<String>) -> BoxFuture<'static, ()> + Send>,
}

/// What each `K` showed of one aspect (`key`) when last seen: a change of it is what wakes a
/// controller that cares for that aspect only, as upstream's update handlers compare the old
/// object with the new. An object first seen has not changed.
pub struct Seen<K: Informed, T> {
    key: fn(&K) -> T,
    last: HashMap<ObjectRef<K>, T>,
}

impl<K: Informed, T: PartialEq> Seen<K, T> {
    /// Nothing seen yet.
    #[must_use]
    pub fn new(key: fn(&K) -> T) -> Self {
        Self {
            key,
            last: HashMap::new(),
        }
    }

    /// Records `object`; whether its aspect changed since it was last seen.
    pub fn changed(&mut self, object: &K) -> bool {
        let now = (self.key)(object);
        let at = ObjectRef::from_obj(object);
        let changed = self.last.get(&at).is_some_and(|before| *before != now);
        self.last.insert(at, now);
        changed
    }

    /// Forgets a deleted object: seen again, it is first seen.
    pub fn forget(&mut self, object: &K) {
        self.last.remove(&ObjectRef::from_obj(object));
    }
}

/// One kind's store, the writer its watch fills it with, and who hears of its changes.
struct Informer<K: Informed> {
    store: Store<K>,
    writer: Mutex<Option<reflector::store::Writer<K>>>,
    changes: Fanout<K>,
    deletions: Fanout<K>,
    observers: Mutex<Vec<Observer<K>>>,
    keep: Mutex<Option<Keep<K>>>,
}

impl Informers {
    /// No watch yet: each kind's is made when a controller first asks for it.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self {
            client,
            namespace: None,
            kinds: Mutex::default(),
        }
    }

    /// Watches of `namespace`'s objects only.
    #[must_use]
    pub fn namespaced(client: Client, namespace: &str) -> Self {
        Self {
            namespace: Some(namespace.to_string()),
            ..Self::new(client)
        }
    }

    /// The store of every `K`, filled once [`Informers::run`] runs.
    #[must_use]
    pub fn store<K: Informed>(&self) -> Store<K> {
        self.informer::<K>().store.clone()
    }

    /// Every changed `K` (each object on a change, all of them after every (re)list), in a
    /// subscription of one's own. Deletions are not in it: see [`Informers::deletions`].
    #[must_use]
    pub fn changes<K: Informed>(&self) -> UnboundedReceiver<Arc<K>> {
        self.informer::<K>().changes.subscribe()
    }

    /// Every deleted `K`, as last seen, published after the store forgot it (so a controller
    /// woken by the deletion never still finds it there).
    #[must_use]
    pub fn deletions<K: Informed>(&self) -> UnboundedReceiver<Arc<K>> {
        self.informer::<K>().deletions.subscribe()
    }

    /// The store and a subscription to its changes.
    #[must_use]
    pub fn feed<K: Informed>(&self) -> Feed<K> {
        (self.store::<K>(), self.changes::<K>())
    }

    /// Every `K` whose `key` differs from what it showed when last seen ([`Seen`]): the
    /// changes of one aspect only, from the shared subscriptions. A deleted `K` is forgotten.
    pub fn changes_of<K: Informed, T: PartialEq + Send + 'static>(
        &self,
        key: fn(&K) -> T,
    ) -> impl futures::Stream<Item = Arc<K>> + Send + use<K, T> {
        let mut seen = Seen::new(key);
        let present = self.changes::<K>().map(|o| (o, true));
        let gone = self.deletions::<K>().map(|o| (o, false));
        futures::stream::select(present, gone).filter_map(move |(object, present)| {
            let changed = if present {
                seen.changed(&object)
            } else {
                seen.forget(&object);
                false
            };
            std::future::ready(changed.then_some(object))
        })
    }

    /// Shows every raw watch event of `K` to `observe`, before the store applies it.
    pub fn observe<K: Informed>(&self, observe: impl FnMut(&watcher::Event<K>) + Send + 'static) {
        self.informer::<K>()
            .observers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Box::new(observe));
    }

    /// Keeps in the store of `K` only the objects `keep` accepts, for a kind whose selectors
    /// cannot say which a process wants (the same objects are wanted by every controller sharing
    /// the kind here): the others are never stored nor published, and one that stops being
    /// accepted leaves the store as a deletion (observers see it so too). One filter per kind;
    /// set it before [`Informers::run`].
    pub fn only<K: Informed>(&self, keep: impl Fn(&K) -> bool + Send + Sync + 'static) {
        *self
            .informer::<K>()
            .keep
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Box::new(keep));
    }

    /// Runs every kind's watch until `shutdown` is cancelled.
    pub async fn run(self, shutdown: Shutdown) {
        let kinds = self
            .kinds
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let watches = kinds
            .into_values()
            .map(|kind| (kind.watch)(self.client.clone(), self.namespace.clone()));
        tokio::select! {
            _ = futures::future::join_all(watches) => {}
            () = shutdown.cancelled() => {}
        }
    }

    fn informer<K: Informed>(&self) -> Arc<Informer<K>> {
        let mut kinds = self.lock();
        let kind = kinds.entry(TypeId::of::<K>()).or_insert_with(|| {
            let (store, writer) = reflector::store::<K>();
            let informer = Arc::new(Informer {
                store,
                writer: Mutex::new(Some(writer)),
                changes: Fanout::default(),
                deletions: Fanout::default(),
                observers: Mutex::default(),
                keep: Mutex::default(),
            });
            let watched = informer.clone();
            Kind {
                informer,
                watch: Box::new(move |client, namespace| watched.watch(client, namespace).boxed()),
            }
        });
        kind.informer
            .clone()
            .downcast()
            .unwrap_or_else(|_| unreachable!("a kind's informer is registered under its TypeId"))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TypeId, Kind>> {
        self.kinds.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: Informed> Informer<K> {
    /// The watch into the store, publishing what it applied.
    async fn watch(self: Arc<Self>, client: Client, namespace: Option<String>) {
        let Some(writer) = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return;
        };
        let mut observers = std::mem::take(
            &mut *self
                .observers
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let keep = self
            .keep
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let reader = self.store.clone();
        let stored = self.store.clone();
        let this = self.clone();
        watcher(K::api(client, namespace.as_deref()), K::config())
            // kube's default grows to 30 s: a hub that starts before the operator installed its
            // CRDs would then see an add-on's kinds up to half a minute late.
            .backoff(Backoff::new(WATCH_RETRY_FLOOR, WATCH_RETRY_CAP))
            // No controller reads them, and they are often half of an object's size.
            .modify(|o| o.managed_fields_mut().clear())
            .try_filter_map(move |event| {
                let kept = match &keep {
                    Some(keep) => kept(keep, &stored, event),
                    None => Some(event),
                };
                std::future::ready(Ok(kept))
            })
            .inspect_ok(move |event| {
                for observe in &mut observers {
                    observe(event);
                }
            })
            .reflect(writer)
            .inspect_ok(move |event| match event {
                watcher::Event::Apply(object) => {
                    let stored = reader.get(&ObjectRef::from_obj(object));
                    this.changes
                        .publish(&stored.unwrap_or_else(|| Arc::new(object.clone())));
                }
                watcher::Event::Delete(object) => {
                    this.deletions.publish(&Arc::new(object.clone()));
                }
                watcher::Event::InitDone => {
                    for object in reader.state() {
                        this.changes.publish(&object);
                    }
                }
                watcher::Event::Init | watcher::Event::InitApply(_) => {}
            })
            .for_each(|e| async move {
                if let Err(e) = e {
                    tracing::warn!("{} watch: {e}", K::kind(&()));
                }
            })
            .await;
    }
}

/// `event` as the store of the objects `keep` accepts sees it: another object is not there, and
/// one stored that is no longer accepted is deleted from it.
fn kept<K: Informed>(
    keep: &Keep<K>,
    stored: &Store<K>,
    event: watcher::Event<K>,
) -> Option<watcher::Event<K>> {
    use watcher::Event;
    let is_stored = |o: &K| stored.get(&ObjectRef::from_obj(o)).is_some();
    match event {
        Event::Apply(o) if !keep(&o) => is_stored(&o).then_some(Event::Delete(o)),
        Event::Delete(o) if !keep(&o) && !is_stored(&o) => None,
        Event::InitApply(o) if !keep(&o) => None,
        event => Some(event),
    }
}

/// Every changed object of one kind, to each subscriber.
pub struct Fanout<K> {
    subscribers: Mutex<Vec<UnboundedSender<Arc<K>>>>,
}

impl<K> Default for Fanout<K> {
    fn default() -> Self {
        Self {
            subscribers: Mutex::default(),
        }
    }
}

impl<K> Fanout<K> {
    /// A stream of every object published from now on.
    pub fn subscribe(&self) -> UnboundedReceiver<Arc<K>> {
        let (tx, rx) = unbounded();
        self.lock().push(tx);
        rx
    }

    /// Sends `object` to every subscriber still listening; forgets the others.
    pub fn publish(&self, object: &Arc<K>) {
        self.lock()
            .retain(|tx| tx.unbounded_send(object.clone()).is_ok());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<UnboundedSender<Arc<K>>>> {
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subscriber_gets_every_object_and_a_dropped_one_is_forgotten() {
        let fanout = Fanout::<String>::default();
        let mut first = fanout.subscribe();
        let second = fanout.subscribe();
        fanout.publish(&Arc::new("a".to_string()));
        drop(second);
        fanout.publish(&Arc::new("b".to_string()));
        assert_eq!(fanout.lock().len(), 1);
        let got: Vec<String> = std::iter::from_fn(|| first.try_recv().ok())
            .map(|s| (*s).clone())
            .collect();
        assert_eq!(got, ["a", "b"]);
    }

    #[test]
    fn a_filtered_store_never_holds_what_it_does_not_keep() {
        use watcher::Event;
        let (stored, mut writer) = reflector::store::<ManagedCluster>();
        let keep: Keep<ManagedCluster> = Box::new(|c| c.labels().contains_key("kept"));
        let cluster = |name: &str, kept: bool| {
            let mut c = ManagedCluster::new(name, ocm_api::cluster::ManagedClusterSpec::default());
            if kept {
                c.labels_mut().insert("kept".into(), String::new());
            }
            c
        };
        let mut apply = |event| {
            let event = kept(&keep, &stored, event);
            if let Some(event) = &event {
                writer.apply_watcher_event(event);
            }
            event
        };
        apply(Event::Init);
        assert!(apply(Event::InitApply(cluster("other", false))).is_none());
        apply(Event::InitApply(cluster("mine", true)));
        apply(Event::InitDone);
        assert!(apply(Event::Apply(cluster("other", false))).is_none());
        assert!(apply(Event::Delete(cluster("other", false))).is_none());
        assert_eq!(stored.state().len(), 1);
        // No longer kept: it leaves the store as a deletion.
        assert!(matches!(
            apply(Event::Apply(cluster("mine", false))),
            Some(Event::Delete(_))
        ));
        assert!(stored.state().is_empty());
        assert!(apply(Event::Delete(cluster("mine", false))).is_none());
    }

    #[tokio::test]
    async fn a_kind_asked_for_twice_is_one_store_and_one_watch() {
        let client =
            Client::try_from(kube::Config::new("http://127.0.0.1:1".parse().unwrap())).unwrap();
        let informers = Informers::new(client);
        let (first, _changes) = informers.feed::<ManagedCluster>();
        let second = informers.store::<ManagedCluster>();
        let _deleted = informers.deletions::<ManagedCluster>();
        let _sets = informers.store::<ManagedClusterSet>();
        assert_eq!(informers.lock().len(), 2);
        let informer = informers.informer::<ManagedCluster>();
        assert_eq!(informer.changes.lock().len(), 1);
        assert_eq!(informer.deletions.lock().len(), 1);
        // Both handles read the one store the one writer fills.
        let mut writer = informer.writer.lock().unwrap().take().unwrap();
        let mc = ManagedCluster::new("c1", ocm_api::cluster::ManagedClusterSpec::default());
        writer.apply_watcher_event(&watcher::Event::InitApply(mc));
        writer.apply_watcher_event(&watcher::Event::<ManagedCluster>::InitDone);
        assert_eq!(first.state().len(), 1);
        assert_eq!(second.state().len(), 1);
    }
}
