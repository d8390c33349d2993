//! The klusterlet in this process: the registration and work agents of one cluster, and the
//! Klusterlet operator under its Lease (it leaves out the Deployments of the agents that run
//! here, so no agent ever runs twice).
use std::time::Duration;

use kube::Client;

use crate::agent;
use crate::operator::klusterlet::{self as operator, InProcess, Options};
use crate::runtime::Shutdown;
use crate::runtime::lease;

/// What the in-process klusterlet needs.
#[derive(Clone)]
pub struct Config {
    /// Client of the managed cluster.
    pub managed: Client,
    /// The cluster name the agents register under.
    pub cluster_name: String,
    /// The namespace holding the bootstrap kubeconfig secret (and the hub kubeconfig secret).
    pub agent_namespace: String,
    /// Bound on each deletion when a Klusterlet is removed.
    pub cleanup_timeout: Duration,
}

/// `join --in-process`: the agents and the operator until `shutdown` is cancelled. `waiting` is
/// told who holds the operator Lease if another process does (the agents run meanwhile).
pub async fn run(
    config: Config,
    shutdown: Shutdown,
    waiting: impl FnOnce(&str),
) -> anyhow::Result<()> {
    let mut registration =
        agent::registration::AgentOptions::new(config.managed.clone(), config.cluster_name.clone());
    registration.namespace.clone_from(&config.agent_namespace);
    // One token for both: the operator stopping (its Lease lost, say) stops the agents too.
    let token = shutdown.child_token();
    let agents = {
        let token = token.clone();
        let supervised = agent::work::supervisor::Supervised {
            managed: config.managed.clone(),
            namespace: config.agent_namespace.clone(),
            cluster: config.cluster_name.clone(),
            applied_names: agent::work::AppliedNames::PerHub,
            addons: true,
            // The add-ons' certificates are kept as the cluster's own.
            addon_renewal: agent::registration::rotate::Renewal {
                expiration_seconds: registration.cert_expiration_seconds,
                threshold: registration.rotation_threshold,
            },
        };
        let supervisor = agent::work::supervisor::run(supervised, token.clone());
        async move {
            let (registration, ()) =
                tokio::join!(agent::registration::run(registration, token), supervisor);
            registration.map_err(|e| e.context("the registration agent stopped"))
        }
    };
    let opts = Options {
        in_process: InProcess {
            registration: true,
            work: true,
        },
        cleanup_timeout: config.cleanup_timeout,
    };
    let operator = async {
        let result = run_operator(config.managed, opts, token.clone(), waiting).await;
        token.cancel();
        result
    };
    let (agents, operator) = tokio::join!(agents, operator);
    agents?;
    operator
}

/// `clusteradm operator klusterlet`: the operator alone, until `shutdown` is cancelled.
pub async fn run_operator(
    client: Client,
    opts: Options,
    shutdown: Shutdown,
    waiting: impl FnOnce(&str),
) -> anyhow::Result<()> {
    let lock = operator::lease_lock(client.clone());
    lease::lead(lock, shutdown, waiting, move |token| {
        operator::run(client, opts, token)
    })
    .await
}
