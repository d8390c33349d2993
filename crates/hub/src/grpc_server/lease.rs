//! The `leases` type: an agent renews its cluster's Lease (`update_request`) and is sent the
//! Leases of its cluster's namespace that carry its cluster label.
use cloudevents_grpc::broker::{Identity, Service};
use cloudevents_grpc::event_type::{Action, DataType, EventType};
use cloudevents_grpc::proto::CloudEvent;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::Store;
use ocm_api::cluster::CLUSTER_NAME_LABEL;
use tonic::Status;

use super::encode::{decode, encode};
use super::{feed, status_of};

/// sdk-go's data type of Leases.
#[must_use]
pub fn data_type() -> DataType {
    DataType::new("coordination.k8s.io", "v1", "leases")
}

/// How Leases reach agents.
#[must_use]
pub fn kind() -> feed::Kind<Lease> {
    feed::Kind {
        data_type: data_type(),
        cluster_of,
        encode: encode::<Lease>,
    }
}

/// A Lease is its namespace's cluster's, when it carries that cluster's label.
pub fn cluster_of(lease: &Lease) -> Option<String> {
    let namespace = lease.metadata.namespace.as_ref()?;
    let label = lease.metadata.labels.as_ref()?.get(CLUSTER_NAME_LABEL)?;
    (label == namespace).then(|| namespace.clone())
}

/// Serves Leases from the hub's API server.
pub struct Leases {
    pub(super) client: kube::Client,
    pub(super) store: Store<Lease>,
}

#[tonic::async_trait]
impl Service for Leases {
    async fn list(&self, cluster: &str) -> Result<Vec<CloudEvent>, Status> {
        Ok(feed::list(&self.store, &kind(), cluster).await)
    }

    async fn handle(
        &self,
        _who: &Identity,
        event: &CloudEvent,
        event_type: &EventType,
    ) -> Result<(), Status> {
        if event_type.action != Action::Update {
            return Err(Status::invalid_argument(format!(
                "unsupported action {:?} for leases",
                event_type.action
            )));
        }
        let lease: Lease = decode(event).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let (Some(namespace), Some(name)) = (&lease.metadata.namespace, &lease.metadata.name)
        else {
            return Err(Status::invalid_argument(
                "the Lease names no namespace and name",
            ));
        };
        Api::<Lease>::namespaced(self.client.clone(), namespace)
            .replace(name, &PostParams::default(), &lease)
            .await
            .map(drop)
            .map_err(status_of)
    }
}
