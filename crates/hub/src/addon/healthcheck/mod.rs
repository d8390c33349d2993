//! Add-on health from the cluster's, as upstream's ManagedClusterAddonHealthCheckController
//! (registration-controller) judges it: the cluster's agent reports its add-ons' health, so when
//! the cluster's `ManagedClusterConditionAvailable` is Unknown (its agent stopped renewing the
//! cluster lease) every ManagedClusterAddOn of the cluster gets `Available` Unknown, with the
//! cluster condition's reason and message. True or False says the agent works: it is left to the
//! agent then. Woken by the cluster only, as upstream.
//!
//! It runs on the add-on controllers' `per_cluster` skeleton, which hands it each
//! cluster with its add-ons; the reconcile reads what else it needs (here), [`decide`] says
//! which add-ons change, and the [`writer`] is the only place that writes.
pub mod decide;
pub mod writer;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::{Action, Controller};
use kube::{Client, ResourceExt as _};

use super::per_cluster::{self, PerCluster};
use ocm_api::addon::ManagedClusterAddOn;
use ocm_api::cluster::ManagedCluster;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use writer::Error;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on health check";
/// How soon an add-on that changed while being written is written again.
const RETRY: Duration = Duration::from_secs(1);

/// The controller over `informers`' clusters and add-ons, running until `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let (clusters, cluster_events) = informers.feed::<ManagedCluster>();
    let controller = Controller::for_shared_stream(cluster_events, clusters.clone());
    let runner = Runner::new(CONTROLLER, controller);
    let check = HealthCheck { client: hub };
    per_cluster::run(runner, &clusters, informers.store(), check, shutdown)
}

struct HealthCheck {
    client: Client,
}

impl PerCluster for HealthCheck {
    type Error = Error;

    async fn reconcile(
        &self,
        cluster: &ManagedCluster,
        addons: Vec<Arc<ManagedClusterAddOn>>,
    ) -> Result<Action, Error> {
        let updates = decide::decide(cluster, &addons, &Time(Timestamp::now()));
        Ok(
            if writer::mark_unknown(&self.client, &cluster.name_any(), &updates).await? {
                Action::requeue(RETRY)
            } else {
                Action::await_change()
            },
        )
    }
}
