//! The hub controller's writer: carries out the decided [`Action`]s against the hub and nothing
//! else. Objects are server-side applied with one field manager; status and finalizer changes
//! are merge patches guarded by the resourceVersion, so a concurrent agent write is never lost
//! (a conflict fails the action and the controller decides again from the newer object).
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::decide::Action;
use super::rbac;
use ocm_api::addon::{ManagedClusterAddOn, PRE_DELETE_HOOK_FINALIZER};
use ocm_api::cluster::{
    CLUSTER_CLEANUP_FINALIZER, CLUSTER_LEASE_NAME, CLUSTER_NAME_LABEL,
    HUB_ACCEPTED_MANAGED_CLUSTER, HUB_DENIED_MANAGED_CLUSTER, MANAGED_CLUSTER_CONDITION_AVAILABLE,
    MANAGED_CLUSTER_CONDITION_CLOCK_SYNCED, ManagedCluster,
};
use ocm_api::conditions::{self, Condition};
use ocm_api::names::reserved_namespace;
use ocm_api::work::ManifestWork;

/// `HubAcceptedManagedCluster=False` reason when the cluster's namespace is not its to have.
pub const NAMESPACE_CONFLICT: &str = "ClusterNamespaceConflict";

/// How often accepting a cluster re-applies the shared ClusterRoles.
const SHARED_ROLES_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// Field manager of the hub controller's writes.
pub const FIELD_MANAGER: &str = "clusteradm-registration-hub";

