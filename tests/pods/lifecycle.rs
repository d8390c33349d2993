//! The whole life of a fleet on our image, on real nodes: `init --image` (operator and hub pods),
//! `join --image` (operator and agent pods on the managed node), `accept`, a ManifestWork whose
//! Deployment's pod really starts and reports back, the agent container killed and the hub pod
//! deleted without harm, the helloworld add-on as its own pod, an add-on on the Rust add-on
//! framework (its manager a Deployment on the hub), the managed node stopped and back,
//! a Hosted-mode cluster whose agent (and a Hosted add-on's) runs on the management cluster's
//! node, and `unjoin`/`clean` leaving nothing behind. Prints the timings.
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use serde_json::json;

use crate::common;
use crate::fixture::{
    self, cluster_scoped, clusteradm, condition_true, pod_ready, ready_pod, serial, works,
};
use crate::fleet::{
    accept_until_available, assert_no_refusals, assert_nothing_left, assert_runs_locked_down,
    create_work, feedback, gone, holder, info_shows_ready, kill_container, leader,
    manifest_condition, metrics, wait_work,
};
use crate::{addon, fleet, hosted, node_down, status_report};

const HUB_NS: &str = "open-cluster-management-hub";
const OPERATOR_NS: &str = "open-cluster-management";
const AGENT_NS: &str = "open-cluster-management-agent";
use clusteradm::cli::controller::{HUB_LEASE, agent_lease};
use clusteradm::inprocess::klusterlet::Components;

