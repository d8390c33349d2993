//! The ClusterManager operator: installs and keeps the OCM hub (CRDs, namespace, component
//! identities and RBAC, Deployments, webhook certificates and configurations) as a
//! ClusterManager asks, reports on it in the ClusterManager's status, and removes it all when the
//! ClusterManager is deleted.
//!
//! Each reconcile is a pipeline, one submodule per step, each with its own error type:
//! [`observe`] (read what the certificates need) → [`validate`] (pure: spec → values) →
//! [`certs`] (keep or re-issue) → [`desired`] (pure: values → typed [`desired::Desired`]) → `apply`
//! (the shared apply engine, field manager `clusteradm`) → [`status`] (conditions, SSA
//! `patch_status`). Whoever runs the loop holds the Lease [`LEASE_NAME`] meanwhile (leader
//! election, [`ocm_runtime::lease`]), so `clusteradm clean` knows whether anyone will act on
//! the finalizer ([`is_running`]); [`uninstall()`](fn@uninstall) is what `clean` calls, and does the cleanup
//! itself when nobody will.
//!
//! [`run`] runs the loop until its shutdown token is cancelled; [`InProcess`] says which hub
//! components the caller runs itself and must therefore not be deployed.
pub mod certs;
pub mod desired;
pub mod observe;
pub mod status;
pub mod validate;

mod apply;
pub mod cleanup;
mod controller;
pub mod hosted;
mod ready;
#[cfg(any(test, feature = "testing"))]
pub mod test_support;
mod token_infrastructure;

use std::time::Duration;

use kube::{Api, Client};

pub use cleanup::cleanup;
pub use controller::{Error, run};
pub use ready::wait_ready;

use ocm_api::names::OPERATOR_NAMESPACE;
use ocm_api::operator::{CLUSTER_MANAGER_FINALIZER, CLUSTER_MANAGER_NAME, ClusterManager};
use ocm_runtime::lease::{self, LeaseLock};
use ocm_runtime::uninstall::{self, Outcome, Removal};

/// The Lease whoever runs the loop holds (leader election and liveness).
pub const LEASE_NAME: &str = "cluster-manager-operator";

/// Every Secret the operator reads or writes, by name: its ClusterRole grants Secrets only by
/// these names (and `create`, which names nothing), as upstream's does, and the controller watches
/// each by name. The webhooks' serving certificates of upstream's components and of our hub pods,
/// the signer, a hosted hub's kubeconfigs (the user's and the pods'), and the image pull secret.
pub const SECRETS: &[&str] = &[
    certs::SIGNER_SECRET,
    "registration-webhook-serving-cert",
    "work-webhook-serving-cert",
    "addon-webhook-serving-cert",
    desired::hub::SERVING_SECRET,
    desired::hosted::KUBECONFIG_SECRET,
    ocm_api::names::EXTERNAL_HUB_SECRET,
    ocm_api::names::IMAGE_PULL_SECRET,
];

/// The Lease of the ClusterManager operator on `client`'s cluster, held as this process.
#[must_use]
pub fn lease_lock(client: Client) -> LeaseLock {
    LeaseLock::new(client, OPERATOR_NAMESPACE, LEASE_NAME)
}

/// Whether a ClusterManager operator runs against this hub (its Lease is fresh).
pub async fn is_running(client: &Client) -> Result<bool, kube::Error> {
    lease::is_held(client, OPERATOR_NAMESPACE, LEASE_NAME).await
}

/// Removes the ClusterManager: the operator's cleanup runs behind its finalizer when an operator
/// is running, and here otherwise; waits, bounded by `timeout`, until it is gone.
pub async fn uninstall(
    client: &Client,
    operator_running: bool,
    timeout: Duration,
) -> anyhow::Result<Outcome> {
    let removal = Removal {
        api: Api::<ClusterManager>::all(client.clone()),
        name: CLUSTER_MANAGER_NAME,
        operator_running,
        finalizers: &[CLUSTER_MANAGER_FINALIZER],
        timeout,
    };
    uninstall::remove(removal, |cm: Option<ClusterManager>| async move {
        // A hosted hub's components are on its hub cluster and here (the management cluster).
        let hosted = cm
            .and_then(|cm| cm.spec.deploy_option)
            .is_some_and(|d| d.mode == ocm_api::operator::HubInstallMode::Hosted);
        if hosted {
            hosted::remove(client, timeout).await
        } else {
            cleanup(client, timeout).await
        }
    })
    .await
}

/// How the loop runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Hub components this process runs itself (not deployed).
    pub in_process: InProcess,
    /// `--enable-sync-labels`: the ClusterManager's labels go onto everything it makes
    /// ([`crate::sync_labels`]).
    pub sync_labels: bool,
}

impl From<InProcess> for Options {
    fn from(in_process: InProcess) -> Self {
        Self {
            in_process,
            sync_labels: false,
        }
    }
}

pub use ocm_api::operator::Admission;

/// Which hub components run inside this process rather than as Deployments. A component that
/// runs here is not deployed: two controllers must never reconcile the same objects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InProcess {
    /// The hub registration controller runs in this process (`ocm_hub::registration`), so no
    /// registration-controller Deployment is made and its health is this process's.
    pub registration: bool,
    /// Upstream's webhook Deployments are not deployed, nor their Services. The webhooks are
    /// served by our hub pods (with [`Self::hub_deployment`], the operator pointing the
    /// configurations at their Service) or by this process, whose leader points the
    /// configurations at itself ([`ocm_hub::webhook`]); or admission is by policies.
    pub webhooks: bool,
    /// The placement controller runs in this process (`ocm_hub::placement`), so no
    /// placement-controller Deployment is made.
    pub placement: bool,
    /// The hub controllers run in our image's hub Deployment ([`desired::hub`]), which the
    /// operator deploys (the ClusterManager names one image for every component).
    pub hub_deployment: bool,
}

impl InProcess {
    /// With `admission` by policies, upstream's webhook Deployments are not deployed either (the
    /// policies stand in for them; see [`desired::admission`]).
    #[must_use]
    pub fn with(self, admission: Admission) -> Self {
        Self {
            webhooks: self.webhooks || admission == Admission::Policies,
            ..self
        }
    }

    /// Everything deployed as Deployments.
    pub const NOTHING: Self = Self {
        registration: false,
        webhooks: false,
        placement: false,
        hub_deployment: false,
    };
    /// `init --in-process`: the hub controllers (registration, cluster sets, placement) and the
    /// webhooks here.
    pub const HUB_CONTROLLERS: Self = Self {
        registration: true,
        webhooks: true,
        placement: true,
        hub_deployment: false,
    };
    /// Our image: every hub controller and webhook in our hub Deployment.
    pub const HUB_DEPLOYMENT: Self = Self {
        hub_deployment: true,
        ..Self::HUB_CONTROLLERS
    };
}
