//! The `managedclusters` type: an agent creates its ManagedCluster and updates its status; it
//! is sent its ManagedCluster whenever it changes.
use cloudevents_grpc::broker::{Identity, Service};
use cloudevents_grpc::event_type::{Action, DataType, EventType, SubResource};
use cloudevents_grpc::proto::CloudEvent;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::Store;
use ocm_api::cluster::ManagedCluster;
use tonic::Status;

use super::encode::{decode, decode_for_create, encode};
use super::{feed, status_of};

/// sdk-go's data type of ManagedClusters.
#[must_use]
pub fn data_type() -> DataType {
    DataType::new(
        "cluster.open-cluster-management.io",
        "v1",
        "managedclusters",
    )
}

/// How ManagedClusters reach agents.
#[must_use]
pub fn kind() -> feed::Kind<ManagedCluster> {
    feed::Kind {
        data_type: data_type(),
        cluster_of,
        encode: encode::<ManagedCluster>,
    }
}

/// A ManagedCluster is its own cluster's.
pub fn cluster_of(cluster: &ManagedCluster) -> Option<String> {
    cluster.metadata.name.clone()
}

/// Serves ManagedClusters from the hub's API server.
pub struct Clusters {
    pub(super) api: Api<ManagedCluster>,
    pub(super) store: Store<ManagedCluster>,
}

#[tonic::async_trait]
impl Service for Clusters {
    async fn list(&self, cluster: &str) -> Result<Vec<CloudEvent>, Status> {
        Ok(feed::list(&self.store, &kind(), cluster).await)
    }

    async fn handle(
        &self,
        _who: &Identity,
        event: &CloudEvent,
        event_type: &EventType,
    ) -> Result<(), Status> {
        let invalid =
            |e: cloudevents_grpc::event::EventError| Status::invalid_argument(e.to_string());
        let post = PostParams::default();
        let result = match (&event_type.action, event_type.sub_resource) {
            (Action::Create, _) => {
                let cluster: ManagedCluster = decode_for_create(event).map_err(invalid)?;
                self.api.create(&post, &cluster).await
            }
            (Action::Update, SubResource::Status) => {
                let cluster: ManagedCluster = decode(event).map_err(invalid)?;
                let name = cluster.metadata.name.clone().unwrap_or_default();
                self.api.replace_status(&name, &post, &cluster).await
            }
            (Action::Update, SubResource::Spec) => {
                let cluster: ManagedCluster = decode(event).map_err(invalid)?;
                let name = cluster.metadata.name.clone().unwrap_or_default();
                self.api.replace(&name, &post, &cluster).await
            }
            (other, _) => {
                return Err(Status::invalid_argument(format!(
                    "unsupported action {other:?} for managedclusters"
                )));
            }
        };
        result.map(drop).map_err(status_of)
    }
}
