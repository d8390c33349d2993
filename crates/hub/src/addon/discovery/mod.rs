//! Add-on feature labels, as upstream's AddOnFeatureDiscoveryController (registration-controller)
//! keeps them: each ManagedCluster carries `feature.open-cluster-management.io/addon-<name>` for
//! every add-on on it, `available` when its `Available` condition is True, `unhealthy` when False,
//! `unreachable` when Unknown or missing; the label of an add-on gone or being deleted is removed.
//! Placements select clusters by these labels.
//!
//! A cluster being deleted, or without an availability condition yet, is left as it is. Woken by
//! the cluster and by each of its add-ons (their deletions too).
//!
//! The reconcile reads the stores (here), [`decide`] says which labels change, and the [`writer`]
//! is the only place that writes.
pub mod decide;
pub mod writer;

use std::sync::Arc;

use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};

use ocm_api::addon::ManagedClusterAddOn;
use ocm_api::cluster::ManagedCluster;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use writer::Error;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on feature discovery";

struct Context {
    client: Client,
    addons: Store<ManagedClusterAddOn>,
}

/// The controller over `informers`' clusters and add-ons (deleted ones too), running until
/// `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    // Deleted add-ons too: their labels go.
    let addon_events = futures::stream::select(
        informers.changes::<ManagedClusterAddOn>(),
        informers.deletions::<ManagedClusterAddOn>(),
    );
    let (clusters, cluster_events) = informers.feed::<ManagedCluster>();
    let addons = informers.store::<ManagedClusterAddOn>();
    let ctx = Arc::new(Context {
        client: hub,
        addons: addons.clone(),
    });
    let controller = Controller::for_shared_stream(cluster_events, clusters.clone())
        .watches_shared_stream(addon_events, |a| {
            a.namespace().map(|ns| ObjectRef::new(&ns))
        });
    // Decide only from complete stores.
    let run = Runner::new(CONTROLLER, controller)
        .after(&clusters)
        .after(&addons)
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

async fn reconcile(cluster: Arc<ManagedCluster>, ctx: Arc<Context>) -> Result<Action, Error> {
    let name = cluster.name_any();
    let addons = ctx.addons.state();
    let mine: Vec<&ManagedClusterAddOn> = addons
        .iter()
        .filter(|a| a.namespace().as_deref() == Some(name.as_str()))
        .map(AsRef::as_ref)
        .collect();
    if let Some(labels) = decide::decide(&cluster, &mine) {
        writer::label(&ctx.client, &cluster, &labels).await?;
    }
    Ok(Action::await_change())
}
