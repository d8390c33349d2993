//! What goes wrong: a manifest the managed cluster cannot take is reported on that manifest
//! alone; bad input to `create work` is refused before anything reaches the hub, with the file,
//! document and flag to fix; `--dry-run` and `--placement` send nothing that mutates.
use std::time::Duration;

use clusteradm::api::cluster::{ManagedCluster, PlacementDecision};
use clusteradm::api::work::{ManifestWork, ManifestWorkSpec, ManifestsTemplate};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use predicates::prelude::*;

use super::{TestCluster, create_namespace, hub_cli, wait_work};
use crate::common;

// Multi-threaded: the in-process agent must run while the test blocks on the CLI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kind_fails_only_its_manifest() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-unknown").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(60));
    let cm = |name: &str| serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}});
    let gizmo = serde_json::json!({"apiVersion": "it.example.com/v1", "kind": "Gizmo", "metadata": {"name": "g", "namespace": ns}});
    let name = common::unique("w");
    c.create_work(
        &name,
        ManifestWorkSpec {
            workload: ManifestsTemplate {
                manifests: vec![cm("first"), gizmo, cm("last")],
            },
            ..Default::default()
        },
    )
    .await;

    let w = wait_work(&c.works(), &name, "reported", |w| {
        w.status.as_ref().is_some_and(|s| !s.conditions.is_empty())
    })
    .await;
    let status = w.status.unwrap();
    let applied = clusteradm::api::conditions::find(&status.conditions, "Applied").unwrap();
    assert_eq!(
        (applied.status.as_str(), applied.reason.as_str()),
        ("False", "AppliedManifestWorkFailed")
    );
    let manifests = status.resource_status.unwrap().manifests;
    let reason = |i: usize, t: &str| {
        clusteradm::api::conditions::find(&manifests[i].conditions, t)
            .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
            .unwrap()
    };
    assert_eq!(reason(0, "Applied").0, "True");
    assert_eq!(reason(2, "Applied").0, "True");
    let (status1, reason1, message1) = reason(1, "Applied");
    assert_eq!(
        (status1.as_str(), reason1.as_str()),
        ("False", "AppliedManifestFailed")
    );
    assert!(message1.contains("Gizmo"), "{message1}");
    assert_eq!(reason(1, "Available").1, "IncompleteResourceMeta");
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    for n in ["first", "last"] {
        config_maps
            .get(n)
            .await
            .unwrap_or_else(|e| panic!("{n} not applied: {e}"));
    }
    let shown = hub_cli(&["get", "works", &name, "-c", &c.name])
        .assert()
        .success();
    let out = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
    assert!(
        out.contains("AppliedManifestFailed") && out.contains("Gizmo"),
        "{out}"
    );
    let hub = common::env().hub;
    common::assert_closed_pipe_is_no_error(&[
        "get",
        "works",
        "-c",
        &c.name,
        "--kubeconfig",
        hub.to_str().unwrap(),
    ]);
}

const GOOD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, namespace: default}\n";

