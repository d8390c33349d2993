//! Write an OCM add-on's manager in Rust, as upstream's Go `addon-framework` lets one write it in
//! Go: the add-on says what its agent is on a cluster ([`AgentAddon`]: its manifests, the
//! identities it registers, how its health is judged) and [`Manager`] does the rest, on any OCM
//! hub (ours or upstream's), for every cluster the add-on is enabled on:
//!
//! - deploys the agent: the manifests in the ManifestWork `addon-<name>-deploy-0` of the cluster's
//!   namespace, owned by its ManagedClusterAddOn, and reports `ManifestApplied` from the work;
//! - registers it: the identities in the ManagedClusterAddOn's `status.registrations`, for which
//!   the cluster's registration agent sends CSRs; the manager approves exactly those
//!   (`RegistrationApplied`), binds the add-on's hub ClusterRole to them in the cluster's
//!   namespace, and signs those of the add-on's own signer with its CA ([`signer`]);
//! - health: by the agent's Lease (the registration agent reports it), or `Customized`, where the
//!   add-on's manager says ([`set_available`]);
//! - Hosted mode, when the add-on enables it ([`AgentAddon::hosted_mode`]): the agent's manifests
//!   marked for the hosting cluster go there, as upstream's `helloworld_hosted`.
//!
//! An add-on agent then talks to the hub's API server with its `<addon>-hub-kubeconfig`, or to
//! the add-on manager's own endpoint with its custom-signed certificate, which the manager
//! authenticates with [`signer::server_config`] and maps back to its cluster with
//! [`identity::cluster_of`].
//!
//! ```no_run
//! use ocm_addon_framework::{AgentAddon, Manager};
//! use ocm_addon_framework::api::{ManagedCluster, ManagedClusterAddOn};
//!
//! struct Hello;
//! impl AgentAddon for Hello {
//!     fn name(&self) -> &str {
//!         "hello"
//!     }
//!     fn manifests(&self, cluster: &ManagedCluster, _: &ManagedClusterAddOn)
//!         -> anyhow::Result<Vec<serde_json::Value>> {
//!         let name = cluster.metadata.name.clone().unwrap_or_default();
//!         Ok(vec![serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
//!             "metadata": {"name": "hello", "namespace": "default"}, "data": {"cluster": name}})])
//!     }
//! }
//!
//! # async fn run() -> anyhow::Result<()> {
//! let client = kube::Client::try_default().await?;
//! Manager::new(client, Hello).run(ocm_addon_framework::shutdown_on_signal()).await
//! # }
//! ```
mod approve;
mod deploy;
mod hosting;
pub mod identity;
pub mod signer;

use std::sync::Arc;

use kube::Client;

pub use ocm_runtime::Shutdown;
pub use ocm_runtime::pki::webhook::CertKey;

/// The OCM types an add-on's manager meets.
pub mod api {
    pub use ocm_api::addon::{
        ClusterManagementAddOn, DEFAULT_INSTALL_NAMESPACE, ManagedClusterAddOn,
    };
    pub use ocm_api::cluster::ManagedCluster;
}

/// What an add-on's manager supplies: its agent on a cluster. Everything else is the
/// framework's.
pub trait AgentAddon: Send + Sync + 'static {
    /// The add-on's name: its ClusterManagementAddOn's and each cluster's ManagedClusterAddOn's.
    fn name(&self) -> &str;

    /// The agent's manifests for `cluster`, applied there by the add-on's ManifestWork.
    fn manifests(
        &self,
        cluster: &api::ManagedCluster,
        addon: &api::ManagedClusterAddOn,
    ) -> anyhow::Result<Vec<serde_json::Value>>;

    /// The identities the agent registers (none by default: it needs no credential).
    fn registration(&self) -> Registration {
        Registration::default()
    }

    /// The namespace on the managed cluster the agent runs in, where its credentials go.
    fn install_namespace(&self) -> &str {
        api::DEFAULT_INSTALL_NAMESPACE
    }

    /// How the add-on's health is judged.
    fn health(&self) -> Health {
        Health::Lease
    }

    /// Whether the add-on may be Hosted (upstream's `HostedModeEnabled`): on a ManagedClusterAddOn
    /// annotated with a hosting cluster, the manifests marked
    /// `addon.open-cluster-management.io/hosted-manifest-location: hosting` go to that cluster
    /// instead (`none`: nowhere; unmarked or `managed`: the managed cluster). Off by default.
    fn hosted_mode(&self) -> bool {
        false
    }
}

