//! `clusteradm get credentials`: a token for the managed cluster, minted through a ManifestWork
//! the cluster's agent applies, printed as an ExecCredential (named cluster, or read from
//! `KUBERNETES_EXEC_INFO` as an exec plugin). The token can do what its ClusterRole grants and no
//! more; a caller who may not create ManifestWorks is refused; an unknown cluster is refused.
use std::time::Duration;

use clusteradm::api::cluster::ManagedCluster;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::{TestCluster, hub_cli};
use crate::common;

/// Runs the CLI off the runtime (the agent keeps working meanwhile).
async fn run(cmd: assert_cmd::Command) -> std::process::Output {
    let mut cmd = cmd;
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn token_of(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "get credentials failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let credential: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(credential["kind"], "ExecCredential");
    credential["status"]["token"].as_str().unwrap().to_string()
}

/// A client of the managed cluster that authenticates with `token`.
async fn managed_with_token(token: &str) -> Client {
    let (server, ca) = common::server_and_ca(&common::env().managed);
    common::client_from_yaml(&format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: '{server}', certificate-authority-data: {ca}}}}}]\n\
         users: [{{name: u, user: {{token: '{token}'}}}}]\ncontexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n"
    ))
    .await
}

/// A hub kubeconfig for a fresh ServiceAccount that holds no RBAC at all.
async fn powerless_kubeconfig(hub: &Client, namespace: &str) -> std::path::PathBuf {
    let token = common::service_account_token(hub, namespace, "powerless").await;
    common::temp_file(
        "powerless.kubeconfig",
        &common::hub_kubeconfig_with_token(&token),
    )
}

/// Waits until the credentials' work reports no feedback value (the token) any more.
async fn token_left_the_status(c: &TestCluster) {
    common::eventually("the token gone from the work's status", super::WAIT, || {
        let works = c.works();
        async move {
            let w = works.get("clusteradm-credentials-view").await.ok()?;
            let fed_back = w.status?.resource_status?.manifests.iter().any(|m| {
                m.status_feedback
                    .as_ref()
                    .is_some_and(|f| !f.values.is_empty())
            });
            (!fed_back).then_some(())
        }
    })
    .await;
}

/// Without the managed-serviceaccount add-on a token would not expire: refused unless the caller
/// accepts that, and nothing is made.
async fn refused_without_the_addon(c: &TestCluster) {
    let refused = run(hub_cli(&["get", "credentials", &c.name])).await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--non-expiring"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(
        c.works()
            .get_opt("clusteradm-credentials-view")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one credential's life: made, used, checked, refused, revoked
async fn credentials_reach_the_managed_cluster_with_the_role_and_no_more() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-creds").await;
    let _agent = c.agent(Duration::from_secs(60));
    let clusters: Api<ManagedCluster> = Api::all(c.hub.clone());
    // As its agent reports it: the managed API server's URL and CA.
    let (server, ca) = common::server_and_ca(&common::env().managed);
    let mc: ManagedCluster = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": c.name}, "spec": {"hubAcceptsClient": false,
            "managedClusterClientConfigs": [{"url": server, "caBundle": ca}]}}))
    .unwrap();
    clusters.create(&PostParams::default(), &mc).await.unwrap();

    refused_without_the_addon(&c).await;
    let direct = run(hub_cli(&["get", "credentials", &c.name, "--non-expiring"])).await;
    assert!(
        String::from_utf8_lossy(&direct.stderr).contains("which does not expire"),
        "{}",
        String::from_utf8_lossy(&direct.stderr)
    );
    let first = token_of(&direct);
    let managed = managed_with_token(&first).await;
    assert_eq!(
        common::whoami(&managed).await.unwrap(),
        format!(
            "system:serviceaccount:open-cluster-management-credentials:clusteradm-credentials-{}-view",
            c.name
        )
    );
    // `view`: it reads, and nothing more.
    Api::<Pod>::namespaced(managed.clone(), "default")
        .list(&ListParams::default())
        .await
        .expect("view lists pods");
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "nope"}})).unwrap();
    let denied = Api::<ConfigMap>::namespaced(managed.clone(), "default")
        .create(&PostParams::default(), &cm)
        .await
        .unwrap_err();
    assert!(
        matches!(denied, kube::Error::Api(ref s) if s.code == 403),
        "{denied:?}"
    );

    // Read, the token leaves the work: its feedback rule is taken off.
    let work = c.works().get("clusteradm-credentials-view").await.unwrap();
    assert!(work.spec.manifest_configs.is_empty());
    token_left_the_status(&c).await;

    // As an exec plugin: the cluster from KUBERNETES_EXEC_INFO, the same token again; never for
    // a server the cluster's agent did not report.
    let as_plugin = |server: &str| {
        let mut exec = hub_cli(&["get", "credentials", "--non-expiring"]);
        exec.env(
            "KUBERNETES_EXEC_INFO",
            json!({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                   "spec": {"interactive": false, "cluster": {"server": server, "config": {"clusterName": c.name}}}})
            .to_string(),
        );
        exec
    };
    let plugged = run(as_plugin(&server)).await;
    assert_eq!(
        token_of(&plugged),
        first,
        "the same credential, not a new one"
    );
    assert!(
        plugged.stderr.is_empty(),
        "a plugin's stderr reaches the user at every call"
    );
    let elsewhere = run(as_plugin("https://attacker.example:6443")).await;
    assert_eq!(elsewhere.status.code(), Some(1));
    assert!(elsewhere.stdout.is_empty(), "no token for another server");
    assert!(
        String::from_utf8_lossy(&elsewhere.stderr).contains("not managed cluster"),
        "{}",
        String::from_utf8_lossy(&elsewhere.stderr)
    );

    // cluster-proxy's user server for the cluster, without the add-on on this hub: refused.
    let proxied = run(as_plugin(&format!(
        "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/{}",
        c.name
    )))
    .await;
    assert_eq!(proxied.status.code(), Some(1));
    assert!(
        proxied.stdout.is_empty(),
        "no token through a proxy that is not there"
    );
    assert!(
        String::from_utf8_lossy(&proxied.stderr).contains("cluster-proxy add-on is not installed"),
        "{}",
        String::from_utf8_lossy(&proxied.stderr)
    );

    // Refused: an unknown cluster; a caller who may not create ManifestWorks there.
    let unknown = run(hub_cli(&[
        "get",
        "credentials",
        "no-such-cluster-here",
        "--non-expiring",
    ]))
    .await;
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("managed cluster no-such-cluster-here not found"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    let powerless = powerless_kubeconfig(&c.hub, &c.name).await;
    let mut refused = common::clusteradm();
    refused
        .args([
            "get",
            "credentials",
            &c.name,
            "--non-expiring",
            "--kubeconfig",
        ])
        .arg(&powerless);
    let refused = run(refused).await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("forbidden") || stderr.contains("refused"),
        "{stderr}"
    );
    assert!(!stderr.contains(&first), "a refusal never shows a token");

    // Deleting the work revokes the credential (the ServiceAccount and its token go).
    c.works()
        .delete("clusteradm-credentials-view", &DeleteParams::default())
        .await
        .unwrap();
    common::eventually("the token revoked", super::WAIT, || {
        let managed = managed.clone();
        async move { common::whoami(&managed).await.is_err().then_some(()) }
    })
    .await;
    let strip = json!({"metadata": {"finalizers": null}});
    let _ = clusters
        .patch(&c.name, &PatchParams::default(), &Patch::Merge(&strip))
        .await;
    let _ = clusters.delete(&c.name, &DeleteParams::default()).await;
}