/// Applies actions to the hub.
#[derive(Clone)]
pub struct Writer {
    client: Client,
    /// When the ClusterRoles every cluster's bindings share were last applied: at most once a
    /// [`SHARED_ROLES_EVERY`] rather than once per accepted cluster (2,000 writes fewer when
    /// 1,000 clusters are accepted), yet restored soon if someone deletes them.
    shared_roles_applied: std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

impl Writer {
    /// A writer with `client`.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self {
            client,
            shared_roles_applied: std::sync::Arc::default(),
        }
    }

    /// Carries out one action.
    pub async fn apply(&self, action: &Action) -> Result<(), Error> {
        match action {
            Action::Accept(c) => self.accept(c).await,
            Action::Deny(c) => self.deny(c).await,
            Action::Cleanup(c) => self.cleanup(c, Works::Wait).await,
            Action::Unregister(c) => self.cleanup(c, Works::Leave).await,
            Action::Approve(csr, c) => {
                tracing::info!(cluster = %c, csr = %csr, "approving the agent's certificate renewal");
                ocm_runtime::apply::approve::approve_csr(
                    &self.client,
                    csr,
                    "AutoApprovedByHubCSRApprovingController",
                    "Auto approving Managed cluster agent certificate after SubjectAccessReview.",
                )
                .await
                .map_err(Error::from)
            }
            Action::AutoApprove(csr, c) => {
                tracing::info!(cluster = %c, csr = %csr, "managed cluster is auto approved");
                ocm_runtime::apply::approve::approve_csr(
                    &self.client,
                    csr,
                    "AutoApprovedByHubCSRApprovingController",
                    "Auto approving Managed cluster agent certificate: its requester is approved automatically (ManagedClusterAutoApproval).",
                )
                .await
                .map_err(Error::from)
            }
            Action::AutoAccept(c) => self.auto_accept(c).await.map_err(Error::from),
            Action::CreateLease(c) => self.create_lease(c).await,
            Action::FillDefaults(c, default_set) => self
                .fill_defaults(c, *default_set)
                .await
                .map_err(Error::from),
            Action::SetClockSynced(c, synced) => {
                let (status, reason, message) = if *synced {
                    (
                        conditions::TRUE,
                        "ManagedClusterClockSynced",
                        "The clock of the managed cluster is synced with the hub.",
                    )
                } else {
                    tracing::warn!(cluster = %c, "the agent's clock is out of sync with the hub's");
                    (
                        conditions::FALSE,
                        "ManagedClusterClockOutOfSync",
                        "The clock of hub and agent is out of sync. This may cause the Unknown status and affect agent functionalities.",
                    )
                };
                let synced = condition(
                    MANAGED_CLUSTER_CONDITION_CLOCK_SYNCED,
                    status,
                    reason,
                    message,
                );
                self.set_conditions(c, vec![synced], &[])
                    .await
                    .map_err(Error::from)
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
                .map_err(Error::from)
            }
        }
    }

    async fn accept(&self, cluster: &str) -> Result<(), Error> {
        let grant = rbac::grant(cluster);
        if let Err(why) = claim_namespace(&self.client, cluster, &grant.namespace).await? {
            let refused = condition(
                HUB_ACCEPTED_MANAGED_CLUSTER,
                conditions::FALSE,
                NAMESPACE_CONFLICT,
                &format!("Not accepted: namespace {cluster} cannot be this cluster's: {why}"),
            );
            self.set_conditions(cluster, vec![refused], &[]).await?;
            return Err(Error::NamespaceTaken {
                cluster: cluster.to_string(),
                why,
            });
        }
        self.ensure_shared_roles().await?;
        // What lives in the namespace needs it; the rest is independent: one round trip.
        let cluster_wide = async {
            self.ssa(
                Api::<ClusterRole>::all(self.client.clone()),
                &grant.cluster_role,
            )
            .await?;
            self.ssa(
                Api::<ClusterRoleBinding>::all(self.client.clone()),
                &grant.cluster_role_binding,
            )
            .await
            .map_err(Error::from)
        };
        let bindings = futures::future::try_join_all(
            grant.role_bindings.iter().map(|b| self.bind(cluster, b)),
        );
        futures::future::try_join(cluster_wide, bindings).await?;
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

    /// Creates the cluster's lease as upstream's hub does: holder `managed-cluster-lease`, renewed
    /// now; an existing one is left to its agent.
    async fn create_lease(&self, cluster: &str) -> Result<(), Error> {
        let lease: Lease = serde_json::from_value(json!({
            "metadata": {"name": CLUSTER_LEASE_NAME, "namespace": cluster,
                         "labels": {CLUSTER_NAME_LABEL: cluster}},
            "spec": {"holderIdentity": CLUSTER_LEASE_NAME,
                     "renewTime": MicroTime(k8s_openapi::jiff::Timestamp::now())},
        }))
        .map_err(kube::Error::SerdeError)?;
        match Api::<Lease>::namespaced(self.client.clone(), cluster)
            .create(&PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Upstream's deny: the cluster role shrinks to reading its own ManagedCluster, the agents'
    /// RoleBindings go (the work one stays while the cluster still has works, so its agent can
    /// remove what they applied), and `HubAcceptedManagedCluster=False`.
    async fn deny(&self, cluster: &str) -> Result<(), Error> {
        if reserved_namespace(cluster).is_some() {
            return Ok(()); // never accepted, so nothing was granted (and its role names are shared)
        }
        self.ssa(
            Api::<ClusterRole>::all(self.client.clone()),
            &rbac::cluster_role(cluster, false),
        )
        .await?;
        self.remove_role_bindings(cluster, Works::Keep).await?;
        let denied = condition(
            HUB_ACCEPTED_MANAGED_CLUSTER,
            conditions::FALSE,
            "HubClusterAdminDenied",
            "Denied by hub cluster admin",
        );
        self.set_conditions(cluster, vec![denied], &[]).await?;
        tracing::info!(cluster, "denied: RBAC revoked");
        Ok(())
    }

    /// The cluster is being deleted: its works are deleted (the work agent, still bound, removes
    /// what they applied), then its RBAC and namespace; then its finalizer.
    async fn cleanup(&self, cluster: &str, works: Works) -> Result<(), Error> {
        if reserved_namespace(cluster).is_some() {
            // Never accepted: nothing of its own to remove — and its namespace and role names
            // belong to others, so nothing there is touched.
            return self
                .set_finalizer(cluster, false)
                .await
                .map_err(Error::from);
        }
        if works == Works::Wait {
            // Add-ons first, while the namespace and the agents' access last: an add-on's
            // pre-delete hook runs as a work there before the add-on lets go.
            self.remove_addons(cluster).await?;
            match Api::<ManifestWork>::namespaced(self.client.clone(), cluster)
                .delete_collection(&DeleteParams::default(), &ListParams::default())
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(e.into()),
            }
        }
        if works == Works::Leave {
            // The works may stay for good: the cluster's own access goes now, as upstream's.
            self.remove_cluster_role(cluster).await?;
        }
        self.remove_role_bindings(cluster, works).await?;
        self.remove_cluster_role(cluster).await?;
        let dp = DeleteParams::default();
        if works == Works::Leave {
            // Upstream's hub without `ResourceCleanup`: what the cluster's namespace holds is
            // the user's to delete.
            self.set_finalizer(cluster, false).await?;
            tracing::info!(
                cluster,
                "deleted: RBAC removed; its namespace and add-ons are left (ResourceCleanup is off)"
            );
            return Ok(());
        }
        if self.namespace_is_for(cluster).await?.is_ok() {
            ignore_404(
                Api::<Namespace>::all(self.client.clone())
                    .delete(cluster, &dp)
                    .await,
            )?;
        }
        self.set_finalizer(cluster, false).await?;
        tracing::info!(cluster, "deleted: namespace and RBAC removed");
        Ok(())
    }

    /// Deletes the cluster's ClusterRole and its binding.
    async fn remove_cluster_role(&self, cluster: &str) -> Result<(), Error> {
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
        )
    }

    /// Whether namespace `cluster` is (or may become) the cluster's own: not a system namespace,
    /// and either absent or labelled with the cluster's name — one made for something else is
    /// never taken over, nor deleted with the cluster.
    async fn namespace_is_for(&self, cluster: &str) -> Result<Result<(), String>, Error> {
        if let Some(why) = reserved_namespace(cluster) {
            return Ok(Err(why.to_string()));
        }
        let existing = Api::<Namespace>::all(self.client.clone())
            .get_opt(cluster)
            .await?;
        Ok(match existing {
            Some(ns)
                if ns.labels().get(CLUSTER_NAME_LABEL).map(String::as_str) != Some(cluster) =>
            {
                Err(format!(
                    "it exists and is not labelled {CLUSTER_NAME_LABEL}={cluster}"
                ))
            }
            _ => Ok(()),
        })
    }

    /// What `clean` does in place of the controller when none runs: the cluster's RBAC goes
    /// first, so no agent acts on what follows (its works are then released, not cleaned up).
    pub async fn release(&self, cluster: &str) -> Result<(), Error> {
        self.cleanup(cluster, Works::Ignore).await
    }

    /// Deletes the agents' RoleBindings. The work binding is upstream's way of keeping the work
    /// agent's access while the cluster's ManifestWorks remain: per `works`, it is kept (deny),
    /// left deleting until they are gone (cleanup, with or without `ResourceCleanup`), or
    /// removed regardless (`clean`).
    async fn remove_role_bindings(&self, cluster: &str, works: Works) -> Result<(), Error> {
        let bindings: Api<RoleBinding> = Api::namespaced(self.client.clone(), cluster);
        let dp = DeleteParams::default();
        ignore_404(
            bindings
                .delete(&rbac::registration_name(cluster), &dp)
                .await,
        )?;
        let work = rbac::work_name(cluster);
        // `clean` removes the binding whatever is left, so it need not look.
        if works != Works::Ignore && self.has_works(cluster).await? {
            if matches!(works, Works::Wait | Works::Leave) {
                ignore_404(bindings.delete(&work, &dp).await)?;
                return Err(if works == Works::Wait {
                    Error::WorksRemain(cluster.to_string())
                } else {
                    Error::WorksLeft(cluster.to_string())
                });
            }
            return Ok(()); // Keep
        }
        if let Some(binding) = bindings.get_opt(&work).await? {
            let mut finalizers = binding.metadata.finalizers.clone().unwrap_or_default();
            if finalizers.iter().any(|f| f == rbac::WORK_BINDING_FINALIZER) {
                finalizers.retain(|f| f != rbac::WORK_BINDING_FINALIZER);
                let patch = json!({"metadata": {"resourceVersion": binding.metadata.resource_version, "finalizers": finalizers}});
                ignore_404(
                    bindings
                        .patch(&work, &PatchParams::default(), &Patch::Merge(patch))
                        .await,
                )?;
            }
        }
        ignore_404(bindings.delete(&work, &dp).await)
    }

    /// Deletes the cluster's ManagedClusterAddOns; fails while any is still there (held by its
    /// pre-delete hook).
    async fn remove_addons(&self, cluster: &str) -> Result<(), Error> {
        let addons: Api<ManagedClusterAddOn> = Api::namespaced(self.client.clone(), cluster);
        let listed = match addons.list_metadata(&ListParams::default()).await {
            Ok(list) => list.items,
            // No add-on API: nothing to wait for.
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        // One by one, as upstream's hub does, which its RBAC (`delete`, no `deletecollection`)
        // allows.
        let mut held = Vec::new();
        for addon in &listed {
            let name = addon.name_any();
            if addon.metadata.deletion_timestamp.is_none() {
                ignore_404(addons.delete(&name, &DeleteParams::default()).await)?;
            }
            if !addon.finalizers().is_empty() {
                held.push(name);
            }
        }
        if held.is_empty() {
            return Ok(());
        }
        Err(Error::AddonsRemain {
            cluster: cluster.to_string(),
            addons: held.join(", "),
        })
    }

    /// Whether any ManifestWork is left in the cluster's namespace.
    async fn has_works(&self, cluster: &str) -> Result<bool, kube::Error> {
        match Api::<ManifestWork>::namespaced(self.client.clone(), cluster)
            .list_metadata(&ListParams::default().limit(1))
            .await
        {
            Ok(list) => Ok(!list.items.is_empty()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn ensure_shared_roles(&self) -> Result<(), kube::Error> {
        let fresh =
            |at: &Option<std::time::Instant>| at.is_some_and(|t| t.elapsed() < SHARED_ROLES_EVERY);
        if fresh(&self.shared_roles_applied.lock().expect("not poisoned")) {
            return Ok(());
        }
        let api = Api::<ClusterRole>::all(self.client.clone());
        let roles = rbac::shared_cluster_roles();
        futures::future::try_join_all(roles.iter().map(|r| self.ssa(api.clone(), r))).await?;
        *self.shared_roles_applied.lock().expect("not poisoned") = Some(std::time::Instant::now());
        Ok(())
    }

    /// Applies one of the cluster's RoleBindings. A binding from an earlier version referred to
    /// a namespaced Role: a roleRef cannot change, so it is replaced (and that Role removed).
    async fn bind(&self, cluster: &str, binding: &RoleBinding) -> Result<(), Error> {
        let bindings: Api<RoleBinding> = Api::namespaced(self.client.clone(), cluster);
        match self.ssa(bindings.clone(), binding).await {
            Err(kube::Error::Api(s)) if s.code == 422 => {
                let name = binding.metadata.name.clone().unwrap_or_default();
                ignore_404(bindings.delete(&name, &DeleteParams::default()).await)?;
                ignore_404(
                    Api::<Role>::namespaced(self.client.clone(), cluster)
                        .delete(&name, &DeleteParams::default())
                        .await,
                )?;
                Ok(self.ssa(bindings, binding).await?)
            }
            other => Ok(other?),
        }
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
    /// Accepts the cluster and marks it accepted automatically, as upstream's
    /// `ManagedClusterAutoApproval` does.
    async fn auto_accept(&self, cluster: &str) -> Result<(), kube::Error> {
        tracing::info!(
            cluster,
            "accepting the cluster (ManagedClusterAutoApproval)"
        );
        let now = k8s_openapi::jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        let patch = json!({
            "metadata": {"annotations": {super::decide::AUTO_ACCEPTED_ANNOTATION: now}},
            "spec": {"hubAcceptsClient": true},
        });
        Api::<ManagedCluster>::all(self.client.clone())
            .patch(cluster, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map(|_| ())
    }

    /// Re-reads the cluster (the patch is guarded by the resourceVersion it was decided on
    /// being current) and fills in the defaults.
    async fn fill_defaults(&self, cluster: &str, default_set: bool) -> Result<(), kube::Error> {
        let api: Api<ManagedCluster> = Api::all(self.client.clone());
        let Some(mc) = api.get_opt(cluster).await? else {
            return Ok(());
        };
        let now = k8s_openapi::jiff::Timestamp::now();
        let Some(patch) = super::defaults::patch(&mc, now, default_set) else {
            return Ok(());
        };
        tracing::info!(
            cluster,
            "filling in the default cluster set and taint times"
        );
        api.patch(cluster, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map(|_| ())
    }

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
    conditions::new(
        type_,
        status,
        reason,
        message,
        &Time(k8s_openapi::jiff::Timestamp::now()),
    )
}

fn ignore_404<T>(result: Result<T, kube::Error>) -> Result<(), Error> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// What becomes of the work agent's access while a cluster's ManifestWorks remain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Works {
    /// Denied: keep it, so the agent can still remove what the works applied.
    Keep,
    /// Deleted: delete the works, and wait until the agent has removed them.
    Wait,
    /// Deleted with `ResourceCleanup` off: leave the works, and wait until someone deletes them.
    Leave,
    /// `clean` without controllers: remove it anyway (the works are released, not cleaned up).
    Ignore,
}

/// Makes namespace `cluster` the cluster's. It is created, conditionally: when it exists
/// already (`AlreadyExists`) it is the cluster's only if labelled so (then applied), and else —
/// a system namespace, one made for something else, also one made by someone else a moment
/// before — left alone with the reason. There is no look-then-apply, so no window in which a
/// namespace made by another could be taken over by a server-side apply.
pub async fn claim_namespace(
    client: &Client,
    cluster: &str,
    namespace: &Namespace,
) -> Result<Result<(), String>, kube::Error> {
    if let Some(why) = reserved_namespace(cluster) {
        return Ok(Err(why.to_string()));
    }
    let api = Api::<Namespace>::all(client.clone());
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    match api.create(&params, namespace).await {
        Ok(_) => return Ok(Ok(())),
        Err(kube::Error::Api(s)) if s.is_already_exists() => {}
        Err(e) => return Err(e),
    }
    let existing = api.get(cluster).await?;
    if existing
        .labels()
        .get(CLUSTER_NAME_LABEL)
        .map(String::as_str)
        != Some(cluster)
    {
        return Ok(Err(format!(
            "it exists and is not labelled {CLUSTER_NAME_LABEL}={cluster}"
        )));
    }
    api.patch(
        cluster,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(namespace),
    )
    .await?;
    Ok(Ok(()))
}

/// Why an action did not finish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request failed.
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// The cluster's namespace is not the cluster's to have.
    #[error("not accepting cluster {cluster}: namespace {cluster} cannot be its own: {why}")]
    NamespaceTaken {
        /// The cluster.
        cluster: String,
        /// Why not.
        why: String,
    },
    /// The cluster's ManifestWorks are still being removed by its work agent: try again later.
    #[error("ManifestWorks remain in namespace {0}: waiting for the work agent to remove them")]
    WorksRemain(String),
    /// `ResourceCleanup` is off and the deleted cluster's ManifestWorks remain: the user's to
    /// delete, as upstream's hub leaves them.
    #[error(
        "ManifestWorks remain in namespace {0} and ResourceCleanup is off: delete them to finish deleting the cluster"
    )]
    WorksLeft(String),
    /// The cluster's add-ons are still running their pre-delete hooks: try again later.
    #[error(
        "add-ons {addons} of cluster {cluster} are running their pre-delete hooks; to skip them, \
         remove the finalizer {PRE_DELETE_HOOK_FINALIZER} from each"
    )]
    AddonsRemain {
        /// The cluster.
        cluster: String,
        /// The add-ons, comma-separated.
        addons: String,
    },
}

impl Error {
    /// The API's status code, if the server answered.
    #[must_use]
    pub fn code(&self) -> Option<u16> {
        match self {
            Self::Kube(kube::Error::Api(s)) => Some(s.code),
            _ => None,
        }
    }
}

/// How often a deleted cluster's add-ons are looked at while their pre-delete hooks run.
const ADDON_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

impl ocm_runtime::controller::Failure for Error {
    fn retry(&self) -> ocm_runtime::controller::Retry {
        match self {
            // Waiting on hooks, not failing: looked at again soon, without growing the backoff.
            Self::AddonsRemain { .. } => ocm_runtime::controller::Retry::After(ADDON_WAIT),
            _ => ocm_runtime::controller::Retry::Backoff,
        }
    }
}
