//! Add-on health from the cluster's, as upstream's ManagedClusterAddonHealthCheckController
//! (registration-controller) judges it: the cluster's agent reports its add-ons' health, so when
//! the cluster's `ManagedClusterConditionAvailable` is Unknown (its agent stopped renewing the
//! cluster lease) every ManagedClusterAddOn of the cluster gets `Available` Unknown, with the
//! cluster condition's reason and message. True or False says the agent works: it is left to the
//! agent then. Woken by the cluster only, as upstream.
//!
//! The reconcile reads the stores (here), [`decide`] says which add-ons change, and the
//! [`writer`] is the only place that writes.
pub mod decide;
pub mod writer;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::Store;
use kube::{Client, ResourceExt as _};

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

struct Context {
    client: Client,
    addons: Store<ManagedClusterAddOn>,
}

/// The controller over `informers`' clusters and add-ons, running until `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let (clusters, cluster_events) = informers.feed::<ManagedCluster>();
    let addons = informers.store::<ManagedClusterAddOn>();
    let ctx = Arc::new(Context {
        client: hub,
        addons: addons.clone(),
    });
    let controller = Controller::for_shared_stream(cluster_events, clusters.clone());
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
    let addons: Vec<Arc<ManagedClusterAddOn>> = ctx
        .addons
        .state()
        .into_iter()
        .filter(|a| a.namespace().as_deref() == Some(name.as_str()))
        .collect();
    let updates = decide::decide(&cluster, &addons, &Time(Timestamp::now()));
    Ok(
        if writer::mark_unknown(&ctx.client, &name, &updates).await? {
            Action::requeue(RETRY)
        } else {
            Action::await_change()
        },
    )
}
