//! The whole life of a fleet on our image, on real nodes: `init --image` (operator and hub pods),
//! `join --image` (operator and agent pods on the managed node), `accept`, a ManifestWork whose
//! Deployment's pod really starts and reports back, the agent container killed and the hub pod
//! deleted without harm, and `unjoin`/`clean` leaving nothing behind. Prints the timings.
use std::time::{Duration, Instant};

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use serde_json::json;

use crate::common;
use crate::fixture::{
    self, cluster_scoped, clusteradm, condition_true, pod_ready, ready_pod, serial, works,
};

const HUB_NS: &str = "open-cluster-management-hub";
const OPERATOR_NS: &str = "open-cluster-management";
const AGENT_NS: &str = "open-cluster-management-agent";
use clusteradm::cli::controller::{AGENT_LEASE, HUB_LEASE};

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
    let init = clusteradm(&[
        "init",
        "--image",
        &env.image,
        "--kubeconfig",
        hub_kc,
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

    // The admission policies answer (no webhook pod is needed for them)...
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
        refused.to_string().contains("is not an https URL"),
        "{refused}"
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
        .replace("<cluster_name>", &cluster);
    let mut join: Vec<&str> = join_line.split_whitespace().skip(1).collect();
    join.extend(["--image", &env.image, "--kubeconfig", managed_kc, "--wait"]);
    let t = Instant::now();
    clusteradm(&join);
    clusteradm(&[
        "accept",
        "--clusters",
        &cluster,
        "--kubeconfig",
        hub_kc,
        "--wait",
    ]);
    wait_available(&clusters, &cluster).await;
    let join_to_available = t.elapsed();
    let agent_pod = leader(&managed, AGENT_NS, AGENT_LEASE).await;
    assert_eq!(
        agent_pod.spec.as_ref().unwrap().node_name.as_deref(),
        Some("managed-node"),
        "the agent runs on the managed cluster's own node"
    );
    assert_runs_locked_down(&agent_pod, &env.image);

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
    let agent_metrics = metrics(&agent_pod).await;
    assert!(
        agent_metrics.contains("clusteradm_work_apply_seconds_count"),
        "{agent_metrics}"
    );
    assert!(
        agent_metrics.contains("clusteradm_reconciles_total{controller=\"work agent\"}"),
        "{agent_metrics}"
    );
    let hub_metrics = metrics(&hub_pod).await;
    assert!(
        hub_metrics
            .contains("clusteradm_reconciles_total{controller=\"hub registration controller\"}"),
        "{hub_metrics}"
    );
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
    let old_holder = holder(&managed, AGENT_NS, AGENT_LEASE).await;
    create_work(&hub, &cluster, "many", &work_ns, &many_refs).await;
    kill_container(&agent_pod, "managed");
    let killed = Instant::now();
    common::eventually(
        "another agent process holding the Lease",
        clusteradm::runtime::lease::DURATION + Duration::from_secs(15),
        || {
            let managed = managed.clone();
            let old_holder = old_holder.clone();
            async move {
                let now = holder(&managed, AGENT_NS, AGENT_LEASE).await;
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

    // Least privilege that is still enough: nothing the pods asked for was refused (before the
    // teardown below takes their RBAC away while they stop).
    assert_no_refusals(
        "hub",
        "system:serviceaccount:open-cluster-management-hub:cluster-manager-hub-sa",
    );
    assert_no_refusals(
        "managed",
        "system:serviceaccount:open-cluster-management-agent:klusterlet-agent-sa",
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
         agent leader killed -> another leads {:.1} s, hub leader deleted -> standby leads {:.1} s",
        init_to_ready.as_secs_f64(),
        join_to_available.as_secs_f64(),
        work_to_pod.as_secs_f64(),
        takeover.as_secs_f64(),
        hub_takeover.get().unwrap().as_secs_f64()
    );
}

/// The holder of Lease `namespace/name`, if any.
async fn holder(client: &kube::Client, namespace: &str, name: &str) -> Option<String> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), namespace);
    leases
        .get_opt(name)
        .await
        .ok()??
        .spec?
        .holder_identity
        .filter(|h| !h.is_empty())
}

/// The Ready pod holding Lease `namespace/lease` (its identity is `<pod name>_<uuid>`), once
/// both replicas are Ready.
async fn leader(client: &kube::Client, namespace: &str, lease: &str) -> Pod {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    common::eventually(
        &format!("the leader of {namespace}/{lease} and a Ready standby"),
        Duration::from_secs(120),
        || {
            let pods = pods.clone();
            async move {
                let holder = holder(client, namespace, lease).await?;
                let (name, _) = holder.rsplit_once('_')?;
                let leader = pods.get(name).await.ok().filter(pod_ready)?;
                let app = leader.metadata.labels.as_ref()?.get("app")?.clone();
                let all = pods
                    .list(&ListParams::default().labels(&format!("app={app}")))
                    .await
                    .ok()?;
                (all.items.iter().filter(|p| pod_ready(p)).count() == 2).then_some(leader)
            }
        },
    )
    .await
}

/// No request of `user` was refused (403) by the cluster's API server, per its audit log.
fn assert_no_refusals(cluster: &str, user: &str) {
    let cp_dir = std::env::var("CP_DIR").expect("CP_DIR (scripts/control-plane env)");
    let log = std::fs::read_to_string(format!("{cp_dir}/logs/{cluster}-audit.log")).unwrap();
    let made = log
        .lines()
        .filter(|l| l.contains(&format!("\"username\":\"{user}\"")))
        .count();
    assert!(made > 0, "no request of {user} in the {cluster} audit log");
    let refused: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!("\"username\":\"{user}\"")) && l.contains("\"code\":403"))
        .collect();
    assert!(
        refused.is_empty(),
        "{} requests of {user} refused, e.g. {}",
        refused.len(),
        refused[0]
    );
}

