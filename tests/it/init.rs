//! `clusteradm init` and `get token` on the real hub apiserver.
use serde::Deserialize as _;
use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DynamicObject, PostParams};
use predicates::prelude::*;
use std::os::unix::fs::PermissionsExt as _;

use crate::common;

/// Every object init applies (default flags), as (apiVersion, kind, namespace, name).
const INIT_OBJECTS: &[(&str, &str, Option<&str>, &str)] = &[
    (
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        "clustermanagers.operator.open-cluster-management.io",
    ),
    ("v1", "Namespace", None, "open-cluster-management"),
    (
        "v1",
        "ServiceAccount",
        Some("open-cluster-management"),
        "cluster-manager",
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        None,
        "cluster-manager",
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        None,
        "cluster-manager",
    ),
    (
        "v1",
        "Secret",
        Some("open-cluster-management"),
        "open-cluster-management-image-pull-credentials",
    ),
    (
        "apps/v1",
        "Deployment",
        Some("open-cluster-management"),
        "cluster-manager",
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        None,
        "open-cluster-management:bootstrap",
    ),
    (
        "v1",
        "ServiceAccount",
        Some("open-cluster-management"),
        "agent-registration-bootstrap",
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        None,
        "open-cluster-management:bootstrap:agent-registration",
    ),
    (
        "operator.open-cluster-management.io/v1",
        "ClusterManager",
        None,
        "cluster-manager",
    ),
];

async fn resource_versions(client: &kube::Client) -> BTreeMap<String, String> {
    let resolver = clusteradm::apply::Resolver::new(client.clone());
    let mut out = BTreeMap::new();
    for (api_version, kind, ns, name) in INIT_OBJECTS {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let gvk = kube::api::GroupVersionKind::gvk(group, version, kind);
        let api: Api<DynamicObject> = resolver.api_for(&gvk, *ns).await.unwrap();
        let obj = api
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("{kind} {name} missing after init: {e}"));
        out.insert(format!("{kind}/{name}"), common::written_by_us(&obj));
    }
    out
}

fn init(extra: &[&str]) -> assert_cmd::assert::Assert {
    common::clusteradm()
        .arg("init")
        .arg("--kubeconfig")
        .arg(common::env().hub)
        .args(common::SHARED_HUB_GATES)
        .args(extra)
        .assert()
}

#[tokio::test]
async fn init_creates_the_hub_and_a_second_init_changes_nothing() {
    let _hub = common::HUB_SINGLETON.lock().await;
    let out = init(&[]).success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.starts_with("clusteradm join --hub-token "),
        "{stdout}"
    );
    assert!(stdout.contains("--ca-cert-hash sha256:"), "{stdout}");
    assert!(stdout.contains("--cluster-name <cluster_name>"), "{stdout}");
    let hub = common::hub().await;
    let first = resource_versions(&hub).await;
    assert_eq!(first.len(), INIT_OBJECTS.len());

    init(&[])
        .success()
        .stderr(predicate::str::contains("nothing changed"));
    let second = resource_versions(&hub).await;
    assert_eq!(first, second, "a second init wrote an object");
}

#[test]
fn dry_run_prints_every_manifest_and_sends_no_request() {
    // The kubeconfig points at a port where nothing listens: any request would fail the command.
    let text = std::fs::read_to_string(common::env().hub).unwrap();
    let (server, _) = common::server_and_ca(&common::env().hub);
    let kubeconfig = common::temp_file("kubeconfig", &text.replace(&server, "https://127.0.0.1:1"));
    let out = common::clusteradm()
        .args(["init", "--dry-run", "--kubeconfig"])
        .arg(&kubeconfig)
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for (_, kind, _, name) in INIT_OBJECTS {
        assert!(
            stdout.contains(&format!("kind: {kind}")),
            "{kind} missing from dry-run output"
        );
        assert!(
            stdout.contains(&format!("name: {name}")),
            "{name} missing from dry-run output"
        );
    }
    assert!(
        !stdout.contains("hub-token"),
        "dry-run must not issue a token"
    );
    // Upstream's webhooks by default; `--admission policies` asks the operator for policies.
    let annotation = "clusteradm.open-cluster-management.io/admission: policies";
    assert!(!stdout.contains(annotation));
    let out = common::clusteradm()
        .args([
            "init",
            "--dry-run",
            "--admission",
            "policies",
            "--kubeconfig",
        ])
        .arg(&kubeconfig)
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains(annotation));
}

