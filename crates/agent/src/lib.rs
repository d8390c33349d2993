//! The agents of a managed cluster: what upstream runs as the `registration` and `work` agent
//! images, here library loops that run inside `join --in-process` (or any process).
//!
//! - [`registration`] turns the bootstrap credential into a hub-signed client certificate, keeps
//!   the ManagedCluster's status and heartbeat lease current and rotates the certificate;
//! - [`work`] applies the ManifestWorks of the cluster's namespace on the hub and reports back.
//!
//! Agents depend on [`ocm_api`], [`ocm_runtime::apply`], [`ocm_runtime::identity`] and [`ocm_runtime`]
//! only; how they are started together is the composition root's business (`clusteradm`'s `inprocess`).
pub mod addon;
pub mod gates;
pub mod registration;
pub mod work;