/// Waits until `name` is gone from `api`.
async fn gone(api: &Api<DynamicObject>, name: &str) {
    common::eventually(&format!("{name} deleted"), Duration::from_secs(120), || {
        let api = api.clone();
        async move { matches!(api.get_opt(name).await, Ok(None)).then_some(()) }
    })
    .await;
}

/// `/metrics` of a pod, read from this host over the node's bridge.
async fn metrics(pod: &Pod) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let ip = pod
        .status
        .as_ref()
        .unwrap()
        .pod_ip
        .clone()
        .expect("a pod IP");
    let mut stream = tokio::net::TcpStream::connect((ip.as_str(), 8000))
        .await
        .unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: pod\r\n\r\n")
        .await
        .unwrap();
    let mut body = String::new();
    stream.read_to_string(&mut body).await.unwrap();
    assert!(
        body.starts_with("HTTP/1.0 200") || body.starts_with("HTTP/1.1 200"),
        "{body}"
    );
    body
}

/// The pod runs our image as a non-root user, read-only, with no capabilities.
fn assert_runs_locked_down(pod: &Pod, image: &str) {
    let c = &pod.spec.as_ref().unwrap().containers[0];
    assert_eq!(c.image.as_deref(), Some(image));
    let sc = c.security_context.as_ref().expect("a security context");
    assert_eq!(sc.run_as_non_root, Some(true));
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    assert_eq!(
        sc.capabilities.as_ref().and_then(|c| c.drop.clone()),
        Some(vec!["ALL".to_string()])
    );
    assert!(c.liveness_probe.is_some() && c.readiness_probe.is_some());
}

async fn wait_available(clusters: &Api<DynamicObject>, name: &str) {
    common::eventually(
        &format!("ManagedCluster {name} Available"),
        Duration::from_secs(120),
        || {
            let clusters = clusters.clone();
            async move {
                let c = clusters.get(name).await.ok()?;
                condition_true(&c, "ManagedClusterConditionAvailable").then_some(())
            }
        },
    )
    .await;
}

