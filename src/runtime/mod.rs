//! What every loop needs, written once: a shutdown token ([`shutdown`]), a jittered exponential
//! backoff ([`backoff`]), one way to run a controller ([`controller`]) over one watch per kind
//! ([`informers`]), a Lease for liveness and leader election ([`lease`]), clients built from
//! kubeconfig text with TLS always verified ([`client`]), one way to put an error chain on a log
//! line ([`report`]), per-cluster requests a bounded number at a time ([`fan_out`]), and removing an operator-managed object whether or not its operator runs
//! ([`uninstall`]), and what a pod exposes: [`probes`] over [`metrics`], and its callers as the API
//! server vouches for them ([`callers`]).
//!
//! Operators, hub controllers and agents depend on this module instead of each writing their own;
//! it depends on nothing above [`crate::api`].
pub mod backoff;
pub mod callers;
pub mod client;
pub mod controller;
pub mod fan_out;
pub mod impersonate;
pub mod informers;
pub mod lease;
pub mod metrics;
pub mod metrics_server;
pub mod probes;
pub mod queue_depth;
pub mod rate;
pub mod ready;
pub mod report;
pub mod shutdown;
pub mod uninstall;

pub use backoff::Backoff;
pub use shutdown::Shutdown;
