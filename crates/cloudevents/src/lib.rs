//! OCM's CloudEvents-over-gRPC protocol, as open-cluster-management.io/sdk-go defines it: the
//! `io.cloudevents.v1.CloudEventService` (vendored `proto/cloudevent.proto`), the event types
//! OCM names (`<group>.<version>.<resource>.<spec|status>.<action>`), the attribute names its
//! agents and hubs read, and a [`broker::Broker`] serving agents' subscriptions and
//! publications. What each resource type does on the hub is the caller's [`broker::Service`].
pub mod broker;
pub mod event;
pub mod event_type;

/// The protocol's messages, the generated gRPC server and client.
#[allow(missing_docs, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("io.cloudevents.v1");
}
