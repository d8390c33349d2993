//! The work agent: for one managed cluster, it watches the ManifestWorks in that cluster's
//! namespace on the hub and, for each one, applies its manifests on the managed cluster, records
//! what it applied in an AppliedManifestWork, reports conditions back on the hub, and removes what
//! it applied when a manifest leaves the work or the work is deleted. The reconcile follows the
//! observe → build (pure) → apply → status pipeline:
//!
//! - [`build`]: pure decisions — parsing a manifest, matching `manifestConfigs`, hub hash,
//!   which applied resources are stale, which are orphaned on deletion;
//! - [`discovery`]: kind → resource on the managed cluster, refreshed when a kind is unknown;
//! - [`apply`]: one manifest onto the managed cluster, by its update strategy;
//! - [`status`]: pure computation of per-manifest and work conditions;
//! - [`executor`] / [`executor_cache`]: whether a work's executor may apply a manifest, and the
//!   cached review answers (forgotten when RBAC changes);
//! - [`feedback`]: status feedback values read from applied objects by their rules, and
//!   [`condition_rules`]: the conditions their condition rules set;
//! - [`delete`]: removing or orphaning applied resources;
//! - [`writer`]: every write of the agent, on the hub and on the managed cluster;
//! - [`context`]: the options, the Klusterlet's [`Settings`] and what every pass is handed;
//! - [`decide`]: what a pass does, decided purely from what was read;
//! - [`controller`]: the kube-runtime Controller, the reconcile and the entry point [`run`];
//! - [`supervisor`]: runs the agent with the credential the registration agent earns, and
//!   restarts it when that credential changes.
pub mod apply;
pub mod build;
pub mod condition_rules;
pub mod context;
pub mod controller;
pub mod decide;
pub mod delete;
pub mod discovery;
pub mod eviction;
pub mod executor;
pub mod executor_cache;
pub mod feedback;
pub mod ignore_fields;
pub mod status;
pub mod supervisor;
pub mod watched;
pub mod writer;

mod sweep;
mod sync;

pub use context::{AppliedNames, Settings, WorkAgentOptions};
pub use controller::run;

/// A failure of one reconcile; the controller logs it and retries with a delay.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the hub failed.
    #[error("hub: {what}")]
    Hub {
        /// What was being done.
        what: String,
        /// The failed request.
        #[source]
        source: kube::Error,
    },
    /// A request to the managed cluster failed.
    #[error("managed cluster: {what}")]
    Managed {
        /// What was being done.
        what: String,
        /// The failed request.
        #[source]
        source: kube::Error,
    },
    /// Applied resources are still being deleted (or could not be); the work keeps its finalizer.
    #[error("{pending} applied resources of work {work} are not removed yet")]
    Pending {
        /// The ManifestWork.
        work: String,
        /// How many resources remain.
        pending: usize,
    },
}

impl ocm_runtime::controller::Failure for Error {
    fn retry(&self) -> ocm_runtime::controller::Retry {
        match self {
            // Waiting for the managed cluster to finish deleting, not failing.
            Self::Pending { .. } => ocm_runtime::controller::Retry::After(context::RETRY),
            _ => ocm_runtime::controller::Retry::Backoff,
        }
    }
}

impl Error {
    /// A hub failure while doing `what`.
    pub(crate) fn hub(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let what = what.into();
        move |source| Self::Hub { what, source }
    }

    /// A managed-cluster failure while doing `what`.
    pub(crate) fn managed(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let what = what.into();
        move |source| Self::Managed { what, source }
    }
}

/// An error and its causes on one line, for logs.
pub(crate) fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&match cause.downcast_ref::<kube::Error>() {
            Some(e) => apply::describe(e),
            None => cause.to_string(),
        });
        source = cause.source();
        if source.is_some() && cause.downcast_ref::<kube::Error>().is_some() {
            break; // describe() already said what the status says
        }
    }
    text
}
