//! Steps the pod tests share: leases and leaders, works and their status, waits, and the checks
//! that pods ran locked down, were refused nothing and left nothing behind.
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use serde_json::json;

use crate::common;
use crate::fixture::{condition_true, pod_ready, works};

/// The holder of Lease `namespace/name`, if any.
pub async fn holder(client: &kube::Client, namespace: &str, name: &str) -> Option<String> {
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
pub async fn leader(client: &kube::Client, namespace: &str, lease: &str) -> Pod {
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

/// No request of `user` was refused (403) by the cluster's API server, per its audit log, since
/// this test started (the agents of an earlier test have the same names).
pub fn assert_no_refusals(cluster: &str, user: &str) {
    let cp_dir = std::env::var("CP_DIR").expect("CP_DIR (scripts/control-plane env)");
    let log = std::fs::read_to_string(format!("{cp_dir}/logs/{cluster}-audit.log")).unwrap();
    let since = crate::fixture::started();
    let this_test = |line: &&str| {
        let event: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let at = event["requestReceivedTimestamp"]
            .as_str()
            .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok());
        match (since, at) {
            (Some(since), Some(at)) => at >= since,
            _ => true,
        }
    };
    let mine: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!("\"username\":\"{user}\"")))
        .filter(this_test)
        .collect();
    assert!(
        !mine.is_empty(),
        "no request of {user} in the {cluster} audit log"
    );
    let refused: Vec<&str> = mine
        .into_iter()
        .filter(|l| l.contains("\"code\":403"))
        .collect();
    assert!(
        refused.is_empty(),
        "{} requests of {user} refused, e.g. {}",
        refused.len(),
        refused[0]
    );
}

/// Waits until `name` is gone from `api`.
pub async fn gone(api: &Api<DynamicObject>, name: &str) {
    common::eventually(&format!("{name} deleted"), Duration::from_secs(120), || {
        let api = api.clone();
        async move { matches!(api.get_opt(name).await, Ok(None)).then_some(()) }
    })
    .await;
}

/// The pod's IP, which this host reaches over the node's bridge.
fn pod_ip(pod: &Pod) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.pod_ip.clone())
        .expect("a pod IP")
}

/// `/metrics` of a pod, read from this host over the node's bridge: over HTTPS with the token of
/// a ServiceAccount of `cluster` (where the pod runs) allowed `get` on `/metrics`. Without a token
/// the pod refuses (401), and its plain-HTTP probe port serves no metrics (404).
pub async fn metrics(pod: &Pod, cluster: &kube::Client) -> String {
    let ip = pod_ip(pod);
    let token = metrics_reader_token(cluster).await;
    let url = format!("https://{ip}:8443/metrics");
    let (status, _) = curl(vec!["-k".into(), url.clone()]).await;
    assert_eq!(status, "401", "no token");
    let (status, _) = curl(vec![format!("http://{ip}:8000/metrics")]).await;
    assert_eq!(status, "404", "metrics on the probe port");
    let ok = |(status, body): (String, String)| (status == "200").then_some(body);
    eventually_answered("the pod's /metrics", &url, &token, ok).await
}

/// The hub pod serves upstream's placement debug endpoint (`PlacementDebugServer`) behind
/// upstream's Service: no token refused, a token allowed the URL and `create` on placements
/// answered with upstream's `DebugResult` (here the error for a placement that does not exist).
pub async fn placement_debug(pod: &Pod, hub: &kube::Client) {
    use k8s_openapi::api::core::v1::Service;
    let service = Api::<Service>::namespaced(hub.clone(), "open-cluster-management-hub")
        .get("cluster-manager-placement")
        .await
        .expect("upstream's Service of the debug server");
    let port = &service.spec.unwrap().ports.unwrap()[0];
    assert_eq!(port.port, 9443);
    let ip = pod_ip(pod);
    let url = format!("https://{ip}:9444/debug/placements/default/pods-nope");
    let (status, _) = curl(vec!["-k".into(), url.clone()]).await;
    assert_eq!(status, "401", "no token");
    let account = "placement-debugger";
    common::allow_urls(
        hub,
        "pods-placement-debugger",
        "default",
        account,
        &["/debug/placements/*"],
        &["get"],
    )
    .await;
    // `create` on placements in the placement's namespace.
    let role: k8s_openapi::api::rbac::v1::RoleBinding = serde_json::from_value(serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "pods-placement-debugger-admin", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": "default"}],
    }))
    .unwrap();
    Api::<k8s_openapi::api::rbac::v1::RoleBinding>::namespaced(hub.clone(), "default")
        .patch(
            "pods-placement-debugger-admin",
            &kube::api::PatchParams::apply("pods-test").force(),
            &kube::api::Patch::Apply(&role),
        )
        .await
        .unwrap();
    let token = common::service_account_token(hub, "default", account).await;
    let answered = |(status, body): (String, String)| {
        (status == "200" && body.contains("not found")).then_some(body)
    };
    let body = eventually_answered("the debug endpoint's answer", &url, &token, answered).await;
    assert!(body.starts_with("{\"error\":"), "{body}");
}

