//! `ocm-runtime`: the machinery every OCM loop of clusteradm stands on, the layer above
//! [`ocm_api`].
//!
//! What every loop needs, written once: a shutdown token ([`shutdown`]), a jittered exponential
//! backoff ([`backoff`]), one way to run a controller ([`controller`]) over one watch per kind
//! ([`informers`]), a Lease for liveness and leader election ([`lease`]), clients built from
//! kubeconfig text with TLS always verified ([`client`]), one way to put an error chain on a log
//! line ([`report`]), per-cluster requests a bounded number at a time ([`fan_out`]), and removing an operator-managed object whether or not its operator runs
//! ([`uninstall`]), and what a pod exposes: [`probes`] over [`metrics`], and its callers as the API
//! server vouches for them ([`callers`]).
//!
//! Beside them, what loops and commands both use: server-side apply of a bundle of objects
//! ([`apply`]), PKI ([`pki`]), Secret fields ([`secrets`]), agent identities and CSR approval
//! ([`identity`]), CEL with a cost budget ([`cel_budget`]), bounded reads of the files users name
//! ([`input`]) and the errors a user acts on ([`error`]).
//!
//! Operators, hub controllers and agents depend on this crate instead of each writing their own.
pub mod apply;
pub mod backoff;
pub mod callers;
pub mod cel_budget;
pub mod client;
pub mod controller;
pub mod error;
pub mod fan_out;
pub mod identity;
pub mod impersonate;
pub mod informers;
pub mod input;
pub mod lease;
pub mod merge_patch;
pub mod metrics;
pub mod metrics_server;
pub mod pki;
pub mod probes;
pub mod queue_depth;
pub mod rate;
pub mod ready;
pub mod report;
pub mod secrets;
pub mod shutdown;
pub mod uninstall;

pub use backoff::Backoff;
pub use shutdown::Shutdown;

/// The field manager every server-side apply of this tool uses.
pub const FIELD_MANAGER: &str = "clusteradm";
