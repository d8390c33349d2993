//! The nodes as a real cluster's for Services: a pod on each node (hub and managed, whose
//! node-proxies share this machine's network namespace) resolves another pod's Service by its
//! cluster DNS name and reaches it through the Service's ClusterIP, by an ExternalName Service
//! naming it too, and reaches the API server as `kubernetes.default.svc` (what cluster-proxy's
//! agent and in-cluster clients dial).
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Pod, Service};
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use crate::common;
use crate::fixture;

const BUSYBOX: &str = "localhost/clusteradm-rs/busybox:1";
/// Resolves names with glibc (the static busybox cannot: it has no NSS modules).
const CURL: &str = "localhost/clusteradm-rs/curl:1";

#[tokio::test]
async fn a_pod_reaches_a_service_by_its_dns_name_on_every_node() {
    let _one = fixture::serial().await;
    let (hub, managed) = fixture::clients().await;
    for (cluster, client) in [("hub", hub), ("managed", managed)] {
        let took = reach_a_service(&client).await;
        println!("[services] {cluster}: the client pod's answer after {took:?}");
    }
}

/// Serves a page from one pod behind a Service, fetches it from another pod by the Service's
/// name, and returns how long from the client pod's creation to its answer.
async fn reach_a_service(client: &Client) -> Duration {
    let ns = common::unique("it-svc");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let body = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
    namespaces
        .create(&PostParams::default(), &body)
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let server = json!({"metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": BUSYBOX,
            "command": ["/bin/busybox", "sh", "-c",
                "mkdir -p /tmp/www && echo served-by-web > /tmp/www/index.html && exec /bin/busybox httpd -f -p 8080 -h /tmp/www"],
            "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1}}]}});
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(server).unwrap(),
    )
    .await
    .unwrap();
    let service = json!({"metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}});
    Api::<Service>::namespaced(client.clone(), &ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(service).unwrap(),
        )
        .await
        .unwrap();
    let alias = json!({"metadata": {"name": "web-alias"},
        "spec": {"type": "ExternalName", "externalName": format!("web.{ns}.svc")}});
    Api::<Service>::namespaced(client.clone(), &ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(alias).unwrap(),
        )
        .await
        .unwrap();
    fixture::ready_pod(client, &ns, "web", Duration::from_secs(120)).await;

    let url = format!("http://web.{ns}.svc.cluster.local/");
    let alias_url = format!("http://web-alias.{ns}.svc.cluster.local/");
    // Retried inside the pod: the node's proxy learns of the endpoint a moment after it is ready.
    let client_pod = json!({"metadata": {"name": "client"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "client", "image": CURL,
            "command": ["curl", "-sS", "--retry", "30", "--retry-all-errors", "--retry-delay", "1",
                "--connect-timeout", "2", "--max-time", "10",
                "--cacert", "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
                url, alias_url, "https://kubernetes.default.svc/readyz"]}]}});
    let started = Instant::now();
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(client_pod).unwrap(),
    )
    .await
    .unwrap();
    let phase = common::eventually("the client pod finished", Duration::from_secs(120), || {
        let pods = pods.clone();
        async move {
            let phase = pods.get("client").await.ok()?.status?.phase?;
            matches!(phase.as_str(), "Succeeded" | "Failed").then_some(phase)
        }
    })
    .await;
    let took = started.elapsed();
    let logs = pods
        .logs("client", &kube::api::LogParams::default())
        .await
        .unwrap();
    assert_eq!(phase, "Succeeded", "the client pod printed: {logs}");
    assert_eq!(
        logs.split_whitespace().collect::<Vec<_>>(),
        ["served-by-web", "served-by-web", "ok"],
        "by its name, by an ExternalName, and the API server by its Service's name"
    );
    namespaces
        .delete(&ns, &DeleteParams::default())
        .await
        .unwrap();
    took
}
