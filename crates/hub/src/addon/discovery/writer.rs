//! The feature discovery's only write: a cluster's add-on labels, merged as [`super::decide`]
//! says, guarded by the version they were decided from.
use std::collections::BTreeMap;

use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use ocm_api::cluster::ManagedCluster;

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the hub.
    #[error("labelling cluster {cluster} with its add-ons: {source}")]
    Kube {
        /// The cluster.
        cluster: String,
        /// What the hub said.
        #[source]
        source: kube::Error,
    },
}

impl ocm_runtime::controller::Failure for Error {}

/// Merges `labels` into `cluster`'s (a key mapping to `None` is removed), guarded by the version
/// read: the removals were decided from it. A conflict's change wakes this cluster again, and a
/// cluster that is gone needs no labels.
pub async fn label(
    client: &Client,
    cluster: &ManagedCluster,
    labels: &BTreeMap<String, Option<String>>,
) -> Result<(), Error> {
    let name = cluster.name_any();
    let body = json!({"metadata": {
        "uid": cluster.metadata.uid,
        "resourceVersion": cluster.metadata.resource_version,
        "labels": labels,
    }});
    match Api::<ManagedCluster>::all(client.clone())
        .patch(&name, &PatchParams::default(), &Patch::Merge(body))
        .await
    {
        Ok(_) => {
            tracing::debug!(cluster = %name, ?labels, "add-on feature labels updated");
            Ok(())
        }
        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
        Err(source) => Err(Error::Kube {
            cluster: name,
            source,
        }),
    }
}
