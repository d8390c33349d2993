//! The `tokenrequests` type (`authentication.k8s.io/v1`): an agent asks for a token of a
//! ServiceAccount in its cluster's namespace (its add-ons' token registration); the server
//! requests it from the hub and sends the token back down the agent's subscription, the request
//! ID (the request's UID) kept so the agent can match the answer.
use cloudevents_grpc::broker::{Identity, Service};
use cloudevents_grpc::event::EventError;
use cloudevents_grpc::event_type::{Action, DataType, EventType, SubResource};
use cloudevents_grpc::proto::CloudEvent;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};
use tokio::sync::mpsc;
use tonic::Status;

use super::encode::{decode, encode};
use super::status_of;

/// sdk-go's data type of token requests.
#[must_use]
pub fn data_type() -> DataType {
    DataType::new("authentication.k8s.io", "v1", "tokenrequests")
}

/// Requests tokens from the hub's API server; answers go out through `replies` (the broker
/// holds this service, so the service sends its answers through a channel the broker drains).
pub struct Tokens {
    pub(super) client: kube::Client,
    pub(super) replies: mpsc::UnboundedSender<CloudEvent>,
}

#[tonic::async_trait]
impl Service for Tokens {
    async fn list(&self, _cluster: &str) -> Result<Vec<CloudEvent>, Status> {
        Ok(Vec::new())
    }

    async fn handle(
        &self,
        _who: &Identity,
        event: &CloudEvent,
        event_type: &EventType,
    ) -> Result<(), Status> {
        if event_type.action != Action::Create {
            return Err(Status::invalid_argument(format!(
                "unsupported action {:?} for tokenrequests",
                event_type.action
            )));
        }
        let invalid = |e: EventError| Status::invalid_argument(e.to_string());
        let mut request: TokenRequest = decode(event).map_err(invalid)?;
        let (Some(namespace), Some(account)) = (
            request.metadata.namespace.clone(),
            request.metadata.name.clone(),
        ) else {
            return Err(Status::invalid_argument(
                "the token request names no ServiceAccount namespace and name",
            ));
        };
        let request_id = request.metadata.uid.take();
        request.metadata.resource_version = None;
        let mut response = Api::<ServiceAccount>::namespaced(self.client.clone(), &namespace)
            .create_token_request(&account, &PostParams::default(), &request)
            .await
            .map_err(status_of)?;
        response.metadata.uid = request_id;
        response.metadata.namespace = Some(namespace.clone());
        response.metadata.name = Some(account);
        let answer = EventType::new(data_type(), SubResource::Spec, Action::Create);
        let reply = encode(&response, &answer, &namespace).map_err(invalid)?;
        self.replies
            .send(reply)
            .map_err(|_| Status::unavailable("the server is shutting down"))
    }
}