// Multi-threaded: the in-process agent must run while the test blocks on the CLI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_before_anything_is_sent() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-bad").await;
    let name = common::unique("w");
    let create = |file: &std::path::Path, cluster: &str| {
        hub_cli(&[
            "create",
            "work",
            &name,
            "-f",
            file.to_str().unwrap(),
            "--clusters",
            cluster,
        ])
        .assert()
    };

    let malformed = common::temp_file("malformed.yaml", &format!("{GOOD}---\nkind: [unclosed\n"));
    create(&malformed, &c.name).code(1).stderr(
        predicate::str::contains("malformed.yaml: document 2 (line 5) is not valid YAML")
            .and(predicate::str::contains("hint:")),
    );
    let no_kind = common::temp_file(
        "no-kind.yaml",
        &format!("{GOOD}---\napiVersion: v1\nmetadata: {{name: x}}\n"),
    );
    create(&no_kind, &c.name)
        .code(1)
        .stderr(predicate::str::contains(
            "no-kind.yaml: document 2: the manifest has no kind",
        ));
    let big = format!("{GOOD}data:\n  blob: {}\n", "x".repeat(600 * 1024));
    create(&common::temp_file("big.yaml", &big), &c.name)
        .code(1)
        .stderr(predicate::str::contains(
            "over the 500 KiB a ManifestWork may hold",
        ));
    let good = common::temp_file("good.yaml", GOOD);
    let unknown = common::unique("no-such-cluster");
    create(&good, &format!("{},{unknown}", c.name))
        .code(1)
        .stderr(
            predicate::str::contains(format!("unknown cluster: {unknown}"))
                .and(predicate::str::contains("hint:")),
        );
    assert!(
        c.works().get_opt(&name).await.unwrap().is_none(),
        "nothing may be created"
    );

    hub_cli(&[
        "create",
        "work",
        "Bad_Name",
        "-f",
        good.to_str().unwrap(),
        "--clusters",
        &c.name,
    ])
    .assert()
    .code(1)
    .stderr(predicate::str::contains("invalid work name"));
    hub_cli(&["create", "work", &name, "-f", good.to_str().unwrap()])
        .assert()
        .code(2);
}

