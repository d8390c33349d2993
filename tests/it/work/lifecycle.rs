//! A work over its life: `--overwrite` updates, a dropped manifest is deleted, `delete work`
//! removes everything; delete options Orphan and SelectivelyOrphan; a work created while the
//! agent is down is applied when it starts; a hand edit on the managed cluster is repaired.
use std::path::{Path, PathBuf};
use std::time::Duration;

use clusteradm::api::work::{
    DeleteOption, ManifestWork, ManifestWorkSpec, ManifestsTemplate, PropagationPolicy,
    ResourceIdentifier, SelectivelyOrphan,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt as _;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::wait::await_condition;
use predicates::prelude::*;

use super::{TestCluster, WAIT, applied_and_available, hub_cli, wait_gone, wait_work};
use crate::common;

fn deployment(ns: &str, name: &str, replicas: i32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec: {{containers: [{{name: web, image: nginx:1.14.2}}]}}\n"
    )
}

fn config_map(ns: &str, name: &str) -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": {"k": "v"}})
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(common::unique("clusteradm-it-work"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn replicas_are(n: i32) -> impl Fn(Option<&Deployment>) -> bool {
    move |d| d.and_then(|d| d.spec.as_ref()).and_then(|s| s.replicas) == Some(n)
}

async fn wait_replicas(deployments: &Api<Deployment>, name: &str, n: i32) {
    tokio::time::timeout(
        WAIT,
        await_condition(deployments.clone(), name, replicas_are(n)),
    )
    .await
    .unwrap_or_else(|_| panic!("deployment {name} did not get {n} replicas within {WAIT:?}"))
    .unwrap();
}

fn create(c: &TestCluster, work: &str, dir: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut args = vec![
        "create",
        "work",
        work,
        "-f",
        dir.to_str().unwrap(),
        "--clusters",
        &c.name,
    ];
    args.extend(extra);
    hub_cli(&args).assert()
}

// Multi-threaded: the in-process agent must run while the test blocks on the CLI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overwrite_updates_a_dropped_manifest_is_deleted_and_delete_removes_all() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-life").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(60));
    let (work, dir) = (common::unique("w"), temp_dir());
    std::fs::write(dir.join("a-deploy.yaml"), deployment(&ns, "web", 1)).unwrap();
    std::fs::write(
        dir.join("b-cm.json"),
        config_map(&ns, "settings").to_string(),
    )
    .unwrap();
    create(&c, &work, &dir, &[]).success();
    wait_work(&c.works(), &work, "applied", applied_and_available).await;
    let deployments: Api<Deployment> = Api::namespaced(c.managed.clone(), &ns);
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    let cm = config_maps.get("settings").await.unwrap();

    std::fs::write(dir.join("a-deploy.yaml"), deployment(&ns, "web", 2)).unwrap();
    create(&c, &work, &dir, &[])
        .code(1)
        .stderr(predicate::str::contains(format!(
            "work {work} already exists in cluster {}",
            c.name
        )))
        .stderr(predicate::str::contains("--overwrite"));
    create(&c, &work, &dir, &["--overwrite"])
        .success()
        .stderr(predicate::str::contains("updated"));
    wait_replicas(&deployments, "web", 2).await;
    create(&c, &work, &dir, &["--overwrite"])
        .success()
        .stderr(predicate::str::contains("unchanged"));

    std::fs::remove_file(dir.join("b-cm.json")).unwrap();
    create(&c, &work, &dir, &["--overwrite"]).success();
    wait_gone(config_maps, "settings", &cm.uid().unwrap()).await;
    let w = wait_work(&c.works(), &work, "re-applied with one manifest", |w| {
        applied_and_available(w)
            && w.status
                .as_ref()
                .and_then(|s| s.resource_status.as_ref())
                .is_some_and(|r| r.manifests.len() == 1)
    })
    .await;
    assert_eq!(w.metadata.generation, Some(3));

    let d = deployments.get("web").await.unwrap();
    hub_cli(&["delete", "work", &work, "--clusters", &c.name])
        .assert()
        .success();
    wait_gone(deployments, "web", &d.uid().unwrap()).await;
}

// Multi-threaded: the in-process agent must run while the test blocks on the CLI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_and_selectively_orphan_leave_resources_behind() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-orphan").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(60));
    let orphan = |policy, rules: Vec<ResourceIdentifier>| DeleteOption {
        propagation_policy: Some(policy),
        selectively_orphans: (!rules.is_empty()).then_some(SelectivelyOrphan {
            orphaning_rules: rules,
        }),
        ttl_seconds_after_finished: None,
    };
    let keep = ResourceIdentifier {
        group: None,
        resource: "configmaps".into(),
        name: "kept".into(),
        namespace: Some(ns.clone()),
    };
    let cases = [
        (
            "all",
            orphan(PropagationPolicy::Orphan, vec![]),
            vec!["a", "b"],
            vec![],
        ),
        (
            "some",
            orphan(PropagationPolicy::SelectivelyOrphan, vec![keep]),
            vec!["kept"],
            vec!["dropped"],
        ),
    ];
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    for (label, option, kept, deleted) in cases {
        let name = common::unique(&format!("w-{label}"));
        c.create_work(
            &name,
            ManifestWorkSpec {
                workload: ManifestsTemplate {
                    manifests: kept
                        .iter()
                        .chain(&deleted)
                        .map(|n| config_map(&ns, n))
                        .collect(),
                },
                delete_option: Some(option),
                ..Default::default()
            },
        )
        .await;
        wait_work(&c.works(), &name, "applied", applied_and_available).await;
        hub_cli(&["delete", "work", &name, "--clusters", &c.name, "-y"])
            .assert()
            .success();
        for n in &kept {
            let cm = config_maps
                .get(n)
                .await
                .unwrap_or_else(|e| panic!("{label}: {n} was deleted: {e}"));
            assert!(
                cm.owner_references()
                    .iter()
                    .all(|r| r.kind != "AppliedManifestWork"),
                "{label}: {n} still owned"
            );
        }
        for n in &deleted {
            assert!(
                config_maps.get_opt(n).await.unwrap().is_none(),
                "{label}: {n} was left"
            );
        }
    }
}

