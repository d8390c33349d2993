//! The hub in Hosted mode on our image: `init --mode hosted` on the management cluster runs the
//! operator and the hub pods on the management cluster's node, acting on a hub cluster that has
//! no node at all. The hub's API server reaches the hub pods' webhooks at the addresses the
//! operator copies into the hub's Endpoints. A cluster joins that hub, is accepted, applies a
//! work and runs an add-on; the hub pods restarted (SIGTERM) keep it Available; `clean` leaves
//! nothing on any of the three clusters.
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Namespace, Node, Pod};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use serde_json::json;

use crate::addon::{a_configmap_travels, create_with_our_image_on, on, remove_on};
use crate::common;
use crate::fixture::{self, cluster_scoped, clusteradm, condition_true, pod_ready, ready_pod};
use crate::fleet::{
    assert_no_refusals, assert_nothing_left, assert_runs_locked_down, create_work, gone,
    wait_available, wait_work,
};
use clusteradm::api::names::{HOSTED_HUB_NAMESPACE, HUB_NAMESPACE, HUB_SERVICE};

const INSTALL: &str = "helloworld-addon";
const TEMPLATE: &str = "templates/addons/helloworld.yaml";

#[tokio::test]
async fn a_hosted_hub_serves_a_cluster_from_the_management_node() {
    let _serial = fixture::serial().await;
    let env = fixture::env();
    let hosted_env = fixture::hosted_env();
    let management = common::client(&hosted_env.management).await;
    let hub = common::client(&hosted_env.hosted).await;
    let managed = common::client(&env.managed).await;
    let management_kc = hosted_env.management.to_str().unwrap();
    let hub_kc = hosted_env.hosted.to_str().unwrap();
    let managed_kc = env.managed.to_str().unwrap();

    let (join_line, init_to_ready) = init_on_the_management_cluster(&management, &hub).await;
    let clusters = cluster_scoped(
        &hub,
        "cluster.open-cluster-management.io",
        "v1",
        "ManagedCluster",
    );

    // A cluster joins by init's join command, is accepted, and applies a work.
    let cluster = common::unique("pods-hosted-hub");
    let t = Instant::now();
    join(&join_line, &cluster, &["--kubeconfig", managed_kc]);
    on(hub_kc, &["accept", "--clusters", &cluster, "--wait"]);
    wait_available(&clusters, &cluster).await;
    let join_to_available = t.elapsed();
    let work_ns = common::unique("pods-hosted-hub-work");
    create_work(
        &hub,
        &cluster,
        "on-hosted-hub",
        &work_ns,
        &[("applied", false)],
    )
    .await;
    wait_work(&hub, &cluster, "on-hosted-hub", |w| {
        condition_true(w, "Available")
    })
    .await;
    Api::<ConfigMap>::namespaced(managed.clone(), &work_ns)
        .get("applied")
        .await
        .expect("the work's ConfigMap on the managed cluster");

    let (copied, addon_available) = helloworld_on(hub_kc, &hub, &managed, &cluster).await;

    let fully_hosted = fully_hosted_cluster_applies_a_work(&hub, &clusters, &join_line).await;
    let restart =
        hub_pods_restart_and_the_cluster_stays(&management, &hub, &clusters, &cluster).await;
    assert_no_refusals(
        "hosted",
        &format!("system:serviceaccount:{HUB_NAMESPACE}:cluster-manager-hub-sa"),
    );
    assert_no_refusals(
        "management",
        "system:serviceaccount:open-cluster-management:cluster-manager",
    );

    // Leave: the add-on, the work, the cluster; then clean both clusters of the hub.
    remove_on(
        (hub_kc, &hub),
        &cluster,
        "helloworld",
        &copied,
        &[(&managed, INSTALL)],
    )
    .await;
    fixture::works(&hub, &cluster)
        .delete("on-hosted-hub", &DeleteParams::default())
        .await
        .unwrap();
    gone(&fixture::works(&hub, &cluster), "on-hosted-hub").await;
    let unjoin = ["unjoin", "--cluster-name", &cluster, "--yes"];
    clusteradm(&[&unjoin[..], &["--kubeconfig", managed_kc]].concat());
    clusters
        .delete(&cluster, &DeleteParams::default())
        .await
        .unwrap();
    gone(&clusters, &cluster).await;
    clusteradm(&[
        "clean",
        "--kubeconfig",
        management_kc,
        "--hub-kubeconfig",
        hub_kc,
        "--yes",
    ]);
    assert_nothing_left(&management, "management").await;
    assert_nothing_left(&hub, "hosted").await;
    assert_nothing_left(&managed, "managed").await;
    let _ = Api::<Namespace>::all(managed)
        .delete(&work_ns, &DeleteParams::default())
        .await;
    println!(
        "pods: hosted hub: init -> hub pod Ready on the management node {:.1} s, join -> \
         Available {:.1} s, add-on enabled -> Available {:.1} s, hosted join (fully hosted) -> \
         Available {:.1} s, hub pods deleted -> webhooks answer again {:.1} s (the cluster \
         Available throughout)",
        init_to_ready.as_secs_f64(),
        join_to_available.as_secs_f64(),
        addon_available.as_secs_f64(),
        fully_hosted.as_secs_f64(),
        restart.as_secs_f64(),
    );
}

