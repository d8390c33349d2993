//! ManifestWorkReplicaSets on the real hub, kept by the in-process replica-set controller: one
//! work per decided cluster as decisions change, `create work --replicaset`, progressive rollout
//! gated on the works' conditions, status summaries and cleanup.
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::api::cluster::ManagedCluster;
use clusteradm::api::work::{ManifestWork, ManifestWorkReplicaSet, REPLICA_SET_LABEL};

use crate::common;
use crate::placement::World;
use crate::registration::fixture;

/// The world's clusters get namespaces, as accepting them would.
async fn cluster_namespaces(w: &World) {
    for c in &w.clusters {
        let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": c}})).unwrap();
        Api::<Namespace>::all(w.hub.clone())
            .create(&PostParams::default(), &ns)
            .await
            .unwrap();
    }
}

async fn remove(w: World) {
    for c in &w.clusters {
        let _ = Api::<Namespace>::all(w.hub.clone())
            .delete(c, &DeleteParams::default())
            .await;
    }
    w.remove().await;
}

/// The works of replica set `ns/name`: (cluster, work), by cluster, once `check` holds.
async fn works(
    hub: &kube::Client,
    ns: &str,
    name: &str,
    what: &str,
    check: impl Fn(&[(String, ManifestWork)]) -> bool,
) -> Vec<(String, ManifestWork)> {
    let api: Api<ManifestWork> = Api::all(hub.clone());
    let lp = ListParams::default().labels(&format!("{REPLICA_SET_LABEL}={ns}.{name}"));
    common::eventually(what, Duration::from_secs(30), || {
        let (api, lp, check) = (api.clone(), lp.clone(), &check);
        async move {
            let mut found: Vec<(String, ManifestWork)> = api
                .list(&lp)
                .await
                .ok()?
                .items
                .into_iter()
                .filter(|w| w.metadata.deletion_timestamp.is_none())
                .map(|w| (w.metadata.namespace.clone().unwrap_or_default(), w))
                .collect();
            found.sort_by(|a, b| a.0.cmp(&b.0));
            check(&found).then_some(found)
        }
    })
    .await
}

fn clusters_of(found: &[(String, ManifestWork)]) -> Vec<String> {
    found.iter().map(|(c, _)| c.clone()).collect()
}

/// Reports `work` Applied and Available at its generation, as the work agent would.
async fn report_available(hub: &kube::Client, work: &ManifestWork) {
    let generation = work.metadata.generation;
    let cond = |t: &str| {
        json!({"type": t, "status": "True", "reason": "Test", "message": "",
        "observedGeneration": generation, "lastTransitionTime": "2026-01-01T00:00:00Z"})
    };
    Api::<ManifestWork>::namespaced(hub.clone(), work.metadata.namespace.as_deref().unwrap())
        .patch_status(
            work.metadata.name.as_deref().unwrap(),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [cond("Applied"), cond("Available")]}})),
        )
        .await
        .unwrap();
}

