//! The operators' reconcile loops, runnable as `clusteradm operator hub|klusterlet` or inside
//! `init`/`join --in-process`.
pub mod cluster_manager;
pub mod klusterlet;
pub mod pod_security;
pub mod pull_secret;
pub mod resources;
pub mod sync_labels;
pub mod token_kubeconfig;
