//! The OCM docs' first ManifestWork example, word for word (`tests/fixtures/manifestwork-example`),
//! through the CLI: created, applied and available, shown by `get works`, deleted with what it
//! applied. The only test using the docs' names (`my-sa`, `nginx-deployment` in `default`).
use std::path::PathBuf;
use std::time::Duration;

use clusteradm::api::work::AppliedManifestWork;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::ResourceExt as _;
use kube::api::Api;
use predicates::prelude::*;

use super::{TestCluster, applied_and_available, hub_cli, wait_gone, wait_work};

const WORK: &str = "my-first-work";

/// Checks the managed cluster holds what the docs describe; returns the Deployment, the
/// ServiceAccount and the name of the AppliedManifestWork owning them.
async fn assert_applied_as_documented(c: &TestCluster) -> (Deployment, ServiceAccount, String) {
    let deployments: Api<Deployment> = Api::namespaced(c.managed.clone(), "default");
    let d = deployments.get("nginx-deployment").await.unwrap();
    let spec = d.spec.clone().unwrap();
    assert_eq!(spec.replicas, Some(3));
    let pod = spec.template.spec.unwrap();
    assert_eq!(pod.service_account_name.as_deref(), Some("my-sa"));
    assert_eq!(pod.containers[0].image.as_deref(), Some("nginx:1.14.2"));
    let sa = Api::<ServiceAccount>::namespaced(c.managed.clone(), "default")
        .get("my-sa")
        .await
        .unwrap();
    let owner = d.owner_references()[0].clone();
    assert_eq!(owner.kind, "AppliedManifestWork");
    assert!(owner.name.ends_with("-my-first-work"), "{}", owner.name);
    let amw = Api::<AppliedManifestWork>::all(c.managed.clone())
        .get(&owner.name)
        .await
        .unwrap();
    assert_eq!(amw.status.unwrap().applied_resources.len(), 2);
    (d, sa, owner.name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docs_example_is_applied_shown_and_deleted() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-docs").await;
    let _agent = c.agent(Duration::from_secs(60));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/manifestwork-example");
    let created = format!("work {WORK} created in cluster {}", c.name);
    hub_cli(&[
        "create",
        "work",
        WORK,
        "-f",
        dir.to_str().unwrap(),
        "--clusters",
        &c.name,
    ])
    .assert()
    .success()
    .stderr(predicate::str::contains(created));

    let work = wait_work(
        &c.works(),
        WORK,
        "Applied and Available",
        applied_and_available,
    )
    .await;
    let status = work.status.unwrap().resource_status.unwrap();
    let kinds: Vec<_> = status
        .manifests
        .iter()
        .map(|m| m.resource_meta.kind.clone().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["Deployment", "ServiceAccount"],
        "files are read in name order"
    );
    let (d, sa, record) = assert_applied_as_documented(&c).await;

    let shown = hub_cli(&["get", "works", WORK, "--cluster", &c.name])
        .assert()
        .success();
    let out = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
    for expected in [
        "CLUSTER",
        "MANIFESTS",
        WORK,
        "Deployment",
        "default/nginx-deployment",
        "default/my-sa",
    ] {
        assert!(out.contains(expected), "{expected:?} missing in:\n{out}");
    }
    let listed = hub_cli(&["get", "works", "-c", &c.name, "-o", "json"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&listed.get_output().stdout).unwrap();
    assert_eq!(json["metadata"]["name"], WORK);

    hub_cli(&["delete", "work", WORK, "--clusters", &c.name, "-y"])
        .assert()
        .success()
        .stderr(predicate::str::contains("deleted from cluster"));
    // The work is gone only once the agent removed what it applied.
    let deployments: Api<Deployment> = Api::namespaced(c.managed.clone(), "default");
    wait_gone(deployments, "nginx-deployment", &d.uid().unwrap()).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(c.managed.clone(), "default");
    wait_gone(accounts, "my-sa", &sa.uid().unwrap()).await;
    let records: Api<AppliedManifestWork> = Api::all(c.managed.clone());
    assert!(records.get_opt(&record).await.unwrap().is_none());
}
