//! The broker: the `CloudEventService` a hub serves to its agents, as sdk-go's `GRPCBroker`.
//!
//! An agent *subscribes* for one data type of its cluster and receives, on that stream, every
//! spec event the hub's services dispatch for the cluster (plus a heartbeat every interval); it
//! *publishes* status events (create, update, ...) that the service of the type applies, and
//! resync requests the broker answers from the service's list. Every call is authenticated
//! ([`Authenticator`]) and each publication and subscription authorised ([`Authorizer`]) before
//! it is acted on.
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Stream;
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::event::{self, EventError};
use crate::event_type::{Action, DataType, EventType, HEARTBEAT, SubResource};
use crate::proto::cloud_event_service_server::CloudEventService;
use crate::proto::{CloudEvent, PublishRequest, SubscriptionRequest};

/// The response header naming a subscription, as sdk-go's broker sends it.
pub const SUBSCRIPTION_ID_HEADER: &str = "subscription-id";
/// How many events wait for a slow subscriber before dispatch waits for it (sdk-go's 100).
const SUBSCRIBER_BUFFER: usize = 100;

/// Who a call comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The user name.
    pub user: String,
    /// The groups.
    pub groups: Vec<String>,
}

/// Establishes who made a call: from its bearer token or its client certificate.
#[tonic::async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// The caller's identity, or `Unauthenticated`.
    async fn authenticate<T: Send + Sync>(&self, request: &Request<T>) -> Result<Identity, Status>;
}

/// What a publication or subscription asks to do, for the [`Authorizer`].
#[derive(Debug)]
pub struct Access<'a> {
    /// The cluster it is about.
    pub cluster: &'a str,
    /// Its type (a subscription asks for `<data type>.spec.watch_request`).
    pub event_type: &'a EventType,
    /// The name of the object in the event's data, if any.
    pub name: Option<&'a str>,
}

/// Decides whether an identity may do what a call asks.
#[tonic::async_trait]
pub trait Authorizer: Send + Sync + 'static {
    /// `Ok` to allow; `PermissionDenied` (or another status) to refuse.
    async fn authorize(&self, who: &Identity, access: &Access<'_>) -> Result<(), Status>;
}

/// The hub side of one data type.
#[tonic::async_trait]
pub trait Service: Send + Sync + 'static {
    /// Every resource of the type for the cluster, as spec events (answers a resync request).
    async fn list(&self, cluster: &str) -> Result<Vec<CloudEvent>, Status>;
    /// Applies a publication of this type by `who`.
    async fn handle(
        &self,
        who: &Identity,
        event: &CloudEvent,
        event_type: &EventType,
    ) -> Result<(), Status>;
}

struct Subscriber {
    cluster: String,
    data_type: DataType,
    events: mpsc::Sender<CloudEvent>,
}

/// Routes agents' calls to the services and the services' events to the subscribers.
pub struct Broker<A> {
    services: HashMap<DataType, Arc<dyn Service>>,
    subscribers: Mutex<HashMap<String, Subscriber>>,
    auth: A,
    heartbeat: Option<Duration>,
}

impl<A: Authenticator + Authorizer> Broker<A> {
    /// A broker authenticating and authorising with `auth`, sending heartbeats every
    /// `heartbeat` (sdk-go's default is 10 s; `None` disables them).
    pub fn new(auth: A, heartbeat: Option<Duration>) -> Self {
        Self {
            services: HashMap::new(),
            subscribers: Mutex::new(HashMap::new()),
            auth,
            heartbeat,
        }
    }

    /// Serves `data_type` with `service`.
    #[must_use]
    pub fn with_service(mut self, data_type: DataType, service: Arc<dyn Service>) -> Self {
        self.services.insert(data_type, service);
        self
    }

