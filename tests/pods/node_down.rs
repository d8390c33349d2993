//! A managed node that stops: its kubelet stopped and every container on it frozen (the agent's
//! among them), for longer than the cluster's lease grace period. The hub marks the cluster
//! `Unknown`; when the node comes back, the agent's next heartbeat makes it `Available` again.
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;

use crate::common;

/// A short lease for the test: the hub's grace period is five of them (25 s).
const LEASE_SECONDS: i64 = 5;

/// Stops the managed node, waits for `Unknown`, restarts it, waits for `Available`; returns both
/// delays (stopped → Unknown, restarted → Available).
pub async fn cluster_follows_its_node(
    hub: &kube::Client,
    clusters: &Api<DynamicObject>,
    cluster: &str,
) -> (Duration, Duration) {
    let lease = |seconds: i64| json!({"spec": {"leaseDurationSeconds": seconds}});
    clusters
        .patch(
            cluster,
            &PatchParams::default(),
            &Patch::Merge(lease(LEASE_SECONDS)),
        )
        .await
        .unwrap();
    // The agent reads the new period on its next beat (up to the old one away): wait for two
    // renewals that close together, so the cluster is Available only by its heartbeat.
    beats_every(hub, cluster, Duration::from_secs(LEASE_SECONDS as u64 + 2)).await;

    let node = Node::managed();
    node.stop();
    let stopped = Instant::now();
    let unknown = wait_availability(clusters, cluster, "Unknown", Duration::from_secs(90)).await;
    let to_unknown = stopped.elapsed();
    node.start();
    let started = Instant::now();
    let available = wait_availability(clusters, cluster, "True", Duration::from_secs(90)).await;
    let to_available = started.elapsed();
    assert_eq!(
        unknown["reason"], "ManagedClusterLeaseUpdateStopped",
        "{unknown}"
    );
    assert!(
        to_unknown >= Duration::from_secs(LEASE_SECONDS as u64 * 4),
        "Unknown after {to_unknown:?}, before the grace period"
    );
    assert_eq!(available["status"], "True");

    clusters
        .patch(cluster, &PatchParams::default(), &Patch::Merge(lease(60)))
        .await
        .unwrap();
    (to_unknown, to_available)
}

/// Waits until the cluster's lease on the hub is renewed twice within `within`.
async fn beats_every(hub: &kube::Client, cluster: &str, within: Duration) {
    let leases: Api<Lease> = Api::namespaced(hub.clone(), cluster);
    let last = std::sync::Arc::new(std::sync::Mutex::new(None::<(String, Instant)>));
    common::eventually(
        "the agent renewing its lease at the new period",
        Duration::from_secs(120),
        || {
            let leases = leases.clone();
            let last = last.clone();
            async move {
                let lease = leases.get("managed-cluster-lease").await.ok()?;
                let renewed = serde_json::to_string(&lease.spec?.renew_time?).ok()?;
                let mut last = last.lock().unwrap();
                let beat = match last.as_ref() {
                    Some((seen, at)) if *seen != renewed => Some(at.elapsed() <= within),
                    _ => None,
                };
                if beat.is_some() || last.is_none() {
                    *last = Some((renewed, Instant::now()));
                }
                beat.filter(|quick| *quick).map(|_| ())
            }
        },
    )
    .await;
}

/// Waits until `ManagedClusterConditionAvailable` has `status`; returns the condition.
async fn wait_availability(
    clusters: &Api<DynamicObject>,
    cluster: &str,
    status: &str,
    timeout: Duration,
) -> serde_json::Value {
    common::eventually(&format!("{cluster} Available={status}"), timeout, || {
        let clusters = clusters.clone();
        async move {
            let c = clusters.get(cluster).await.ok()?;
            c.data["status"]["conditions"]
                .as_array()?
                .iter()
                .find(|c| c["type"] == "ManagedClusterConditionAvailable" && c["status"] == status)
                .cloned()
        }
    })
    .await
}

/// The managed node's kubelet (SIGSTOP/SIGCONT) and its containers (the cgroup v1 freezer of the
/// kubelet's cgroup root, under which every pod of the node lives).
struct Node {
    kubelet: i32,
    freezer: std::path::PathBuf,
}

impl Node {
    fn managed() -> Self {
        let cp_dir = std::env::var("CP_DIR").expect("CP_DIR (scripts/control-plane env)");
        let base = std::env::var("CP_PORT_BASE").expect("CP_PORT_BASE (scripts/control-plane env)");
        let pid = std::fs::read_to_string(format!("{cp_dir}/pids/managed-kubelet.pid")).unwrap();
        let freezer = format!("/sys/fs/cgroup/freezer/clusteradm-rs-{base}-managed/freezer.state");
        assert!(
            std::path::Path::new(&freezer).exists(),
            "{freezer}: no cgroup v1 freezer for the managed node"
        );
        Self {
            kubelet: pid.trim().parse().unwrap(),
            freezer: freezer.into(),
        }
    }

    fn stop(&self) {
        signal(self.kubelet, "STOP");
        std::fs::write(&self.freezer, "FROZEN").unwrap();
    }

    fn start(&self) {
        std::fs::write(&self.freezer, "THAWED").unwrap();
        signal(self.kubelet, "CONT");
    }
}

/// A test that fails while the node is stopped leaves it running again.
impl Drop for Node {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.freezer, "THAWED");
        let _ = std::process::Command::new("kill")
            .args(["-CONT", &self.kubelet.to_string()])
            .status();
    }
}

fn signal(pid: i32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}
