//! Hook: the registration and work agents, run inside this process (`join --in-process`).
//!
//! The agents live in their own modules (`crate::registration`, `crate::work`).
//! [`start_in_process`] is the one place `join --in-process` starts them; the operator leaves
//! the Deployments of the agents started here out, so no agent ever runs twice.
use kube::Client;
use tokio::sync::watch;

use super::InProcess;

/// What the in-process agents need.
#[derive(Clone)]
pub struct AgentsConfig {
    /// Client of the managed cluster.
    pub managed: Client,
    /// The Klusterlet the agents belong to.
    pub klusterlet_name: String,
    /// The cluster name they register under.
    pub cluster_name: String,
    /// The namespace holding the bootstrap kubeconfig secret.
    pub agent_namespace: String,
}

/// Starts the agents `which` asks for in this process; they stop when `stop` turns true.
/// Returns the agents actually started.
#[must_use]
pub fn start_in_process(
    config: &AgentsConfig,
    which: InProcess,
    stop: &watch::Receiver<bool>,
) -> InProcess {
    let mut started = InProcess::default();
    if which.registration {
        let mut opts = crate::registration::agent::AgentOptions::new(
            config.managed.clone(),
            config.cluster_name.clone(),
        );
        opts.namespace.clone_from(&config.agent_namespace);
        let cluster = config.cluster_name.clone();
        let stopped = stopped(stop);
        tokio::spawn(async move {
            if let Err(err) = crate::registration::agent::run(opts, stopped).await {
                tracing::error!(%cluster, "registration agent stopped: {err:#}");
            }
        });
        started.registration = true;
    }
    if which.work {
        started.work = start_work_agent(config, stop);
    }
    started
}

/// A future that completes when `stop` turns true (or its sender is gone).
fn stopped(stop: &watch::Receiver<bool>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let mut stop = stop.clone();
    async move {
        let _ = stop.wait_for(|s| *s).await;
    }
}

fn start_work_agent(config: &AgentsConfig, stop: &watch::Receiver<bool>) -> bool {
    tokio::spawn(super::work_supervisor::run(
        config.managed.clone(),
        config.agent_namespace.clone(),
        config.cluster_name.clone(),
        stop.clone(),
    ));
    true
}