/// The identities an add-on's agent registers on each cluster. Each is the registration agent's
/// default subject for the add-on (user `system:open-cluster-management:cluster:<c>:addon:<a>:
/// agent:<a>`, group `system:open-cluster-management:cluster:<c>:addon:<a>`), as upstream's.
#[derive(Debug, Clone, Default)]
pub struct Registration {
    /// A client certificate for the hub's API server (`<addon>-hub-kubeconfig`), and the
    /// ClusterRole it is bound to in the cluster's namespace on the hub (the manager must be
    /// allowed to `bind` it).
    pub hub_client: Option<HubClient>,
    /// A client certificate of the add-on's own signer (`<addon>-<signer>-client-cert`), which the
    /// manager signs.
    pub custom_signer: Option<CustomSigner>,
}

/// A client of the hub's API server.
#[derive(Debug, Clone, Default)]
pub struct HubClient {
    /// The ClusterRole bound to the agent in its cluster's namespace, if any.
    pub cluster_role: Option<String>,
}

/// The add-on's own signer.
#[derive(Debug, Clone)]
pub struct CustomSigner {
    /// Its name (`<domain>/<name>`).
    pub signer_name: String,
    /// The CA the manager signs with ([`signer::load_or_create`]).
    pub ca: CertKey,
}

/// How an add-on's health is judged (the ManagedClusterAddOn's `status.healthCheck.mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Health {
    /// By the Lease named after the add-on, which its agent renews in its install namespace;
    /// the cluster's registration agent reports it.
    #[default]
    Lease,
    /// By the add-on's manager, with [`set_available`].
    Customized,
}

/// A reconcile's failure, as kube's controller takes it (a standard error).
#[derive(Debug)]
pub(crate) struct Failed(anyhow::Error);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Failed {}

impl ocm_runtime::controller::Failure for Failed {}

/// Runs an add-on's manager: [`Manager::run`].
pub struct Manager<A> {
    client: Client,
    addon: Arc<A>,
}

impl<A: AgentAddon> Manager<A> {
    /// A manager of `addon` on the hub `client` reaches.
    pub fn new(client: Client, addon: A) -> Self {
        Self {
            client,
            addon: Arc::new(addon),
        }
    }

    /// Deploys, registers and approves for every cluster the add-on is enabled on, until
    /// `shutdown` is cancelled. One replica at a time (no leader election).
    pub async fn run(self, shutdown: Shutdown) -> anyhow::Result<()> {
        tokio::try_join!(
            deploy::run(self.client.clone(), self.addon.clone(), shutdown.clone()),
            approve::run(self.client, self.addon, shutdown),
        )?;
        Ok(())
    }
}

/// A token cancelled on SIGINT or SIGTERM, for [`Manager::run`].
#[must_use]
pub fn shutdown_on_signal() -> Shutdown {
    ocm_runtime::shutdown::on_signal()
}

/// Sets add-on `addon`'s `Available` condition on `cluster` (for [`Health::Customized`]):
/// `available` True or False (None: Unknown), with `reason` and `message`.
pub async fn set_available(
    client: &Client,
    addon: &str,
    cluster: &str,
    available: Option<bool>,
    reason: &str,
    message: &str,
) -> Result<(), kube::Error> {
    let status = match available {
        Some(true) => ocm_api::conditions::TRUE,
        Some(false) => ocm_api::conditions::FALSE,
        None => ocm_api::conditions::UNKNOWN,
    };
    deploy::set_condition(
        client,
        addon,
        cluster,
        ocm_api::conditions::AVAILABLE,
        (status, reason, message),
    )
    .await
}
