//! The `managedclusteraddons` type, in both served versions (upstream's agents read `v1beta1`,
//! older ones `v1alpha1`): an agent is sent the add-ons of its cluster's namespace and updates
//! their status (`status.update_request`).
use std::fmt::Debug;

use cloudevents_grpc::broker::{Identity, Service};
use cloudevents_grpc::event_type::{Action, DataType, EventType, SubResource};
use cloudevents_grpc::proto::CloudEvent;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::Store;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tonic::Status;

use super::encode::{decode, encode};
use super::{feed, status_of};

/// sdk-go's data type of ManagedClusterAddOns of `K`'s version.
#[must_use]
pub fn data_type<K: Resource<DynamicType = ()>>() -> DataType {
    DataType::new(&K::group(&()), &K::version(&()), &K::plural(&()))
}

/// How ManagedClusterAddOns of `K`'s version reach agents.
#[must_use]
pub fn kind<K>() -> feed::Kind<K>
where
    K: Resource<DynamicType = ()> + Serialize,
{
    feed::Kind {
        data_type: data_type::<K>(),
        cluster_of: cluster_of::<K>,
        encode: encode::<K>,
    }
}

/// An add-on is its namespace's cluster's.
pub fn cluster_of<K: Resource>(addon: &K) -> Option<String> {
    addon.meta().namespace.clone()
}

/// Serves ManagedClusterAddOns of one version from the hub's API server.
pub struct Addons<K: Resource<DynamicType = ()> + Clone + 'static> {
    pub(super) client: kube::Client,
    pub(super) store: Store<K>,
}

#[tonic::async_trait]
impl<K> Service for Addons<K>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    async fn list(&self, cluster: &str) -> Result<Vec<CloudEvent>, Status> {
        Ok(feed::list(&self.store, &kind::<K>(), cluster).await)
    }

    async fn handle(
        &self,
        _who: &Identity,
        event: &CloudEvent,
        event_type: &EventType,
    ) -> Result<(), Status> {
        if (event_type.action.clone(), event_type.sub_resource)
            != (Action::Update, SubResource::Status)
        {
            return Err(Status::invalid_argument(format!(
                "unsupported action {:?} for managedclusteraddons (only status updates)",
                event_type.action
            )));
        }
        let addon: K = decode(event).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let namespace = addon
            .namespace()
            .ok_or_else(|| Status::invalid_argument("the add-on names no namespace"))?;
        Api::<K>::namespaced(self.client.clone(), &namespace)
            .replace_status(&addon.name_any(), &PostParams::default(), &addon)
            .await
            .map(drop)
            .map_err(status_of)
    }
}
