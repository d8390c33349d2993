//! The ClusterManager operator: installs and keeps the OCM hub (CRDs, namespace, component
//! identities and RBAC, Deployments, webhook certificates and configurations) as a
//! ClusterManager asks, reports on it in the ClusterManager's status, and removes it all when the
//! ClusterManager is deleted.
//!
//! Each reconcile is a pipeline, one submodule per step, each with its own error type:
//! [`observe`] (read what the certificates need) → [`validate`] (pure: spec → values) →
//! [`certs`] (keep or re-issue) → [`build`] (pure: values → typed [`build::Desired`]) → `apply`
//! (the shared apply engine, field manager `clusteradm`) → [`status`] (conditions, SSA
//! `patch_status`). The loop also holds a Lease while it runs ([`is_running`]) so `clusteradm
//! clean` knows whether anyone will act on the finalizer, and [`cleanup`] is a plain function
//! that `clean` can call itself when nobody will.
//!
//! Ways to run it: [`run`] deploys every component (`clusteradm operator hub`);
//! [`run_in_process`] leaves out what this process runs instead (`init --in-process`);
//! [`run_with`] takes an explicit [`InProcess`]. All stop cleanly when their shutdown future
//! completes, releasing the Lease.
pub mod build;
pub mod certs;
pub mod observe;
pub mod status;
pub mod validate;

mod apply;
mod cleanup;
mod controller;
mod lease;
mod ready;
#[cfg(test)]
mod test_support;

use std::future::Future;

use futures::FutureExt as _;

use kube::Client;

pub use cleanup::cleanup;
pub use controller::Error;
pub use lease::{LEASE_NAME, is_running};
pub use ready::wait_ready;

/// Which hub components run inside this process rather than as Deployments. A component that
/// runs here is not deployed: two controllers must never reconcile the same objects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InProcess {
    /// The hub registration controller runs in this process (`src/registration/hub`), so no
    /// registration-controller Deployment is made and its health is this process's.
    pub registration: bool,
    /// The admission webhooks are not deployed. Nothing serves them in-process yet, so their
    /// Services and webhook configurations are left out too (a configuration pointing at a
    /// Service nobody serves would fail every ManagedCluster and ManifestWork write). Their
    /// certificates are still kept, ready for an in-process webhook server.
    pub webhooks: bool,
}

impl InProcess {
    /// Everything deployed as Deployments.
    pub const NOTHING: Self = Self {
        registration: false,
        webhooks: false,
    };
    /// `init --in-process`: the registration controller here, no webhooks.
    pub const HUB_CONTROLLERS: Self = Self {
        registration: true,
        webhooks: true,
    };
}

/// Runs the operator deploying every component, until `shutdown` completes.
pub async fn run(
    client: Client,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    controller::run(client, InProcess::NOTHING, shutdown).await
}

/// Runs the operator and the in-process hub controllers (the hub registration controller) until
/// `shutdown` completes; `InProcess::HUB_CONTROLLERS` keeps the operator from also deploying them.
pub async fn run_in_process(
    client: Client,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stop_tx = std::sync::Arc::new(stop_tx);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    // Either loop failing stops the other: a hub half running is worse than one that says it stopped.
    let stop_on_error = |tx: std::sync::Arc<tokio::sync::watch::Sender<bool>>| {
        move |result: anyhow::Result<()>| {
            if result.is_err() {
                let _ = tx.send(true);
            }
            result
        }
    };
    let registration = crate::registration::hub::run(client.clone(), stopped(stop_rx.clone()))
        .map(stop_on_error(stop_tx.clone()));
    let operator = controller::run(client, InProcess::HUB_CONTROLLERS, stopped(stop_rx))
        .map(stop_on_error(stop_tx.clone()));
    let trigger = async move {
        tokio::select! {
            () = shutdown => { let _ = stop_tx.send(true); }
            () = stop_tx.closed() => {}
        }
    };
    let ((), registration, operator) = tokio::join!(trigger, registration, operator);
    registration.map_err(|e| e.context("the hub registration controller stopped"))?;
    operator
}

/// Runs the operator with an explicit choice of in-process components.
pub async fn run_with(
    client: Client,
    in_process: InProcess,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    controller::run(client, in_process, shutdown).await
}
