//! The hub controller's writer: carries out the index's [`Action`]s against the hub and nothing
//! else. Objects are server-side applied with one field manager; status and finalizer changes
//! are merge patches guarded by the resourceVersion, so a concurrent agent write is never lost
//! (a conflict fails the action and the index decides again from the newer object).
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::index::Action;
use super::rbac;
use crate::api::cluster::{
    CLUSTER_CLEANUP_FINALIZER, HUB_ACCEPTED_MANAGED_CLUSTER, HUB_DENIED_MANAGED_CLUSTER,
    MANAGED_CLUSTER_CONDITION_AVAILABLE, ManagedCluster,
};
use crate::api::conditions::{self, Condition};

/// Field manager of the hub controller's writes.
pub const FIELD_MANAGER: &str = "clusteradm-registration-hub";

/// Applies actions to the hub.
#[derive(Clone)]
pub struct Writer {
    client: Client,
}

impl Writer {
    /// A writer with `client`.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Carries out one action.
    pub async fn apply(&self, action: &Action) -> Result<(), kube::Error> {
        match action {
            Action::Accept(c) => self.accept(c).await,
            Action::Deny(c) => self.deny(c).await,
            Action::Cleanup(c) => self.cleanup(c).await,
            Action::Approve(csr, c) => {
                tracing::info!(cluster = %c, csr = %csr, "approving the agent's certificate renewal");
                crate::identity::approval::approve_csr(
                    &self.client,
                    csr,
                    "AutoApprovedByHubCSRApprovingController",
                    "Auto approving Managed cluster agent certificate after SubjectAccessReview.",
                )
                .await
            }
            Action::MarkLeaseStale(c) => {
                tracing::info!(cluster = %c, "lease not renewed in time: availability unknown");
                self.set_conditions(
                    c,
                    vec![condition(
                        MANAGED_CLUSTER_CONDITION_AVAILABLE,
                        conditions::UNKNOWN,
                        "ManagedClusterLeaseUpdateStopped",
                        "Registration agent stopped updating its lease.",
                    )],
                    &[],
                )
                .await
            }
        }
    }

    async fn accept(&self, cluster: &str) -> Result<(), kube::Error> {
        let grant = rbac::grant(cluster);
        self.ssa(Api::<Namespace>::all(self.client.clone()), &grant.namespace)
            .await?;
        self.ssa(
            Api::<ClusterRole>::all(self.client.clone()),
            &grant.cluster_role,
        )
        .await?;
        self.ssa(
            Api::<ClusterRoleBinding>::all(self.client.clone()),
            &grant.cluster_role_binding,
        )
        .await?;
        let roles: Api<Role> = Api::namespaced(self.client.clone(), cluster);
        for role in &grant.roles {
            self.ssa(roles.clone(), role).await?;
        }
        let bindings: Api<RoleBinding> = Api::namespaced(self.client.clone(), cluster);
        for binding in &grant.role_bindings {
            self.ssa(bindings.clone(), binding).await?;
        }
        self.set_finalizer(cluster, true).await?;
        let accepted = condition(
            HUB_ACCEPTED_MANAGED_CLUSTER,
            conditions::TRUE,
            "HubClusterAdminAccepted",
            "Accepted by hub cluster admin",
        );
        self.set_conditions(cluster, vec![accepted], &[HUB_DENIED_MANAGED_CLUSTER])
            .await?;
        tracing::info!(cluster, "accepted: namespace and RBAC in place");
        Ok(())
    }

    async fn deny(&self, cluster: &str) -> Result<(), kube::Error> {
        self.revoke(cluster).await?;
        let denied = "Denied by hub cluster admin";
        self.set_conditions(
            cluster,
            vec![
                condition(
                    HUB_ACCEPTED_MANAGED_CLUSTER,
                    conditions::FALSE,
                    "HubClusterAdminDenied",
                    denied,
                ),
                condition(
                    HUB_DENIED_MANAGED_CLUSTER,
                    conditions::TRUE,
                    "HubClusterAdminDenied",
                    denied,
                ),
            ],
            &[],
        )
        .await?;
        tracing::info!(cluster, "denied: RBAC revoked");
        Ok(())
    }

