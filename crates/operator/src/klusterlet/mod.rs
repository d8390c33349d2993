//! The Klusterlet operator loop: installs and watches over the agents of a managed cluster.
//!
//! A kube-runtime Controller on Klusterlets ([`controller`]) runs the pipeline observe
//! ([`observe`]) → validate ([`validate`], pure) → build ([`desired`], pure, a typed `Desired`) →
//! apply ([`apply`], the shared apply engine, one `Applier` per cluster kept across reconciles) →
//! status ([`status`]: Applied, HubConnectionDegraded, RegistrationDesiredDegraded,
//! WorkDesiredDegraded, Available, each with observedGeneration). A finalizer runs [`cleanup()`](fn@cleanup) on
//! deletion. Whoever runs the loop holds the Lease [`LEASE_NAME`] meanwhile (leader election), so
//! `unjoin` knows whether anyone will act on the finalizer ([`is_running`]); [`uninstall()`](fn@uninstall) is what
//! `unjoin` calls. It runs as `clusteradm operator klusterlet`, or inside `join --in-process`
//! beside the agents (`clusteradm`'s `inprocess::klusterlet`).
pub mod apply;
pub mod aws_irsa;
pub mod cleanup;
pub mod controller;
pub mod desired;
pub mod hosted_finalizer;
pub mod layout;
pub mod managed_kubeconfig;
pub mod observe;
pub mod status;
pub mod validate;

use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::Deployment;
use kube::Client;
use kube::api::Api;
use kube::runtime::wait::await_condition;

pub use cleanup::cleanup;
pub use controller::{Error, run};

use ocm_api::conditions::{self, APPLIED};
use ocm_api::names::{KLUSTERLET_OPERATOR, OPERATOR_NAMESPACE};
use ocm_api::operator::{KLUSTERLET_FINALIZER, KLUSTERLET_HOSTED_FINALIZER, Klusterlet};
use ocm_runtime::lease::{self, LeaseLock};
use ocm_runtime::uninstall::{self, Outcome, Removal};

/// The Lease whoever runs the loop holds (leader election and liveness).
pub const LEASE_NAME: &str = "klusterlet-operator";

/// Every Secret the operator reads or writes, by name (upstream's names): its ClusterRole grants
/// Secrets only by these (and `create`, which names nothing), as upstream's does, and the
/// controller watches each by name. The bootstrap and hub kubeconfigs, the user's managed-cluster
/// kubeconfig of the Hosted modes and the agents' own made from it, and the image pull secret.
pub const SECRETS: &[&str] = &[
    ocm_api::names::BOOTSTRAP_SECRET,
    ocm_api::names::HUB_KUBECONFIG_SECRET,
    ocm_api::names::EXTERNAL_MANAGED_SECRET,
    "external-managed-kubeconfig-registration",
    "external-managed-kubeconfig-work",
    "external-managed-kubeconfig-agent",
    ocm_api::names::IMAGE_PULL_SECRET,
];

/// The Lease of the klusterlet operator on `client`'s cluster, held as this process.
#[must_use]
pub fn lease_lock(client: Client) -> LeaseLock {
    LeaseLock::new(client, OPERATOR_NAMESPACE, LEASE_NAME)
}

/// Whether a klusterlet operator runs against this cluster: its Lease is fresh, or the operator
/// Deployment has an available pod (an upstream image does not hold our Lease). Errors are
/// errors: a 403 must not read as "not running".
pub async fn is_running(client: &Client) -> Result<bool, kube::Error> {
    if lease::is_held(client, OPERATOR_NAMESPACE, LEASE_NAME).await? {
        return Ok(true);
    }
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    Ok(deployments
        .get_opt(KLUSTERLET_OPERATOR)
        .await?
        .and_then(|d| d.status)
        .and_then(|s| s.available_replicas)
        .is_some_and(|n| n > 0))
}

