//! One shutdown signal for every loop: a [`CancellationToken`]. The process cancels the root
//! token on Ctrl-C or SIGTERM ([`on_signal`]); each loop takes a child token, so stopping one
//! part (leadership lost, an agent restarted with a new credential) never stops its siblings.
use std::future::Future;

pub use tokio_util::sync::CancellationToken as Shutdown;

/// A token cancelled when the process is asked to stop (Ctrl-C or SIGTERM).
#[must_use]
pub fn on_signal() -> Shutdown {
    let token = Shutdown::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        signal().await;
        cancel.cancel();
    });
    token
}

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

/// A future that completes when `token` is cancelled, and is `Send + Sync + 'static` as
/// kube-runtime's `graceful_shutdown_on` asks.
pub fn cancelled(token: &Shutdown) -> impl Future<Output = ()> + Send + Sync + 'static {
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    let token = token.clone();
    tokio::spawn(async move {
        token.cancelled().await;
        let _ = tx.send(());
    });
    async move {
        let _ = rx.await;
    }
}
