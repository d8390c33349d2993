//! The hub's add-on controllers, run by `init --in-process` over one watch of
//! ManagedClusterAddOns and one of ClusterManagementAddOns:
//! - [`registration`]: approves add-on agents' CSRs, only for identities their add-on registered,
//!   and signs those of its template's custom signers ([`signer`]);
//! - [`manager`]: owns each ManagedClusterAddOn by its add-on and deploys template add-ons
//!   ([`template`], [`deploy`]), judges their health ([`probe`]) and runs their pre-delete hooks
//!   ([`hook`]);
//! - [`install`]: the `Placements` install strategy, and the [`rollout`] of config changes by
//!   each placement's `rolloutStrategy`;
//! - the conversion webhook between the add-on API's versions ([`crate::hub::conversion`]).
pub mod config;
pub mod deploy;
pub mod hook;
pub mod install;
pub mod manager;
pub mod probe;
pub mod registration;
pub mod rollout;
pub mod signer;
pub mod template;

use kube::Client;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;

use crate::api::addon::{
    AddOnDeploymentConfig, AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn,
};
use crate::api::cluster::ManagedCluster;
use crate::hub::watch;
use crate::runtime::Shutdown;

/// Runs the add-on controllers until `shutdown` is cancelled (each returns then; the conversion
/// webhook first sets the CRDs back) or one of them fails.
pub async fn run_with(
    hub: Client,
    url: http::Uri,
    clusters: Store<ManagedCluster>,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let (addons, addon_fanout, addon_watch) =
        watch::fanned::<ManagedClusterAddOn>(&hub, watcher::Config::default());
    let (cmas, cma_fanout, cma_watch) =
        watch::fanned::<ClusterManagementAddOn>(&hub, watcher::Config::default());
    let (templates, template_fanout, template_watch) =
        watch::fanned::<AddOnTemplate>(&hub, watcher::Config::default());
    let (configs, config_fanout, config_watch) =
        watch::fanned::<AddOnDeploymentConfig>(&hub, watcher::Config::default());
    let registration = registration::run_with(
        hub.clone(),
        clusters.clone(),
        addons.clone(),
        addon_fanout.subscribe(),
        (cmas.clone(), templates.clone()),
        shutdown.clone(),
    );
    let manager = manager::run_with(
        hub.clone(),
        clusters,
        (addons.clone(), addon_fanout.subscribe()),
        (cmas.clone(), cma_fanout.subscribe()),
        (templates.clone(), template_fanout.subscribe()),
        (configs.clone(), config_fanout.subscribe()),
        shutdown.clone(),
    );
    let hub_for_conversion = hub.clone();
    let install = install::run_with(
        hub,
        (addons, addon_fanout.subscribe()),
        (cmas, cma_fanout.subscribe()),
        (templates, template_fanout.subscribe()),
        (configs, config_fanout.subscribe()),
        shutdown.clone(),
    );
    let conversion = crate::hub::conversion::run(hub_for_conversion, url, shutdown.clone());
    let watches = async {
        tokio::join!(addon_watch, cma_watch, template_watch, config_watch);
    };
    tokio::select! {
        r = async { tokio::try_join!(registration, manager, install, conversion) } => r.map(|_| ()),
        () = watches => Ok(()),
    }
}
