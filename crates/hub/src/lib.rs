//! The hub controllers: what upstream runs as the hub's `registration-controller` (and later
//! placement, add-on manager and work controllers) images, here library loops over one shared
//! watch per kind.
//!
//! Each controller is a folder with the same files: `mod.rs` wires a kube-runtime `Controller`,
//! a pure `decide` (observed state → actions, tested without a cluster) and a `writer` that
//! carries the actions out. How they are started together is the composition root's business (`clusteradm`'s `inprocess`).
pub mod addon;
pub mod admission;
pub mod cluster_profiles;
pub mod clustersets;
pub mod completed_works;
pub mod conversion;
pub mod grpc_server;
pub mod managed_namespaces;
pub mod placement;
pub mod registration;
pub mod replicaset;
pub mod settings;
pub mod webhook;
