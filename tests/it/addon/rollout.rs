//! A template add-on's new version rolled out by its placement's `rolloutStrategy`
//! (`Progressive`, one cluster at a time): the second cluster keeps the old version until the
//! first has applied the new one, and the ClusterManagementAddOn reports the progress as
//! upstream's. The test plays both clusters' work agents (no agents run).
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::api::addon::{AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn};
use clusteradm::api::cluster::PlacementDecision;
use clusteradm::api::conditions::find;
use clusteradm::api::work::ManifestWork;

use super::template::condition;
use super::{clusters, says, succeeds};
use crate::common;
use crate::registration::fixture;

fn version_file(version: &str) -> std::path::PathBuf {
    common::temp_file(
        "agent.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n  namespace: default\ndata:\n  version: \"{version}\"\n"
        ),
    )
}

/// The version of the ConfigMap the cluster's deploy work carries.
fn version_of(work: &ManifestWork) -> Option<String> {
    work.spec
        .workload
        .manifests
        .iter()
        .find_map(|m| m["data"]["version"].as_str().map(str::to_owned))
}

/// Waits for `cluster`'s deploy work to carry `version`.
async fn carries(hub: &kube::Client, cluster: &str, addon: &str, version: &str) -> ManifestWork {
    fixture::wait(
        Api::<ManifestWork>::namespaced(hub.clone(), cluster),
        &format!("addon-{addon}-deploy-0"),
        &format!("the deploy work with version {version}"),
        |w: Option<&ManifestWork>| w.and_then(version_of).as_deref() == Some(version),
    )
    .await
}

/// Waits for `cluster`'s deploy work to carry `version`, then reports it Applied and Available
/// for that generation, as a work agent would.
async fn applied(hub: &kube::Client, cluster: &str, addon: &str, version: &str) {
    let api = Api::<ManifestWork>::namespaced(hub.clone(), cluster);
    let name = format!("addon-{addon}-deploy-0");
    let work = carries(hub, cluster, addon, version).await;
    let now = Timestamp::now().to_string();
    let condition = |t: &str| {
        json!({"type": t, "status": "True", "reason": "AppliedManifestWorkComplete", "message": "",
            "lastTransitionTime": now, "observedGeneration": work.metadata.generation})
    };
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(
            json!({"status": {"conditions": [condition("Applied"), condition("Available")]}}),
        ),
    )
    .await
    .unwrap();
}

/// Waits until the add-on's progression for its placement says `reason`; its message.
async fn progression(hub: &kube::Client, addon: &str, reason: &str) -> String {
    let cma = fixture::wait(
        Api::<ClusterManagementAddOn>::all(hub.clone()),
        addon,
        &format!("the rollout {reason}"),
        |c: Option<&ClusterManagementAddOn>| {
            c.and_then(|c| c.status.as_ref())
                .and_then(|s| s.install_progressions.first())
                .and_then(|p| find(&p.conditions, "Progressing"))
                .is_some_and(|p| p.reason == reason)
        },
    )
    .await;
    let status = cma.status.unwrap();
    find(&status.install_progressions[0].conditions, "Progressing")
        .unwrap()
        .message
        .clone()
}

/// A PlacementDecision of `placement` (in `default`) naming `clusters`, as the placement
/// controller writes it: its API and name.
async fn decided(
    hub: &kube::Client,
    placement: &str,
    clusters: &[String],
) -> (Api<PlacementDecision>, String) {
    let decisions: Api<PlacementDecision> = Api::namespaced(hub.clone(), "default");
    let name = format!("{placement}-decision-1");
    let decision: PlacementDecision = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default",
            "labels": {"cluster.open-cluster-management.io/placement": placement,
                       "cluster.open-cluster-management.io/decision-group-index": "0"}},
    }))
    .unwrap();
    decisions
        .create(&PostParams::default(), &decision)
        .await
        .unwrap();
    let list: Vec<_> = clusters
        .iter()
        .map(|c| json!({"clusterName": c, "reason": ""}))
        .collect();
    decisions
        .patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"decisions": list}})),
        )
        .await
        .unwrap();
    (decisions, name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_version_rolls_out_one_cluster_at_a_time() {
    fixture::hub().await;
    let hub = common::hub().await;
    let mut c = clusters("it-addon-ro").await;
    c.sort();
    let addon = common::unique("it-ro-addon");
    let placement = common::unique("it-ro");
    let v1 = version_file("1");
    let placement_ref = format!("default/{placement}");
    let args = ["addon", "create", &addon, "-f", v1.to_str().unwrap()];
    succeeds(&[&args[..], &["--placement-ref", &placement_ref]].concat()).await;
    let cmas = Api::<ClusterManagementAddOn>::all(hub.clone());
    let rollout = json!({"spec": {"installStrategy": {"type": "Placements", "placements": [
        {"namespace": "default", "name": placement,
         "rolloutStrategy": {"type": "Progressive", "progressive": {"maxConcurrency": 1}}}]}}});
    cmas.patch(&addon, &PatchParams::default(), &Patch::Merge(rollout))
        .await
        .unwrap();
    let (decisions, name) = decided(&hub, &placement, &c).await;

    // The first install goes one cluster at a time too.
    for cluster in &c {
        applied(&hub, cluster, &addon, "1").await;
    }
    let done = progression(&hub, &addon, "Completed").await;
    assert_eq!(
        done,
        "selected clusters 2. configured addons 2/2 completed with no errors, 0 failed 0 timeout."
    );

    // Version 2: its template (the add-on is not replaced), then the add-on's default.
    let v2 = version_file("2");
    let out = succeeds(&[
        "addon",
        "create",
        &addon,
        "-f",
        v2.to_str().unwrap(),
        "--version",
        "0.0.2",
    ])
    .await;
    says(&out, "not updated");
    let default = json!({"spec": {"supportedConfigs": [{"group": "addon.open-cluster-management.io",
        "resource": "addontemplates", "defaultConfig": {"name": format!("{addon}-0.0.2")}}]}});
    cmas.patch(&addon, &PatchParams::default(), &Patch::Merge(default))
        .await
        .unwrap();
    // The first cluster gets it; until its work reports done, the second keeps version 1.
    carries(&hub, &c[0], &addon, "2").await;
    let message = progression(&hub, &addon, "Progressing").await;
    assert!(message.contains("selected clusters 2."), "{message}");
    let second = Api::<ManifestWork>::namespaced(hub.clone(), &c[1])
        .get(&format!("addon-{addon}-deploy-0"))
        .await
        .unwrap();
    assert_eq!(
        version_of(&second).as_deref(),
        Some("1"),
        "the second cluster waits for the first"
    );
    fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[1]),
        &addon,
        "the second cluster's add-on waiting (Configured False)",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "Configured").is_some_and(|c| c.reason == "ConfigurationsNotConfigured")
        },
    )
    .await;

    applied(&hub, &c[0], &addon, "2").await;
    applied(&hub, &c[1], &addon, "2").await;
    progression(&hub, &addon, "Completed").await;
    let cma = cmas.get(&addon).await.unwrap();
    let applied_config = cma.status.unwrap().install_progressions[0].config_references[0]
        .last_applied_config
        .clone()
        .unwrap();
    assert_eq!(applied_config.name, format!("{addon}-0.0.2"));

    let _ = decisions.delete(&name, &DeleteParams::default()).await;
    for v in ["0.0.1", "0.0.2"] {
        let _ = Api::<AddOnTemplate>::all(hub.clone())
            .delete(&format!("{addon}-{v}"), &DeleteParams::default())
            .await;
    }
    super::cleanup(&addon, &c).await;
}
