//! The health check's only write: the conditions of a cluster's add-ons, as [`super::decide`]
//! says, each guarded by the version it was decided from.
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use ocm_api::addon::ManagedClusterAddOn;
use ocm_api::conditions::Condition;

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the hub.
    #[error("marking add-on {cluster}/{addon} unknown: {source}")]
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

/// Writes each add-on's conditions on `cluster`, guarded by the version read, so a condition set
/// meanwhile is not lost; `true` when one changed meanwhile (an add-on's change does not wake
/// this controller, so the caller looks again). One that is gone is skipped.
pub async fn mark_unknown(
    client: &Client,
    cluster: &str,
    updates: &[(&ManagedClusterAddOn, Vec<Condition>)],
) -> Result<bool, Error> {
    let api = Api::<ManagedClusterAddOn>::namespaced(client.clone(), cluster);
    let mut again = false;
    for (addon, conditions) in updates {
        let body = json!({
            "metadata": {"resourceVersion": addon.metadata.resource_version},
            "status": {"conditions": conditions},
        });
        match api
            .patch_status(
                &addon.name_any(),
                &PatchParams::default(),
                &Patch::Merge(body),
            )
            .await
        {
            Ok(_) => tracing::info!(%cluster, addon = %addon.name_any(),
                "cluster availability unknown: add-on availability unknown"),
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(kube::Error::Api(e)) if e.code == 409 => again = true,
            Err(source) => {
                return Err(Error::Kube {
                    cluster: cluster.to_string(),
                    addon: addon.name_any(),
                    source,
                });
            }
        }
    }
    Ok(again)
}
