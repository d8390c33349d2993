//! The registration agent: turns the bootstrap credential into a hub-signed client certificate
//! and keeps the cluster registered.
//!
//! One loop of two phases. **Bootstrap** ([`bootstrap`], [`csr`]): read `bootstrap-hub-kubeconfig`,
//! create the ManagedCluster if absent, send a CSR for `system:open-cluster-management:<c>:<agent>`,
//! watch it until signed, write `hub-kubeconfig-secret` ([`secret`]). Skipped when that secret
//! already holds a usable certificate for the same hub. **Joined** (`joined`): every lease
//! duration renew the lease ([`lease`]) and the ManagedCluster status ([`status`]); rotate the
//! certificate before it expires ([`rotate`]); keep the namespaces the cluster's sets ask for
//! ([`namespaces`]). What it reads of the managed cluster is [`observe`]; every write to either
//! cluster is in [`writer`]; the rest decides, without I/O where it can. The hub rejecting the certificate (401), the
//! bootstrap kubeconfig naming another hub, or the ManagedCluster vanishing send the loop back to
//! bootstrap; any other failure (hub down, 403 after a deny) is retried with a capped backoff.
//! With `MultipleHubs` ([`hubs`]) each pass first selects the hub, and the joined phase also ends
//! when that hub refuses the cluster or stays out of reach. Nothing on the managed cluster is ever
//! deleted.
pub mod bootstrap;
pub mod capacity;
pub mod cluster_name;
pub mod csr;
pub mod hubs;
mod joined;
pub mod lease;
pub mod namespaces;
pub mod observe;
pub mod rotate;
pub mod secret;
pub mod settings;
pub mod status;
pub mod writer;

use std::time::Duration;

use ocm_api::cluster::ClientConfig;
use ocm_runtime::{Backoff, Shutdown};

/// Field manager of everything the agent writes.
pub const FIELD_MANAGER: &str = "clusteradm-registration-agent";

/// How the agent runs.
#[derive(Clone)]
pub struct AgentOptions {
    /// Admin (or agent) client of the managed cluster.
    pub managed: kube::Client,
    /// Client of the cluster the agent runs on, which holds its secrets: the managed cluster
    /// itself, or in Hosted mode the management cluster.
    pub management: kube::Client,
    /// The cluster's name on the hub.
    pub cluster_name: String,
    /// Namespace of the agent's secrets on the managed cluster.
    pub namespace: String,
    /// Secret with the bootstrap kubeconfig (key `kubeconfig`).
    pub bootstrap_secret: String,
    /// Secret the agent writes its hub kubeconfig to.
    pub hub_secret: String,
    /// `spec.leaseDurationSeconds` of a ManagedCluster the agent creates (the hub default, 60 s,
    /// when `None`). The heartbeat follows the ManagedCluster's value.
    pub lease_duration_seconds: Option<i32>,
    /// The Klusterlet's registration settings.
    pub settings: settings::Settings,
    /// The CA the agent trusts the managed cluster's API server with, for the client configs
    /// of external servers that name none (upstream's agent uses its own, likewise).
    pub managed_ca: Option<Vec<u8>>,
    /// Rotate when less than this fraction of the certificate's lifetime remains (0.2).
    pub rotation_threshold: f64,
    /// How the hub reaches this cluster's apiserver (`spec.managedClusterClientConfigs`).
    pub client_config: Option<ClientConfig>,
    /// Cap of the retry backoff while the hub is unreachable.
    pub max_backoff: Duration,
    /// The Klusterlet's feature gates the agent acts on.
    pub gates: crate::gates::Gates,
    /// `MultipleHubs`: the hubs to choose from (their bootstrap secrets); `bootstrap_secret` is
    /// then the one selected.
    pub hubs: Option<hubs::HubList>,
}

impl AgentOptions {
    /// Options with upstream's defaults for cluster `cluster_name`.
    #[must_use]
    pub fn new(managed: kube::Client, cluster_name: impl Into<String>) -> Self {
        Self {
            management: managed.clone(),
            managed,
            cluster_name: cluster_name.into(),
            namespace: ocm_api::names::AGENT_NAMESPACE.into(),
            bootstrap_secret: ocm_api::names::BOOTSTRAP_SECRET.into(),
            hub_secret: ocm_api::names::HUB_KUBECONFIG_SECRET.into(),
            lease_duration_seconds: None,
            settings: settings::Settings::default(),
            managed_ca: None,
            rotation_threshold: rotate::DEFAULT_THRESHOLD,
            client_config: None,
            max_backoff: Duration::from_secs(30),
            gates: crate::gates::Gates::default(),
            hubs: None,
        }
    }
}

