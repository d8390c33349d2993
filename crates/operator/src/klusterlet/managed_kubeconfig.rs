//! Hosted modes: each agent's kubeconfig for the managed cluster, as upstream's operator makes it
//! (`external-managed-kubeconfig-{agent,registration,work}` in the agents' namespace): a token of
//! the agent's own ServiceAccount there ([`crate::token_kubeconfig`]), never the admin credential
//! the user gave the operator (`external-managed-kubeconfig`), which no agent pod mounts.
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::Api;

use super::desired::{Workload, service_account};
use super::validate::Validated;
use crate::token_kubeconfig::{self, Identity};

/// The managed cluster as the user's kubeconfig names it.
pub type ManagedCluster = token_kubeconfig::Cluster;

/// Where the agent pods mount the Secret; the kubeconfig reads the token beside it.
pub const MOUNT_DIR: &str = "/spoke/config";
/// The field manager of the Secrets.
const MANAGER: &str = "klusterlet-operator";

/// The Secret of workload `w` (upstream's names).
#[must_use]
pub fn secret_name(w: Workload) -> &'static str {
    match w {
        Workload::Registration => "external-managed-kubeconfig-registration",
        Workload::Work => "external-managed-kubeconfig-work",
        Workload::Singleton => "external-managed-kubeconfig-agent",
    }
}

/// Makes or renews the kubeconfig Secret of each workload in `deployed`, on `management` (where
/// the agents run) from tokens of their ServiceAccounts on `managed`. Returns how many Secrets
/// were written.
///
/// # Errors
/// A message for the Applied condition: a ServiceAccount missing, a token refused, a write failed.
pub async fn sync(
    management: &kube::Client,
    managed: &kube::Client,
    v: &Validated,
    deployed: &[Workload],
    cluster: &ManagedCluster,
) -> Result<usize, String> {
    let secrets: Api<Secret> = Api::namespaced(management.clone(), &v.agent_namespace);
    let accounts: Api<ServiceAccount> = Api::namespaced(managed.clone(), &v.managed_namespace);
    let kubeconfig = cluster.kubeconfig(MOUNT_DIR);
    let mut written = 0;
    for w in deployed {
        let account = service_account::name(v, *w);
        let id = Identity {
            secret: super::desired::meta(v, secret_name(*w), Some(&v.agent_namespace)),
            account: &account,
            account_namespace: &v.managed_namespace,
        };
        let on_managed = |e: String| format!("{e} (on the managed cluster)");
        if token_kubeconfig::ensure(&secrets, &accounts, id, &kubeconfig, MANAGER)
            .await
            .map_err(on_managed)?
        {
            written += 1;
        }
    }
    Ok(written)
}
