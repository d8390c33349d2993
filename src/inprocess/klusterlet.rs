//! The klusterlet in this process: the registration and work agents of one cluster, and the
//! Klusterlet operator under its Lease (it leaves out the Deployments of the agents that run
//! here, so no agent ever runs twice).
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use kube::Client;

use crate::agent;
use crate::agent::gates::Gates;
use crate::agent::registration::hubs::HubList;
use crate::api::operator::KLUSTERLET_NAME;
use crate::operator::klusterlet::{self as operator, AgentHost, InProcess, Options};
use crate::runtime::Shutdown;
use crate::runtime::lease;

/// What the in-process klusterlet needs.
#[derive(Clone)]
pub struct Config {
    /// Client of the managed cluster.
    pub managed: Client,
    /// The CA `managed` trusts its API server with (PEM), for the client configs the agents
    /// report.
    pub managed_ca: Option<Vec<u8>>,
    /// The cluster name the agents register under.
    pub cluster_name: String,
    /// The namespace holding the bootstrap kubeconfig secret (and the hub kubeconfig secret).
    pub agent_namespace: String,
    /// Bound on each deletion when a Klusterlet is removed.
    pub cleanup_timeout: Duration,
    /// The operator's `--enable-sync-labels`.
    pub sync_labels: bool,
    /// The Klusterlet's feature gates the agents act on (the operator restarts them with the
    /// Klusterlet's when those differ, as it does for the settings below).
    pub gates: Gates,
    /// The Klusterlet's registration settings.
    pub registration: agent::registration::settings::Settings,
    /// The Klusterlet's work settings.
    pub work: agent::work::Settings,
}

/// `join --in-process`: the agents and the operator until `shutdown` is cancelled. `waiting` is
/// told who holds the operator Lease if another process does (the agents run meanwhile). Every
/// other Klusterlet the operator reconciles gets its agents in this process too ([`Host`]).
pub async fn run(
    config: Config,
    shutdown: Shutdown,
    waiting: impl FnOnce(&str),
) -> anyhow::Result<()> {
    // One token for all: the operator stopping (its Lease lost, say) stops the agents too.
    let token = shutdown.child_token();
    let own = token.child_token();
    let host = Arc::new(Host::new(
        config.managed.clone(),
        config.managed_ca.clone(),
        token.clone(),
    ));
    // The agents of join's own Klusterlet run here, awaited: the operator finds them running.
    host.adopt(
        KLUSTERLET_NAME,
        Served {
            cluster: config.cluster_name.clone(),
            namespace: config.agent_namespace.clone(),
            gates: config.gates,
            hubs: None,
            work: config.work,
            registration: config.registration.clone(),
        },
        own.clone(),
    );
    let agents = agents(
        Agents {
            gates: config.gates,
            managed_ca: config.managed_ca.clone(),
            registration: config.registration.clone(),
            work: config.work,
            ..Agents::in_process(
                config.managed.clone(),
                config.cluster_name.clone(),
                config.agent_namespace.clone(),
            )
        },
        own,
    );
    let opts = hosting(
        Options {
            cleanup_timeout: config.cleanup_timeout,
            sync_labels: config.sync_labels,
            ..Options::default()
        },
        host,
    );
    let operator = async {
        let result = run_operator(config.managed, opts, token.clone(), waiting).await;
        token.cancel();
        result
    };
    let (agents, operator) = tokio::join!(agents, operator);
    agents?;
    operator
}

/// Where a cluster's agents act and what they run besides registration and work.
pub struct Agents {
    /// Client of the managed cluster.
    pub managed: Client,
    /// Client of the cluster holding the agents' secrets: the managed cluster, or in Hosted mode
    /// the management cluster the agents run on.
    pub management: Client,
    /// The cluster's name on the hub.
    pub cluster: String,
    /// The namespace of the bootstrap and hub kubeconfig secrets.
    pub namespace: String,
    /// Run the example add-on's agent here too (the in-process modes; a pod leaves it to the
    /// add-on's Deployment).
    pub example_agents: bool,
    /// The Klusterlet's feature gates they act on.
    pub gates: Gates,
    /// `MultipleHubs`: the hubs to choose from.
    pub hubs: Option<HubList>,
    /// The Klusterlet's work settings.
    pub work: agent::work::Settings,
    /// The Klusterlet's registration settings.
    pub registration: agent::registration::settings::Settings,
    /// The CA that `managed`'s API server is trusted with, for the ManagedCluster's client
    /// configs.
    pub managed_ca: Option<Vec<u8>>,
    /// Which agents run: both (Singleton modes and in-process), or one of upstream's Default-mode
    /// pair.
    pub components: Components,
}

/// Which of the klusterlet's agents a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Components {
    /// Registration (with add-on registration) and work: upstream's Singleton agent.
    All,
    /// The registration agent with add-on registration: upstream's `<k>-registration-agent`.
    Registration,
    /// The work agent: upstream's `<k>-work-agent`.
    Work,
}

impl Components {
    fn registration(self) -> bool {
        self != Self::Work
    }

    fn work(self) -> bool {
        self != Self::Registration
    }
}

impl Agents {
    /// The agents of `cluster` acting on `managed`, which also holds their secrets, with the
    /// example add-on's agent: what `join --in-process` runs.
    #[must_use]
    pub fn in_process(managed: Client, cluster: String, namespace: String) -> Self {
        Self {
            management: managed.clone(),
            managed,
            cluster,
            namespace,
            example_agents: true,
            gates: Gates::default(),
            hubs: None,
            work: agent::work::Settings::default(),
            registration: agent::registration::settings::Settings::default(),
            managed_ca: None,
            components: Components::All,
        }
    }
}

