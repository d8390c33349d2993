//! Shared watches for hub controllers: one watch per kind into a store, fanned out to every
//! controller that reads the kind (sets and bindings for placement, works and decisions for
//! replica sets, ManagedClusters for all of them).
//!
//! The fan-out is ours, not kube-runtime's `reflect_shared`: its subscriber hands out references
//! looked up in the store, and one for an object deleted before the subscriber read it makes the
//! subscription return `Pending` with no waker registered. That subscription then never wakes,
//! its buffer fills and the one watch stops for every controller. In the test suite, clusters
//! that came and went at start-up stalled the hub for good. A [`Fanout`] hands out the objects
//! themselves, without bound, so a deleted object is delivered as last seen and no reader can
//! stall the watch or another reader.
use std::sync::{Arc, Mutex, PoisonError};

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::{Stream, StreamExt as _, TryStreamExt as _};
use kube::Client;
use kube::api::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt as _, watcher};

/// What a shared watch can hold: a cluster-scoped or namespaced kind with a static type.
pub trait Watched:
    kube::Resource<DynamicType = ()>
    + Clone
    + std::fmt::Debug
    + serde::de::DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> Watched for K where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// What a controller sharing a fanned watch takes: the store, and its subscription to the
/// changes.
pub type Feed<K> = (Store<K>, UnboundedReceiver<Arc<K>>);

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

/// A watch of every `K` into `writer`'s store, publishing what it applies to `fanout` (each object
/// on a change, all of them after every (re)list) and showing every raw event to `observe` first.
pub fn publishing<K>(
    client: &Client,
    config: watcher::Config,
    writer: reflector::store::Writer<K>,
    fanout: Arc<Fanout<K>>,
    observe: impl FnMut(&watcher::Event<K>) + Send + 'static,
) -> impl Future<Output = ()> + Send + 'static
where
    K: Watched,
{
    publish(client, config, writer, fanout, None, observe)
}

/// [`publishing`] with deletions too: each deleted object goes to `deletions`, after the store
/// has forgotten it, so a controller woken by the deletion never still finds it there.
pub fn publishing_with_deletions<K>(
    client: &Client,
    config: watcher::Config,
    writer: reflector::store::Writer<K>,
    changes: Arc<Fanout<K>>,
    deletions: Arc<Fanout<K>>,
) -> impl Future<Output = ()> + Send + 'static
where
    K: Watched,
{
    publish(client, config, writer, changes, Some(deletions), |_| {})
}

fn publish<K>(
    client: &Client,
    config: watcher::Config,
    writer: reflector::store::Writer<K>,
    changes: Arc<Fanout<K>>,
    deletions: Option<Arc<Fanout<K>>>,
    mut observe: impl FnMut(&watcher::Event<K>) + Send + 'static,
) -> impl Future<Output = ()> + Send + 'static
where
    K: Watched,
{
    let reader = writer.as_reader();
    watcher(Api::<K>::all(client.clone()), config)
        .default_backoff()
        .inspect_ok(move |event| observe(event))
        .reflect(writer)
        .inspect_ok(move |event| match event {
            watcher::Event::Apply(object) => {
                let stored = reader.get(&ObjectRef::from_obj(object));
                changes.publish(&stored.unwrap_or_else(|| Arc::new(object.clone())));
            }
            watcher::Event::Delete(object) => {
                if let Some(deletions) = &deletions {
                    deletions.publish(&Arc::new(object.clone()));
                }
            }
            watcher::Event::InitDone => {
                for object in reader.state() {
                    changes.publish(&object);
                }
            }
            _ => {}
        })
        .for_each(|e| async move {
            if let Err(e) = e {
                tracing::warn!("{} watch: {e}", K::kind(&()));
            }
        })
}

/// A shared watch of every `K` into a store, with a [`Fanout`] for as many controllers as
/// subscribe to it before the watch runs.
pub fn fanned<K>(
    client: &Client,
    config: watcher::Config,
) -> (
    Store<K>,
    Arc<Fanout<K>>,
    impl Future<Output = ()> + Send + 'static,
)
where
    K: Watched,
{
    let (store, writer) = reflector::store();
    let fanout = Arc::new(Fanout::default());
    let watch = publishing(client, config, writer, fanout.clone(), |_| {});
    (store, fanout, watch)
}

/// A shared watch of every `K` into a store, with a subscription for a controller.
pub fn shared<K>(
    client: &Client,
    config: watcher::Config,
) -> (
    Store<K>,
    impl Stream<Item = Arc<K>> + Send + 'static,
    impl Future<Output = ()> + Send + 'static,
)
where
    K: Watched,
{
    shared_with(client, config, |_| {})
}

/// [`shared`], with `observe` seeing every watch event first — deletions and relists too, which
/// the subscription does not carry.
pub fn shared_with<K>(
    client: &Client,
    config: watcher::Config,
    observe: impl FnMut(&watcher::Event<K>) + Send + 'static,
) -> (
    Store<K>,
    impl Stream<Item = Arc<K>> + Send + 'static,
    impl Future<Output = ()> + Send + 'static,
)
where
    K: Watched,
{
    let (store, writer) = reflector::store();
    let fanout = Arc::new(Fanout::default());
    let events = fanout.subscribe();
    let watch = publishing(client, config, writer, fanout, observe);
    (store, events, watch)
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
}
