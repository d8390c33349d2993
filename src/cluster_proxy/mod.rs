//! Reaching managed clusters through the cluster-proxy add-on (open-cluster-management-io/
//! cluster-proxy), as upstream's `clusteradm proxy` does: its proxy server on the hub holds a
//! tunnel from each cluster's proxy agent, and a Konnectivity client ([`konnectivity`]) dials a
//! cluster's API server, `<cluster>:443`, through it. The hub needs no route to the cluster.
//!
//! - [`installation`]: where the add-on's proxy server runs, from its hub objects;
//! - [`tunnel`]: the Konnectivity client to that server (port-forwarded, or at an address);
//! - [`managed_tls`]: TLS to a managed API server at the end of a tunnel, verified;
//! - [`health`]: its `/healthz` probed through the tunnel.
pub mod health;
pub mod installation;
pub mod managed_tls;
pub mod tunnel;

/// The add-on's name (its ClusterManagementAddOn and ManagedClusterAddOns).
pub const ADDON: &str = "cluster-proxy";
/// The address a cluster's API server is dialled at: the cluster's name is its proxy agent's
/// `host` identifier, and the agent's namespace has an ExternalName Service of that name pointing
/// at `kubernetes.default`.
#[must_use]
pub fn api_server_address(cluster: &str) -> String {
    format!("{cluster}:443")
}
