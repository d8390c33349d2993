//! Logging to stderr via `tracing`: `RUST_LOG` wins, otherwise `-v` raises our own level.
use tracing_subscriber::EnvFilter;

use crate::cli::args::GlobalArgs;

/// Installs the global subscriber once.
pub fn init(global: &GlobalArgs) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(match global.verbose {
            0 => "off",
            1 => "clusteradm=info",
            2 => "clusteradm=debug,kube=info",
            _ => "clusteradm=trace,kube=debug",
        })
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
