//! Integration tests: one binary, run against a real control plane (hub + managed apiservers).
//! Start it with `scripts/control-plane start` (or run everything with `scripts/test`), or point
//! HUB_KUBECONFIG and MANAGED_KUBECONFIG at any two real clusters.
use ocm_test_support as common;

mod accept;
mod addon;
mod admission;
mod admission_webhooks;
mod apply;
mod bad_input;
mod chart;
mod cluster_property;
mod clustersets;
mod compat;
mod control_plane;
mod grpc_server;
mod hub_rights;
mod init;
mod join_mitm;
mod lease;
mod managed_namespaces;
mod metrics;
mod placement;
mod placement_debug;
mod proxy_tunnel;
mod registration;
mod replicaset;
mod rights;
mod shared_watch;
mod work;
