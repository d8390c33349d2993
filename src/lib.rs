//! `clusteradm`: bootstrap and run Open Cluster Management (OCM).
//!
//! The workspace's crates are its layers; each uses only those below it, and cargo refuses an
//! import the other way (the map: `docs/src/architecture.md`):
//!
//! 1. [`ocm_api`] ([`api`]): the OCM API types and their CRDs, upstream's well-known names,
//!    feature gates, conditions and limits, YAML ([`yaml`]) — the vocabulary every layer shares;
//! 2. [`ocm_runtime`] ([`runtime`]): what every loop needs (informers, the controller runner,
//!    leases, probes, metrics, clients), server-side apply ([`apply`]), PKI ([`pki`]), Secret
//!    fields ([`secrets`]), agent identities ([`identity`]), CEL with a cost budget
//!    ([`cel_budget`]), bounded input ([`input`]) and the errors a user acts on;
//! 3. [`ocm_hub`] ([`hub`]) and [`ocm_agent`] ([`agent`]): the hub controllers and the agents,
//!    neither using the other;
//! 4. [`ocm_operator`] ([`operator`]): the ClusterManager and Klusterlet operators, which deploy
//!    the layer below or run it in their process;
//! 5. this crate, the command line: the commands ([`cli`]) over what `init` and `join` install
//!    ([`install`]), how `join` reaches a hub it does not trust yet ([`join`]), the composition
//!    root that runs loops in this process ([`inprocess`]), `create work`'s and `addon create`'s
//!    side of works and add-ons ([`work`], [`addon`]), embedded templates ([`render`]), JSON merge
//!    patches ([`merge_patch`]), kubectl-style kubeconfig selection ([`kubeconfig`]), may-I
//!    checks ([`preflight`]), terminal output ([`ui`]) and how errors reach the user ([`error`]).
//!
//! The lower crates are re-exported under their module names, so `clusteradm::hub::placement`
//! names what `ocm_hub::placement` does.

pub use ocm_agent as agent;
pub use ocm_api as api;
pub use ocm_api::yaml;
pub use ocm_hub as hub;
pub use ocm_operator as operator;
pub use ocm_runtime as runtime;
pub use ocm_runtime::{FIELD_MANAGER, apply, cel_budget, identity, input, pki, secrets};

pub mod addon;
pub mod cli;
pub mod cluster_proxy;
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
