//! The only writes of the cluster-set controllers: a condition on a set's or a binding's status
//! (only when it changes, guarded by the resourceVersion read), and the built-in sets' creation
//! and selector repair.
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt as _};
use serde::de::DeserializeOwned;
use serde_json::json;

use ocm_api::cluster::{ClusterSetStatus, ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::conditions::{self, Condition};

/// A failed write.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(#[from] kube::Error);

impl ocm_runtime::controller::Failure for Error {}

/// Sets `condition` on `obj`'s status unless it already says so; guarded by the resourceVersion.
pub async fn write_condition<K>(api: Api<K>, obj: &K, condition: Condition) -> Result<(), Error>
where
    K: Resource<DynamicType = ()> + HasSetStatus + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut list = obj
        .set_status()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    if !conditions::set(&mut list, condition) {
        return Ok(());
    }
    let patch = json!({"metadata": {"resourceVersion": obj.meta().resource_version}, "status": {"conditions": list}});
    api.patch_status(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(patch),
    )
    .await?;
    Ok(())
}

/// Creates the built-in set `want` (someone else making it first is as good).
pub async fn create_builtin(
    api: &Api<ManagedClusterSet>,
    want: &ManagedClusterSet,
) -> Result<(), Error> {
    match api.create(&PostParams::default(), want).await {
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(e.into()),
        Ok(_) => {
            tracing::info!(set = %want.name_any(), "created the built-in cluster set");
            Ok(())
        }
    }
}

/// Puts the built-in set's selector back to `want`'s.
pub async fn restore_selector(
    api: &Api<ManagedClusterSet>,
    want: &ManagedClusterSet,
) -> Result<(), Error> {
    let patch = json!({"spec": {"clusterSelector": want.spec.cluster_selector}});
    api.patch(
        &want.name_any(),
        &PatchParams::default(),
        &Patch::Merge(patch),
    )
    .await?;
    tracing::info!(set = %want.name_any(), "restored the built-in cluster set's selector");
    Ok(())
}

/// The two kinds share one status type.
pub trait HasSetStatus {
    /// The status, if written.
    fn set_status(&self) -> Option<&ClusterSetStatus>;
}

impl HasSetStatus for ManagedClusterSet {
    fn set_status(&self) -> Option<&ClusterSetStatus> {
        self.status.as_ref()
    }
}

impl HasSetStatus for ManagedClusterSetBinding {
    fn set_status(&self) -> Option<&ClusterSetStatus> {
        self.status.as_ref()
    }
}
