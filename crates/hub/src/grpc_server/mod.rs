//! The hub's gRPC server (upstream's `cluster-manager-grpc-server`): agents reach the hub
//! through CloudEvents over gRPC instead of the hub's API server. Served so far: what a
//! registration agent needs: ManagedClusters (create, status, spec updates down), CSRs (create,
//! status down), Leases (renewal), Events, and ManagedClusterAddOns (both versions; status) —
//! and what a work agent needs: ManifestWorks as manifest bundles (spec down, status up); and
//! tokens of ServiceAccounts (add-ons' token registration).
//!
//! The server authenticates each call (bearer token by `TokenReview`, else the verified client
//! certificate) and authorises it by a `SubjectAccessReview` of the Kubernetes request it
//! stands for, so an agent may do through it exactly what its RBAC lets it do directly.
mod addons;
mod auth;
mod cluster;
mod csr;
mod encode;
mod events;
mod feed;
mod lease;
pub mod signer;
mod tokens;
mod works;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use cloudevents_grpc::broker::Broker;
use cloudevents_grpc::proto::cloud_event_service_server::CloudEventServiceServer;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::runtime::reflector::store::Writer;
use kube::runtime::{reflector, watcher};
use ocm_api::cluster::ManagedCluster;
use ocm_api::work::ManifestWork;
use tokio_util::sync::CancellationToken;
use tonic::Status;
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};

pub use auth::{KubeAuth, resource_attributes};

pub use csr::CSR_USER_ANNOTATION;
use ocm_api::addon::ManagedClusterAddOn as AlphaAddOn;
use ocm_api::addon::v1beta1::ManagedClusterAddOn as AddOn;

/// sdk-go's default heartbeat interval.
pub const HEARTBEAT: Duration = Duration::from_secs(10);

/// The server's TLS: its certificate and key, and the CA its agents' client certificates chain
/// to (`None`: tokens only).
pub struct Tls {
    /// PEM certificate chain.
    pub cert_pem: String,
    /// PEM private key.
    pub key_pem: String,
    /// PEM CA bundle for client certificates.
    pub client_ca_pem: Option<String>,
}

/// How the server runs.
pub struct Config {
    /// Its TLS.
    pub tls: Tls,
    /// How often subscriptions are sent a heartbeat (`None`: never).
    pub heartbeat: Option<Duration>,
    /// Signs approved CSRs of the gRPC signer (`None`: another process does).
    pub signer: Option<signer::Signer>,
}

/// Serves on `listener` until `shutdown`, reading and writing the hub through `client`.
pub async fn serve(
    client: kube::Client,
    listener: tokio::net::TcpListener,
    config: Config,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let Config {
        tls,
        heartbeat,
        signer,
    } = config;
    if let Some(signer) = signer {
        let signing = signer::run(client.clone(), signer);
        let stop = shutdown.clone();
        tokio::spawn(async move { stop.run_until_cancelled(signing).await });
    }
    let broker = broker(&client, heartbeat, &shutdown);
    let mut tls_config =
        ServerTlsConfig::new().identity(Identity::from_pem(&tls.cert_pem, &tls.key_pem));
    if let Some(ca) = &tls.client_ca_pem {
        tls_config = tls_config
            .client_ca_root(Certificate::from_pem(ca))
            .client_auth_optional(true);
    }
    let local: Option<SocketAddr> = listener.local_addr().ok();
    tracing::info!(address = ?local, "serving CloudEvents over gRPC");
    Server::builder()
        .tls_config(tls_config)?
        .add_service(CloudEventServiceServer::new(broker))
        .serve_with_incoming_shutdown(
            tokio_stream::wrappers::TcpListenerStream::new(listener),
            shutdown.cancelled_owned(),
        )
        .await?;
    Ok(())
}

/// The stores' writers, each filled by its kind's watch.
struct Writers {
    clusters: Writer<ManagedCluster>,
    csrs: Writer<CertificateSigningRequest>,
    leases: Writer<Lease>,
    addons: Writer<AddOn>,
    alpha_addons: Writer<AlphaAddOn>,
    works: Writer<ManifestWork>,
}