/// What `check` makes of `url` called with bearer `token` (a self-signed certificate), once
/// it makes something of it, within a minute.
async fn eventually_answered(
    what: &str,
    url: &str,
    token: &str,
    check: impl Fn((String, String)) -> Option<String>,
) -> String {
    common::eventually(what, Duration::from_secs(60), || {
        let args = vec![
            "-k".into(),
            "-H".into(),
            format!("Authorization: Bearer {token}"),
            url.to_owned(),
        ];
        let check = &check;
        async move { check(curl(args).await) }
    })
    .await
}

/// `curl -s` with `args`: the status code and the body.
async fn curl(args: Vec<String>) -> (String, String) {
    tokio::task::spawn_blocking(move || {
        let body = tempfile_path();
        let out = std::process::Command::new("curl")
            .args(["-s", "--max-time", "10", "-o", &body, "-w", "%{http_code}"])
            .args(&args)
            .output()
            .expect("curl runs");
        let text = std::fs::read_to_string(&body).unwrap_or_default();
        let _ = std::fs::remove_file(&body);
        (String::from_utf8_lossy(&out.stdout).into_owned(), text)
    })
    .await
    .unwrap()
}

fn tempfile_path() -> String {
    std::env::temp_dir()
        .join(common::unique("pods-metrics"))
        .to_string_lossy()
        .into_owned()
}

/// A token of ServiceAccount `default/metrics-reader`, allowed `get` on `/metrics` (as a
/// Prometheus is).
async fn metrics_reader_token(cluster: &kube::Client) -> String {
    common::allow_metrics(cluster, "pods-metrics-reader", "default", "metrics-reader").await;
    common::service_account_token(cluster, "default", "metrics-reader").await
}

/// The pod runs our image as a non-root user, read-only, with no capabilities.
pub fn assert_runs_locked_down(pod: &Pod, image: &str) {
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
    // Pod Security's restricted profile, which its namespace enforces: the runtime's default
    // seccomp profile; and limits as well as requests.
    let pod_sc = pod.spec.as_ref().unwrap().security_context.as_ref();
    assert_eq!(
        pod_sc
            .and_then(|s| s.seccomp_profile.as_ref())
            .map(|p| p.type_.as_str()),
        Some("RuntimeDefault")
    );
    assert!(
        c.resources
            .as_ref()
            .and_then(|r| r.limits.as_ref())
            .is_some(),
        "{:?}",
        c.resources
    );
}

/// `clusteradm accept --wait` on the hub, then waits until the cluster is Available.
pub async fn accept_until_available(clusters: &Api<DynamicObject>, name: &str) {
    let hub_kc = crate::fixture::env().hub;
    crate::fixture::clusteradm(&[
        "accept",
        "--clusters",
        name,
        "--kubeconfig",
        hub_kc.to_str().unwrap(),
        "--wait",
    ]);
    wait_available(clusters, name).await;
}

/// Waits until ManagedCluster `name` is Available.
pub async fn wait_available(clusters: &Api<DynamicObject>, name: &str) {
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
pub async fn create_work(
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

pub async fn wait_work(
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
pub fn feedback(work: &DynamicObject, name: &str) -> Option<i64> {
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
pub fn manifest_condition(work: &DynamicObject, type_: &str) -> bool {
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
pub fn kill_container(pod: &Pod, cluster: &str) {
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
pub async fn assert_nothing_left(client: &kube::Client, which: &str) {
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
pub async fn names<K>(
    client: &kube::Client,
    what: &str,
    matches: impl Fn(&str) -> bool,
) -> Vec<String>
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

/// Waits until `clusteradm get <what>` on `kubeconfig` shows, under the line `section`, a
/// workload line `<kind>:\t(n/n) <image>` with all its replicas available; returns the output.
/// Three minutes: a second replica's pod may start behind the others on a busy 2-core node. On
/// timeout the last output is in the message, so a failure says which count was short.
pub async fn info_shows_ready(what: &str, kubeconfig: &str, section: &str, image: &str) -> String {
    common::eventually_seen(
        &format!("`get {what}` showing {section} ready with {image}"),
        Duration::from_secs(180),
        || {
            let out = crate::fixture::clusteradm(&["get", what, "--kubeconfig", kubeconfig]);
            let ready = shows_ready(&out, section, image);
            std::future::ready(if ready {
                Ok(out)
            } else {
                Err(format!("; it last printed:\n{out}"))
            })
        },
    )
    .await
}

/// Whether `out` has, under the line `section`, a line `<kind>:\t(n/n) <image>` with n > 0.
fn shows_ready(out: &str, section: &str, image: &str) -> bool {
    let lines: Vec<&str> = out.lines().collect();
    lines.windows(2).any(|w| {
        w[0] == section
            && w[1].split_once("\t(").is_some_and(|(_, rest)| {
                rest.split_once(") ").is_some_and(|(counts, shown)| {
                    let (a, b) = counts.split_once('/').unwrap_or(("", "-"));
                    a == b && a != "0" && shown == image
                })
            })
    })
}
