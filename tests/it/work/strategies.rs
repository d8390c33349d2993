//! The update strategies a work's `manifestConfigs` name, besides the default Update and
//! CreateOnly (in `lifecycle`): `ReadOnly` reads and reports an object it never writes, and
//! `ServerSideApply` applies as its `fieldManager`, reporting a conflict with another manager
//! unless `force` takes the field over.
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::api::conditions;
use clusteradm::api::work::ManifestWork;

use super::{TestCluster, applied_and_available, wait_work};
use crate::common;

fn config_map(ns: &str, name: &str, color: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns}, "data": {"color": color}})
}

fn work(
    c: &TestCluster,
    name: &str,
    manifest: &serde_json::Value,
    strategy: &serde_json::Value,
) -> ManifestWork {
    let ns = manifest["metadata"]["namespace"].clone();
    let object = manifest["metadata"]["name"].clone();
    serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": c.name},
        "spec": {
            "workload": {"manifests": [manifest]},
            "manifestConfigs": [{
                "resourceIdentifier": {"group": "", "resource": "configmaps", "namespace": ns, "name": object},
                "updateStrategy": strategy,
            }]
        }
    }))
    .unwrap()
}

fn applied_condition(w: &ManifestWork) -> Option<(String, String)> {
    let manifest = w
        .status
        .as_ref()?
        .resource_status
        .as_ref()?
        .manifests
        .first()?;
    conditions::find(&manifest.conditions, "Applied").map(|c| (c.status.clone(), c.message.clone()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_reports_an_object_it_never_writes() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-readonly").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(1));
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    let name = common::unique("w");
    c.works()
        .create(
            &PostParams::default(),
            &work(
                &c,
                &name,
                &config_map(&ns, "watched", "blue"),
                &json!({"type": "ReadOnly"}),
            ),
        )
        .await
        .unwrap();
    // Not there: not available, and not created.
    wait_work(&c.works(), &name, "the missing object not available", |w| {
        w.status
            .as_ref()
            .and_then(|s| s.resource_status.as_ref())
            .and_then(|r| r.manifests.first())
            .and_then(|m| conditions::find(&m.conditions, "Available"))
            .is_some_and(|c| c.status == "False")
    })
    .await;
    assert!(config_maps.get_opt("watched").await.unwrap().is_none());
    // Someone else creates it with other data: available, and left as it is.
    let theirs: ConfigMap = serde_json::from_value(config_map(&ns, "watched", "red")).unwrap();
    config_maps
        .create(&PostParams::default(), &theirs)
        .await
        .unwrap();
    wait_work(&c.works(), &name, "available", applied_and_available).await;
    common::never(
        "the read-only object written",
        Duration::from_secs(3),
        || async {
            let cm = config_maps.get("watched").await.ok()?;
            let color = cm.data.as_ref()?.get("color")?.clone();
            let owned = cm
                .metadata
                .owner_references
                .as_ref()
                .is_some_and(|r| !r.is_empty());
            (color != "red" || owned).then_some((color, owned))
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_reports_a_conflict_unless_forced_and_applies_as_its_field_manager() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-ssa").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(1));
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    // Another manager owns `color` already.
    let theirs: ConfigMap = serde_json::from_value(config_map(&ns, "shared", "red")).unwrap();
    let mut params = PatchParams::apply("it-other-manager");
    params.force = true;
    config_maps
        .patch("shared", &params, &Patch::Apply(&theirs))
        .await
        .unwrap();

    let gentle = common::unique("w");
    let ssa = json!({"type": "ServerSideApply", "serverSideApply": {"fieldManager": "work-agent-it", "force": false}});
    c.works()
        .create(
            &PostParams::default(),
            &work(&c, &gentle, &config_map(&ns, "shared", "blue"), &ssa),
        )
        .await
        .unwrap();
    let w = wait_work(&c.works(), &gentle, "the conflict reported", |w| {
        applied_condition(w).is_some_and(|(status, _)| status == "False")
    })
    .await;
    let (_, message) = applied_condition(&w).unwrap();
    assert!(message.to_lowercase().contains("conflict"), "{message}");
    assert_eq!(
        config_maps.get("shared").await.unwrap().data.unwrap()["color"],
        "red"
    );

    let forced = common::unique("w");
    let ssa = json!({"type": "ServerSideApply", "serverSideApply": {"fieldManager": "work-agent-it", "force": true}});
    c.works()
        .create(
            &PostParams::default(),
            &work(&c, &forced, &config_map(&ns, "shared", "blue"), &ssa),
        )
        .await
        .unwrap();
    wait_work(&c.works(), &forced, "applied", applied_and_available).await;
    let cm = config_maps.get("shared").await.unwrap();
    assert_eq!(cm.data.unwrap()["color"], "blue");
    let managers: Vec<String> = cm
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(
        managers.contains(&"work-agent-it".to_owned()),
        "{managers:?}"
    );
}