/// The hub's admin kubeconfig text, and two copies of it (management, hosted hub) that point at a
/// port where nothing listens: any request a hosted dry run sent would fail the command.
fn unreachable_kubeconfigs() -> (String, std::path::PathBuf, std::path::PathBuf) {
    let text = std::fs::read_to_string(common::env().hub).unwrap();
    let (server, _) = common::server_and_ca(&common::env().hub);
    let unreachable = text.replace(&server, "https://127.0.0.1:1");
    let management = common::temp_file("management.kubeconfig", &unreachable);
    let hub = common::temp_file("hosted-hub.kubeconfig", &unreachable);
    (text, management, hub)
}

#[test]
fn a_hosted_dry_run_splits_the_plan_and_redacts_the_hubs_kubeconfig() {
    let (text, management, hub) = unreachable_kubeconfigs();
    let out = common::clusteradm()
        .args([
            "init",
            "--dry-run",
            "--mode",
            "hosted",
            "--image",
            "r.example/c:1",
        ])
        .args([
            "--hosted-webhook-address",
            "10.1.2.3",
            "--hosted-webhook-port",
            "30443",
        ])
        .arg("--hub-kubeconfig")
        .arg(&hub)
        .arg("--kubeconfig")
        .arg(&management)
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for wanted in [
        "mode: Hosted",
        "address: 10.1.2.3",
        "port: 30443",
        "name: external-hub-kubeconfig",
        "namespace: cluster-manager",
        "name: agent-registration-bootstrap",
    ] {
        assert!(stdout.contains(wanted), "{wanted} missing from:\n{stdout}");
    }
    // The Secret's kubeconfig is printed with its credentials redacted.
    let key = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("client-key-data: "))
        .expect("the admin kubeconfig has a key");
    let secret = serde_yaml::Deserializer::from_str(&stdout)
        .map(|doc| serde_yaml::Value::deserialize(doc).unwrap())
        .find(|o| o["kind"] == "Secret" && o["metadata"]["name"] == "external-hub-kubeconfig")
        .expect("the external hub kubeconfig Secret");
    let printed = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        secret["data"]["kubeconfig"].as_str().unwrap(),
    )
    .unwrap();
    let printed = String::from_utf8(printed).unwrap();
    assert!(
        printed.contains("127.0.0.1:1") && !printed.contains(key),
        "{printed}"
    );
}

#[test]
fn a_hosted_dry_run_with_upstreams_images_exposes_their_webhooks_on_node_ports() {
    let (_, management, hub) = unreachable_kubeconfigs();
    let out = common::clusteradm()
        .args(["init", "--dry-run", "--mode", "hosted"])
        .args(["--hosted-webhook-address", "10.1.2.3"])
        .args(["--feature-gates", "PlacementDebugServer=true"])
        .arg("--hub-kubeconfig")
        .arg(&hub)
        .arg("--kubeconfig")
        .arg(&management)
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // Upstream's operator's hosted debug server cannot run: said before anything is applied.
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(stderr.contains("crash-loop"), "{stderr}");
    let objects: Vec<serde_yaml::Value> = serde_yaml::Deserializer::from_str(&stdout)
        .map(|doc| serde_yaml::Value::deserialize(doc).unwrap())
        .filter(|o| !o.is_null())
        .collect();
    let find = |kind: &str, name: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} in:\n{stdout}"))
    };
    // Upstream's operator, which hosts upstream's images itself.
    let operator = find("Deployment", "cluster-manager");
    let image = operator["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap();
    assert!(image.contains("/registration-operator:"), "{image}");
    // Each webhook server at its NodePort of the address, as upstream's hosted sample has it.
    let hosted = &find("ClusterManager", "cluster-manager")["spec"]["deployOption"];
    assert_eq!(hosted["mode"], "Hosted");
    for (field, port) in [
        ("registrationWebhookConfiguration", 30443),
        ("workWebhookConfiguration", 31443),
    ] {
        let webhook = &hosted["hosted"][field];
        assert_eq!(webhook["address"], "10.1.2.3", "{hosted:?}");
        assert_eq!(webhook["port"], port, "{hosted:?}");
        // The server binds the same port: upstream's webhook configuration calls that one.
        assert_eq!(webhook["bindConfiguration"]["port"], port, "{hosted:?}");
        assert_eq!(webhook["bindConfiguration"]["hostNetwork"], false);
    }
    for (app, port) in [
        ("cluster-manager-registration-webhook", 30443),
        ("cluster-manager-work-webhook", 31443),
    ] {
        let service = find("Service", &format!("{app}-node-port"));
        assert_eq!(service["metadata"]["namespace"], "cluster-manager");
        assert_eq!(service["spec"]["type"], "NodePort");
        assert_eq!(service["spec"]["selector"]["app"], app);
        assert_eq!(service["spec"]["ports"][0]["nodePort"], port);
        assert_eq!(service["spec"]["ports"][0]["targetPort"], port);
    }
}