/// `init --mode hosted` on the management cluster, for the hosted hub: the hub pods Ready on the
/// management node, the hub without a node, its webhooks answered. Returns the join command and
/// init → hub pod Ready.
async fn init_on_the_management_cluster(
    management: &kube::Client,
    hub: &kube::Client,
) -> (String, Duration) {
    let env = fixture::env();
    let hosted_env = fixture::hosted_env();
    let management_kc = hosted_env.management.to_str().unwrap();
    let hub_kc = hosted_env.hosted.to_str().unwrap();
    let t = Instant::now();
    let init = clusteradm(&[
        "init",
        "--mode",
        "hosted",
        "--hub-kubeconfig",
        hub_kc,
        "--image",
        &env.image,
        "--kubeconfig",
        management_kc,
        "--feature-gates",
        "NilExecutorValidating=true",
        "--wait",
    ]);
    let pod = ready_pod(
        management,
        HOSTED_HUB_NAMESPACE,
        HUB_SERVICE,
        Duration::from_secs(120),
    )
    .await;
    let init_to_ready = t.elapsed();
    assert_eq!(
        pod.spec.as_ref().unwrap().node_name.as_deref(),
        Some("management-node")
    );
    assert_runs_locked_down(&pod, &env.image);
    let nodes = Api::<Node>::all(hub.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(nodes.items.is_empty(), "the hosted hub has nodes");
    let clusters = cluster_scoped(
        hub,
        "cluster.open-cluster-management.io",
        "v1",
        "ManagedCluster",
    );
    webhooks_answer(&clusters).await;
    let join_line = init
        .lines()
        .find(|l| l.starts_with("clusteradm join"))
        .expect("init prints the join command")
        .to_owned();
    (join_line, init_to_ready)
}

/// The helloworld add-on of the hosted hub on `cluster`: its agent pod on the managed node,
/// registered with the hub, copies a hub ConfigMap. Returns the copy's name and enable → Available.
async fn helloworld_on(
    hub_kc: &str,
    hub: &kube::Client,
    managed: &kube::Client,
    cluster: &str,
) -> (String, Duration) {
    let t = Instant::now();
    create_with_our_image_on(hub_kc, "helloworld", TEMPLATE);
    on(
        hub_kc,
        &[
            "addon",
            "enable",
            "--names",
            "helloworld",
            "--clusters",
            cluster,
        ],
    );
    ready_pod(
        managed,
        INSTALL,
        "helloworld-agent",
        Duration::from_secs(120),
    )
    .await;
    let copied = a_configmap_travels(hub, managed, cluster, "helloworld", INSTALL).await;
    (copied, t.elapsed())
}

/// The fully hosted layout: a cluster joined in Hosted mode to the hosted hub, its agent on the
/// management node beside the hub pods, so that OCM runs no pod on the hub or on that cluster (the
/// pod tests' hub cluster, clean by now). A work applies there; then it leaves. Returns join →
/// Available.
async fn fully_hosted_cluster_applies_a_work(
    hub: &kube::Client,
    clusters: &Api<DynamicObject>,
    join_line: &str,
) -> Duration {
    let env = fixture::env();
    let management_kc = fixture::hosted_env().management;
    let management_kc = management_kc.to_str().unwrap();
    let target = common::client(&env.hub).await;
    let name = common::unique("pods-fully-hosted");
    let t = Instant::now();
    let target_kc = env.hub.to_str().unwrap();
    join(
        join_line,
        &name,
        &[
            "--mode",
            "hosted",
            "--managed-cluster-kubeconfig",
            target_kc,
            "--kubeconfig",
            management_kc,
        ],
    );
    let hub_kc = fixture::hosted_env().hosted;
    on(
        hub_kc.to_str().unwrap(),
        &["accept", "--clusters", &name, "--wait"],
    );
    wait_available(clusters, &name).await;
    let took = t.elapsed();
    let work_ns = common::unique("pods-fully-hosted-work");
    create_work(hub, &name, "fully-hosted", &work_ns, &[("applied", false)]).await;
    wait_work(hub, &name, "fully-hosted", |w| {
        condition_true(w, "Available")
    })
    .await;
    Api::<ConfigMap>::namespaced(target.clone(), &work_ns)
        .get("applied")
        .await
        .expect("the work's ConfigMap on the fully hosted cluster");
    let ocm_pods: Vec<String> = Api::<Pod>::all(target.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|p| p.metadata.namespace)
        .filter(|ns| ns.contains("open-cluster-management") || ns.starts_with("klusterlet"))
        .collect();
    assert!(
        ocm_pods.is_empty(),
        "OCM runs pods on the fully hosted cluster, in {ocm_pods:?}"
    );
    fixture::works(hub, &name)
        .delete("fully-hosted", &DeleteParams::default())
        .await
        .unwrap();
    gone(&fixture::works(hub, &name), "fully-hosted").await;
    let unjoin = ["unjoin", "--cluster-name", &name, "--yes"];
    clusteradm(&[&unjoin[..], &["--kubeconfig", management_kc]].concat());
    clusters
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    gone(clusters, &name).await;
    let _ = Api::<Namespace>::all(target)
        .delete(&work_ns, &DeleteParams::default())
        .await;
    took
}

/// Runs init's `join_line` for cluster `name` with our image, `--wait`, and `extra`.
fn join(join_line: &str, name: &str, extra: &[&str]) {
    let image = fixture::env().image;
    let line = join_line.replace("<cluster_name>", name);
    let mut join: Vec<&str> = line.split_whitespace().skip(1).collect();
    join.extend(["--image", &image, "--wait"]);
    join.extend(extra);
    clusteradm(&join);
}

/// The hub's API server reaches the hub pods' webhooks: an invalid cluster is refused by the
/// validating webhook (waited for: the operator copies the pods' addresses once they are ready).
async fn webhooks_answer(clusters: &Api<DynamicObject>) {
    let bad: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": common::unique("pods-bad")},
        "spec": {"hubAcceptsClient": false, "managedClusterClientConfigs": [{"url": "http://plain"}]},
    }))
    .unwrap();
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    common::eventually(
        "the hub's webhook refusing an invalid cluster",
        Duration::from_secs(60),
        || {
            let (clusters, bad, dry) = (clusters.clone(), bad.clone(), dry.clone());
            async move {
                let refused = clusters.create(&dry, &bad).await.err()?;
                refused
                    .to_string()
                    .contains("denied the request: url \"http://plain\" is invalid")
                    .then_some(())
            }
        },
    )
    .await;
}

