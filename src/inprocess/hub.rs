//! The hub in this process: the ClusterManager operator and the hub controllers, under the
//! operator's Lease so a second process waits rather than reconciles beside this one. Either
//! loop failing stops the other: a hub half running is worse than one that says it stopped.
use kube::Client;

use crate::hub::registration;
use crate::operator::cluster_manager::{self as operator, InProcess};
use crate::runtime::Shutdown;
use crate::runtime::lease;

/// `init --in-process`: the operator (deploying nothing that runs here) and the hub controllers,
/// until `shutdown` is cancelled. `waiting` is told who holds the Lease if another process does.
pub async fn run(
    client: Client,
    shutdown: Shutdown,
    waiting: impl FnOnce(&str),
) -> anyhow::Result<()> {
    let lock = operator::lease_lock(client.clone());
    lease::lead(lock, shutdown, waiting, move |token| async move {
        let controllers = {
            let token = token.clone();
            let client = client.clone();
            async move {
                let result = registration::run(client, token.clone()).await;
                token.cancel();
                result.map_err(|e| e.context("the hub registration controller stopped"))
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
