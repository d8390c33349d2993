//! SIGTERM ends every long-running process within 5 s, in every state, as a kubelet expects:
//! `init --in-process` before it is ready, once ready, and after a join that failed and an
//! `accept --wait` that timed out; `join --in-process`; both operators; both controller sets.
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common;

static START: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);

/// The bound a kubelet-friendly process keeps after SIGTERM.
const STOP_WITHIN: Duration = Duration::from_secs(5);

/// A clusteradm process with its output lines sent to a channel.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
}

fn spawn(args: &[&str]) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_clusteradm"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("clusteradm starts");
    let (tx, lines) = mpsc::channel();
    for out in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    Running { child, lines }
}

impl Running {
    /// Waits for an output line containing `text`, and returns it.
    fn wait_for(&self, text: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(text) => return line,
                Ok(line) => seen.push(line),
                Err(mpsc::RecvTimeoutError::Timeout | mpsc::RecvTimeoutError::Disconnected) => {
                    panic!(
                        "no line containing {text:?} within {timeout:?} (or the process ended); it said:\n{}",
                        seen.join("\n")
                    )
                }
            }
        }
    }

    /// Sends SIGTERM and asserts the process exits within [`STOP_WITHIN`].
    fn terminate(mut self, phase: &str) {
        eprintln!("sigterm: {phase} at {:?}", START.elapsed());
        let child = &mut self.child;
        let pid = child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let sent = Instant::now();
        while sent.elapsed() < STOP_WITHIN {
            if child.try_wait().unwrap().is_some() {
                return;
            }
            // Polling a child's exit: std has no wait with a timeout.
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{phase}: still running {STOP_WITHIN:?} after SIGTERM");
    }
}

impl Drop for Running {
    /// A failed test must not leave its process running (and holding the hub's Lease).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the hub's operator has installed the ManagedCluster CRD.
fn wait_for_hub_crds() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let crds: kube::Api<
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        > = kube::Api::all(common::hub().await);
        common::eventually("the in-process operator's CRDs, established", Duration::from_secs(120), || {
            let crds = crds.clone();
            async move {
                let crd = crds
                    .get_opt("managedclusters.cluster.open-cluster-management.io")
                    .await
                    .ok()
                    .flatten()?;
                let established = crd.status?.conditions?.into_iter().any(|c| {
                    c.type_ == "Established" && c.status == "True"
                });
                established.then_some(())
            }
        })
        .await;
    });
}

/// Deletes ManagedCluster `name` from the hub and waits until it is gone.
fn delete_cluster(name: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let gvk = kube::api::GroupVersionKind::gvk(
            "cluster.open-cluster-management.io",
            "v1",
            "ManagedCluster",
        );
        let api: kube::Api<kube::api::DynamicObject> =
            kube::Api::all_with(common::hub().await, &kube::api::ApiResource::from_gvk(&gvk));
        let _ = api.delete(name, &kube::api::DeleteParams::default()).await;
        common::eventually(
            &format!("ManagedCluster {name} gone"),
            Duration::from_secs(60),
            || {
                let api = api.clone();
                async move { matches!(api.get_opt(name).await, Ok(None)).then_some(()) }
            },
        )
        .await;
    });
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn sigterm_stops_every_long_running_process_within_5s() {
    let _one_at_a_time = crate::serial_blocking();
    let env = common::env();
    let (hub, managed) = (path(&env.hub), path(&env.managed));

    // init --in-process: at once, before it is ready.
    spawn(&["init", "--in-process", "--kubeconfig", hub]).terminate("init --in-process, starting");

    // Ready, then after a join that failed and an accept --wait that timed out.
    let init = spawn(&["init", "--in-process", "--kubeconfig", hub]);
    let init_join_line = init.wait_for("clusteradm join", Duration::from_secs(120));
    wait_for_hub_crds();
    let failed_join = common::clusteradm()
        .args([
            "join",
            "--hub-token",
            "not-a-token",
            "--hub-apiserver",
            "https://127.0.0.1:1",
        ])
        .args([
            "--cluster-name",
            "it-sigterm",
            "--kubeconfig",
            managed,
            "--timeout",
            "2s",
        ])
        .output()
        .unwrap();
    assert!(!failed_join.status.success());
    let timed_out = common::clusteradm()
        .args([
            "accept",
            "--clusters",
            "it-sigterm-none",
            "--wait",
            "--timeout",
            "2s",
        ])
        .args(["--kubeconfig", hub])
        .output()
        .unwrap();
    assert!(!timed_out.status.success());
    // join --in-process against that hub, once its loops run.
    let line = init_join_line.replace("<cluster_name>", "it-sigterm");
    let mut join_args: Vec<&str> = line.split_whitespace().skip(1).collect();
    join_args.extend(["--in-process", "--kubeconfig", managed]);
    let join = spawn(&join_args);
    join.wait_for(
        "running the klusterlet operator and agents",
        Duration::from_secs(60),
    );
    join.terminate("join --in-process");
    // The cluster it registered goes while the hub still runs (its controllers own its finalizer).
    delete_cluster("it-sigterm");
    init.terminate("init --in-process, after a failed join and a timed-out accept");
    common::clusteradm()
        .args([
            "unjoin",
            "--cluster-name",
            "it-sigterm",
            "--yes",
            "--kubeconfig",
            managed,
        ])
        .assert()
        .success();

    // The operators and the controller sets, each once running.
    for (args, ready) in [
        (
            vec!["operator", "hub", "--kubeconfig", hub],
            "running the ClusterManager operator",
        ),
        (
            vec!["operator", "klusterlet", "--kubeconfig", managed],
            "running the Klusterlet operator",
        ),
        (
            vec!["controller", "hub", "--kubeconfig", hub],
            "running the hub controllers",
        ),
        (
            vec![
                "controller",
                "agent",
                "--cluster-name",
                "it-sigterm",
                "--agent-namespace",
                "default",
                "--kubeconfig",
                managed,
            ],
            "running the agents",
        ),
    ] {
        let p = spawn(&args);
        p.wait_for(ready, Duration::from_secs(60));
        p.terminate(&args[..2].join(" "));
    }

    common::clusteradm()
        .args(["clean", "--yes", "--kubeconfig", hub])
        .assert()
        .success();
}
