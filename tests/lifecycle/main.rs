//! Integration tests that install and remove hub- and cluster-wide singletons: the
//! ClusterManager and its operator (whose cleanup deletes the hub CRDs), `clean`, and the
//! klusterlet (`join`/`unjoin`, whose cleanup deletes the managed CRDs). Removing a CRD deletes
//! every object of its kind, so these run in their own test binary — cargo runs test binaries
//! one after another — and one test at a time, never beside the tests in `tests/it` that use
//! those CRDs. Every test takes [`serial`] first, so plain `cargo test` is as safe as
//! `scripts/test`'s `--test-threads=1`.
use ocm_test_support as common;
use ocm_test_support::registration as registration_fixture;

mod clean;
mod hub_addon;
mod hub_restart;
mod info;
mod join;
mod multiple_hubs;
mod operator_hub;
mod restore;
mod signals;
mod token;
mod upstream_scripts;

/// Holds the whole binary's one-test-at-a-time lock until dropped (a tokio mutex: each test has
/// its own runtime, and the guard is held across awaits). The first caller also removes the
/// admission webhook configurations an earlier test binary's in-process hub left (it ended
/// without stepping down): they name a server that is gone and fail every ManagedCluster write.
pub async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    let guard = LOCK.lock().await;
    if !LEFTOVERS_GONE.swap(true, std::sync::atomic::Ordering::SeqCst) {
        remove_gone_in_process_webhooks().await;
    }
    guard
}

static LEFTOVERS_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Deletes the admission configurations (what `clean` removes first when no hub runs): none of
/// an earlier binary's is served any more.
async fn remove_gone_in_process_webhooks() {
    clusteradm::operator::cluster_manager::cleanup::remove_admission(
        &common::hub().await,
        std::time::Duration::from_secs(30),
    )
    .await
    .unwrap();
}

/// Runs `scripts/control-plane <verb>` (the local control plane's outage and second-hub verbs).
pub fn control_plane(verb: &str) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/control-plane");
    let status = std::process::Command::new(script)
        .arg(verb)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "scripts/control-plane {verb} failed");
}

/// [`serial`] for a test without a runtime.
pub fn serial_blocking() -> tokio::sync::MutexGuard<'static, ()> {
    LOCK.blocking_lock()
}

static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
