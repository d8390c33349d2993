//! The hub's add-on controllers, run by `init --in-process` over the hub's shared watches
//! ([`ocm_runtime::informers`]):
//! - [`registration`]: approves add-on agents' CSRs, only for identities their add-on registered,
//!   and signs those of its template's custom signers ([`template::signer`]);
//! - [`manager`]: owns each ManagedClusterAddOn by its add-on and deploys template add-ons
//!   ([`template`], [`manager::plan`]), judges their health ([`template::probe`]) and runs their
//!   pre-delete hooks ([`template::hook`]);
//! - [`install`]: the `Placements` install strategy, and the [`install::rollout`] of config
//!   changes by each placement's `rolloutStrategy`;
//! - [`annotation`]: a cluster's add-on annotations carried over to its add-ons;
//! - [`token`]: the ServiceAccount, Role and RoleBinding of an add-on whose agent registers with
//!   ServiceAccount tokens instead of certificates. The ClusterManager operator's process runs it,
//!   not the hub's (see the module);
//! - [`discovery`]: each cluster labelled with its add-ons' health, and [`healthcheck`]: a
//!   cluster whose agent went silent makes its add-ons' health unknown (upstream runs these two
//!   in its registration-controller; here they share the add-on watch);
//! - the conversion webhook between the add-on API's versions ([`crate::conversion`]) runs
//!   with the hub's other webhooks ([`crate::webhook`]).
//!
//! Each controller is a folder of the shape every hub controller has: `mod.rs` reads the shared
//! stores and runs it (`run_with`), `decide.rs` chooses what should change (pure, unit-tested)
//! and `writer.rs` is the only place that writes to the API server, taking plain objects. A
//! decide too long for one file is split beside it: the manager's into [`manager::plan`] (what
//! a template add-on should have), `manager::status` and `manager::bindings`; the install
//! controller's into [`install::decide`] and [`install::rollout`].
//!
//! [`annotation`], [`discovery`] and [`healthcheck`], which each look after one cluster's
//! add-ons, share one skeleton (`per_cluster.rs`, on [`ocm_runtime::controller::Runner`]): it
//! hands each cluster with its add-ons to the controller's reconcile.
//!
//! What a template add-on means is shared by the manager and registration and lives in
//! [`template`]: the template rendered for a cluster, the AddOnDeploymentConfig applied to it
//! ([`template::config`]), its deploy work ([`template::work`]), health probes, pre-delete hooks,
//! Hosted mode ([`template::hosting`]) and custom signers, all pure. [`owner_reference`] is here,
//! for every controller that owns what it makes.
pub mod annotation;
pub mod discovery;
pub mod healthcheck;
pub mod install;
pub mod manager;
mod per_cluster;
pub mod registration;
pub mod template;
pub mod token;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::{Client, ResourceExt as _};

use crate::settings::Watched;
use ocm_runtime::Shutdown;
use ocm_runtime::informers::Informers;

/// The add-on controllers over `informers`, running until `shutdown` is cancelled (each returns
/// then) or one of them fails.
///
/// The add-on manager's controllers act only while the ClusterManager's `AddonManagement` gate
/// is on (upstream's operator then runs no add-on manager); [`discovery`] and [`healthcheck`],
/// upstream's registration controller's, always do.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    settings: &Watched,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let gate = || settings.gate(|s| s.addon_management);
    let registration = registration::run_with(hub.clone(), informers, gate(), shutdown.clone());
    let manager = manager::run_with(hub.clone(), informers, gate(), shutdown.clone());
    let install = install::run_with(hub.clone(), informers, gate(), shutdown.clone());
    let annotations = annotation::run_with(hub.clone(), informers, gate(), shutdown.clone());
    let discovery = discovery::run_with(hub.clone(), informers, shutdown.clone());
    let healthcheck = healthcheck::run_with(hub, informers, shutdown);
    async move {
        tokio::try_join!(
            registration,
            manager,
            install,
            annotations,
            discovery,
            healthcheck
        )
        .map(|_| ())
    }
}

/// An owner reference to `owner`; a controlling one (`controller`, as Go's `NewControllerRef`
/// makes it, with `blockOwnerDeletion`) for what only the add-on controllers manage.
#[must_use]
pub fn owner_reference<K: kube::Resource<DynamicType = ()>>(
    owner: &K,
    controller: bool,
) -> OwnerReference {
    OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: owner.name_any(),
        uid: owner.uid().unwrap_or_default(),
        controller: controller.then_some(true),
        block_owner_deletion: controller.then_some(true),
    }
}

/// `client` acting as upstream's add-on manager's ServiceAccount
/// (`open-cluster-management-hub/addon-manager-controller-sa`), and that account's user name.
/// What upstream's add-on manager does as itself is done as it here: reading a template's signing
/// CA, and binding a template's hub permissions, which RBAC lets only a holder of those rights
/// grant. So a user grants that account what upstream documents, and the hub's own identity grants
/// nothing through a template.
#[must_use]
pub fn as_addon_manager(client: &Client) -> (Client, String) {
    use ocm_api::names::{ADDON_MANAGER_SA, HUB_NAMESPACE};
    let (user, _) = ocm_runtime::impersonate::service_account(HUB_NAMESPACE, ADDON_MANAGER_SA);
    (ocm_runtime::impersonate::as_user(client, &user, &[]), user)
}
