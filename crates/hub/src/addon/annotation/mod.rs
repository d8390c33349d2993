//! Add-on annotations of a ManagedCluster carried over to its add-ons, as upstream's
//! addon-annotation controller (addon-manager) does: every annotation whose key starts with
//! [`PREFIX`](decide::PREFIX) (`addon.open-cluster-management.io`, e.g.
//! `…/hosting-cluster-name`) is set on each ManagedClusterAddOn of the cluster whose add-on is
//! installed by an install strategy (`Placements`, not `Manual`), and one the cluster no longer
//! has is removed from them. Hosted add-ons read where their agent runs from these annotations.
//!
//! As upstream, only a change of the cluster's add-on annotations wakes it: not a cluster first
//! seen (the install controller copies them when it creates an add-on,
//! [`decide::cluster_annotations`]), not an add-on changing.
//!
//! It runs on the add-on controllers' `per_cluster` skeleton, which hands it each
//! cluster with its add-ons; the reconcile reads what else it needs (here), [`decide`] says
//! which annotations change, and the [`writer`] is the only place that writes.
pub mod decide;
pub mod writer;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};

use super::per_cluster::{self, PerCluster};
use decide::cluster_annotations;
use ocm_api::addon::{ClusterManagementAddOn, ManagedClusterAddOn};
use ocm_api::cluster::ManagedCluster;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use writer::Error;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on annotation controller";
/// How soon an add-on that changed while being written is written again.
const RETRY: Duration = Duration::from_secs(1);

/// The controller over `informers`' clusters (deleted ones too), add-ons and
/// ClusterManagementAddOns, running until `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    gate: ocm_runtime::controller::Gate,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let clusters = informers.store::<ManagedCluster>();
    // Woken by a change of a cluster's add-on annotations, as upstream's update handler compares
    // the old cluster with the new.
    let events = informers.changes_of(cluster_annotations);
    let (addons, addon_events) = informers.feed::<ManagedClusterAddOn>();
    let cmas = informers.store::<ClusterManagementAddOn>();
    // Also an add-on's cluster when the add-on is first seen (a deviation from upstream, which
    // wakes on cluster changes only): one created from a cluster store that had not yet seen the
    // cluster's new annotations would otherwise keep the old ones until the next change. Not on
    // every change of an add-on: upstream strips prefixed annotations the cluster lacks only when
    // the cluster changes, and so does this.
    let mut known = std::collections::HashSet::new();
    let created = addon_events.filter(move |a| {
        std::future::ready(a.metadata.uid.clone().is_some_and(|uid| known.insert(uid)))
    });
    let controller = Controller::for_shared_stream(events, clusters.clone())
        .watches_shared_stream(created, |a| a.namespace().map(|ns| ObjectRef::new(&ns)));
    let runner = Runner::new(CONTROLLER, controller).gated(gate).after(&cmas);
    let annotations = Annotations { client: hub, cmas };
    per_cluster::run(runner, &clusters, addons, annotations, shutdown)
}

struct Annotations {
    client: Client,
    cmas: Store<ClusterManagementAddOn>,
}

impl PerCluster for Annotations {
    type Error = Error;

    async fn reconcile(
        &self,
        cluster: &ManagedCluster,
        addons: Vec<Arc<ManagedClusterAddOn>>,
    ) -> Result<Action, Error> {
        let patches = decide::decide(cluster, &addons, |addon| {
            self.cmas.get(&ObjectRef::new(addon))
        });
        // Each guarded by the version read: the removals were decided from it.
        let patches: Vec<_> = patches
            .into_iter()
            .filter_map(|(addon, annotations)| {
                let found = addons.iter().find(|a| a.name_any() == addon)?;
                Some((found.as_ref(), annotations))
            })
            .collect();
        let again = writer::annotate(&self.client, &cluster.name_any(), &patches).await?;
        Ok(if again {
            Action::requeue(RETRY)
        } else {
            Action::await_change()
        })
    }
}
