//! The `events` type (`events.k8s.io/v1`): an agent records Events in its cluster's namespace;
//! nothing is sent down (upstream's agents do not subscribe to Events).
use cloudevents_grpc::broker::{Identity, Service};
use cloudevents_grpc::event_type::{Action, DataType, EventType};
use cloudevents_grpc::proto::CloudEvent;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, PostParams};
use tonic::Status;

use super::encode::{decode, decode_for_create};
use super::status_of;

/// sdk-go's data type of Events.
#[must_use]
pub fn data_type() -> DataType {
    DataType::new("events.k8s.io", "v1", "events")
}

/// Writes agents' Events to the hub's API server.
pub struct Events {
    pub(super) client: kube::Client,
}

#[tonic::async_trait]
impl Service for Events {
    async fn list(&self, _cluster: &str) -> Result<Vec<CloudEvent>, Status> {
        Ok(Vec::new())
    }

    async fn handle(
        &self,
        _who: &Identity,
        event: &CloudEvent,
        event_type: &EventType,
    ) -> Result<(), Status> {
        let invalid =
            |e: cloudevents_grpc::event::EventError| Status::invalid_argument(e.to_string());
        let recorded: Event = decode(event).map_err(invalid)?;
        let namespace = recorded
            .metadata
            .namespace
            .clone()
            .ok_or_else(|| Status::invalid_argument("the Event names no namespace"))?;
        let api = Api::<Event>::namespaced(self.client.clone(), &namespace);
        match event_type.action {
            Action::Create => {
                let recorded: Event = decode_for_create(event).map_err(invalid)?;
                api.create(&PostParams::default(), &recorded)
                    .await
                    .map(drop)
                    .map_err(status_of)
            }
            // As upstream: only the series moves on; an Event gone since is not recreated.
            Action::Update => {
                let name = recorded.metadata.name.clone().unwrap_or_default();
                let Some(mut last) = api.get_opt(&name).await.map_err(status_of)? else {
                    return Ok(());
                };
                last.series = recorded.series;
                api.replace(&name, &PostParams::default(), &last)
                    .await
                    .map(drop)
                    .map_err(status_of)
            }
            ref other => Err(Status::invalid_argument(format!(
                "unsupported action {other:?} for events"
            ))),
        }
    }
}
