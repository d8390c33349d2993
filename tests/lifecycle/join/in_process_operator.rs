//! `clusteradm operator klusterlet --in-process` on the managed side as upstream's CI leaves it for
//! its e2e suite (scripts/upstream/e2e): join's plan applied without its Klusterlet, from
//! `join --dry-run --output-file`. A Klusterlet made afterwards gets its agents in the operator's
//! process, with no agent Deployment, and they register with the bootstrap token the file holds.
use std::process::Stdio;
use std::time::Duration;

use clusteradm::api::cluster::ManagedCluster;
use clusteradm::api::operator::Klusterlet;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DeleteParams, PostParams};

use super::{AGENT_NS, MANAGED_SINGLETON, hub, reset};
use crate::common;

const WAIT: Duration = Duration::from_secs(90);

/// Kills the operator process when the test ends, however it ends.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_process_operator_runs_each_klusterlets_agents_itself() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    let cluster = common::unique("it-op-inproc");

    // join's plan, token included, in a file; applied without its Klusterlet.
    let file = common::temp_file("unused", "").with_file_name("join.yaml");
    super::join(
        &hub,
        &cluster,
        &[
            "--ca-cert-hash",
            &hub.hash,
            "--dry-run",
            "--in-process",
            "--output-file",
        ],
    )
    .arg(&file)
    .assert()
    .success();
    let mut objects =
        clusteradm::apply::parse_objects(&std::fs::read_to_string(&file).unwrap(), "join.yaml")
            .unwrap();
    objects.retain(|o| o.types.as_ref().unwrap().kind != "Klusterlet");
    clusteradm::apply::Applier::new(managed.clone(), WAIT)
        .apply(objects)
        .await
        .unwrap();

    let operator = std::process::Command::new(env!("CARGO_BIN_EXE_clusteradm"))
        .args(["operator", "klusterlet", "--in-process", "--kubeconfig"])
        .arg(common::env().managed)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let operator = Running(operator);

    // A Klusterlet of its own, as the suite makes them: its own agent namespace and a copy of the
    // bootstrap secret there.
    let name = common::unique("it-op-inproc-k");
    let namespace = format!("{AGENT_NS}-{}", &name[name.len() - 6..]);
    copy_bootstrap_secret(&managed, &namespace).await;
    let klusterlet: Klusterlet = serde_json::from_value(serde_json::json!({
        "apiVersion": "operator.open-cluster-management.io/v1",
        "kind": "Klusterlet",
        "metadata": {"name": name},
        "spec": {"clusterName": cluster, "namespace": namespace, "deployOption": {"mode": "Default"}},
    }))
    .unwrap();
    let klusterlets: Api<Klusterlet> = Api::all(managed.clone());
    klusterlets
        .create(&PostParams::default(), &klusterlet)
        .await
        .unwrap();

    // Its registration agent, in the operator's process, made the cluster with the file's token.
    let clusters: Api<ManagedCluster> = Api::all(common::hub().await);
    common::eventually("the cluster to register on the hub", WAIT, || async {
        clusters.get_opt(&cluster).await.unwrap()
    })
    .await;
    let deployments: Api<Deployment> = Api::namespaced(managed.clone(), &namespace);
    let names: Vec<String> = deployments
        .list(&kube::api::ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|d| d.metadata.name.unwrap_or_default())
        .collect();
    assert!(
        names.is_empty(),
        "agents run in the operator's process, not as {names:?}"
    );

    klusterlets
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    common::eventually("the Klusterlet to be cleaned up and gone", WAIT, || async {
        klusterlets
            .get_opt(&name)
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    let _ = clusters.delete(&cluster, &DeleteParams::default()).await;
    drop(operator);
    reset(&managed).await;
}

/// Makes `namespace` with a copy of the bootstrap secret join's plan put in the agent namespace.
async fn copy_bootstrap_secret(managed: &kube::Client, namespace: &str) {
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": namespace}})).unwrap();
    Api::<Namespace>::all(managed.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let mut bootstrap = Api::<Secret>::namespaced(managed.clone(), AGENT_NS)
        .get("bootstrap-hub-kubeconfig")
        .await
        .unwrap();
    bootstrap.metadata = kube::api::ObjectMeta {
        name: bootstrap.metadata.name,
        ..Default::default()
    };
    Api::<Secret>::namespaced(managed.clone(), namespace)
        .create(&PostParams::default(), &bootstrap)
        .await
        .unwrap();
}
