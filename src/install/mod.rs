//! What `init` and `join` install, as pure plans from typed options to the objects to apply
//! ([`hub`], [`klusterlet`]), plus the pieces of `init` that are not plain objects: the bootstrap
//! credential ([`credential`]), the `kube-public/cluster-info` discovery document
//! ([`cluster_info`]) and the join command ([`join_command`]).
pub mod cluster_info;
pub mod credential;
pub mod hub;
pub mod join_command;
pub mod klusterlet;
