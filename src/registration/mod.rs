//! Registration: how a managed cluster gets a hub identity and keeps it.
//!
//! - [`agent`] runs on (or for) the managed cluster: it turns the bootstrap credential into a
//!   hub-signed client certificate through a CSR, keeps the ManagedCluster status and the
//!   heartbeat lease current, and rotates the certificate before it expires.
//! - [`hub`] runs on the hub: one watch per kind for all clusters, an in-memory index that decides,
//!   and a writer that acts (namespace and RBAC on accept, renewal approval, lease monitor,
//!   revocation, cleanup).
//! - [`identity`] is the shared, pure part: who an agent is (CSR subject), and who may ask;
//!   [`approval`] is what `clusteradm accept` decides from it.
pub mod agent;
pub mod approval;
pub mod hub;
pub mod identity;

/// Default namespace of the agents on a managed cluster.
pub const DEFAULT_AGENT_NAMESPACE: &str = "open-cluster-management-agent";
/// Secret holding the bootstrap kubeconfig (key `kubeconfig`), written by `join`.
pub const BOOTSTRAP_SECRET: &str = "bootstrap-hub-kubeconfig";
/// Secret the agent writes once it holds a hub-signed certificate.
pub const HUB_KUBECONFIG_SECRET: &str = "hub-kubeconfig-secret";
/// The signer every registration CSR names.
pub const CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

/// Approves a CSR (the `approval` subresource) with an `Approved=True` condition.
pub async fn approve_csr(
    client: &kube::Client,
    name: &str,
    reason: &str,
    message: &str,
) -> Result<(), kube::Error> {
    use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
    let api: kube::Api<CertificateSigningRequest> = kube::Api::all(client.clone());
    let now =
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now());
    let patch = serde_json::json!({"status": {"conditions": [{
        "type": "Approved", "status": "True", "reason": reason, "message": message,
        "lastUpdateTime": now, "lastTransitionTime": now,
    }]}});
    api.patch_approval(
        name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(patch),
    )
    .await
    .map(|_| ())
}