/// Deletes every hub pod (each gets SIGTERM); new ones take over, the hub's Endpoints follow, and
/// `cluster`'s Available condition never changes meanwhile. Returns delete → webhooks answer.
async fn hub_pods_restart_and_the_cluster_stays(
    management: &kube::Client,
    hub: &kube::Client,
    clusters: &Api<DynamicObject>,
    cluster: &str,
) -> Duration {
    let available_since = |c: &DynamicObject| {
        c.data["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "ManagedClusterConditionAvailable")
            .map(|c| (c["status"].clone(), c["lastTransitionTime"].clone()))
    };
    let before = available_since(&clusters.get(cluster).await.unwrap());
    let pods: Api<Pod> = Api::namespaced(management.clone(), HOSTED_HUB_NAMESPACE);
    let selector = ListParams::default().labels(&format!("app={HUB_SERVICE}"));
    let old: Vec<String> = pods
        .list(&selector)
        .await
        .unwrap()
        .items
        .iter()
        .filter_map(|p| p.metadata.uid.clone())
        .collect();
    let t = Instant::now();
    pods.delete_collection(&DeleteParams::default(), &selector)
        .await
        .unwrap();
    // New pods ready, and the hub's Endpoints name them (not the deleted pods).
    let endpoints: Api<Endpoints> = Api::namespaced(hub.clone(), HUB_NAMESPACE);
    common::eventually(
        "new hub pods ready and in the hub's Endpoints",
        Duration::from_secs(120),
        || {
            let (pods, selector, endpoints, old) = (
                pods.clone(),
                selector.clone(),
                endpoints.clone(),
                old.clone(),
            );
            async move {
                let ready: Vec<String> = pods
                    .list(&selector)
                    .await
                    .ok()?
                    .items
                    .into_iter()
                    .filter(|p| {
                        pod_ready(p) && p.metadata.uid.as_ref().is_some_and(|u| !old.contains(u))
                    })
                    .filter_map(|p| p.status?.pod_ip)
                    .collect();
                let named: Vec<String> = endpoints
                    .get(HUB_SERVICE)
                    .await
                    .ok()?
                    .subsets
                    .into_iter()
                    .flatten()
                    .flat_map(|s| s.addresses.unwrap_or_default())
                    .map(|a| a.ip)
                    .collect();
                (!ready.is_empty()
                    && named.iter().all(|ip| ready.contains(ip))
                    && !named.is_empty())
                .then_some(())
            }
        },
    )
    .await;
    webhooks_answer(clusters).await;
    let took = t.elapsed();
    let after = available_since(&clusters.get(cluster).await.unwrap());
    assert_eq!(before, after, "the cluster's Available condition changed");
    assert_eq!(
        before.map(|(status, _)| status),
        Some(json!("True")),
        "the cluster was Available"
    );
    took
}
