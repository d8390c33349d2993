//! The hub in this process: the ClusterManager operator and the hub controllers, under the
//! operator's Lease so a second process waits rather than reconciles beside this one. Either
//! loop failing stops the other: a hub half running is worse than one that says it stopped.
use futures::future::BoxFuture;
use kube::Client;

use crate::hub::webhook::{self, Webhook};
use crate::hub::{
    addon, cluster_profiles, clustersets, completed_works, placement, registration, replicaset,
};
use crate::operator::cluster_manager::{self as operator, InProcess};
use crate::runtime::Shutdown;
use crate::runtime::informers::Informers;
use crate::runtime::lease;

/// `init --in-process`: the operator (deploying nothing that runs here) and the hub controllers,
/// until `shutdown` is cancelled. `waiting` is told who holds the Lease if another process does.
/// `sync_labels`: the operator's `--enable-sync-labels`.
pub async fn run(
    client: Client,
    url: http::Uri,
    sync_labels: bool,
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
                let result = operator::run(
                    client,
                    operator::Options {
                        in_process: InProcess::HUB_CONTROLLERS,
                        sync_labels,
                    },
                    token.clone(),
                )
                .await;
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
/// replica sets, add-ons, ClusterProfiles, completed works) over one shared watch per kind ([`Informers`]), until
/// `shutdown` is
/// cancelled.
///
/// `webhook` says who serves the hub's webhooks (add-on conversion, admission): this process
/// while it leads (on the address it reaches the API server from), or the hub pods behind their
/// Service.
pub async fn controllers(
    client: Client,
    webhook: Webhook,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let informers = Informers::new(client.clone());
    // The ClusterManager's settings, read once for the webhooks and the registration controller:
    // a hub pod's reviewer watches them already; in-process, the shared informers do.
    let settings = match &webhook {
        Webhook::Service(settings) => settings.clone(),
        Webhook::Leader(_) => crate::hub::settings::from_informers(&informers, shutdown.clone()),
    };
    let (c, i) = (&client, &informers);
    let controllers: Vec<(&'static str, BoxFuture<'static, anyhow::Result<()>>)> = vec![
        (
            "hub registration controller",
            Box::pin(registration::run_with(
                c.clone(),
                i,
                settings.clone(),
                shutdown.clone(),
            )),
        ),
        (
            "placement controller",
            Box::pin(placement::run_with(c.clone(), i, shutdown.clone())),
        ),
        (
            "hub cluster-set controllers",
            Box::pin(clustersets::run_with(
                c.clone(),
                i,
                settings.clone(),
                shutdown.clone(),
            )),
        ),
        (
            "ManifestWorkReplicaSet controller",
            Box::pin(replicaset::run_with(
                c.clone(),
                i,
                &settings,
                shutdown.clone(),
            )),
        ),
        (
            "add-on controllers",
            Box::pin(addon::run_with(c.clone(), i, &settings, shutdown.clone())),
        ),
        (
            "ClusterProfile controller",
            Box::pin(cluster_profiles::run_with(
                c.clone(),
                i,
                settings.clone(),
                shutdown.clone(),
            )),
        ),
        (
            "completed-work controller",
            Box::pin(completed_works::run_with(
                c.clone(),
                i,
                settings.clone(),
                shutdown.clone(),
            )),
        ),
        (
            "hub webhooks",
            Box::pin(webhook::run(
                client.clone(),
                webhook,
                settings,
                shutdown.clone(),
            )),
        ),
    ];
    let running = futures::future::join_all(
        controllers
            .into_iter()
            .map(|(name, controller)| stopping_all(name, controller, shutdown.clone())),
    );
    // Every controller has taken what it reads: the watches start now.
    let watches = informers.run(shutdown.clone());
    let (results, ()) = tokio::join!(running, watches);
    // The first failure, in the order above.
    results
        .into_iter()
        .collect::<anyhow::Result<Vec<()>>>()
        .map(drop)
}

/// Runs `controller` (boxed: the hub joins them all, and each is large), then stops the others: a hub half running is worse than one stopped.
async fn stopping_all(
    name: &str,
    controller: impl Future<Output = anyhow::Result<()>>,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let result = controller.await;
    shutdown.cancel();
    result.map_err(|e| e.context(format!("the {name} stopped")))
}

/// `clusteradm operator hub`: the operator alone, deploying every hub component, until
/// `shutdown` is cancelled.
pub async fn run_operator(
    client: Client,
    sync_labels: bool,
    shutdown: Shutdown,
    waiting: impl FnOnce(&str),
) -> anyhow::Result<()> {
    let lock = operator::lease_lock(client.clone());
    lease::lead(lock, shutdown, waiting, move |token| {
        operator::run(
            client,
            operator::Options {
                in_process: InProcess::NOTHING,
                sync_labels,
            },
            token,
        )
    })
    .await
}