/// The broker serving every kind, its watches started (they run until `shutdown`).
fn broker(
    client: &kube::Client,
    heartbeat: Option<Duration>,
    shutdown: &CancellationToken,
) -> Arc<Broker<KubeAuth>> {
    let (cluster_store, cluster_writer) = reflector::store();
    let (csr_store, csr_writer) = reflector::store();
    let (lease_store, lease_writer) = reflector::store();
    let (addon_store, addon_writer) = reflector::store();
    let (alpha_store, alpha_writer) = reflector::store();
    let (work_store, work_writer) = reflector::store();
    let (token_replies, mut replies) = tokio::sync::mpsc::unbounded_channel();
    let broker = Arc::new(
        Broker::new(KubeAuth::new(client.clone()), heartbeat)
            .with_service(
                cluster::data_type(),
                Arc::new(cluster::Clusters {
                    api: Api::all(client.clone()),
                    store: cluster_store,
                }),
            )
            .with_service(
                csr::data_type(),
                Arc::new(csr::Csrs {
                    api: Api::all(client.clone()),
                    store: csr_store,
                }),
            )
            .with_service(
                lease::data_type(),
                Arc::new(lease::Leases {
                    client: client.clone(),
                    store: lease_store,
                }),
            )
            .with_service(
                events::data_type(),
                Arc::new(events::Events {
                    client: client.clone(),
                }),
            )
            .with_service(
                addons::data_type::<AddOn>(),
                Arc::new(addons::Addons::<AddOn> {
                    client: client.clone(),
                    store: addon_store,
                }),
            )
            .with_service(
                addons::data_type::<AlphaAddOn>(),
                Arc::new(addons::Addons::<AlphaAddOn> {
                    client: client.clone(),
                    store: alpha_store,
                }),
            )
            .with_service(
                tokens::data_type(),
                Arc::new(tokens::Tokens {
                    client: client.clone(),
                    replies: token_replies,
                }),
            )
            .with_service(
                works::data_type(),
                Arc::new(works::Works {
                    client: client.clone(),
                    store: work_store,
                }),
            ),
    );
    let writers = Writers {
        clusters: cluster_writer,
        csrs: csr_writer,
        leases: lease_writer,
        addons: addon_writer,
        alpha_addons: alpha_writer,
        works: work_writer,
    };
    watch_all(client, &broker, writers, shutdown);
    let sender = broker.clone();
    tokio::spawn(shutdown.clone().run_until_cancelled_owned(async move {
        while let Some(reply) = replies.recv().await {
            if let Err(error) = sender.dispatch(&reply).await {
                tracing::warn!(%error, "sending a token");
            }
        }
    }));
    broker
}

fn watch_all(
    client: &kube::Client,
    broker: &Arc<Broker<KubeAuth>>,
    writers: Writers,
    shutdown: &CancellationToken,
) {
    feed::watch(
        writers.clusters,
        Api::all(client.clone()),
        watcher::Config::default(),
        cluster::kind(),
        broker.clone(),
        shutdown,
    );
    // Only CSRs of some cluster reach an agent.
    let labelled = watcher::Config::default().labels(ocm_api::cluster::CLUSTER_NAME_LABEL);
    feed::watch(
        writers.csrs,
        Api::all(client.clone()),
        labelled.clone(),
        csr::kind(),
        broker.clone(),
        shutdown,
    );
    feed::watch(
        writers.leases,
        Api::all(client.clone()),
        labelled,
        lease::kind(),
        broker.clone(),
        shutdown,
    );
    let all = watcher::Config::default;
    feed::watch(
        writers.addons,
        Api::all(client.clone()),
        all(),
        addons::kind::<AddOn>(),
        broker.clone(),
        shutdown,
    );
    feed::watch(
        writers.alpha_addons,
        Api::all(client.clone()),
        all(),
        addons::kind::<AlphaAddOn>(),
        broker.clone(),
        shutdown,
    );
    feed::watch(
        writers.works,
        Api::all(client.clone()),
        watcher::Config::default(),
        works::kind(),
        broker.clone(),
        shutdown,
    );
}

/// An API server's answer as a gRPC status, as upstream's broker sends it: `FailedPrecondition`
/// carrying the JSON of Go's `StatusError` (`{"ErrStatus": <Status>}`), which upstream's agents
/// decode back into the API error (so that, say, an AlreadyExists reads as one).
#[allow(clippy::needless_pass_by_value)] // used as map_err(status_of)
fn status_of(error: kube::Error) -> Status {
    match &error {
        kube::Error::Api(status) => {
            let mut body = serde_json::to_value(status.as_ref()).unwrap_or_default();
            body["kind"] = "Status".into();
            body["apiVersion"] = "v1".into();
            let message = serde_json::json!({"ErrStatus": body}).to_string();
            Status::failed_precondition(message)
        }
        _ => Status::unavailable(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_refusals_travel_as_go_s_status_error() {
        let refused = kube::Error::Api(
            kube::core::Status::failure("managedclusters \"c1\" already exists", "AlreadyExists")
                .with_code(409)
                .boxed(),
        );
        let status = status_of(refused);
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        let body: serde_json::Value = serde_json::from_str(status.message()).unwrap();
        assert_eq!(body["ErrStatus"]["reason"], "AlreadyExists");
        assert_eq!(body["ErrStatus"]["code"], 409);
        assert_eq!(body["ErrStatus"]["status"], "Failure");
    }
}