    /// Sends a spec event to every subscriber of its cluster and data type (sdk-go's
    /// `HandleEvent`); waits while a subscriber's buffer is full.
    pub async fn dispatch(&self, event: &CloudEvent) -> Result<(), EventError> {
        let data_type = event::event_type(event)?.data_type;
        let cluster = event::cluster_name(event)?;
        let targets: Vec<mpsc::Sender<CloudEvent>> = self
            .subscribers
            .lock()
            .expect("subscribers lock")
            .values()
            .filter(|s| s.cluster == cluster && s.data_type == data_type)
            .map(|s| s.events.clone())
            .collect();
        for target in targets {
            // A closed subscription is being torn down: nothing to deliver to.
            let _ = target.send(event.clone()).await;
        }
        Ok(())
    }

    /// The clusters with at least one open subscription.
    pub fn subscribed_clusters(&self) -> Vec<String> {
        let mut clusters: Vec<String> = self
            .subscribers
            .lock()
            .expect("subscribers lock")
            .values()
            .map(|s| s.cluster.clone())
            .collect();
        clusters.sort_unstable();
        clusters.dedup();
        clusters
    }

    fn service(&self, data_type: &DataType) -> Result<&Arc<dyn Service>, Status> {
        self.services.get(data_type).ok_or_else(|| {
            Status::invalid_argument(format!("no service serves the data type {data_type}"))
        })
    }

    /// Answers a resync request as sdk-go's broker: every resource newer than the version the
    /// agent holds (or being deleted) is sent as a `resync_response`, and each resource the
    /// agent holds that the hub no longer has is sent as a deletion.
    async fn resync(
        &self,
        request: &CloudEvent,
        data_type: &DataType,
        cluster: &str,
    ) -> Result<(), Status> {
        #[derive(Deserialize)]
        struct Held {
            #[serde(rename = "resourceID")]
            id: String,
            #[serde(rename = "resourceVersion")]
            version: i64,
        }
        #[derive(Deserialize)]
        struct Versions {
            #[serde(rename = "resourceVersions", default)]
            versions: Vec<Held>,
        }
        let held: Versions = event::json(request).map_err(invalid)?;
        let response = EventType::new(data_type.clone(), SubResource::Spec, Action::ResyncResponse);
        let current = self.service(data_type)?.list(cluster).await?;
        let mut current_ids = Vec::with_capacity(current.len());
        for mut event in current {
            event.r#type = response.to_string();
            let id = event::string(&event, event::RESOURCE_ID).unwrap_or_default();
            let version = event::string(&event, event::RESOURCE_VERSION)
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0);
            let known = held
                .versions
                .iter()
                .find(|h| h.id == id)
                .map_or(0, |h| h.version);
            if event::has(&event, event::DELETION_TIMESTAMP) || version == 0 || version > known {
                self.dispatch(&event).await.map_err(invalid)?;
            }
            current_ids.push(id);
        }
        for gone in held
            .versions
            .iter()
            .filter(|h| !current_ids.contains(&h.id))
        {
            // As sdk-go's broker: the source is the literal "source" for these deletions.
            let mut deletion = event::new_event("source", &response, cluster);
            event::set_string(&mut deletion, event::RESOURCE_ID, &gone.id);
            event::set_time(
                &mut deletion,
                event::DELETION_TIMESTAMP,
                std::time::SystemTime::now(),
            );
            self.dispatch(&deletion).await.map_err(invalid)?;
        }
        Ok(())
    }

    fn unsubscribe(&self, id: &str) {
        self.subscribers
            .lock()
            .expect("subscribers lock")
            .remove(id);
        tracing::debug!(subscription = id, "unsubscribed");
    }
}

/// The name of the object an event's data describes (`metadata.name`), if it has data.
fn object_name(event: &CloudEvent) -> Option<String> {
    #[derive(Deserialize)]
    struct Partial {
        #[serde(default)]
        metadata: Meta,
    }
    #[derive(Deserialize, Default)]
    struct Meta {
        name: Option<String>,
    }
    let data = event::data(event).ok()?;
    serde_json::from_slice::<Partial>(data).ok()?.metadata.name
}

type EventStream = Pin<Box<dyn Stream<Item = Result<CloudEvent, Status>> + Send>>;

