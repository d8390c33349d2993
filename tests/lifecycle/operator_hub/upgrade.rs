//! `upgrade clustermanager` on the real hub: with the operator in-process (no Deployment) the
//! ClusterManager's images move and `--wait` sees them applied; with the operator as a Deployment
//! its image moves too; a second run changes nothing; a rollout that cannot happen (no node here)
//! fails `--wait` with the reason.
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;

use super::{CLUSTER_MANAGER_NAME, HUB_SINGLETON, WAIT, cms, setup, teardown, wait_applied};
use crate::common;
use clusteradm::install::upgrade::{self, Images};

fn upgrade(args: &[&str]) -> std::process::Output {
    let mut cmd = common::clusteradm();
    cmd.arg("upgrade")
        .arg("clustermanager")
        .args(args)
        .arg("--kubeconfig")
        .arg(common::env().hub);
    cmd.output().unwrap()
}

async fn run(args: &'static [&'static str]) -> (i32, String) {
    let out = tokio::task::spawn_blocking(move || upgrade(args))
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn upgrade_moves_the_images_and_says_when_nothing_changes() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    wait_applied(&client).await;
    let current = Images {
        registry: clusteradm::api::names::DEFAULT_REGISTRY.into(),
        tag: "v1.3.1".into(),
        single: None,
    };
    let operator_objects = upgrade::hub_operator(&current, None, false).unwrap();
    let resolver = clusteradm::apply::Resolver::new(client.clone());
    // An operator Deployment an earlier `init` left (it never runs here: no node) goes first.
    clusteradm::apply::delete::delete_all(&resolver, &operator_objects[1..], WAIT)
        .await
        .unwrap_or_else(|e| panic!("{} operator objects left", e.len()));

    // In-process: no operator Deployment; the CR's images move and the hub applies them.
    let (code, err) = run(&["--bundle-version", "1.2.0", "--wait", "--timeout", "90"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("runs in a clusteradm process"), "{err}");
    let cm = cms(&client).get(CLUSTER_MANAGER_NAME).await.unwrap();
    assert_eq!(
        cm.spec.placement_image_pull_spec.as_deref(),
        Some("quay.io/open-cluster-management/placement:v1.2.0")
    );
    let (code, err) = run(&["--bundle-version", "1.2.0"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("nothing changed"), "{err}");

    // As a Deployment (what `init` deploys): the operator's image moves as well.
    clusteradm::apply::Applier::new(client.clone(), WAIT)
        .apply(operator_objects.clone())
        .await
        .unwrap();
    let (code, err) = run(&["--image-registry", "registry.example/ocm"]).await;
    assert_eq!(code, 0, "{err}");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "open-cluster-management");
    let d = deployments.get("cluster-manager").await.unwrap();
    assert_eq!(
        d.spec.unwrap().template.spec.unwrap().containers[0]
            .image
            .as_deref(),
        Some("registry.example/ocm/registration-operator:v1.3.1")
    );
    let cm = cms(&client).get(CLUSTER_MANAGER_NAME).await.unwrap();
    assert_eq!(
        cm.spec.work_image_pull_spec.as_deref(),
        Some("registry.example/ocm/work:v1.3.1")
    );
    // No node runs the new operator here: --wait says so within its timeout.
    let (code, err) = run(&[
        "--image-registry",
        "registry.example/ocm",
        "--wait",
        "--timeout",
        "3",
    ])
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("did not roll out within"), "{err}");

    clusteradm::apply::delete::delete_all(&resolver, &operator_objects[1..], WAIT)
        .await
        .unwrap_or_else(|e| panic!("{} operator objects left", e.len()));
    teardown(&client, op).await;
}
