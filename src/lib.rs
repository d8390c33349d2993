//! `clusteradm`: bootstrap and run Open Cluster Management (OCM).
//!
//! The binary is a thin clap layer ([`cli`]) over library modules that each own one job, in
//! layers (a module uses only those above it in this list):
//!
//! - foundations: the OCM API types and well-known names ([`api`]), YAML ([`yaml`]), PKI
//!   ([`pki`]), Secret fields ([`secrets`]), user-facing errors ([`error`]), CEL with a cost
//!   budget ([`cel_budget`]), bounded reads of the files users name ([`input`]), JSON merge patches
//!   ([`merge_patch`]);
//! - machinery: rendering embedded templates ([`render`]), applying a bundle of objects with
//!   server-side apply ([`apply`]), kubectl-style kubeconfig selection ([`kubeconfig`]), what
//!   every loop needs ([`runtime`]), agent identities and CSR approval ([`identity`]);
//! - what `init` and `join` install ([`install`]) and how `join` reaches a hub it does not trust
//!   yet ([`join`]);
//! - the loops: the operators ([`operator`]), the hub controllers ([`hub`]), the agents
//!   ([`agent`]), and the composition root that runs them in this process ([`inprocess`]);
//! - `create work`'s side of ManifestWorks ([`work`]), terminal output ([`ui`]), may-I checks
//!   ([`preflight`]), and the commands ([`cli`]).

pub mod addon;
pub use ocm_agent as agent;
pub use ocm_api as api;
pub use ocm_hub as hub;
pub use ocm_operator as operator;
pub use ocm_runtime as runtime;
pub use ocm_runtime::{FIELD_MANAGER, apply, cel_budget, identity, input, pki, secrets};
pub mod cli;
pub mod error;
pub mod inprocess;
pub mod install;
pub mod join;
pub mod kubeconfig;
pub mod merge_patch;
pub mod preflight;
pub mod render;
pub mod ui;
pub mod work;
pub use ocm_api::yaml;
