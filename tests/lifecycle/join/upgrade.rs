//! `upgrade klusterlet` on the real managed cluster: refused where nothing joined; after a join,
//! the operator's Deployment and the Klusterlet's images move to another release or to our image,
//! and a second run changes nothing.
use clusteradm::api::operator::Klusterlet;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;

use super::{MANAGED_SINGLETON, hub, join, reset};
use crate::common;

async fn upgrade(args: &[&str]) -> (i32, String) {
    let mut cmd = common::clusteradm();
    cmd.args(["upgrade", "klusterlet"])
        .args(args)
        .arg("--kubeconfig")
        .arg(common::env().managed);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn upgrade_klusterlet_moves_the_operator_and_agent_images() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let (code, err) = upgrade(&["--bundle-version", "1.2.0"]).await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("klusterlet is not installed"), "{err}");

    let hub = hub(false).await;
    // Joined with --enable-sync-labels: the upgrade keeps the operator's flag.
    join(
        &hub,
        "it-upgrade",
        &["--ca-cert-hash", &hub.hash, "--enable-sync-labels"],
    )
    .assert()
    .success();
    let (code, err) = upgrade(&["--bundle-version", "1.2.0"]).await;
    assert_eq!(code, 0, "{err}");
    let k = Api::<Klusterlet>::all(managed.clone())
        .get("klusterlet")
        .await
        .unwrap();
    assert_eq!(
        k.spec.work_image_pull_spec.as_deref(),
        Some("quay.io/open-cluster-management/work:v1.2.0")
    );
    let operator = || async {
        let d = Api::<Deployment>::namespaced(managed.clone(), "open-cluster-management")
            .get("klusterlet")
            .await
            .unwrap();
        d.spec.unwrap().template.spec.unwrap().containers[0].clone()
    };
    let upstream = operator().await;
    assert_eq!(
        upstream.image.as_deref(),
        Some("quay.io/open-cluster-management/registration-operator:v1.2.0")
    );
    let args = upstream.args.unwrap();
    assert!(
        args.contains(&"--enable-sync-labels".to_string()),
        "{args:?}"
    );
    let (code, err) = upgrade(&["--bundle-version", "1.2.0"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("nothing changed"), "{err}");

    // To our image: the operator runs `clusteradm operator klusterlet`, the agents our image.
    let (code, err) = upgrade(&["--image", "registry.example/clusteradm:v2"]).await;
    assert_eq!(code, 0, "{err}");
    let container = operator().await;
    assert_eq!(
        container.image.as_deref(),
        Some("registry.example/clusteradm:v2")
    );
    let args = container.args.unwrap();
    assert_eq!(args[..2], ["operator", "klusterlet"]);
    assert!(
        args.contains(&"--enable-sync-labels".to_string()),
        "{args:?}"
    );
    let k = Api::<Klusterlet>::all(managed.clone())
        .get("klusterlet")
        .await
        .unwrap();
    assert_eq!(
        k.spec.registration_image_pull_spec.as_deref(),
        Some("registry.example/clusteradm:v2")
    );
    reset(&managed).await;
}