// One story, told in order: each step needs the state the previous one made.
#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_runs_on_our_image_and_leaves_nothing_behind() {
    let _serial = serial().await;
    let env = fixture::env();
    let (hub, managed) = fixture::clients().await;
    let hub_kc = env.hub.to_str().unwrap();
    let managed_kc = env.managed.to_str().unwrap();

    // init: the operator pod, then the hub pod, Ready.
    let t = Instant::now();
    // NilExecutorValidating, as upstream's e2e suite runs: the add-on manager's works below
    // must pass the work webhook's executor check.
    let init = clusteradm(&[
        "init",
        "--image",
        &env.image,
        "--kubeconfig",
        hub_kc,
        "--feature-gates",
        "NilExecutorValidating=true,PlacementDebugServer=true",
        "--wait",
    ]);
    ready_pod(
        &hub,
        OPERATOR_NS,
        "cluster-manager",
        Duration::from_secs(120),
    )
    .await;
    ready_pod(
        &hub,
        HUB_NS,
        "cluster-manager-hub",
        Duration::from_secs(120),
    )
    .await;
    let init_to_ready = t.elapsed();
    // Two hub pods: one holds the Lease and reconciles, the other stands by.
    let hub_pod = leader(&hub, HUB_NS, HUB_LEASE).await;
    // `get hub-info` shows them as upstream's layout shows its components.
    let hub_info = info_shows_ready("hub-info", hub_kc, "  Hub:", &env.image).await;
    assert!(
        hub_info.starts_with("Registration Operator:\n  Controller:\t(1/1) "),
        "{hub_info}"
    );
    assert_runs_locked_down(&hub_pod, &env.image);
    let cm = cluster_scoped(
        &hub,
        "operator.open-cluster-management.io",
        "v1",
        "ClusterManager",
    )
    .get("cluster-manager")
    .await
    .unwrap();
    assert!(condition_true(&cm, "Applied"), "{:?}", cm.data["status"]);

    // The hub pods serve upstream's admission webhooks behind their Service (upstream's status
    // code and message; the mutating webhook labels a new cluster at create)...
    let clusters = cluster_scoped(
        &hub,
        "cluster.open-cluster-management.io",
        "v1",
        "ManagedCluster",
    );
    let bad: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": common::unique("pods-bad")},
        "spec": {"hubAcceptsClient": false, "managedClusterClientConfigs": [{"url": "http://plain"}]},
    }))
    .unwrap();
    let refused = clusters
        .create(&PostParams::default(), &bad)
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains(
            "admission webhook \"managedclustervalidators.admission.cluster.open-cluster-management.io\" denied the request: url \"http://plain\" is invalid in client configs"
        ),
        "{refused}"
    );
    let good: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": common::unique("pods-good")},
        "spec": {"hubAcceptsClient": false},
    }))
    .unwrap();
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let defaulted = clusters.create(&dry, &good).await.unwrap();
    assert_eq!(
        defaulted.metadata.labels.unwrap()["cluster.open-cluster-management.io/clusterset"],
        "default"
    );
    // ...and the hub pod's conversion webhook serves v1beta1 of the add-on API.
    let addon_name = common::unique("pods-conv");
    let v1alpha1 = cluster_scoped(
        &hub,
        "addon.open-cluster-management.io",
        "v1alpha1",
        "ClusterManagementAddOn",
    );
    let addon: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
        "metadata": {"name": addon_name},
        "spec": {"addOnMeta": {"displayName": "conversion probe"}},
    }))
    .unwrap();
    v1alpha1
        .create(&PostParams::default(), &addon)
        .await
        .unwrap();
    let v1beta1 = cluster_scoped(
        &hub,
        "addon.open-cluster-management.io",
        "v1beta1",
        "ClusterManagementAddOn",
    );
    common::eventually(
        "the add-on read as v1beta1 through the hub pod's webhook",
        Duration::from_secs(60),
        || {
            let v1beta1 = v1beta1.clone();
            let name = addon_name.clone();
            async move {
                v1beta1.get(&name).await.ok().filter(|a| {
                    a.types
                        .as_ref()
                        .is_some_and(|t| t.api_version.ends_with("v1beta1"))
                })
            }
        },
    )
    .await;
    v1alpha1
        .delete(&addon_name, &DeleteParams::default())
        .await
        .unwrap();

    // join and accept: the agent pod registers the cluster, which becomes Available.
    let cluster = common::unique("pods");
    let join_line = init
        .lines()
        .find(|l| l.trim_start().starts_with("clusteradm join"))
        .expect("init prints the join command")
        .to_owned();
    let join_this = join_line.replace("<cluster_name>", &cluster);
    let mut join: Vec<&str> = join_this.split_whitespace().skip(1).collect();
    join.extend(["--image", &env.image, "--kubeconfig", managed_kc, "--wait"]);
    let t = Instant::now();
    clusteradm(&join);
    accept_until_available(&clusters, &cluster).await;
    let join_to_available = t.elapsed();
    // Default mode: upstream's two Deployments; the work agent's leader applies the works.
    let work_lease = agent_lease(Components::Work);
    let agent_pod = leader(&managed, AGENT_NS, &work_lease).await;
    assert_eq!(
        agent_pod.spec.as_ref().unwrap().node_name.as_deref(),
        Some("managed-node"),
        "the agent runs on the managed cluster's own node"
    );
    assert_runs_locked_down(&agent_pod, &env.image);
    // Default mode: a section per agent, as upstream shows its two Deployments.
    info_shows_ready("klusterlet-info", managed_kc, "  Registration:", &env.image).await;
    let klusterlet_info =
        info_shows_ready("klusterlet-info", managed_kc, "  Work:", &env.image).await;
    assert!(
        klusterlet_info.starts_with("Klusterlet Conditions:\n  Type:\t\t\t"),
        "{klusterlet_info}"
    );

    // A work whose Deployment's pod really starts, and whose feedback comes from that pod.
    let work_ns = common::unique("pods-work");
    let t = Instant::now();
    create_work(&hub, &cluster, "sleeper", &work_ns, &[("sleeper", true)]).await;
    ready_pod(&managed, &work_ns, "sleeper", Duration::from_secs(60)).await;
    let work_to_pod = t.elapsed();
    let work = wait_work(&hub, &cluster, "sleeper", |w| {
        feedback(w, "ReadyReplicas") == Some(1) && manifest_condition(w, "Available")
    })
    .await;
    assert!(
        condition_true(&work, "Applied"),
        "{:?}",
        work.data["status"]
    );
    // Both pods serve Prometheus metrics of what they did.
    let agent_metrics = metrics(&agent_pod, &managed).await;
    assert!(
        agent_metrics.contains("clusteradm_work_apply_seconds_count"),
        "{agent_metrics}"
    );
    assert!(
        agent_metrics.contains("clusteradm_reconciles_total{controller=\"work agent\"}"),
        "{agent_metrics}"
    );
    // Its one work reconciled: nothing waits in the work agent's queue.
    assert!(
        agent_metrics.contains("clusteradm_queue_depth{controller=\"work agent\"} 0"),
        "{agent_metrics}"
    );
    let hub_metrics = metrics(&hub_pod, &hub).await;
    assert!(
        hub_metrics
            .contains("clusteradm_reconciles_total{controller=\"hub registration controller\"}"),
        "{hub_metrics}"
    );
    assert!(
        hub_metrics.contains("clusteradm_queue_depth{controller=\"add-on manager\"}"),
        "{hub_metrics}"
    );
    fleet::placement_debug(&hub_pod, &hub).await;
    let deployments: Api<Deployment> = Api::namespaced(managed.clone(), &work_ns);
    let before = deployments
        .get("sleeper")
        .await
        .unwrap()
        .metadata
        .resource_version;

    // kill -9 the leading agent's container while it applies a larger work: within the
    // Lease's duration another process leads (the standby pod, or the killed one restarted),
    // finishes the work, and rewrites nothing already applied.
    let many: Vec<(String, bool)> = (0..20).map(|i| (format!("cm-{i}"), false)).collect();
    let many_refs: Vec<(&str, bool)> = many.iter().map(|(n, d)| (n.as_str(), *d)).collect();
    let old_holder = holder(&managed, AGENT_NS, &work_lease).await;
    create_work(&hub, &cluster, "many", &work_ns, &many_refs).await;
    kill_container(&agent_pod, "managed");
    let killed = Instant::now();
    common::eventually(
        "another agent process holding the Lease",
        clusteradm::runtime::lease::DURATION + Duration::from_secs(15),
        || {
            let managed = managed.clone();
            let old_holder = old_holder.clone();
            let lease = work_lease.clone();
            async move {
                let now = holder(&managed, AGENT_NS, &lease).await;
                (now.is_some() && now != old_holder).then_some(())
            }
        },
    )
    .await;
    let takeover = killed.elapsed();
    wait_work(&hub, &cluster, "many", |w| condition_true(w, "Applied")).await;
    let after = deployments
        .get("sleeper")
        .await
        .unwrap()
        .metadata
        .resource_version;
    assert_eq!(
        before, after,
        "the restarted agent rewrote an applied Deployment"
    );

    // The leading hub pod deleted: the standby takes over at once (the leader releases the
    // Lease as it stops) and the cluster stays Available throughout.
    let hub_pods: Api<Pod> = Api::namespaced(hub.clone(), HUB_NS);
    let old_hub_holder = holder(&hub, HUB_NS, HUB_LEASE).await;
    hub_pods
        .delete(
            hub_pod.metadata.name.as_deref().unwrap(),
            &DeleteParams::default(),
        )
        .await
        .unwrap();
    let old = hub_pod.metadata.name.clone();
    let deleted = Instant::now();
    let hub_takeover = std::sync::Arc::new(std::sync::OnceLock::new());
    common::eventually(
        "the standby hub pod leading, a new one Ready, the cluster Available meanwhile",
        Duration::from_secs(120),
        || {
            let clusters = clusters.clone();
            let hub_pods = hub_pods.clone();
            let cluster = cluster.clone();
            let old = old.clone();
            let hub = hub.clone();
            let old_hub_holder = old_hub_holder.clone();
            let hub_takeover = hub_takeover.clone();
            async move {
                let c = clusters.get(&cluster).await.unwrap();
                assert!(
                    condition_true(&c, "ManagedClusterConditionAvailable"),
                    "{cluster} left Available while the hub pod restarted"
                );
                let now = holder(&hub, HUB_NS, HUB_LEASE).await;
                if now.is_some() && now != old_hub_holder {
                    let _ = hub_takeover.set(deleted.elapsed());
                }
                let list = hub_pods
                    .list(&ListParams::default().labels("app=cluster-manager-hub"))
                    .await
                    .ok()?;
                let ready = list
                    .items
                    .iter()
                    .filter(|p| p.metadata.name != old && pod_ready(p))
                    .count();
                (ready == 2 && hub_takeover.get().is_some()).then_some(())
            }
        },
    )
    .await;
    wait_work(&hub, &cluster, "sleeper", |w| {
        feedback(w, "ReadyReplicas") == Some(1)
    })
    .await;

    // The helloworld add-on's agent as its own pod, with its own hub identity.
    let addon_to_pod = addon::helloworld_runs_as_a_pod(&hub, &managed, &cluster).await;
    // An add-on on the Rust add-on framework: its manager a Deployment on the hub node, its
    // agent on the managed node reporting to it over HTTPS.
    let report_to_available =
        status_report::reports_from_the_managed_node(&hub, &managed, &cluster).await;
    // The managed node stopped past the lease's grace period, then back.
    let (to_unknown, to_available) =
        node_down::cluster_follows_its_node(&hub, &clusters, &cluster).await;
    // A second cluster in Hosted mode: its agent on the management cluster's node.
    let hosted = hosted::join_work_and_leave(&hub, &clusters, &join_line).await;

    // upgrade to another tag of the image: every pod rolls, the cluster Available and its work
    // Applied throughout.
    let upgrade_took = crate::upgrade::fleet_moves_to(
        &hub,
        &managed,
        &clusters,
        &cluster,
        (hub_kc, managed_kc),
        &env.next_image,
    )
    .await;

    // Least privilege that is still enough: nothing the pods asked for was refused (before the
    // teardown below takes their RBAC away while they stop).
    assert_no_refusals(
        "hub",
        "system:serviceaccount:open-cluster-management-hub:cluster-manager-hub-sa",
    );
    for agent in ["registration", "work"] {
        assert_no_refusals(
            "managed",
            &format!("system:serviceaccount:open-cluster-management-agent:klusterlet-{agent}-sa"),
        );
    }
    // The operators too, which hold Secrets only by name.
    assert_no_refusals(
        "hub",
        "system:serviceaccount:open-cluster-management:cluster-manager",
    );
    assert_no_refusals(
        "managed",
        "system:serviceaccount:open-cluster-management:klusterlet",
    );

    // unjoin and clean: nothing of OCM is left on either cluster.
    // As a user would: the works removed (by the agent, which still runs), the cluster
    // unjoined and deleted on the hub, then the hub cleaned.
    for name in ["sleeper", "many"] {
        works(&hub, &cluster)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    gone(&works(&hub, &cluster), "sleeper").await;
    gone(&works(&hub, &cluster), "many").await;
    clusteradm(&[
        "unjoin",
        "--cluster-name",
        &cluster,
        "--kubeconfig",
        managed_kc,
        "--yes",
    ]);
    clusters
        .delete(&cluster, &DeleteParams::default())
        .await
        .unwrap();
    gone(&clusters, &cluster).await;
    clusteradm(&["clean", "--kubeconfig", hub_kc, "--yes"]);
    assert_nothing_left(&managed, "managed").await;
    assert_nothing_left(&hub, "hub").await;
    let _ = Api::<Namespace>::all(managed.clone())
        .delete(&work_ns, &DeleteParams::default())
        .await;

    println!(
        "pods: init -> hub pod Ready {:.1} s, join -> Available {:.1} s, work -> pod Ready {:.1} s, \
         agent leader killed -> another leads {:.1} s, hub leader deleted -> standby leads {:.1} s, \
         add-on enabled -> its pod Ready {:.1} s, status-report enabled -> Available by its \
         agent's report {:.1} s, node stopped -> Unknown {:.1} s, node back -> \
         Available {:.1} s, hosted join -> Available {:.1} s, hosted add-on enabled -> its pod \
         Ready on the management node {:.1} s, upgrade of hub and klusterlet (--wait) {:.1} s",
        init_to_ready.as_secs_f64(),
        join_to_available.as_secs_f64(),
        work_to_pod.as_secs_f64(),
        takeover.as_secs_f64(),
        hub_takeover.get().unwrap().as_secs_f64(),
        addon_to_pod.as_secs_f64(),
        report_to_available.as_secs_f64(),
        to_unknown.as_secs_f64(),
        to_available.as_secs_f64(),
        hosted.join_to_available.as_secs_f64(),
        hosted.addon_to_pod.as_secs_f64(),
        upgrade_took.as_secs_f64()
    );
}