    async fn cleanup(&self, cluster: &str) -> Result<(), kube::Error> {
        self.revoke(cluster).await?;
        ignore_404(
            Api::<Namespace>::all(self.client.clone())
                .delete(cluster, &DeleteParams::default())
                .await,
        )?;
        self.set_finalizer(cluster, false).await?;
        tracing::info!(cluster, "deleted: namespace and RBAC removed");
        Ok(())
    }

    /// Deletes the cluster's RBAC (the namespace and its contents stay).
    async fn revoke(&self, cluster: &str) -> Result<(), kube::Error> {
        let dp = DeleteParams::default();
        let name = rbac::cluster_role_name(cluster);
        ignore_404(
            Api::<ClusterRoleBinding>::all(self.client.clone())
                .delete(&name, &dp)
                .await,
        )?;
        ignore_404(
            Api::<ClusterRole>::all(self.client.clone())
                .delete(&name, &dp)
                .await,
        )?;
        for name in [rbac::registration_name(cluster), rbac::work_name(cluster)] {
            ignore_404(
                Api::<RoleBinding>::namespaced(self.client.clone(), cluster)
                    .delete(&name, &dp)
                    .await,
            )?;
            ignore_404(
                Api::<Role>::namespaced(self.client.clone(), cluster)
                    .delete(&name, &dp)
                    .await,
            )?;
        }
        Ok(())
    }

    async fn ssa<K>(&self, api: Api<K>, obj: &K) -> Result<(), kube::Error>
    where
        K: Resource + Serialize + DeserializeOwned + Clone + std::fmt::Debug,
    {
        let name = obj.meta().name.clone().unwrap_or_default();
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(obj),
        )
        .await
        .map(|_| ())
    }

    async fn set_finalizer(&self, cluster: &str, present: bool) -> Result<(), kube::Error> {
        let api: Api<ManagedCluster> = Api::all(self.client.clone());
        let Some(mc) = api.get_opt(cluster).await? else {
            return Ok(());
        };
        let mut finalizers = mc.metadata.finalizers.clone().unwrap_or_default();
        let has = finalizers.iter().any(|f| f == CLUSTER_CLEANUP_FINALIZER);
        if has == present {
            return Ok(());
        }
        finalizers.retain(|f| f != CLUSTER_CLEANUP_FINALIZER);
        if present {
            finalizers.push(CLUSTER_CLEANUP_FINALIZER.into());
        }
        let patch = json!({"metadata": {"resourceVersion": mc.metadata.resource_version, "finalizers": finalizers}});
        api.patch(cluster, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map(|_| ())
    }

    /// Sets (and removes) conditions on the ManagedCluster's status (read fresh, written with its
    /// resourceVersion).
    async fn set_conditions(
        &self,
        cluster: &str,
        new: Vec<Condition>,
        remove: &[&str],
    ) -> Result<(), kube::Error> {
        let api: Api<ManagedCluster> = Api::all(self.client.clone());
        let Some(mc) = api.get_opt(cluster).await? else {
            return Ok(());
        };
        let mut list = mc.status.clone().unwrap_or_default().conditions;
        let before = list.len();
        list.retain(|c| !remove.contains(&c.type_.as_str()));
        let mut changed = list.len() != before;
        for c in new {
            changed |= conditions::set(&mut list, c);
        }
        if !changed {
            return Ok(());
        }
        let patch = json!({"metadata": {"resourceVersion": mc.metadata.resource_version}, "status": {"conditions": list}});
        api.patch_status(cluster, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map(|_| ())
    }
}

fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
        observed_generation: None,
    }
}

fn ignore_404<T>(result: Result<T, kube::Error>) -> Result<(), kube::Error> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}
