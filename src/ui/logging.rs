//! Logging to stderr via `tracing`: `RUST_LOG` wins, otherwise `-v` raises our own level.
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber once; `verbose` is the number of `-v`s.
pub fn init(verbose: u8) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(match verbose {
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
