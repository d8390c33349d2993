//! Add-on feature labels, as upstream's AddOnFeatureDiscoveryController (registration-controller)
//! keeps them: each ManagedCluster carries `feature.open-cluster-management.io/addon-<name>` for
//! every add-on on it, `available` when its `Available` condition is True, `unhealthy` when False,
//! `unreachable` when Unknown or missing; the label of an add-on gone or being deleted is removed.
//! Placements select clusters by these labels.
//!
//! A cluster being deleted, or without an availability condition yet, is left as it is. Woken by
//! the cluster and by each of its add-ons (their deletions too).
//!
//! It runs on the add-on controllers' `per_cluster` skeleton, which hands it each
//! cluster with its add-ons; the reconcile reads what else it needs (here), [`decide`] says
//! which labels change, and the [`writer`] is the only place that writes.
pub mod decide;
pub mod writer;

use std::sync::Arc;

use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, ResourceExt as _};

use super::per_cluster::{self, PerCluster};
use ocm_api::addon::ManagedClusterAddOn;
use ocm_api::cluster::ManagedCluster;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use writer::Error;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on feature discovery";

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
    let controller = Controller::for_shared_stream(cluster_events, clusters.clone())
        .watches_shared_stream(addon_events, |a| {
            a.namespace().map(|ns| ObjectRef::new(&ns))
        });
    let runner = Runner::new(CONTROLLER, controller);
    let discovery = Discovery { client: hub };
    per_cluster::run(runner, &clusters, informers.store(), discovery, shutdown)
}

struct Discovery {
    client: Client,
}

impl PerCluster for Discovery {
    type Error = Error;

    async fn reconcile(
        &self,
        cluster: &ManagedCluster,
        addons: Vec<Arc<ManagedClusterAddOn>>,
    ) -> Result<Action, Error> {
        let addons: Vec<&ManagedClusterAddOn> = addons.iter().map(AsRef::as_ref).collect();
        if let Some(labels) = decide::decide(cluster, &addons) {
            writer::label(&self.client, cluster, &labels).await?;
        }
        Ok(Action::await_change())
    }
}