#[tokio::test]
async fn json_output_and_join_command_file() {
    let _hub = common::HUB_SINGLETON.lock().await;
    let file = std::env::temp_dir()
        .join(common::unique("join"))
        .with_extension("sh");
    let out = common::clusteradm()
        .args([
            "init",
            "-o",
            "json",
            "--hub-apiserver",
            "https://hub.example.com:6443",
            "--output-join-command-file",
        ])
        .arg(&file)
        .arg("--kubeconfig")
        .arg(common::env().hub)
        .args(common::SHARED_HUB_GATES)
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["hub-apiserver"], "https://hub.example.com:6443");
    assert!(json["hub-token"].as_str().unwrap().len() > 20);
    assert!(
        json["ca-cert-hash"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let script = std::fs::read_to_string(&file).unwrap();
    assert!(
        script.contains("--hub-apiserver https://hub.example.com:6443")
            && script.contains("--cluster-name \"$1\"")
    );
}

#[test]
fn loopback_server_warns_and_hub_apiserver_overrides() {
    let _hub = common::HUB_SINGLETON.blocking_lock();
    init(&[])
        .success()
        .stderr(predicate::str::contains("loopback address"));
    init(&["--hub-apiserver", "https://10.1.2.3:6443"])
        .success()
        .stderr(predicate::str::contains("loopback").not())
        .stdout(predicate::str::contains(
            "--hub-apiserver https://10.1.2.3:6443",
        ));
}

#[test]
fn bad_flags_are_rejected_before_any_request() {
    for (args, message) in [
        (
            &["--bundle-version", "banana"][..],
            "invalid --bundle-version",
        ),
        (
            &["--hub-apiserver", "http://plain:80"][..],
            "invalid hub API server URL",
        ),
        (&["--feature-gates", "Foo"][..], "invalid feature gate"),
        // Hosted mode: the hub's kubeconfig, with upstream's images the webhooks' address and
        // no port of ours, not in-process; its flags not without it.
        (
            &["--mode", "hosted", "--image", "r.example/c:1"][..],
            "--mode hosted needs --hub-kubeconfig",
        ),
        (
            &["--mode", "hosted", "--hub-kubeconfig", "/nonexistent"][..],
            "with upstream's images needs --hosted-webhook-address",
        ),
        (
            &[
                "--mode",
                "hosted",
                "--hub-kubeconfig",
                "/nonexistent",
                "--hosted-webhook-address",
                "10.1.2.3",
                "--hosted-webhook-port",
                "443",
            ][..],
            "--hosted-webhook-port is for --image",
        ),
        (
            &["--mode", "hosted", "--hub-kubeconfig", "/x", "--in-process"][..],
            "--in-process in this process",
        ),
        (
            &["--hub-kubeconfig", "/nonexistent"][..],
            "are for --mode hosted",
        ),
    ] {
        // Unreachable server: the error must come from validation, not from a connection.
        common::clusteradm()
            .args(["init", "--kubeconfig", "/nonexistent"])
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(message));
    }
}