/// A Placement `p` in `ns` that the hub's placement controller decides on `cluster`: the
/// cluster (available) in a set of its own, bound to `ns`.
async fn placement_choosing(hub: &kube::Client, ns: &str, cluster: &str) {
    // The caller holds the hub lock (which `fixture::hub` takes): only start the controllers.
    crate::registration::fixture::start_hub_controller();
    let set = common::unique("it-place-set");
    let object = |v: serde_json::Value| -> DynamicObject { serde_json::from_value(v).unwrap() };
    let objects = vec![
        object(
            serde_json::json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSet", "metadata": {"name": set}, "spec": {}}),
        ),
        object(
            serde_json::json!({"apiVersion": "cluster.open-cluster-management.io/v1",
            "kind": "ManagedCluster", "metadata": {"name": cluster,
            "labels": {"cluster.open-cluster-management.io/clusterset": set}}, "spec": {}}),
        ),
        object(
            serde_json::json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSetBinding", "metadata": {"name": set, "namespace": ns},
            "spec": {"clusterSet": set}}),
        ),
        object(
            serde_json::json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "Placement", "metadata": {"name": "p", "namespace": ns}, "spec": {}}),
        ),
    ];
    clusteradm::apply::Applier::new(hub.clone(), Duration::from_secs(30))
        .apply(objects)
        .await
        .unwrap();
    let available = serde_json::json!({"status": {"conditions": [{"type": "ManagedClusterConditionAvailable",
        "status": "True", "reason": "R", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    Api::<ManagedCluster>::all(hub.clone())
        .patch_status(cluster, &PatchParams::default(), &Patch::Merge(&available))
        .await
        .unwrap();
    let decisions: Api<PlacementDecision> = Api::namespaced(hub.clone(), ns);
    let clusters: Api<ManagedCluster> = Api::all(hub.clone());
    // Settled: the hub may have tainted the cluster unreachable before it read it Available,
    // and a decision made before the taint would then be taken back.
    common::eventually(
        "the placement to choose the untainted cluster",
        Duration::from_secs(30),
        || {
            let (decisions, clusters) = (decisions.clone(), clusters.clone());
            async move {
                let mc = clusters.get(cluster).await.ok()?;
                if !mc.spec.taints.is_empty() {
                    return None;
                }
                let d = decisions.get_opt("p-decision-1").await.ok()??;
                d.status?
                    .decisions
                    .iter()
                    .any(|c| c.cluster_name == cluster)
                    .then_some(())
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placement_picks_the_clusters_and_dry_run_sends_nothing() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-place").await;
    let ns = common::unique("it-place");
    create_namespace(&c.hub, &ns).await;
    placement_choosing(&c.hub, &ns, &c.name).await;
    let name = common::unique("w");
    let good = common::temp_file("good.yaml", GOOD);
    let create = |placement: &str, extra: &[&str]| {
        let mut args = vec!["create", "work", &name, "-f", good.to_str().unwrap()];
        args.extend(["--placement", placement]);
        args.extend(extra);
        hub_cli(&args).assert()
    };
    let out = create(&format!("{ns}/p"), &["--dry-run"])
        .success()
        .stderr(predicate::str::contains("dry run"));
    let yaml = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        yaml.contains("kind: ManifestWork") && yaml.contains(&format!("namespace: {}", c.name)),
        "{yaml}"
    );
    assert!(
        c.works().get_opt(&name).await.unwrap().is_none(),
        "a dry run creates nothing"
    );

    let created = format!("created in cluster {}", c.name);
    create(&format!("{ns}/p"), &[])
        .success()
        .stderr(predicate::str::contains(created));
    let missing = format!("placement {ns}/nope not found");
    create(&format!("{ns}/nope"), &[])
        .code(1)
        .stderr(predicate::str::contains(missing));
    hub_cli(&[
        "delete",
        "work",
        &name,
        "--clusters",
        &c.name,
        "-y",
        "--force",
    ])
    .assert()
    .success()
    .stderr(predicate::str::contains("may be left"));
    let _ = Api::<Namespace>::all(c.hub.clone())
        .delete(&ns, &DeleteParams::default())
        .await;
}

/// `spec.executor`: each manifest is applied only where the named ServiceAccount may act — a
/// ClusterRoleBinding to cluster-admin is refused for one that may only write ConfigMaps in its
/// namespace, and the rest of the work is applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executor_may_not_apply_what_its_service_account_may_not() {
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, Role, RoleBinding};
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-exec").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(60));
    let post = PostParams::default();
    let sa: ServiceAccount = serde_json::from_value(
        serde_json::json!({"metadata": {"name": "runner", "namespace": ns}}),
    )
    .unwrap();
    Api::<ServiceAccount>::namespaced(c.managed.clone(), &ns)
        .create(&post, &sa)
        .await
        .unwrap();
    let role: Role = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "runner", "namespace": ns},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "update", "patch", "get", "delete"]}]
    }))
    .unwrap();
    Api::<Role>::namespaced(c.managed.clone(), &ns)
        .create(&post, &role)
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "runner", "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "runner"},
        "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": ns}]
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(c.managed.clone(), &ns)
        .create(&post, &binding)
        .await
        .unwrap();

    let escalation = common::unique("it-exec-admin");
    let name = common::unique("w");
    let work: ManifestWork = serde_json::from_value(serde_json::json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": c.name},
        "spec": {
            "executor": {"subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": ns, "name": "runner"}}},
            "workload": {"manifests": [
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "allowed", "namespace": ns}},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": escalation},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                 "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": ns}]}
            ]}
        }
    }))
    .unwrap();
    c.works().create(&post, &work).await.unwrap();
    let w = wait_work(&c.works(), &name, "reported", |w| {
        w.status.as_ref().is_some_and(|s| !s.conditions.is_empty())
    })
    .await;
    let manifests = w.status.unwrap().resource_status.unwrap().manifests;
    let applied = |i: usize| {
        clusteradm::api::conditions::find(&manifests[i].conditions, "Applied")
            .map(|c| (c.status.clone(), c.message.clone()))
            .unwrap()
    };
    assert_eq!(applied(0).0, "True", "{:?}", applied(0));
    let (status, message) = applied(1);
    assert_eq!(status, "False");
    assert!(
        message.contains(
            "not allowed to apply the resource rbac.authorization.k8s.io clusterrolebindings"
        ),
        "{message}"
    );
    assert!(
        Api::<ClusterRoleBinding>::all(c.managed.clone())
            .get_opt(&escalation)
            .await
            .unwrap()
            .is_none(),
        "the executor's escalation was applied"
    );
    Api::<ConfigMap>::namespaced(c.managed.clone(), &ns)
        .get("allowed")
        .await
        .unwrap();
}
