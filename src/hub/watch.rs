//! A shared watch of one kind into a store, for hub controllers that read a kind they do not
//! reconcile (sets and bindings for placement, works and decisions for replica sets).
use std::sync::Arc;

use futures::{Stream, StreamExt as _, TryStreamExt as _};
use kube::Client;
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};

/// A shared watch of every `K` into a store, with a subscription for a controller.
pub fn shared<K>(
    client: &Client,
    config: watcher::Config,
) -> (
    Store<K>,
    impl Stream<Item = Arc<K>> + Send + 'static,
    impl std::future::Future<Output = ()> + Send + 'static,
)
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    shared_with(client, config, |_| {})
}

/// [`shared`], with `observe` seeing every watch event first — deletions and relists too, which
/// the subscription does not carry.
pub fn shared_with<K>(
    client: &Client,
    config: watcher::Config,
    mut observe: impl FnMut(&watcher::Event<K>) + Send + 'static,
) -> (
    Store<K>,
    impl Stream<Item = Arc<K>> + Send + 'static,
    impl std::future::Future<Output = ()> + Send + 'static,
)
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let (store, writer) = reflector::store_shared(256);
    let events = writer
        .subscribe()
        .expect("a shared store always has a dispatcher");
    let watch = watcher(Api::<K>::all(client.clone()), config)
        .default_backoff()
        .inspect_ok(move |event| observe(event))
        .reflect_shared(writer)
        .for_each(|e| async move {
            if let Err(e) = e {
                tracing::warn!("{} watch: {e}", K::kind(&()));
            }
        });
    (store, events, watch)
}
