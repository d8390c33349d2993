//! Every write of the token infrastructure controller: the add-on's ServiceAccount, Role and
//! RoleBinding applied or deleted in its cluster's namespace, and its `TokenInfrastructureReady`
//! condition.
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{Client, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::decide;
use ocm_api::addon::{ManagedClusterAddOn, token};
use ocm_api::conditions::{self, Condition};

const FIELD_MANAGER: &str = "clusteradm-addon-token-infrastructure";

/// The controller's writer, on the hub.
pub struct Writer {
    client: Client,
}

impl Writer {
    /// A writer with `client`'s rights.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Applies the add-on's three objects, owned by the add-on (the garbage collector's safety
    /// net beside [`Self::remove`]); the ServiceAccount's UID.
    pub async fn apply(&self, mca: &ManagedClusterAddOn) -> Result<String, kube::Error> {
        let cluster = mca.namespace().unwrap_or_default();
        let (mut account, mut role, mut binding) = decide::objects(&cluster, &mca.name_any());
        let owner = vec![crate::addon::owner_reference(mca, false)];
        account.metadata.owner_references = Some(owner.clone());
        role.metadata.owner_references = Some(owner.clone());
        binding.metadata.owner_references = Some(owner);
        let account = self.apply_one(&cluster, account).await?;
        self.apply_one(&cluster, role).await?;
        self.apply_one(&cluster, binding).await?;
        Ok(account.uid().unwrap_or_default())
    }

    async fn apply_one<K>(&self, cluster: &str, object: K) -> Result<K, kube::Error>
    where
        K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Serialize
            + DeserializeOwned
            + Clone
            + std::fmt::Debug,
    {
        let mut body = serde_json::to_value(&object).map_err(kube::Error::SerdeError)?;
        body["apiVersion"] = json!(K::api_version(&()));
        body["kind"] = json!(K::kind(&()));
        Api::<K>::namespaced(self.client.clone(), cluster)
            .patch(
                &object.name_any(),
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(body),
            )
            .await
    }

    /// Deletes the add-on's three objects; those already gone are no error.
    pub async fn remove(&self, cluster: &str, addon: &str) -> Result<(), kube::Error> {
        let dp = DeleteParams::default();
        let gone = |r: Result<_, kube::Error>| match r {
            Ok(()) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(e),
        };
        let role = token::role(addon);
        gone(
            Api::<RoleBinding>::namespaced(self.client.clone(), cluster)
                .delete(&role, &dp)
                .await
                .map(|_| ()),
        )?;
        gone(
            Api::<Role>::namespaced(self.client.clone(), cluster)
                .delete(&role, &dp)
                .await
                .map(|_| ()),
        )?;
        gone(
            Api::<ServiceAccount>::namespaced(self.client.clone(), cluster)
                .delete(&token::service_account(addon), &dp)
                .await
                .map(|_| ()),
        )?;
        tracing::info!(%cluster, %addon, "token infrastructure removed");
        Ok(())
    }

    /// Sets `TokenInfrastructureReady` as upstream's: true with the ServiceAccount's UID, or false
    /// with why; unchanged, nothing is written.
    pub async fn report(
        &self,
        mca: &ManagedClusterAddOn,
        ready: Result<&str, String>,
    ) -> Result<(), kube::Error> {
        let cluster = mca.namespace().unwrap_or_default();
        let (status, reason, message) = match ready {
            Ok(uid) => (
                conditions::TRUE,
                token::INFRASTRUCTURE_READY_REASON,
                token::ready_message(&cluster, &mca.name_any(), uid),
            ),
            Err(why) => (
                conditions::FALSE,
                token::INFRASTRUCTURE_APPLY_FAILED,
                format!("Failed to apply token infrastructure: {why}"),
            ),
        };
        let condition = conditions::new(
            token::INFRASTRUCTURE_READY,
            status,
            reason,
            message,
            &Time(Timestamp::now()),
        );
        let mut wanted = current(mca);
        if !conditions::set(&mut wanted, condition) {
            return Ok(());
        }
        self.write_conditions(mca, &wanted).await
    }

    /// Drops `TokenInfrastructureReady` from an add-on that no longer uses tokens.
    pub async fn drop_condition(&self, mca: &ManagedClusterAddOn) -> Result<(), kube::Error> {
        let mut wanted = current(mca);
        wanted.retain(|c| c.type_ != token::INFRASTRUCTURE_READY);
        self.write_conditions(mca, &wanted).await
    }

    /// Writes the conditions, guarded by the version read: a conflict is retried by the runner
    /// with the newer add-on.
    async fn write_conditions(
        &self,
        mca: &ManagedClusterAddOn,
        wanted: &[Condition],
    ) -> Result<(), kube::Error> {
        let cluster = mca.namespace().unwrap_or_default();
        let body = json!({
            "metadata": {"resourceVersion": mca.metadata.resource_version},
            "status": {"conditions": wanted},
        });
        Api::<ManagedClusterAddOn>::namespaced(self.client.clone(), &cluster)
            .patch_status(
                &mca.name_any(),
                &PatchParams::default(),
                &Patch::Merge(body),
            )
            .await
            .map(|_| ())
    }
}

fn current(mca: &ManagedClusterAddOn) -> Vec<Condition> {
    mca.status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default()
}
