//! The add-on annotation controller's only write: the annotations of a cluster's add-ons,
//! merged as [`super::decide`] says, each guarded by the version it was decided from.
use std::collections::BTreeMap;

use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use ocm_api::addon::ManagedClusterAddOn;

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the hub.
    #[error("updating the annotations of add-on {cluster}/{addon}: {source}")]
    Kube {
        /// The add-on's cluster.
        cluster: String,
        /// The add-on.
        addon: String,
        /// What the hub said.
        #[source]
        source: kube::Error,
    },
}

impl ocm_runtime::controller::Failure for Error {}

/// Merges into each add-on of `cluster` its annotations (a key mapping to `None` is removed),
/// guarded by the add-on's version as read; `true` when one changed meanwhile (an add-on's change
/// does not wake this controller, so the caller looks again). One that is gone is skipped.
pub async fn annotate(
    client: &Client,
    cluster: &str,
    patches: &[(&ManagedClusterAddOn, BTreeMap<String, Option<String>>)],
) -> Result<bool, Error> {
    let api = Api::<ManagedClusterAddOn>::namespaced(client.clone(), cluster);
    let mut again = false;
    for (addon, annotations) in patches {
        let version = &addon.metadata.resource_version;
        let addon = addon.name_any();
        let body = json!({"metadata": {"resourceVersion": version, "annotations": annotations}});
        match api
            .patch(&addon, &PatchParams::default(), &Patch::Merge(body))
            .await
        {
            Ok(_) => tracing::info!(%cluster, %addon, "add-on annotations synced"),
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(kube::Error::Api(e)) if e.code == 409 => again = true,
            Err(source) => {
                return Err(Error::Kube {
                    cluster: cluster.to_string(),
                    addon,
                    source,
                });
            }
        }
    }
    Ok(again)
}
