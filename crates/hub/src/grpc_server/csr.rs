//! The `certificatesigningrequests` type: an agent asks for a client certificate; the CSR is
//! made by this server (so its `spec.username` is the server's), and upstream's
//! `open-cluster-management.io/csr-user` annotation names the agent that asked. The agent is
//! sent its cluster's CSRs (those labelled with its name) as they change.
use cloudevents_grpc::broker::{Identity, Service};
use cloudevents_grpc::event_type::{Action, DataType, EventType};
use cloudevents_grpc::proto::CloudEvent;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::Store;
use ocm_api::cluster::CLUSTER_NAME_LABEL;
use tonic::Status;

use super::encode::{decode_for_create, encode};
use super::{feed, status_of};

pub use ocm_api::names::CSR_USER_ANNOTATION;

/// sdk-go's data type of CSRs.
#[must_use]
pub fn data_type() -> DataType {
    DataType::new("certificates.k8s.io", "v1", "certificatesigningrequests")
}

/// How CSRs reach agents.
#[must_use]
pub fn kind() -> feed::Kind<CertificateSigningRequest> {
    feed::Kind {
        data_type: data_type(),
        cluster_of,
        encode: encode::<CertificateSigningRequest>,
    }
}

/// A CSR is the cluster's its label names.
pub fn cluster_of(csr: &CertificateSigningRequest) -> Option<String> {
    csr.metadata
        .labels
        .as_ref()?
        .get(CLUSTER_NAME_LABEL)
        .cloned()
}

/// Serves CSRs from the hub's API server.
pub struct Csrs {
    pub(super) api: Api<CertificateSigningRequest>,
    pub(super) store: Store<CertificateSigningRequest>,
}

#[tonic::async_trait]
impl Service for Csrs {
    async fn list(&self, cluster: &str) -> Result<Vec<CloudEvent>, Status> {
        Ok(feed::list(&self.store, &kind(), cluster).await)
    }

    async fn handle(
        &self,
        who: &Identity,
        event: &CloudEvent,
        event_type: &EventType,
    ) -> Result<(), Status> {
        if event_type.action != Action::Create {
            return Err(Status::invalid_argument(format!(
                "unsupported action {:?} for certificatesigningrequests",
                event_type.action
            )));
        }
        let mut csr: CertificateSigningRequest =
            decode_for_create(event).map_err(|e| Status::invalid_argument(e.to_string()))?;
        if cluster_of(&csr).is_none() {
            return Err(Status::invalid_argument(format!(
                "the CSR carries no {CLUSTER_NAME_LABEL} label"
            )));
        }
        // As upstream: the annotations are the server's to set, not the agent's.
        csr.metadata.annotations =
            Some([(CSR_USER_ANNOTATION.to_string(), who.user.clone())].into());
        self.api
            .create(&PostParams::default(), &csr)
            .await
            .map(drop)
            .map_err(status_of)
    }
}
