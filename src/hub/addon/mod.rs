//! The hub's add-on controllers, run by `init --in-process` over one watch of
//! ManagedClusterAddOns and one of ClusterManagementAddOns:
//! - [`registration`]: approves add-on agents' CSRs, only for identities their add-on registered,
//!   and signs those of its template's custom signers ([`signer`]);
//! - [`manager`]: owns each ManagedClusterAddOn by its add-on and deploys template add-ons
//!   ([`template`], [`deploy`]), judges their health ([`probe`]) and runs their pre-delete hooks
//!   ([`hook`]);
//! - [`install`]: the `Placements` install strategy, and the [`rollout`] of config changes by
//!   each placement's `rolloutStrategy`;
//! - [`annotation`]: a cluster's add-on annotations carried over to its add-ons;
//! - [`discovery`]: each cluster labelled with its add-ons' health, and [`healthcheck`]: a
//!   cluster whose agent went silent makes its add-ons' health unknown (upstream runs these two
//!   in its registration-controller; here they share the add-on watch);
//! - the conversion webhook between the add-on API's versions ([`crate::hub::conversion`]).
pub mod annotation;
pub mod config;
pub mod deploy;
pub mod discovery;
pub mod healthcheck;
pub mod hook;
pub mod hosting;
pub mod install;
pub mod manager;
pub mod probe;
pub mod registration;
pub mod rollout;
pub mod signer;
pub mod template;

use std::sync::Arc;

use kube::Client;
use kube::runtime::reflector;
use kube::runtime::watcher;

use crate::api::addon::{
    AddOnDeploymentConfig, AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn,
};
use crate::hub::clusters::SharedClusters;
use crate::hub::watch::{self, Fanout};
use crate::runtime::Shutdown;

/// Runs the add-on controllers until `shutdown` is cancelled (each returns then; the conversion
/// webhook first sets the CRDs back) or one of them fails. Subscribes to `clusters` now: run the
/// shared watch after calling this.
pub fn run_with(
    hub: Client,
    webhook: crate::hub::conversion::Webhook,
    clusters: &SharedClusters,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let cluster_store = clusters.store();
    let (_, for_annotations) = clusters.subscribe();
    let cluster_deletions = clusters.deletions();
    let (_, for_discovery) = clusters.subscribe();
    let (_, for_healthcheck) = clusters.subscribe();
    async move {
        // Deleted add-ons too: the feature discovery removes their labels.
        let (addons, addon_writer) = reflector::store();
        let (addon_fanout, addon_deletions) = (
            Arc::new(Fanout::<ManagedClusterAddOn>::default()),
            Arc::new(Fanout::<ManagedClusterAddOn>::default()),
        );
        let addon_watch = watch::publishing_with_deletions(
            &hub,
            watcher::Config::default(),
            addon_writer,
            addon_fanout.clone(),
            addon_deletions.clone(),
        );
        let (cmas, cma_fanout, cma_watch) =
            watch::fanned::<ClusterManagementAddOn>(&hub, watcher::Config::default());
        let (templates, template_fanout, template_watch) =
            watch::fanned::<AddOnTemplate>(&hub, watcher::Config::default());
        let (configs, config_fanout, config_watch) =
            watch::fanned::<AddOnDeploymentConfig>(&hub, watcher::Config::default());
        let registration = registration::run_with(
            hub.clone(),
            cluster_store.clone(),
            addons.clone(),
            addon_fanout.subscribe(),
            (cmas.clone(), templates.clone()),
            shutdown.clone(),
        );
        let manager = manager::run_with(
            hub.clone(),
            cluster_store.clone(),
            (addons.clone(), addon_fanout.subscribe()),
            (cmas.clone(), cma_fanout.subscribe()),
            (templates.clone(), template_fanout.subscribe()),
            (configs.clone(), config_fanout.subscribe()),
            shutdown.clone(),
        );
        let annotations = annotation::run_with(
            hub.clone(),
            cluster_store.clone(),
            (for_annotations, cluster_deletions),
            (addons.clone(), addon_fanout.subscribe()),
            cmas.clone(),
            shutdown.clone(),
        );
        let discovery = discovery::run_with(
            hub.clone(),
            cluster_store.clone(),
            for_discovery,
            addons.clone(),
            futures::stream::select(addon_fanout.subscribe(), addon_deletions.subscribe()),
            shutdown.clone(),
        );
        let healthcheck = healthcheck::run_with(
            hub.clone(),
            cluster_store.clone(),
            for_healthcheck,
            addons.clone(),
            shutdown.clone(),
        );
        let hub_for_conversion = hub.clone();
        let install = install::run_with(
            hub,
            cluster_store,
            (addons, addon_fanout.subscribe()),
            (cmas, cma_fanout.subscribe()),
            (templates, template_fanout.subscribe()),
            (configs, config_fanout.subscribe()),
            shutdown.clone(),
        );
        let conversion = crate::hub::conversion::run(hub_for_conversion, webhook, shutdown.clone());
        let watches = async {
            tokio::join!(addon_watch, cma_watch, template_watch, config_watch);
        };
        let cluster_controllers =
            async { tokio::try_join!(annotations, discovery, healthcheck).map(|_| ()) };
        tokio::select! {
            r = async {
                tokio::try_join!(registration, manager, install, conversion, cluster_controllers)
            } => r.map(|_| ()),
            () = watches => Ok(()),
        }
    }
}
