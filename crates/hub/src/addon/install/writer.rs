//! The install controller's writes, the only place it changes the hub: add-ons created and
//! removed, their rollout progress, and the ClusterManagementAddOn's status.
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt as _};

use ocm_api::addon::{
    ClusterManagementAddOn, ClusterManagementAddOnStatus, ManagedClusterAddOn,
    ManagedClusterAddOnStatus,
};

/// The install controller's client.
pub struct Writer {
    client: Client,
}

impl Writer {
    /// Writes with `client`.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Creates `mca` in its cluster's namespace; one that exists already (not yet in the store),
    /// or a cluster namespace that is gone, is not an error.
    pub async fn create(&self, mca: &ManagedClusterAddOn) -> Result<(), kube::Error> {
        let (name, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
        match Api::<ManagedClusterAddOn>::namespaced(self.client.clone(), &cluster)
            .create(&PostParams::default(), mca)
            .await
        {
            Ok(_) => tracing::info!(addon = %name, %cluster, "installed by placement"),
            Err(kube::Error::Api(e)) if e.code == 409 || e.code == 404 => {}
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// Deletes add-on `name` from `cluster`: no longer decided.
    pub async fn remove(&self, name: &str, cluster: &str) -> Result<(), kube::Error> {
        match Api::<ManagedClusterAddOn>::namespaced(self.client.clone(), cluster)
            .delete(name, &DeleteParams::default())
            .await
        {
            Ok(_) => tracing::info!(addon = %name, %cluster, "removed: no longer decided"),
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// An add-on's rollout progress, as the add-on manager writes statuses.
    pub async fn addon_status(
        &self,
        mca: &ManagedClusterAddOn,
        status: &ManagedClusterAddOnStatus,
    ) -> Result<(), kube::Error> {
        crate::addon::manager::writer::write_status(&self.client, mca, status).await
    }

    /// The ClusterManagementAddOn's status, when it differs.
    pub async fn cma_status(
        &self,
        cma: &ClusterManagementAddOn,
        status: &ClusterManagementAddOnStatus,
    ) -> Result<(), kube::Error> {
        if cma.status.as_ref() == Some(status) {
            return Ok(());
        }
        Api::<ClusterManagementAddOn>::all(self.client.clone())
            .patch_status(
                &cma.name_any(),
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"status": status})),
            )
            .await?;
        Ok(())
    }
}
