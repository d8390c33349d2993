//! `serverSideApply.ignoreFields`: a controller on the managed cluster (an autoscaler, here a
//! patch under its own field manager) changes `.spec.replicas` and an annotation the work sets;
//! the agent leaves the replicas alone (ignored, `OnSpokePresent`) and reverts the annotation.
//! A path the agent cannot follow is refused in the manifest's condition.
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use clusteradm::api::conditions;
use clusteradm::api::work::{
    IgnoreField, IgnoreFieldCondition, ManifestConfigOption, ManifestWorkSpec, ManifestsTemplate,
    ResourceIdentifier, ServerSideApplyConfig, UpdateStrategy, UpdateStrategyType,
};

use super::{TestCluster, applied_and_available, wait_work};
use crate::common;

fn ssa_ignoring(ns: &str, fields: Vec<IgnoreField>) -> ManifestConfigOption {
    ManifestConfigOption {
        resource_identifier: ResourceIdentifier {
            group: Some("apps".into()),
            resource: "deployments".into(),
            name: "web".into(),
            namespace: Some(ns.into()),
        },
        update_strategy: Some(UpdateStrategy {
            type_: UpdateStrategyType::ServerSideApply,
            server_side_apply: Some(ServerSideApplyConfig {
                force: Some(true),
                ignore_fields: fields,
                ..ServerSideApplyConfig::default()
            }),
        }),
        ..ManifestConfigOption::default()
    }
}

/// Work `name` of [`deployment`] in `ns`, applied server-side ignoring `field`.
async fn create_deployment_work(c: &TestCluster, name: &str, ns: &str, field: IgnoreField) {
    c.create_work(
        name,
        ManifestWorkSpec {
            workload: ManifestsTemplate {
                manifests: vec![deployment(ns)],
            },
            manifest_configs: vec![ssa_ignoring(ns, vec![field])],
            ..Default::default()
        },
    )
    .await;
}

fn deployment(ns: &str) -> serde_json::Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns, "annotations": {"team": "payments"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.invalid/web:1"}]}}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ignored_field_is_left_to_the_cluster_and_the_others_are_reverted() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-ignore").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(1));
    let name = common::unique("w");
    let replicas = IgnoreField {
        condition: IgnoreFieldCondition::OnSpokePresent,
        json_paths: vec![".spec.replicas".into()],
        ..IgnoreField::default()
    };
    create_deployment_work(&c, &name, &ns, replicas).await;
    wait_work(&c.works(), &name, "applied", applied_and_available).await;
    let deployments: Api<Deployment> = Api::namespaced(c.managed.clone(), &ns);
    let created = deployments.get("web").await.unwrap();
    assert_eq!(created.spec.as_ref().unwrap().replicas, Some(2));

    // The autoscaler scales to 5; someone also edits the annotation the work sets.
    let scaled =
        json!({"metadata": {"annotations": {"team": "hand-edited"}}, "spec": {"replicas": 5}});
    let params = PatchParams {
        field_manager: Some("it-autoscaler".into()),
        ..PatchParams::default()
    };
    deployments
        .patch("web", &params, &Patch::Merge(&scaled))
        .await
        .unwrap();
    // The agent's next pass reverts the annotation (so it has seen the change) ...
    let reverted = common::eventually(
        "the annotation reverted by the agent",
        Duration::from_secs(30),
        || async {
            let d = deployments.get("web").await.ok()?;
            let team = d.metadata.annotations.as_ref()?.get("team")?.clone();
            (team == "payments").then_some(d)
        },
    )
    .await;
    // ... and leaves the replicas as the autoscaler set them, then and after more passes.
    assert_eq!(reverted.spec.as_ref().unwrap().replicas, Some(5));
    let annotations = reverted.metadata.annotations.unwrap();
    assert!(
        annotations.contains_key(clusteradm::agent::work::ignore_fields::SPEC_HASH_ANNOTATION),
        "{annotations:?}"
    );
    // The agent passes every second: three more passes, each of which would set 2 again.
    common::never(
        "the ignored replicas written back",
        Duration::from_secs(3),
        || async {
            let replicas = deployments.get("web").await.ok()?.spec?.replicas;
            (replicas != Some(5)).then_some(replicas)
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ignored_path_the_agent_cannot_follow_is_refused_in_the_manifests_condition() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-ignore-bad").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(60));
    let name = common::unique("w");
    let jq = IgnoreField {
        jq_path_expressions: vec![".spec.replicas".into()],
        ..IgnoreField::default()
    };
    create_deployment_work(&c, &name, &ns, jq).await;
    let w = wait_work(&c.works(), &name, "the manifest refused", |w| {
        w.status
            .as_ref()
            .and_then(|s| s.resource_status.as_ref())
            .and_then(|r| r.manifests.first())
            .and_then(|m| conditions::find(&m.conditions, "Applied"))
            .is_some_and(|c| c.status == "False")
    })
    .await;
    let manifest = &w.status.unwrap().resource_status.unwrap().manifests[0];
    let applied = conditions::find(&manifest.conditions, "Applied").unwrap();
    assert!(
        applied.message.contains("jqPathExpressions"),
        "{}",
        applied.message
    );
    let deployments: Api<Deployment> = Api::namespaced(c.managed.clone(), &ns);
    assert!(
        deployments.get_opt("web").await.unwrap().is_none(),
        "nothing half-applied"
    );
}
