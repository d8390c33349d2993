//! One watch per served kind: keeps the objects for resync answers and dispatches each change
//! to the subscribers of the object's cluster, as upstream's informer handlers do (an object
//! seen for the first time is a `create_request`, a later change an `update_request`).
use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::Arc;

use cloudevents_grpc::broker::{Authenticator, Authorizer, Broker};
use cloudevents_grpc::event::EventError;
use cloudevents_grpc::event_type::{Action, DataType, EventType, SubResource};
use cloudevents_grpc::proto::CloudEvent;
use futures::TryStreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

/// How a kind reaches agents: its data type, which cluster an object is for (`None`: no
/// cluster's agent sees it), and the event an object is sent as.
pub struct Kind<K> {
    /// The subscriptions' data type.
    pub data_type: DataType,
    /// Which cluster an object is for.
    pub cluster_of: fn(&K) -> Option<String>,
    /// The object as an event of a type, for a cluster.
    pub encode: fn(&K, &EventType, &str) -> Result<CloudEvent, EventError>,
}

impl<K> Clone for Kind<K> {
    fn clone(&self) -> Self {
        Self {
            data_type: self.data_type.clone(),
            cluster_of: self.cluster_of,
            encode: self.encode,
        }
    }
}

/// Starts watching `api` into `writer` (whose store the kind's service reads), dispatching
/// through `broker` until `shutdown`.
pub fn watch<K, A>(
    writer: reflector::store::Writer<K>,
    api: Api<K>,
    config: watcher::Config,
    kind: Kind<K>,
    broker: Arc<Broker<A>>,
    shutdown: &CancellationToken,
) where
    K: Resource<DynamicType = ()>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static,
    A: Authenticator + Authorizer,
{
    let shutdown = shutdown.clone();
    tokio::spawn(shutdown.run_until_cancelled_owned(async move {
        let mut seen: HashSet<String> = HashSet::new();
        let mut changes = std::pin::pin!(watcher(api, config).default_backoff().reflect(writer));
        loop {
            let object = match changes.try_next().await {
                Ok(Some(watcher::Event::Apply(object) | watcher::Event::InitApply(object))) => {
                    object
                }
                // Forgotten once gone, so the set holds only what exists.
                Ok(Some(watcher::Event::Delete(object))) => {
                    seen.remove(object.meta().uid.as_deref().unwrap_or_default());
                    continue;
                }
                Ok(Some(watcher::Event::Init | watcher::Event::InitDone)) => continue,
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!(%error, kind = %K::kind(&()), "watching");
                    continue;
                }
            };
            let uid = object.meta().uid.clone().unwrap_or_default();
            let action = if seen.insert(uid) {
                Action::Create
            } else {
                Action::Update
            };
            let Some(cluster) = (kind.cluster_of)(&object) else {
                continue;
            };
            let event_type = EventType::new(kind.data_type.clone(), SubResource::Spec, action);
            match (kind.encode)(&object, &event_type, &cluster) {
                Ok(event) => {
                    if let Err(error) = broker.dispatch(&event).await {
                        tracing::warn!(%error, "dispatching a spec event");
                    }
                }
                Err(error) => tracing::warn!(%error, "encoding a spec event"),
            }
        }
    }));
}

/// Every object of `store` for `cluster`, as spec events (for a resync answer).
pub async fn list<K>(store: &Store<K>, kind: &Kind<K>, cluster: &str) -> Vec<CloudEvent>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    // A resync before the first list completes would answer "you hold things we lack".
    let _ = store.wait_until_ready().await;
    let event_type = EventType::new(
        kind.data_type.clone(),
        SubResource::Spec,
        Action::ResyncResponse,
    );
    store
        .state()
        .iter()
        .filter(|o| (kind.cluster_of)(o).as_deref() == Some(cluster))
        .filter_map(|o| (kind.encode)(o.as_ref(), &event_type, cluster).ok())
        .collect()
}
