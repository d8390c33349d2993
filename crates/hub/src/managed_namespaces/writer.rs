//! The managed-namespace controller's one write: a cluster's `status.managedNamespaces`.
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use ocm_api::cluster::{ClusterSetManagedNamespace, ManagedCluster};

/// Why a cluster's managed namespaces could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The status patch failed.
    #[error("updating status.managedNamespaces of ManagedCluster {cluster}")]
    Write {
        /// The cluster.
        cluster: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

impl ocm_runtime::controller::Failure for Error {}

/// Replaces `status.managedNamespaces` (dropped when empty), guarded by the resourceVersion so
/// conditions the agent just wrote are never lost: a conflict is decided again.
pub async fn write(
    client: &Client,
    cluster: &ManagedCluster,
    wanted: &[ClusterSetManagedNamespace],
) -> Result<(), Error> {
    let list = if wanted.is_empty() {
        serde_json::Value::Null
    } else {
        json!(wanted)
    };
    let patch = json!({
        "metadata": {"resourceVersion": cluster.metadata.resource_version},
        "status": {"managedNamespaces": list},
    });
    Api::<ManagedCluster>::all(client.clone())
        .patch_status(
            &cluster.name_any(),
            &PatchParams::default(),
            &Patch::Merge(patch),
        )
        .await
        .map(drop)
        .map_err(|source| Error::Write {
            cluster: cluster.name_any(),
            source,
        })
}
