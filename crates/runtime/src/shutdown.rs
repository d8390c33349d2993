//! One shutdown signal for every loop: a [`CancellationToken`](tokio_util::sync::CancellationToken). The process cancels the root
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

/// How long a process asked to stop may take to stop on its own: after that it exits anyway.
/// A kubelet waits 30 s before it kills a container; a user at a terminal waits less.
pub const STOP_DEADLINE: std::time::Duration = std::time::Duration::from_secs(4);

/// Completes when the process is asked to stop (Ctrl-C or SIGTERM). From then on, the process
/// exits within [`STOP_DEADLINE`] whatever its loops are waiting on, and at once on a second
/// signal: stopping must never hang on an unreachable API server or a stuck task.
pub async fn signal() {
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .expect("installing a SIGINT handler");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("installing a SIGTERM handler");
    tokio::select! {
        _ = int.recv() => tracing::info!("interrupted, shutting down"),
        _ = term.recv() => tracing::info!("terminated, shutting down"),
    }
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => tracing::warn!("interrupted again: exiting now"),
            _ = term.recv() => tracing::warn!("terminated again: exiting now"),
        }
        std::process::exit(130);
    });
    // A thread, not a task: it fires even when every runtime worker is blocked.
    std::thread::spawn(|| {
        std::thread::sleep(STOP_DEADLINE);
        eprintln!(
            "warning: still stopping after {}s: exiting now",
            STOP_DEADLINE.as_secs()
        );
        std::process::exit(143);
    });
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