/// A ManifestWork in `cluster` with a namespace and, per entry, a Deployment (true) running the
/// busybox image or a ConfigMap (false); Deployments report their ready replicas.
async fn create_work(
    hub: &kube::Client,
    cluster: &str,
    name: &str,
    namespace: &str,
    objects: &[(&str, bool)],
) {
    let mut manifests =
        vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})];
    let mut configs = Vec::new();
    for (object, deployment) in objects {
        if *deployment {
            manifests.push(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": object, "namespace": namespace},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": object}},
                    "template": {"metadata": {"labels": {"app": object}}, "spec": {
                        "automountServiceAccountToken": false,
                        "containers": [{"name": "sleep", "image": "localhost/clusteradm-rs/busybox:1",
                            "command": ["/bin/busybox", "sleep", "3600"],
                            "securityContext": {"runAsNonRoot": true, "allowPrivilegeEscalation": false,
                                "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}}}]}}}}));
            configs.push(json!({"resourceIdentifier": {"group": "apps", "resource": "deployments", "name": object, "namespace": namespace},
                "feedbackRules": [{"type": "WellKnownStatus"}]}));
        } else {
            manifests.push(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": object, "namespace": namespace}, "data": {"k": "v"}}));
        }
    }
    let work: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": cluster},
        "spec": {"workload": {"manifests": manifests}, "manifestConfigs": configs},
    }))
    .unwrap();
    works(hub, cluster)
        .create(&PostParams::default(), &work)
        .await
        .unwrap();
}

async fn wait_work(
    hub: &kube::Client,
    cluster: &str,
    name: &str,
    done: impl Fn(&DynamicObject) -> bool,
) -> DynamicObject {
    let api = works(hub, cluster);
    common::eventually(
        &format!("ManifestWork {cluster}/{name}"),
        Duration::from_secs(120),
        || {
            let api = api.clone();
            let done = &done;
            async move { api.get(name).await.ok().filter(|w| done(w)) }
        },
    )
    .await
}

/// The integer feedback value `name` of the work's first Deployment.
fn feedback(work: &DynamicObject, name: &str) -> Option<i64> {
    work.data["status"]["resourceStatus"]["manifests"]
        .as_array()?
        .iter()
        .find(|m| m["resourceMeta"]["kind"] == "Deployment")?["statusFeedback"]["values"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == name)?["fieldValue"]["integer"]
        .as_i64()
}

/// Whether the work's first Deployment has manifest condition `type_` True.
fn manifest_condition(work: &DynamicObject, type_: &str) -> bool {
    work.data["status"]["resourceStatus"]["manifests"]
        .as_array()
        .and_then(|ms| {
            ms.iter()
                .find(|m| m["resourceMeta"]["kind"] == "Deployment")
        })
        .and_then(|m| m["conditions"].as_array())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == type_ && c["status"] == "True")
        })
}

/// SIGKILLs the pod's first container through its node's containerd, as a crash would.
fn kill_container(pod: &Pod, cluster: &str) {
    let id = pod
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap()[0]
        .container_id
        .clone()
        .unwrap();
    let id = id.trim_start_matches("containerd://");
    let cp_dir = std::env::var("CP_DIR").expect("CP_DIR (scripts/control-plane env)");
    let sock = format!("{cp_dir}/{cluster}/node/containerd.sock");
    let status = std::process::Command::new("ctr")
        .args([
            "-a", &sock, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id,
        ])
        .status()
        .expect("ctr runs");
    assert!(status.success(), "ctr tasks kill {id}");
}

/// No pod, Deployment, namespace, CRD, webhook configuration or RBAC of OCM on the cluster.
async fn assert_nothing_left(client: &kube::Client, which: &str) {
    common::eventually(
        &format!("nothing of OCM left on the {which} cluster"),
        Duration::from_secs(180),
        || {
            let client = client.clone();
            async move {
                let leftovers = leftovers(&client).await;
                if leftovers.is_empty() {
                    Some(())
                } else {
                    eprintln!("{which}: still there: {leftovers:?}");
                    None
                }
            }
        },
    )
    .await;
}

async fn leftovers(client: &kube::Client) -> Vec<String> {
    let ocm = |name: &str| {
        name.contains("open-cluster-management")
            || name.starts_with("klusterlet")
            || name.starts_with("cluster-manager")
    };
    let mut out = Vec::new();
    out.extend(names::<Namespace>(client, "namespace", ocm).await);
    out.extend(names::<Pod>(client, "pod", ocm).await);
    out.extend(names::<Deployment>(client, "deployment", ocm).await);
    out.extend(
        names::<CustomResourceDefinition>(client, "crd", |n| {
            n.ends_with("open-cluster-management.io")
        })
        .await,
    );
    out.extend(
        names::<ValidatingWebhookConfiguration>(client, "validatingwebhookconfiguration", |_| true)
            .await,
    );
    out.extend(
        names::<MutatingWebhookConfiguration>(client, "mutatingwebhookconfiguration", |_| true)
            .await,
    );
    out.extend(names::<ValidatingAdmissionPolicy>(client, "validatingadmissionpolicy", ocm).await);
    out.extend(
        names::<ClusterRole>(client, "clusterrole", |n| {
            n.starts_with("open-cluster-management")
        })
        .await,
    );
    out.extend(
        names::<ClusterRoleBinding>(client, "clusterrolebinding", |n| {
            n.starts_with("open-cluster-management")
        })
        .await,
    );
    out
}

/// `<what> <name>` of every object of kind `K` (all namespaces) whose name `matches`.
async fn names<K>(client: &kube::Client, what: &str, matches: impl Fn(&str) -> bool) -> Vec<String>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    K::DynamicType: Default,
{
    Api::<K>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|o| o.meta().name.clone())
        .filter(|n| matches(n))
        .map(|n| format!("{what} {n}"))
        .collect()
}