/// Why a phase of the agent stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bootstrap secret is missing or has no `kubeconfig`.
    #[error("secret {namespace}/{name} has no bootstrap kubeconfig (run `clusteradm join`)")]
    BootstrapMissing {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A stored kubeconfig could not be used.
    #[error("invalid kubeconfig in secret {secret}: {reason}")]
    InvalidKubeconfig {
        /// Which secret.
        secret: String,
        /// Why.
        reason: String,
    },
    /// The hub rejected the credential (401): back to bootstrap.
    #[error("the hub rejected the agent's credential (401 Unauthorized)")]
    Unauthorized,
    /// The CSR was denied or failed.
    #[error("CSR {name} was {outcome} by the hub")]
    CsrRefused {
        /// CSR name.
        name: String,
        /// `denied` or `failed`.
        outcome: &'static str,
    },
    /// An API call failed.
    #[error("{action}")]
    Kube {
        /// What was being done.
        action: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// The ManagedCluster is gone from the hub: register again.
    #[error("ManagedCluster {name} no longer exists on the hub")]
    ClusterMissing {
        /// Cluster name.
        name: String,
    },
    /// Something else (key generation, parsing a signed certificate).
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// Wraps a kube error, turning 401 into [`Error::Unauthorized`].
    pub fn kube(action: impl Into<String>, source: kube::Error) -> Self {
        if matches!(&source, kube::Error::Api(s) if s.code == 401) {
            return Self::Unauthorized;
        }
        Self::Kube {
            action: action.into(),
            source,
        }
    }
}

/// Runs the registration agent until `shutdown` is cancelled. Errors are retried, never
/// returned, except for options that can never work.
pub async fn run(opts: AgentOptions, shutdown: Shutdown) -> anyhow::Result<()> {
    anyhow::ensure!(
        opts.rotation_threshold > 0.0 && opts.rotation_threshold < 1.0,
        "rotation threshold {} must be between 0 and 1",
        opts.rotation_threshold
    );
    let mut backoff = Backoff::capped(opts.max_backoff);
    let mut force_bootstrap = false;
    loop {
        let result = tokio::select! {
            () = shutdown.cancelled() => break,
            r = session(&opts, &mut force_bootstrap, &shutdown) => r,
        };
        let delay = match result {
            Ok(joined::Exit::Shutdown) => break,
            Ok(joined::Exit::Rebootstrap(why)) => {
                tracing::info!(cluster = %opts.cluster_name, "bootstrapping again: {why}");
                force_bootstrap = true;
                backoff.reset();
                Duration::ZERO
            }
            Ok(joined::Exit::LeaveHub(why)) => {
                // The stored credential is reused if the same hub is selected again.
                tracing::warn!(cluster = %opts.cluster_name, "selecting a hub again: {why}");
                backoff.reset();
                Duration::ZERO
            }
            Err(Error::Unauthorized) => {
                tracing::warn!(cluster = %opts.cluster_name, "the hub rejected the credential; bootstrapping again");
                force_bootstrap = true;
                backoff.next_delay()
            }
            Err(e) => {
                let delay = backoff.next_delay();
                tracing::warn!(cluster = %opts.cluster_name, "registration: {}; retrying in {delay:?}", ocm_runtime::report::chain(&e));
                if let Error::BootstrapMissing { namespace, name } = &e {
                    // Whoever writes the secret (join, the operator, a copy) is not kept waiting
                    // for the backoff: its arrival starts the next pass.
                    tokio::select! {
                        () = shutdown.cancelled() => break,
                        () = bootstrap_written(&opts.management, namespace, name) => {}
                        () = tokio::time::sleep(delay) => {}
                    }
                    continue;
                }
                delay
            }
        };
        tokio::select! {
            () = shutdown.cancelled() => break,
            () = tokio::time::sleep(delay) => {}
        }
    }
    Ok(())
}

/// Returns once secret `namespace/name` holds a kubeconfig (a watch on it); never, if the watch
/// fails (the caller's backoff bounds the wait).
async fn bootstrap_written(client: &kube::Client, namespace: &str, name: &str) {
    let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(client.clone(), namespace);
    let written = |s: Option<&k8s_openapi::api::core::v1::Secret>| {
        s.and_then(|s| secret::field(s, bootstrap::KUBECONFIG_KEY))
            .is_some()
    };
    if kube::runtime::wait::await_condition(secrets, name, written)
        .await
        .is_err()
    {
        std::future::pending::<()>().await;
    }
}

/// One pass: get a credential (stored or bootstrapped), then stay joined with it. With a list
/// of hubs, the hub is selected first and its secret is the bootstrap secret of the pass.
async fn session(
    opts: &AgentOptions,
    force_bootstrap: &mut bool,
    shutdown: &Shutdown,
) -> Result<joined::Exit, Error> {
    let selected;
    let (opts, boot) = match &opts.hubs {
        None => (opts, bootstrap::read(opts).await?),
        Some(list) => {
            let hub = hubs::select(opts, list).await?;
            selected = AgentOptions {
                bootstrap_secret: hub.secret,
                ..opts.clone()
            };
            (&selected, Some(hub.boot))
        }
    };
    let stored = if *force_bootstrap {
        None
    } else {
        secret::load(opts).await?.filter(|c| {
            c.usable_with(
                boot.as_ref(),
                &opts.cluster_name,
                ocm_runtime::pki::now_seconds(),
            )
            .inspect_err(|why| tracing::info!("not reusing the stored hub credential: {why}"))
            .is_ok()
        })
    };
    let credential = if let Some(c) = stored {
        c
    } else {
        let c = bootstrap::register(opts, boot.as_ref(), shutdown).await?;
        *force_bootstrap = false;
        c
    };
    joined::run(opts, credential, shutdown).await
}
