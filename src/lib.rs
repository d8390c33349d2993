//! `clusteradm`: bootstrap and run Open Cluster Management (OCM).
//!
//! The binary is a thin clap layer ([`cli`]) over library modules that each own one job:
//! the OCM API types ([`api`]), rendering embedded templates ([`render`]), applying a bundle of
//! objects with server-side apply ([`apply`]), kubeconfig handling ([`kubeconfig`]) and terminal
//! output ([`ui`]).

pub mod api;
pub mod apply;
pub mod cli;
pub mod error;
pub mod hub;
pub mod klusterlet;
pub mod kubeconfig;
pub mod operator;
pub mod pki;
pub mod preflight;
pub mod registration;
pub mod render;
pub mod secrets;
pub mod shutdown;
pub mod ui;
pub mod work;
pub mod yaml;

/// The field manager every server-side apply of this tool uses.
pub const FIELD_MANAGER: &str = "clusteradm";