#[tonic::async_trait]
impl<A: Authenticator + Authorizer> CloudEventService for Arc<Broker<A>> {
    async fn publish(&self, request: Request<PublishRequest>) -> Result<Response<()>, Status> {
        let who = self.auth.authenticate(&request).await?;
        let event = request
            .into_inner()
            .event
            .ok_or_else(|| Status::invalid_argument("the publish request carries no event"))?;
        let event_type = event::event_type(&event).map_err(invalid)?;
        let cluster = event::cluster_name(&event).map_err(invalid)?;
        let name = object_name(&event);
        let access = Access {
            cluster: &cluster,
            event_type: &event_type,
            name: name.as_deref(),
        };
        self.auth.authorize(&who, &access).await?;
        if event_type.action == Action::ResyncRequest {
            self.resync(&event, &event_type.data_type, &cluster).await?;
        } else {
            self.service(&event_type.data_type)?
                .handle(&who, &event, &event_type)
                .await?;
        }
        Ok(Response::new(()))
    }

    type SubscribeStream = EventStream;

    async fn subscribe(
        &self,
        request: Request<SubscriptionRequest>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        let who = self.auth.authenticate(&request).await?;
        let wanted = request.into_inner();
        if wanted.cluster_name.is_empty() {
            return Err(Status::invalid_argument(
                "the subscription names no cluster",
            ));
        }
        let data_type: DataType = wanted
            .data_type
            .parse()
            .map_err(|e: crate::event_type::TypeError| Status::invalid_argument(e.to_string()))?;
        let watch = EventType::new(data_type.clone(), SubResource::Spec, Action::Watch);
        let access = Access {
            cluster: &wanted.cluster_name,
            event_type: &watch,
            name: None,
        };
        self.auth.authorize(&who, &access).await?;
        self.service(&data_type)?;

        let id = uuid::Uuid::new_v4().to_string();
        let (events_tx, mut events_rx) = mpsc::channel(SUBSCRIBER_BUFFER);
        self.subscribers.lock().expect("subscribers lock").insert(
            id.clone(),
            Subscriber {
                cluster: wanted.cluster_name.clone(),
                data_type,
                events: events_tx,
            },
        );
        tracing::debug!(subscription = %id, cluster = %wanted.cluster_name, data_type = %wanted.data_type, "subscribed");

        // One task per subscription forwards its events and heartbeats until the agent leaves.
        let (out_tx, out_rx) = mpsc::channel(SUBSCRIBER_BUFFER);
        let broker = Arc::clone(self);
        let subscription = id.clone();
        let heartbeat = self.heartbeat;
        tokio::spawn(async move {
            // As sdk-go's ticker: the first heartbeat one interval after subscribing.
            let mut ticker = heartbeat
                .map(|every| tokio::time::interval_at(tokio::time::Instant::now() + every, every));
            loop {
                let next = tokio::select! {
                    () = out_tx.closed() => break,
                    event = events_rx.recv() => match event {
                        Some(event) => event,
                        None => break,
                    },
                    () = tick(ticker.as_mut()) => heartbeat_event(),
                };
                if out_tx.send(Ok(next)).await.is_err() {
                    break;
                }
            }
            broker.unsubscribe(&subscription);
        });

        let mut response = Response::new(Box::pin(ReceiverStream::new(out_rx)) as EventStream);
        if let Ok(value) = id.parse() {
            response
                .metadata_mut()
                .insert(SUBSCRIPTION_ID_HEADER, value);
        }
        Ok(response)
    }
}

async fn tick(ticker: Option<&mut tokio::time::Interval>) {
    match ticker {
        Some(ticker) => {
            ticker.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// sdk-go's heartbeat: only the context attributes, no data.
fn heartbeat_event() -> CloudEvent {
    CloudEvent {
        id: uuid::Uuid::new_v4().to_string(),
        spec_version: event::SPEC_VERSION.to_string(),
        r#type: HEARTBEAT.to_string(),
        ..CloudEvent::default()
    }
}

#[allow(clippy::needless_pass_by_value)] // used as map_err(invalid)
fn invalid(error: EventError) -> Status {
    Status::invalid_argument(error.to_string())
}