#[tokio::test]
async fn a_user_without_rights_is_told_and_nothing_is_changed() {
    let hub = common::hub().await;
    // A bootstrap token authenticates but holds no RBAC rights.
    let id = common::token_id();
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), "kube-system");
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("bootstrap-token-{id}")},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": {"token-id": id, "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true"}
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let token = format!("{id}.0123456789abcdef");
    let client = common::hub_client_with_token(&token).await;
    common::eventually(
        "the token to authenticate",
        Duration::from_secs(20),
        || async { common::whoami(&client).await.ok() },
    )
    .await;
    let kubeconfig = common::temp_file("kubeconfig", &common::hub_kubeconfig_with_token(&token));
    common::clusteradm()
        .args(["init", "--kubeconfig"])
        .arg(&kubeconfig)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "may not: create customresourcedefinitions",
        ))
        .stderr(predicate::str::contains("cluster-admin"));
    secrets
        .delete(
            &format!("bootstrap-token-{id}"),
            &kube::api::DeleteParams::default(),
        )
        .await
        .unwrap();
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // one scenario: positive and negative checks of one credential
async fn bootstrap_credential_can_register_and_nothing_more() {
    let _hub = common::HUB_SINGLETON.lock().await;
    let out = init(&["-o", "json"]).success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let token = json["hub-token"].as_str().unwrap().to_string();
    let hub = common::hub().await;
    // The ManagedCluster CRD comes from the operator; install the hub CRDs directly here.
    common::install_crds(&hub, &clusteradm::api::hub_crds(), Duration::from_secs(30)).await;

    let agent = common::hub_client_with_token(&token).await;
    let allowed = |verb: &'static str,
                   group: &'static str,
                   resource: &'static str,
                   sub: Option<&'static str>| {
        let agent = agent.clone();
        async move {
            let review = SelfSubjectAccessReview {
                spec: SelfSubjectAccessReviewSpec {
                    resource_attributes: Some(ResourceAttributes {
                        verb: Some(verb.into()),
                        group: Some(group.into()),
                        resource: Some(resource.into()),
                        subresource: sub.map(Into::into),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                ..Default::default()
            };
            let api: Api<SelfSubjectAccessReview> = Api::all(agent);
            api.create(&PostParams::default(), &review)
                .await
                .unwrap()
                .status
                .unwrap()
                .allowed
        }
    };
    assert!(
        allowed(
            "create",
            "certificates.k8s.io",
            "certificatesigningrequests",
            None
        )
        .await
    );
    assert!(
        allowed(
            "create",
            "cluster.open-cluster-management.io",
            "managedclusters",
            None
        )
        .await
    );
    assert!(
        !allowed("list", "", "secrets", None).await,
        "bootstrap credential can list secrets"
    );
    assert!(
        !allowed("list", "", "namespaces", None).await,
        "bootstrap credential can list namespaces"
    );
    assert!(
        !allowed(
            "update",
            "certificates.k8s.io",
            "certificatesigningrequests",
            Some("approval")
        )
        .await
    );
    assert!(
        !allowed(
            "update",
            "cluster.open-cluster-management.io",
            "managedclusters",
            None
        )
        .await
    );
    assert!(
        !allowed(
            "delete",
            "cluster.open-cluster-management.io",
            "managedclusters",
            None
        )
        .await
    );

    // And for real: a ManagedCluster can be created, secrets cannot be listed.
    let name = common::unique("it-bootstrap");
    let mc: clusteradm::api::cluster::ManagedCluster = serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": name}, "spec": {"hubAcceptsClient": false}
    }))
    .unwrap();
    let mcs: Api<clusteradm::api::cluster::ManagedCluster> = Api::all(agent.clone());
    mcs.create(&PostParams::default(), &mc).await.unwrap();
    let err = Api::<Secret>::all(agent.clone())
        .list(&kube::api::ListParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 403),
        "{err:?}"
    );
    let err = Api::<Namespace>::all(agent.clone())
        .list(&kube::api::ListParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 403),
        "{err:?}"
    );
    let err = Api::<CertificateSigningRequest>::all(agent)
        .patch_approval(
            "anything",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({})),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 403),
        "{err:?}"
    );
    Api::<clusteradm::api::cluster::ManagedCluster>::all(hub)
        .delete(&name, &kube::api::DeleteParams::default())
        .await
        .unwrap();
}

#[test]
fn get_token_prints_a_working_join_command() {
    let _hub = common::HUB_SINGLETON.blocking_lock();
    init(&[]).success();
    common::clusteradm()
        .args(["get", "token", "--kubeconfig"])
        .arg(common::env().hub)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("token="))
        .stdout(predicate::str::contains(
            "\nplease log on spoke and run:\nclusteradm join --hub-token ",
        ))
        .stdout(predicate::str::contains("--ca-cert-hash sha256:"));
    // The `token=` line (what scripts written for upstream read) is the join command's token.
    let out = common::clusteradm()
        .args(["get", "token", "--kubeconfig"])
        .arg(common::env().hub)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let token = text.lines().next().unwrap().strip_prefix("token=").unwrap();
    assert!(text.contains(&format!("--hub-token {token} ")), "{text}");
}

#[test]
fn wait_is_bounded_and_names_the_unmet_condition() {
    let _hub = common::HUB_SINGLETON.blocking_lock();
    // No operator runs in this test binary and no pod can start here: the hub never gets ready.
    let started = std::time::Instant::now();
    init(&["--wait", "--timeout", "3s"])
        .code(1)
        .stderr(predicate::str::contains("the hub was not ready within 3s"))
        .stderr(predicate::str::contains("condition"))
        .stderr(predicate::str::contains("--in-process"));
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[tokio::test]
async fn anyone_may_read_cluster_info_and_nothing_else() {
    {
        let _hub = common::HUB_SINGLETON.lock().await;
        init(&[]).success();
    }
    // No credentials at all: join reads cluster-info like this before it trusts the hub.
    let (server, ca) = common::server_and_ca(&common::env().hub);
    let anonymous = common::client_from_yaml(&format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: '{server}', certificate-authority-data: {ca}}}}}]\n\
         users: [{{name: u, user: {{}}}}]\ncontexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n"
    ))
    .await;
    let public: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(anonymous, "kube-public");
    let info = public.get("cluster-info").await.unwrap();
    assert!(info.data.unwrap()["kubeconfig"].contains("certificate-authority-data"));
    let err = public.get("kube-root-ca.crt").await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 403),
        "{err:?}"
    );
}
