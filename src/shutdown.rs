//! Clean shutdown for long-running loops: resolves on Ctrl-C or SIGTERM.

/// Completes when the process is asked to stop.
pub async fn signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("installing a SIGTERM handler");
    tokio::select! {
        _ = ctrl_c => tracing::info!("interrupted, shutting down"),
        _ = term.recv() => tracing::info!("terminated, shutting down"),
    }
}