fn configmap(data: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: default\ndata:\n  v: \"{data}\"\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one set's life
async fn a_replica_set_follows_its_placement_and_cleans_up() {
    let w = World::new("it-rs").await;
    cluster_namespaces(&w).await;
    let (hub, ns, c) = (&w.hub, w.ns.as_str(), &w.clusters);
    let placement = format!("{ns}/prod");
    let (code, _, err) = w
        .create_placement("prod", &["--label-selectors", "env=prod"])
        .await;
    assert_eq!(code, 0, "{err}");
    crate::placement::decided(hub, ns, "prod", "prod decided", |d| d.len() == 2).await;

    let file = common::temp_file("cm.yaml", &configmap("1"));
    let file = file.to_str().unwrap();
    let create = [
        "create",
        "work",
        "web",
        "-f",
        file,
        "--placement",
        &placement,
        "--replicaset",
    ];
    let (code, out, err) = fixture::on_hub(&create).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("manifestworkreplicaset {ns}/web created")),
        "{out}{err}"
    );
    assert!(!err.contains("gate is off"), "{err}");
    let found = works(hub, ns, "web", "works on both prod clusters", |f| {
        f.len() == 2
    })
    .await;
    assert_eq!(clusters_of(&found), [c[0].clone(), c[1].clone()]);
    let labels = found[0].1.metadata.labels.clone().unwrap();
    assert_eq!(
        labels["work.open-cluster-management.io/placementname"],
        "prod"
    );

    // Twice: refused without --overwrite, unchanged with it.
    let (code, _, err) = fixture::on_hub(&create).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("already exists") && err.contains("--overwrite"),
        "{err}"
    );
    let mut again = create.to_vec();
    again.push("--overwrite");
    let (code, _, err) = fixture::on_hub(&again).await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("unchanged"), "{err}");

    // A cluster joins the decision: it gets the work; one leaves: its work goes.
    let mcs: Api<ManagedCluster> = Api::all(hub.clone());
    let relabel = |env: &str| Patch::Merge(json!({"metadata": {"labels": {"env": env}}}));
    mcs.patch(&c[2], &PatchParams::default(), &relabel("prod"))
        .await
        .unwrap();
    mcs.patch(&c[0], &PatchParams::default(), &relabel("dev"))
        .await
        .unwrap();
    let want = [c[1].clone(), c[2].clone()];
    works(hub, ns, "web", "works follow the decision", |f| {
        clusters_of(f) == want
    })
    .await;

    // Status: placement verified, both works counted; once reported available, applied.
    let sets: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.clone(), ns);
    for (_, work) in works(hub, ns, "web", "two works", |f| f.len() == 2).await {
        // Written once: a store-vs-template mismatch would rewrite it on every pass.
        assert_eq!(work.metadata.generation, Some(1));
        report_available(hub, &work).await;
    }
    // The placement's own count lags its decisions by a write: wait for the two to agree.
    let groups = |s: &clusteradm::api::work::ManifestWorkReplicaSetStatus| {
        s.placement_summary
            .first()
            .map(|p| p.available_decision_groups.clone())
    };
    let status = common::eventually("ManifestworkApplied", Duration::from_secs(30), || async {
        let s = sets.get("web").await.ok()?.status?;
        (clusteradm::api::conditions::is_true(&s.conditions, "ManifestworkApplied")
            && groups(&s).as_deref() == Some("1 (2 / 2 clusters applied)"))
        .then_some(s)
    })
    .await;
    assert_eq!((status.summary.total, status.summary.available), (2, 2));
    // Whole, as OCM v1.3.1 writes it (its e2e suite compares the struct): no desiredTotal or
    // updated, which its API has but its controller never sets.
    let summary = serde_json::to_value(&status.summary).unwrap();
    assert_eq!(summary["desiredTotal"], 0, "{summary}");
    assert_eq!(summary["updated"], 0, "{summary}");
    let verified =
        clusteradm::api::conditions::find(&status.conditions, "PlacementVerified").unwrap();
    assert_eq!(verified.reason, "AsExpected");

    // A work deleted by hand comes back.
    let gone = &works(hub, ns, "web", "two works", |f| f.len() == 2).await[0];
    Api::<ManifestWork>::namespaced(hub.clone(), &gone.0)
        .delete(
            gone.1.metadata.name.as_deref().unwrap(),
            &DeleteParams::default(),
        )
        .await
        .unwrap();
    let uid = gone.1.metadata.uid.clone();
    works(hub, ns, "web", "the work re-created", |f| {
        f.len() == 2 && f.iter().all(|(_, w)| w.metadata.uid != uid)
    })
    .await;

    // Deleting the set deletes its works, then the set (its finalizer) goes.
    sets.delete("web", &DeleteParams::default()).await.unwrap();
    works(hub, ns, "web", "works deleted", <[_]>::is_empty).await;
    common::eventually("the set gone", Duration::from_secs(30), || async {
        sets.get_opt("web").await.ok()?.is_none().then_some(())
    })
    .await;
    remove(w).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progressive_rollout_waits_for_each_cluster() {
    let w = World::new("it-rsp").await;
    cluster_namespaces(&w).await;
    let (hub, ns, c) = (&w.hub, w.ns.as_str(), &w.clusters);
    let (code, _, err) = w.create_placement("all", &[]).await;
    assert_eq!(code, 0, "{err}");
    crate::placement::decided(hub, ns, "all", "all decided", |d| d.len() == 3).await;

    let set = |data: &str| -> ManifestWorkReplicaSet {
        serde_json::from_value(json!({
            "apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {
                "manifestWorkTemplate": {"workload": {"manifests": [serde_yaml::from_str::<serde_json::Value>(&configmap(data)).unwrap()]}},
                "placementRefs": [{"name": "all", "rolloutStrategy": {"type": "Progressive", "progressive": {"maxConcurrency": 1}}}]
            }
        }))
        .unwrap()
    };
    let sets: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.clone(), ns);
    sets.create(&PostParams::default(), &set("1"))
        .await
        .unwrap();
    // One cluster at a time: the next gets its work only when the one before is available.
    for i in 0..3 {
        let found = works(hub, ns, "web", &format!("{} works", i + 1), |f| {
            f.len() == i + 1
        })
        .await;
        assert_eq!(clusters_of(&found), c[..=i].to_vec());
        let rolled = common::eventually("summary counted", Duration::from_secs(30), || async {
            let s = sets.get("web").await.ok()?.status?;
            (s.summary.total == i64::try_from(i + 1).unwrap()).then_some(s)
        })
        .await;
        assert_eq!(
            clusteradm::api::conditions::find(&rolled.conditions, "PlacementRolledOut")
                .unwrap()
                .reason,
            "Progressing"
        );
        // Still only i+1 works after the controller has counted them.
        assert_eq!(
            works(hub, ns, "web", "no more", |_| true).await.len(),
            i + 1
        );
        report_available(hub, &found[i].1).await;
    }
    common::eventually("rolled out", Duration::from_secs(30), || async {
        let s = sets.get("web").await.ok()?.status?;
        clusteradm::api::conditions::is_true(&s.conditions, "PlacementRolledOut").then_some(())
    })
    .await;

    // A template change rolls out the same way: the first cluster only, until it is available.
    let mut changed = sets.get("web").await.unwrap();
    changed.spec = set("2").spec;
    sets.replace("web", &PostParams::default(), &changed)
        .await
        .unwrap();
    let data = |w: &ManifestWork| w.spec.workload.manifests[0]["data"]["v"].clone();
    let found = works(hub, ns, "web", "first updated", |f| data(&f[0].1) == "2").await;
    assert_eq!(data(&found[1].1), "1");
    assert_eq!(data(&found[2].1), "1");
    report_available(hub, &found[0].1).await;
    works(hub, ns, "web", "second updated", |f| data(&f[1].1) == "2").await;

    sets.delete("web", &DeleteParams::default()).await.unwrap();
    works(hub, ns, "web", "works deleted", <[_]>::is_empty).await;
    remove(w).await;
}