// Multi-threaded: the in-process agent must run while the test blocks on the CLI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_created_while_the_agent_is_down_is_applied_and_drift_is_repaired() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-drift").await;
    let ns = c.managed_namespace().await;
    let (work, dir) = (common::unique("w"), temp_dir());
    std::fs::write(dir.join("deploy.yaml"), deployment(&ns, "web", 2)).unwrap();
    create(&c, &work, &dir, &[]).success();
    assert!(
        c.works().get(&work).await.unwrap().status.is_none(),
        "nobody reported yet"
    );

    let _agent = c.agent(Duration::from_secs(2));
    wait_work(
        &c.works(),
        &work,
        "applied once the agent runs",
        applied_and_available,
    )
    .await;
    let deployments: Api<Deployment> = Api::namespaced(c.managed.clone(), &ns);
    let edit = serde_json::json!({"spec": {"replicas": 5}});
    deployments
        .patch(
            "web",
            &PatchParams {
                field_manager: Some("it-hand-edit".into()),
                ..Default::default()
            },
            &Patch::Merge(&edit),
        )
        .await
        .unwrap();
    assert_eq!(
        deployments.get("web").await.unwrap().spec.unwrap().replicas,
        Some(5)
    );
    wait_replicas(&deployments, "web", 2).await;
}

/// A work that found a ConfigMap already there (CreateOnly) or whose ConfigMap an admin released
/// (owner reference removed) never deletes it: a work removes only what it owns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_a_work_leaves_what_it_does_not_own() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-own").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(60));
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    let existing: ConfigMap = serde_json::from_value(config_map(&ns, "prod")).unwrap();
    config_maps
        .create(&PostParams::default(), &existing)
        .await
        .unwrap();
    let name = common::unique("w");
    let work: ManifestWork = serde_json::from_value(serde_json::json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": c.name},
        "spec": {
            "workload": {"manifests": [config_map(&ns, "prod"), config_map(&ns, "released")]},
            "manifestConfigs": [{
                "resourceIdentifier": {"group": "", "resource": "configmaps", "namespace": ns, "name": "prod"},
                "updateStrategy": {"type": "CreateOnly"}
            }]
        }
    }))
    .unwrap();
    c.works()
        .create(&PostParams::default(), &work)
        .await
        .unwrap();
    wait_work(&c.works(), &name, "applied", applied_and_available).await;
    // An admin takes "released" out of the work's hands.
    let released = config_maps.get("released").await.unwrap();
    assert!(!released.owner_references().is_empty());
    config_maps
        .patch(
            "released",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"ownerReferences": null}})),
        )
        .await
        .unwrap();
    let uid = c.works().get(&name).await.unwrap().uid().unwrap();
    c.works()
        .delete(&name, &kube::api::DeleteParams::default())
        .await
        .unwrap();
    wait_gone(c.works(), &name, &uid).await;
    for kept in ["prod", "released"] {
        let cm = config_maps.get_opt(kept).await.unwrap();
        assert!(
            cm.is_some_and(|cm| cm.metadata.deletion_timestamp.is_none()),
            "{kept} was deleted with the work"
        );
    }
}

/// Two works applying one ConfigMap both own it (one reference each, as upstream's agent keeps
/// them); deleting the first leaves the ConfigMap (same object) to the second, deleting the second
/// removes it. Upstream's e2e "should keep the resource when there are other appliedManifestWork
/// owners".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_two_works_apply_is_kept_until_both_are_deleted() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-2own").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(60));
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    let works = [common::unique("w1"), common::unique("w2")];
    for name in &works {
        c.create_work(
            name,
            ManifestWorkSpec {
                workload: ManifestsTemplate {
                    manifests: vec![config_map(&ns, "shared")],
                },
                ..Default::default()
            },
        )
        .await;
        wait_work(&c.works(), name, "applied", applied_and_available).await;
    }
    let owned_by_works = |cm: &ConfigMap| {
        cm.owner_references()
            .iter()
            .filter(|r| r.kind == "AppliedManifestWork")
            .count()
    };
    let cm = common::eventually("both works own the ConfigMap", WAIT, || async {
        config_maps
            .get("shared")
            .await
            .ok()
            .filter(|cm| owned_by_works(cm) == 2)
    })
    .await;

    let first = c.works().get(&works[0]).await.unwrap().uid().unwrap();
    c.works()
        .delete(&works[0], &kube::api::DeleteParams::default())
        .await
        .unwrap();
    wait_gone(c.works(), &works[0], &first).await;
    let kept = config_maps.get("shared").await.unwrap();
    assert_eq!(kept.uid(), cm.uid(), "the ConfigMap was re-created");
    assert!(kept.metadata.deletion_timestamp.is_none(), "being deleted");
    assert_eq!(owned_by_works(&kept), 1, "{:?}", kept.owner_references());

    let second = c.works().get(&works[1]).await.unwrap().uid().unwrap();
    c.works()
        .delete(&works[1], &kube::api::DeleteParams::default())
        .await
        .unwrap();
    wait_gone(c.works(), &works[1], &second).await;
    wait_gone(config_maps, "shared", &cm.uid().unwrap()).await;
}