/// Removes the Klusterlet `name`: the operator's cleanup runs behind its finalizer when an
/// operator is running, and here otherwise (also when the Klusterlet is already gone, to remove
/// what is left); waits, bounded by `timeout`, until it is gone.
pub async fn uninstall(
    client: &Client,
    name: &str,
    operator_running: bool,
    timeout: Duration,
) -> anyhow::Result<Outcome> {
    let removal = Removal {
        api: Api::<Klusterlet>::all(client.clone()),
        name,
        operator_running,
        finalizers: &[KLUSTERLET_FINALIZER, KLUSTERLET_HOSTED_FINALIZER],
        timeout,
    };
    uninstall::remove(removal, |k| async move {
        cleanup::remove_objects(client, name, k.as_ref(), timeout).await
    })
    .await
}

/// Which agents run inside this process rather than as Deployments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InProcess {
    /// The registration agent runs here.
    pub registration: bool,
    /// The work agent runs here.
    pub work: bool,
}

/// Runs Klusterlets' agents in this process, for an operator whose agents are in-process: the
/// composition root (`inprocess::klusterlet`) provides it, so every Klusterlet the
/// operator reconciles — not only the one `join` made — gets agents, as Deployments would.
pub trait AgentHost: Send + Sync {
    /// Makes the agents of Klusterlet `name` run as `served` says; a no-op while they already do.
    fn ensure(&self, name: &str, served: &Served);
    /// Stops the agents of Klusterlet `name`, if any run.
    fn stop(&self, name: &str);
}

/// Which cluster, with secrets in which namespace and with which gates, a Klusterlet's agents
/// serve: agents serving otherwise are restarted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The cluster's name on the hub.
    pub cluster: String,
    /// The namespace of their secrets.
    pub namespace: String,
    /// The feature gates they act on.
    pub gates: ocm_agent::gates::Gates,
    /// `MultipleHubs`: the hubs they choose from.
    pub hubs: Option<ocm_agent::registration::hubs::HubList>,
    /// The Klusterlet's work settings.
    pub work: ocm_agent::work::Settings,
    /// The Klusterlet's registration settings.
    pub registration: ocm_agent::registration::settings::Settings,
}

/// How the loop runs.
#[derive(Clone)]
pub struct Options {
    /// Agents that run in this process (no Deployment for them).
    pub in_process: InProcess,
    /// Bound on each deletion during cleanup.
    pub cleanup_timeout: Duration,
    /// Where in-process agents are started (none: the caller runs them itself).
    pub agents: Option<std::sync::Arc<dyn AgentHost>>,
    /// `--enable-sync-labels`: the Klusterlet's labels go onto everything it makes
    /// ([`crate::sync_labels`]).
    pub sync_labels: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            in_process: InProcess::default(),
            cleanup_timeout: Duration::from_secs(120),
            agents: None,
            sync_labels: false,
        }
    }
}

/// Whether a Klusterlet reports Applied for its current generation.
#[must_use]
pub fn is_applied(k: &Klusterlet) -> bool {
    k.status.as_ref().is_some_and(|s| {
        conditions::find(&s.conditions, APPLIED).is_some_and(|c| {
            // Upstream's operator writes no observedGeneration on Applied, only on the status.
            let observed = c.observed_generation.or(s.observed_generation);
            c.status == conditions::TRUE
                && (observed.is_none() || observed == k.metadata.generation)
        })
    })
}

/// Waits until the Klusterlet `name` reports Applied, bounded by `timeout`.
pub async fn wait_applied(client: Client, name: &str, timeout: Duration) -> anyhow::Result<()> {
    let api: Api<Klusterlet> = Api::all(client);
    tokio::time::timeout(timeout, await_condition(api, name, |k: Option<&Klusterlet>| k.is_some_and(is_applied)))
        .await
        .map_err(|_| {
            ocm_runtime::error::UserError::new(
                format!("the Klusterlet {name} did not report Applied within {timeout:?}"),
                "is the klusterlet operator running? check `kubectl get klusterlet -o yaml` and the open-cluster-management namespace",
            )
        })?
        .with_context(|| format!("watching Klusterlet {name}"))?;
    Ok(())
}
