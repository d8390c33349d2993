//! The ClusterManager operator loop (being written).
use std::future::Future;
use std::time::Duration;

/// Runs the operator and the in-process hub controllers until `shutdown` completes.
pub async fn run_in_process(
    client: kube::Client,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let _ = client;
    shutdown.await;
    Ok(())
}

/// Waits until the ClusterManager is Applied and its components are available.
pub async fn wait_ready(client: kube::Client, timeout: Duration) -> anyhow::Result<()> {
    let _ = (client, timeout);
    anyhow::bail!("waiting for the hub is not implemented yet")
}