/// The registration and work agents (with add-on registration) of `agents.cluster` until `token`
/// is cancelled.
pub async fn agents(agents: Agents, token: Shutdown) -> anyhow::Result<()> {
    let Agents {
        managed,
        management,
        cluster,
        namespace,
        example_agents,
        gates,
        hubs,
        work,
        registration: settings,
        managed_ca,
        components,
    } = agents;
    // A Klusterlet without a cluster name: the name the agent stored, or a new one.
    let cluster = if cluster.is_empty() {
        agent::registration::cluster_name::stored_or_new(
            &management,
            &namespace,
            crate::api::names::HUB_KUBECONFIG_SECRET,
        )
        .await
        .map_err(|e| anyhow::anyhow!(e).context("reading the stored cluster name"))?
    } else {
        cluster
    };
    let mut registration = agent::registration::AgentOptions::new(managed.clone(), cluster.clone());
    registration.management = management.clone();
    registration.namespace.clone_from(&namespace);
    registration.gates = gates;
    registration.hubs = hubs;
    registration.settings = settings;
    registration.managed_ca = managed_ca;
    let supervised = agent::work::supervisor::Supervised {
        managed,
        management,
        namespace,
        cluster,
        applied_names: agent::work::AppliedNames::PerHub,
        addons: components.registration(),
        work_agent: components.work(),
        example_agents,
        // The add-ons' certificates are kept as the cluster's own.
        gates,
        work,
        addon_renewal: agent::registration::rotate::Renewal {
            expiration_seconds: registration.settings.cert_expiration_seconds,
            threshold: registration.rotation_threshold,
        },
        addon_auth: registration.settings.addon_auth,
    };
    let supervisor = agent::work::supervisor::run(supervised, token.clone());
    if !components.registration() {
        supervisor.await;
        return Ok(());
    }
    let (registration, ()) =
        tokio::join!(agent::registration::run(registration, token), supervisor);
    registration.map_err(|e| e.context("the registration agent stopped"))
}

pub use operator::Served;

/// The Klusterlets whose agents run in this process.
pub struct Host {
    managed: Client,
    managed_ca: Option<Vec<u8>>,
    parent: Shutdown,
    running: Mutex<HashMap<String, (Served, Shutdown)>>,
}

impl Host {
    fn new(managed: Client, managed_ca: Option<Vec<u8>>, parent: Shutdown) -> Self {
        Self {
            managed,
            managed_ca,
            parent,
            running: Mutex::default(),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Served, Shutdown)>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records agents the caller runs itself, stopped by `token`.
    fn adopt(&self, name: &str, served: Served, token: Shutdown) {
        self.running().insert(name.to_owned(), (served, token));
    }
}

impl AgentHost for Host {
    fn ensure(&self, name: &str, served: &Served) {
        let mut running = self.running();
        if running.get(name).is_some_and(|(s, _)| s == served) {
            return;
        }
        if let Some((_, old)) = running.remove(name) {
            old.cancel();
        }
        // Two Klusterlets naming one cluster and namespace: one set of agents serves both (two
        // would fight over one credential), with the gates of the one that started them.
        if running
            .values()
            .any(|(s, _)| (&s.cluster, &s.namespace) == (&served.cluster, &served.namespace))
        {
            return;
        }
        let Served {
            cluster,
            namespace,
            gates,
            hubs,
            work,
            registration,
        } = served;
        let token = self.parent.child_token();
        tracing::info!(
            klusterlet = name,
            cluster,
            namespace,
            "starting the Klusterlet's agents in this process"
        );
        let run = Box::pin(agents(
            Agents {
                gates: *gates,
                hubs: hubs.clone(),
                work: *work,
                registration: registration.clone(),
                managed_ca: self.managed_ca.clone(),
                ..Agents::in_process(self.managed.clone(), cluster.clone(), namespace.clone())
            },
            token.clone(),
        ));
        let klusterlet = name.to_owned();
        tokio::spawn(async move {
            if let Err(e) = run.await {
                tracing::error!(%klusterlet, "in-process agents stopped: {e:#}");
            }
        });
        running.insert(name.to_owned(), (served.clone(), token));
    }

    fn stop(&self, name: &str) {
        if let Some((_, token)) = self.running().remove(name) {
            tracing::info!(
                klusterlet = name,
                "stopping the Klusterlet's agents in this process"
            );
            token.cancel();
        }
    }
}

/// The operator's options when `host` runs every Klusterlet's agents: it deploys none.
fn hosting(mut opts: Options, host: Arc<Host>) -> Options {
    opts.in_process = InProcess {
        registration: true,
        work: true,
    };
    opts.agents = Some(host);
    opts
}

/// `clusteradm operator klusterlet --in-process`: the operator with every Klusterlet's agents in
/// this process (none of its own, unlike `join --in-process`), until `shutdown` is cancelled.
/// `managed_ca` is the CA `client` trusts its API server with (PEM).
pub async fn run_operator_hosting(
    client: Client,
    managed_ca: Option<Vec<u8>>,
    opts: Options,
    shutdown: Shutdown,
    waiting: impl FnOnce(&str),
) -> anyhow::Result<()> {
    let token = shutdown.child_token();
    let host = Arc::new(Host::new(client.clone(), managed_ca, token.clone()));
    let result = run_operator(client, hosting(opts, host), token.clone(), waiting).await;
    // The agents stop with the operator.
    token.cancel();
    result
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
