//! ManifestWorks over gRPC: a work agent is sent its cluster's works as manifest bundles and
//! reports their status; as upstream's work service, a stale status is dropped, the hub's
//! finalizer holds a work the agent holds, and goes when the agent reports it deleted.
use k8s_openapi::api::core::v1::Namespace;
use kube::api::PostParams;

use super::*;
use clusteradm::api::work::ManifestWork;
use kube::ResourceExt as _;

fn bundles() -> DataType {
    DataType::new(
        "io.open-cluster-management.works",
        "v1alpha1",
        "manifestbundles",
    )
}

/// A token of an identity that holds in `cluster`'s namespace what upstream grants a work agent
/// on ManifestWorks.
async fn work_agent_token(hub: &kube::Client, cluster: &str) -> String {
    let rules = serde_json::json!([
        {"apiGroups": ["work.open-cluster-management.io"], "resources": ["manifestworks"],
         "verbs": ["get", "list", "watch", "update", "patch"]},
        {"apiGroups": ["work.open-cluster-management.io"], "resources": ["manifestworks/status"],
         "verbs": ["update", "patch"]},
    ]);
    token_with_role(hub, cluster, "work-agent", rules).await
}

fn status_report(work: &ManifestWork, generation: i64, condition: &str) -> CloudEvent {
    let cluster = work.metadata.namespace.as_deref().unwrap();
    let mut report = status_event(
        bundles(),
        SubResource::Status,
        Action::Update,
        cluster,
        &serde_json::json!({
            "conditions": [{"type": condition, "status": "True", "reason": "AppliedManifestWorkComplete",
                            "message": "", "lastTransitionTime": "2026-12-02T00:00:00Z"}],
            "resourceStatus": null,
        }),
    );
    let uid = work.metadata.uid.as_deref().unwrap();
    event::set_string(&mut report, RESOURCE_ID, uid);
    event::set_integer(&mut report, event::RESOURCE_VERSION, generation);
    event::set_string(&mut report, "sequenceid", "1");
    report
}

#[tokio::test]
async fn a_work_agent_is_sent_its_works_and_reports_their_status_over_grpc() {
    let hub = common::hub().await;
    common::install_crds(&hub, &clusteradm::api::hub_crds(), WAIT).await;
    let cluster = common::unique("grpc-works");
    let namespace: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": cluster}})).unwrap();
    Api::<Namespace>::all(hub.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    let token = work_agent_token(&hub, &cluster).await;
    let server = server(None, false).await;
    let mut agent = server.client(None).await;
    let mut bundle_events = subscribe(&mut agent, &cluster, bundles(), &token).await;

    // A work on the hub reaches the agent as a manifest bundle with the work's metadata.
    let works: Api<ManifestWork> = Api::namespaced(hub.clone(), &cluster);
    let work: ManifestWork = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "w1", "namespace": cluster},
        "spec": {"workload": {"manifests": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1", "namespace": "default"}},
        ]}},
    }))
    .unwrap();
    let work = works.create(&PostParams::default(), &work).await.unwrap();
    let sent = next_event(&mut bundle_events).await;
    assert_eq!(
        sent.r#type,
        "io.open-cluster-management.works.v1alpha1.manifestbundles.spec.create_request"
    );
    assert_eq!(event::string(&sent, RESOURCE_ID), work.metadata.uid);
    assert_eq!(
        event::string(&sent, "resourceversion").as_deref(),
        Some("1")
    );
    let meta: serde_json::Value =
        serde_json::from_str(&event::string(&sent, "metadata").unwrap()).unwrap();
    assert_eq!(meta["name"], "w1");
    let bundle: serde_json::Value = event::json(&sent).unwrap();
    assert_eq!(bundle["manifests"][0]["metadata"]["name"], "cm1");

    // Its status comes back: the work holds the hub's finalizer while the agent holds it.
    publish(&mut agent, status_report(&work, 1, "Applied"), &token).await;
    let reported = works.get("w1").await.unwrap();
    let conditions = reported.status.clone().unwrap_or_default().conditions;
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "Applied" && c.status == "True"),
        "{conditions:?}"
    );
    assert!(
        reported
            .finalizers()
            .iter()
            .any(|f| f == clusteradm::api::work::MANIFEST_WORK_FINALIZER)
    );

    // A status for an older generation is dropped.
    let patch = serde_json::json!({"spec": {"workload": {"manifests": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm2", "namespace": "default"}},
    ]}}});
    works
        .patch("w1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    publish(&mut agent, status_report(&work, 1, "Degraded"), &token).await;
    let kept = works
        .get("w1")
        .await
        .unwrap()
        .status
        .unwrap_or_default()
        .conditions;
    assert!(
        !kept.iter().any(|c| c.type_ == "Degraded"),
        "a stale status was written: {kept:?}"
    );

    // Deleted on the hub: the agent is told, reports it removed, and the work goes.
    works.delete("w1", &DeleteParams::default()).await.unwrap();
    let deleting = event_where(&mut bundle_events, |e| event::has(e, "deletiontimestamp")).await;
    assert_eq!(event::string(&deleting, RESOURCE_ID), work.metadata.uid);
    publish(&mut agent, status_report(&work, 2, "Deleted"), &token).await;
    common::eventually(
        "the work gone once the agent reported it deleted",
        WAIT,
        || {
            let works = works.clone();
            async move { works.get_opt("w1").await.unwrap().is_none().then_some(()) }
        },
    )
    .await;
    Api::<Namespace>::all(hub.clone())
        .delete(&cluster, &DeleteParams::default())
        .await
        .unwrap();
}
