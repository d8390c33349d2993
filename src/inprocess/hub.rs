//! The hub in this process: the ClusterManager operator and the hub controllers, under the
//! operator's Lease so a second process waits rather than reconciles beside this one. Either
//! loop failing stops the other: a hub half running is worse than one that says it stopped.
use futures::FutureExt as _;
use kube::Client;

use crate::hub::clusters::SharedClusters;
use crate::hub::conversion::Webhook;
use crate::hub::{addon, clustersets, placement, registration, replicaset};
use crate::operator::cluster_manager::{self as operator, InProcess};
use crate::runtime::Shutdown;
use crate::runtime::lease;

/// `init --in-process`: the operator (deploying nothing that runs here) and the hub controllers,
/// until `shutdown` is cancelled. `waiting` is told who holds the Lease if another process does.
pub async fn run(
    client: Client,
    url: http::Uri,
    shutdown: Shutdown,
    waiting: impl FnOnce(&str),
) -> anyhow::Result<()> {
    let lock = operator::lease_lock(client.clone());
    lease::lead(lock, shutdown, waiting, move |token| async move {
        let controllers = {
            let token = token.clone();
            let client = client.clone();
            async move {
                let result = controllers(client, Webhook::Leader(url), token.clone()).await;
                token.cancel();
                result
            }
        };
        let operator = {
            let token = token.clone();
            async move {
                let result = operator::run(client, InProcess::HUB_CONTROLLERS, token.clone()).await;
                token.cancel();
                result
            }
        };
        let (controllers, operator) = tokio::join!(controllers, operator);
        controllers?;
        operator
    })
    .await
}

/// The hub controllers (registration, cluster sets and their managed namespaces, placement,
/// replica sets, add-on registration) over one shared ManagedCluster watch, until
/// `shutdown` is cancelled.
///
/// `webhook` says who serves the add-on conversion webhook: this process while it leads (on the
/// address it reaches the API server from), or the hub pods behind their Service.
pub async fn controllers(
    client: Client,
    webhook: Webhook,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let clusters = SharedClusters::new();
    let (store, events) = clusters.subscribe();
    // One controller stopping stops the others: a hub half running is worse than one stopped.
    let stop_all = |result: anyhow::Result<()>| {
        shutdown.cancel();
        result
    };
    let registration = Box::pin(registration::run_with(
        client.clone(),
        store,
        events,
        shutdown.clone(),
    ))
    .map(stop_all);
    let (store, events) = clusters.subscribe();
    // Placement must also hear of deletions, which the subscription leaves out.
    let events = futures::stream::select(events, clusters.deletions());
    let placement = Box::pin(placement::run_with(
        client.clone(),
        store,
        events,
        shutdown.clone(),
    ))
    .map(stop_all);
    let (store, events) = clusters.subscribe();
    let (_, namespace_events) = clusters.subscribe();
    let sets = clustersets::run_with(
        client.clone(),
        store,
        events,
        namespace_events,
        shutdown.clone(),
    )
    .map(stop_all);
    let replicasets = Box::pin(replicaset::run(client.clone(), shutdown.clone())).map(stop_all);
    let addons = Box::pin(addon::run_with(
        client.clone(),
        webhook,
        &clusters,
        shutdown.clone(),
    ))
    .map(stop_all);
    let watch = Box::pin(clusters.run(client, shutdown.clone()));
    let (registration, sets, placement, replicasets, addons, ()) =
        tokio::join!(registration, sets, placement, replicasets, addons, watch);
    registration.map_err(|e| e.context("the hub registration controller stopped"))?;
    placement.map_err(|e| e.context("the placement controller stopped"))?;
    replicasets.map_err(|e| e.context("the ManifestWorkReplicaSet controller stopped"))?;
    addons.map_err(|e| e.context("the add-on registration controller stopped"))?;
    sets.map_err(|e| e.context("the hub cluster-set controllers stopped"))
}

/// `clusteradm operator hub`: the operator alone, deploying every hub component, until
/// `shutdown` is cancelled.
pub async fn run_operator(
    client: Client,
    shutdown: Shutdown,
    waiting: impl FnOnce(&str),
) -> anyhow::Result<()> {
    let lock = operator::lease_lock(client.clone());
    lease::lead(lock, shutdown, waiting, move |token| {
        operator::run(client, InProcess::NOTHING, token)
    })
    .await
}