/// A set named `name` in `ns` over placement `prod`, with deletion policy `policy`.
async fn create_set(hub: &kube::Client, ns: &str, name: &str, policy: &str) {
    let set: ManifestWorkReplicaSet = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "cascadeDeletionPolicy": policy,
            "placementRefs": [{"name": "prod"}],
            "manifestWorkTemplate": {"workload": {"manifests": [
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}},
            ]}},
        },
    }))
    .unwrap();
    Api::<ManifestWorkReplicaSet>::namespaced(hub.clone(), ns)
        .create(&PostParams::default(), &set)
        .await
        .unwrap();
}

/// `cascadeDeletionPolicy`: a `Foreground` set stays (being deleted) until every work it made is
/// gone; a `Background` one goes at once, leaving its works to go on their own. One work of each
/// is held by a finalizer of the test's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_set_waits_for_its_works_and_a_background_one_does_not() {
    const HOLD: &str = "it.example/hold";
    let w = World::new("it-rs-cascade").await;
    cluster_namespaces(&w).await;
    let (hub, ns) = (&w.hub, w.ns.as_str());
    let (code, _, err) = w
        .create_placement("prod", &["--label-selectors", "env=prod"])
        .await;
    assert_eq!(code, 0, "{err}");
    let sets: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.clone(), ns);
    let mut held = Vec::new();
    for (name, policy) in [("fg", "Foreground"), ("bg", "Background")] {
        create_set(hub, ns, name, policy).await;
        let found = works(hub, ns, name, "a work on each prod cluster", |f| {
            f.len() == 2
        })
        .await;
        let (cluster, work) = &found[0];
        let api = Api::<ManifestWork>::namespaced(hub.clone(), cluster);
        let work_name = work.metadata.name.clone().unwrap();
        api.patch(
            &work_name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": [HOLD]}})),
        )
        .await
        .unwrap();
        sets.delete(name, &DeleteParams::default()).await.unwrap();
        held.push((api, work_name));
    }
    // Background: the set goes while its held work is still there.
    common::eventually(
        "the Background set gone",
        Duration::from_secs(30),
        || async { sets.get_opt("bg").await.ok()?.is_none().then_some(()) },
    )
    .await;
    assert!(held[1].0.get_opt(&held[1].1).await.unwrap().is_some());
    // Foreground: its other work is gone, the held one stays, and so does the set.
    works(hub, ns, "fg", "only the held work left", <[_]>::is_empty).await;
    common::never(
        "the Foreground set gone while a work remains",
        Duration::from_secs(3),
        || async { sets.get_opt("fg").await.ok().filter(Option::is_none) },
    )
    .await;
    let fg = sets
        .get_opt("fg")
        .await
        .unwrap()
        .expect("the Foreground set waits");
    assert!(fg.metadata.deletion_timestamp.is_some());
    for (api, name) in &held {
        api.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    }
    common::eventually(
        "the Foreground set gone",
        Duration::from_secs(30),
        || async { sets.get_opt("fg").await.ok()?.is_none().then_some(()) },
    )
    .await;
    remove(w).await;
}
