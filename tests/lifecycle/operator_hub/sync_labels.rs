//! Upstream's hub operator with `--enable-sync-labels` and an image pull secret, in-process: the
//! ClusterManager's labels (not the reserved ones) go onto the hub's objects while the flag is on
//! and come off when an operator without it takes over; the operator namespace's pull secret is
//! copied to the hub namespace.
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams};

use super::{CLUSTER_MANAGER_NAME, HUB_SINGLETON, Operator, WAIT, cms, setup_with, teardown};
use crate::common;
use clusteradm::api::names::{HUB_NAMESPACE, IMAGE_PULL_SECRET, OPERATOR_NAMESPACE};

const CRD: &str = "managedclusters.cluster.open-cluster-management.io";

/// The `team` label of the hub namespace and of a hub CRD, once both agree.
async fn team_label(client: &kube::Client) -> Option<Option<String>> {
    let ns = Api::<Namespace>::all(client.clone())
        .get(HUB_NAMESPACE)
        .await
        .ok()?;
    let crd = Api::<CustomResourceDefinition>::all(client.clone())
        .get(CRD)
        .await
        .ok()?;
    let (a, b) = (
        ns.labels().get("team").cloned(),
        crd.labels().get("team").cloned(),
    );
    (a == b).then_some(a)
}

#[tokio::test]
async fn labels_follow_the_flag_and_the_pull_secret_reaches_the_hub_namespace() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let id = common::unique("lc-sync");
    let docker_config = format!(r#"{{"auths":{{"{id}.example":{{"auth":"dTpw"}}}}}}"#);
    let pull: Secret = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": IMAGE_PULL_SECRET, "namespace": OPERATOR_NAMESPACE},
        "stringData": {".dockerconfigjson": docker_config}}))
    .unwrap();
    let (client, op) = setup_with(true).await;
    let operator_secrets: Api<Secret> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    operator_secrets
        .patch(
            IMAGE_PULL_SECRET,
            &PatchParams::apply("lifecycle-test").force(),
            &Patch::Apply(&pull),
        )
        .await
        .unwrap();
    let labels = serde_json::json!({"metadata": {"labels": {"team": id, "app": "not-copied"}}});
    cms(&client)
        .patch(
            CLUSTER_MANAGER_NAME,
            &PatchParams::default(),
            &Patch::Merge(&labels),
        )
        .await
        .unwrap();

    common::eventually(
        "the ClusterManager's team label on the hub's objects",
        WAIT,
        || async { (team_label(&client).await? == Some(id.clone())).then_some(()) },
    )
    .await;
    let ns = Api::<Namespace>::all(client.clone())
        .get(HUB_NAMESPACE)
        .await
        .unwrap();
    assert_ne!(
        ns.labels().get("app").map(String::as_str),
        Some("not-copied")
    );
    let hub_secrets: Api<Secret> = Api::namespaced(client.clone(), HUB_NAMESPACE);
    let copy = common::eventually(
        "the pull secret copied to the hub namespace",
        WAIT,
        || async { hub_secrets.get(IMAGE_PULL_SECRET).await.ok() },
    )
    .await;
    assert_eq!(
        copy.type_.as_deref(),
        Some("kubernetes.io/dockerconfigjson")
    );
    assert_eq!(
        copy.data.unwrap()[".dockerconfigjson"].0,
        docker_config.as_bytes()
    );

    // An operator without the flag takes over: what the ClusterManager's labels put there goes.
    op.stop().await;
    let op = Operator::start_with(&client, false);
    common::eventually("the team label gone without the flag", WAIT, || async {
        team_label(&client).await?.is_none().then_some(())
    })
    .await;

    teardown(&client, op).await;
    operator_secrets
        .delete(IMAGE_PULL_SECRET, &DeleteParams::default())
        .await
        .unwrap();
}
