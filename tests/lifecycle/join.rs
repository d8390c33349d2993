//! `clusteradm join` / `unjoin` and the Klusterlet operator loop, on the real hub and managed
//! apiservers. The managed cluster's klusterlet is a singleton: every test here holds
//! [`MANAGED_SINGLETON`] and starts from a managed cluster without any klusterlet.
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use clusteradm::api::cluster::ManagedCluster;
use clusteradm::api::operator::Klusterlet;
use clusteradm::operator::klusterlet as operator;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use kube::{Client, ResourceExt as _};
use predicates::prelude::*;

use crate::common;

/// Serialises the tests that join, unjoin or run the klusterlet loop on the managed cluster.
pub(crate) static MANAGED_SINGLETON: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const KLUSTERLET_CRD: &str = "klusterlets.operator.open-cluster-management.io";
const AGENT_NS: &str = "open-cluster-management-agent";

/// Every object a default join applies, as (apiVersion, kind, namespace, name).
const JOIN_OBJECTS: &[(&str, &str, Option<&str>, &str)] = &[
    (
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        KLUSTERLET_CRD,
    ),
    ("v1", "Namespace", None, "open-cluster-management"),
    (
        "v1",
        "ServiceAccount",
        Some("open-cluster-management"),
        "klusterlet",
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        None,
        "klusterlet",
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        None,
        "klusterlet",
    ),
    (
        "apps/v1",
        "Deployment",
        Some("open-cluster-management"),
        "klusterlet",
    ),
    ("v1", "Namespace", None, AGENT_NS),
    ("v1", "Secret", Some(AGENT_NS), "bootstrap-hub-kubeconfig"),
    (
        "operator.open-cluster-management.io/v1",
        "Klusterlet",
        None,
        "klusterlet",
    ),
];

/// What `init -o json` prints.
pub(crate) struct Hub {
    pub token: String,
    pub server: String,
    pub hash: String,
}

/// Makes the hub ready for joins: `init` (holding the hub lock only for it) and the hub CRDs the
/// operator would install.
pub(crate) async fn hub(bootstrap_token: bool) -> Hub {
    let out = {
        let _hub = common::HUB_SINGLETON.lock().await;
        let mut cmd = common::clusteradm();
        cmd.args(["init", "-o", "json", "--kubeconfig"])
            .arg(common::env().hub);
        if bootstrap_token {
            cmd.arg("--use-bootstrap-token");
        }
        cmd.assert().success().get_output().stdout.clone()
    };
    common::install_crds(
        &common::hub().await,
        &clusteradm::api::hub_crds(),
        Duration::from_secs(60),
    )
    .await;
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let field = |k: &str| json[k].as_str().unwrap().to_string();
    Hub {
        token: field("hub-token"),
        server: field("hub-apiserver"),
        hash: field("ca-cert-hash"),
    }
}

pub(crate) fn join(hub: &Hub, cluster: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = common::clusteradm();
    cmd.args(join_args(hub, cluster, extra));
    cmd
}

/// `join`'s arguments for `cluster` on the managed cluster, then `extra`.
fn join_args(hub: &Hub, cluster: &str, extra: &[&str]) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = [
        "join",
        "--hub-token",
        &hub.token,
        "--hub-apiserver",
        &hub.server,
        "--cluster-name",
        cluster,
        "--kubeconfig",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.push(common::env().managed.into());
    args.extend(extra.iter().map(Into::into));
    args
}

/// Removes every klusterlet, the operator and the Klusterlet CRD from a cluster.
pub(crate) async fn reset(client: &Client) {
    let api: Api<Klusterlet> = Api::all(client.clone());
    let names: Vec<String> = api
        .list(&ListParams::default())
        .await
        .map(|l| l.items.iter().map(kube::ResourceExt::name_any).collect())
        .unwrap_or_default();
    for name in names.iter().map(String::as_str).chain(["klusterlet"]) {
        let _ = api.delete(name, &DeleteParams::default()).await;
        operator::cleanup(client, name, Duration::from_secs(60))
            .await
            .unwrap();
    }
    let mut objects = clusteradm::install::klusterlet::operator_objects(
        "x",
        false,
        &clusteradm::install::klusterlet::OperatorSettings::default(),
    )
    .unwrap();
    let is_hub = Api::<CustomResourceDefinition>::all(client.clone())
        .get_opt("clustermanagers.operator.open-cluster-management.io")
        .await
        .unwrap()
        .is_some();
    objects.retain(|o| !(is_hub && o.types.as_ref().unwrap().kind == "Namespace"));
    clusteradm::apply::delete::delete_all(
        &clusteradm::apply::Resolver::new(client.clone()),
        &objects,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
}

async fn get_dynamic(
    client: &Client,
    api_version: &str,
    kind: &str,
    ns: Option<&str>,
    name: &str,
) -> Option<DynamicObject> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let resolver = clusteradm::apply::Resolver::new(client.clone());
    let api: Api<DynamicObject> = resolver
        .api_for(&GroupVersionKind::gvk(group, version, kind), ns)
        .await
        .ok()?;
    api.get_opt(name).await.unwrap()
}

async fn resource_versions(client: &Client) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (api_version, kind, ns, name) in JOIN_OBJECTS {
        let obj = get_dynamic(client, api_version, kind, *ns, name)
            .await
            .unwrap_or_else(|| panic!("{kind} {name} missing after join"));
        out.insert(format!("{kind}/{name}"), common::written_by_us(&obj));
    }
    out
}

/// Asserts the managed cluster holds nothing a join creates.
pub(crate) async fn assert_nothing_joined(client: &Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    assert!(
        crds.get_opt(KLUSTERLET_CRD).await.unwrap().is_none(),
        "the Klusterlet CRD was created"
    );
    let namespaces: Api<Namespace> = Api::all(client.clone());
    assert!(
        namespaces.get_opt(AGENT_NS).await.unwrap().is_none(),
        "the agent namespace was created"
    );
    assert!(
        namespaces
            .get_opt("open-cluster-management")
            .await
            .unwrap()
            .is_none(),
        "the operator namespace was created"
    );
}

fn stderr_of(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

#[tokio::test]
async fn join_applies_every_object_and_a_second_join_changes_nothing() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    let out = join(&hub, "it-join", &["--ca-cert-hash", &hub.hash])
        .assert()
        .success();
    assert!(
        stderr_of(&out).contains("clusteradm accept --clusters it-join"),
        "{}",
        stderr_of(&out)
    );
    let first = resource_versions(&managed).await;
    assert_eq!(first.len(), JOIN_OBJECTS.len());

    // The bootstrap kubeconfig trusts the hub CA and never skips verification.
    let secret = Api::<Secret>::namespaced(managed.clone(), AGENT_NS)
        .get("bootstrap-hub-kubeconfig")
        .await
        .unwrap();
    let text = String::from_utf8(secret.data.unwrap()["kubeconfig"].0.clone()).unwrap();
    assert!(!text.contains("insecure-skip-tls-verify"), "{text}");
    let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    let cluster = kc.clusters[0].cluster.clone().unwrap();
    assert_eq!(
        cluster.certificate_authority_data,
        Some(common::server_and_ca(&common::env().hub).1)
    );
    assert_eq!(cluster.server.as_deref(), Some(hub.server.as_str()));
    assert!(text.contains(&hub.token));
    let k = Api::<Klusterlet>::all(managed.clone())
        .get("klusterlet")
        .await
        .unwrap();
    assert_eq!(k.spec.cluster_name.as_deref(), Some("it-join"));
    assert_eq!(
        k.spec.deploy_option.unwrap().mode.as_deref(),
        Some("Default")
    );

    join(&hub, "it-join", &["--ca-cert-hash", &hub.hash])
        .assert()
        .success()
        .stderr(predicate::str::contains("nothing changed"));
    assert_eq!(
        first,
        resource_versions(&managed).await,
        "a second join wrote an object"
    );
    reset(&managed).await;
}

#[tokio::test]
async fn dry_run_creates_nothing_and_shows_no_token() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    // Upstream's spellings: -m for --mode, the certificate lifetime into the Klusterlet's spec.
    let flags = [
        "--ca-cert-hash",
        &hub.hash,
        "--dry-run",
        "-m",
        "default",
        "--client-cert-expiration-seconds",
        "7200",
        "--addon-kubeclient-registration-auth",
        "token",
        "--addon-token-expiration-seconds",
        "3600",
    ];
    let out = join(&hub, "it-dry", &flags).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains("clientCertExpirationSeconds: 7200"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "addOnKubeClientRegistrationDriver:\n      authType: token\n      token:\n        expirationSeconds: 3600"
        ),
        "{stdout}"
    );
    join(&hub, "it-dry", &["--client-cert-expiration-seconds", "60"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "may not ask for less than 600 seconds",
        ));
    let token = "--addon-kubeclient-registration-auth";
    for (flags, says) in [
        (
            [token, "awsirsa", "--addon-token-expiration-seconds", "0"],
            "csr or token",
        ),
        (
            [token, "token", "--addon-token-expiration-seconds", "300"],
            "at least 600",
        ),
        (
            [token, "token", "--addon-token-expiration-seconds", "-1"],
            "may not be negative",
        ),
    ] {
        join(&hub, "it-dry", &flags)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(says));
    }
    for (_, kind, _, name) in JOIN_OBJECTS {
        assert!(
            stdout.contains(&format!("kind: {kind}")) && stdout.contains(&format!("name: {name}")),
            "{kind} {name} missing"
        );
    }
    assert!(
        !stdout.contains(&hub.token) && !stderr_of(&out).contains(&hub.token),
        "the token was shown"
    );
    assert_nothing_joined(&managed).await;
}

#[tokio::test]
async fn a_bad_token_or_a_wrong_pin_fails_and_creates_nothing() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    let bad = Hub {
        token: "abcdef.0123456789abcdef".into(),
        server: hub.server.clone(),
        hash: hub.hash.clone(),
    };
    join(&bad, "it-bad", &["--ca-cert-hash", &hub.hash])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("token invalid or expired"))
        .stderr(predicate::str::contains("clusteradm get token"));
    let wrong = format!("sha256:{}", "0".repeat(64));
    // init's token carries the hub's pin: a contradicting --ca-cert-hash is refused at once.
    join(&hub, "it-bad", &["--ca-cert-hash", &wrong])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "differs from the pin the token carries",
        ));
    // A token that carries none is checked against the pin given.
    let minted = Hub {
        token: crate::upstream_scripts::user_minted_token().await,
        server: hub.server.clone(),
        hash: hub.hash.clone(),
    };
    join(&minted, "it-bad", &["--ca-cert-hash", &wrong])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("does not match --ca-cert-hash"));
    assert_nothing_joined(&managed).await;
}

/// On a terminal, a join command whose token carries no pin (one the user minted) and that
/// names none shows the CA the hub presents and asks: no is "nothing done", yes joins with that
/// CA pinned.
#[tokio::test]
async fn a_join_command_without_a_pin_asks_on_a_terminal() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    let hub = Hub {
        token: crate::upstream_scripts::user_minted_token().await,
        ..hub
    };
    // `script` runs the command on a pseudo-terminal and types what stdin says.
    let on_a_terminal = |answer: &str| {
        let bin = assert_cmd::cargo::cargo_bin("clusteradm");
        let mut line = vec![bin.display().to_string()];
        line.extend(
            join_args(&hub, "it-tty", &[])
                .iter()
                .map(|a| a.to_string_lossy().into_owned()),
        );
        let mut cmd = assert_cmd::Command::new("script");
        cmd.args(["-qec", &line.join(" "), "/dev/null"])
            .env_remove("KUBECONFIG")
            .env("NO_COLOR", "1")
            .write_stdin(answer.to_owned());
        cmd
    };
    let out = on_a_terminal("n").assert().code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains(&format!("--ca-cert-hash {}", hub.hash)),
        "{text}"
    );
    assert!(text.contains("Trust this CA and join?"), "{text}");
    assert_nothing_joined(&managed).await;
    let out = on_a_terminal("y").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("clusteradm accept --clusters it-tty"),
        "{text}"
    );
    let k = Api::<Klusterlet>::all(managed.clone())
        .get("klusterlet")
        .await
        .unwrap();
    assert_eq!(k.spec.cluster_name.as_deref(), Some("it-tty"));
    reset(&managed).await;
}

#[tokio::test]
async fn a_bootstrap_token_verifies_cluster_info_by_its_signature() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(true).await;
    assert!(hub.token.starts_with("ocmhub."), "{}", hub.token);
    let cms: Api<ConfigMap> = Api::namespaced(common::hub().await, "kube-public");
    common::eventually(
        "the bootstrap-signer to sign cluster-info",
        Duration::from_secs(60),
        || async {
            cms.get("cluster-info")
                .await
                .ok()?
                .data?
                .get("jws-kubeconfig-ocmhub")
                .map(|_| ())
        },
    )
    .await;
    join(&hub, "it-jws", &[]).assert().success();
    assert!(
        Api::<Klusterlet>::all(managed.clone())
            .get_opt("klusterlet")
            .await
            .unwrap()
            .is_some()
    );
    reset(&managed).await;
}

#[test]
fn an_invalid_cluster_name_is_rejected_before_any_request() {
    let _one_at_a_time = crate::serial_blocking();
    common::clusteradm()
        .args([
            "join",
            "--kubeconfig",
            "/nonexistent",
            "--hub-token",
            "a.b",
            "--hub-apiserver",
            "https://127.0.0.1:1",
            "--cluster-name",
            "Bad_Name",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("invalid cluster name"))
        .stderr(predicate::str::contains("kubeconfig").not());
}

#[test]
fn an_unreachable_hub_is_a_clear_error() {
    let _one_at_a_time = crate::serial_blocking();
    let start = Instant::now();
    common::clusteradm()
        .args([
            "join",
            "--hub-token",
            "abcdef.0123456789abcdef",
            "--hub-apiserver",
            "https://127.0.0.1:1",
            "--cluster-name",
            "c1",
            "--timeout",
            "30s",
            "--kubeconfig",
        ])
        .arg(common::env().managed)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "cannot reach the hub https://127.0.0.1:1",
        ));
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn unjoin_without_a_terminal_proceeds_as_upstreams_and_says_so() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    join(&hub, "it-any", &["--ca-cert-hash", &hub.hash])
        .assert()
        .success();
    common::clusteradm()
        .args([
            "unjoin",
            "--cluster-name",
            "it-any",
            "--timeout",
            "60s",
            "--kubeconfig",
        ])
        .arg(common::env().managed)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "no terminal to confirm on: proceeding",
        ));
    assert_nothing_joined(&managed).await;
}

mod in_process_operator;
mod operator_loop;
mod upgrade;

/// `join` right after `init`, before the hub's operator installed the OCM API: join waits for it
/// within `--timeout`, saying what it waits for, and goes on once it is there; with too short a
/// timeout it fails naming the API, and has changed nothing.
#[tokio::test]
async fn join_waits_for_the_hubs_ocm_api_within_the_timeout() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    let hub_client = common::hub().await;
    // The hub as `init` leaves it before its operator ran: no ManagedCluster API. Clusters that
    // earlier tests left would hold the CRD's deletion with their finalizers (no hub controller
    // runs here to release them): released first.
    let clusters: Api<ManagedCluster> = Api::all(hub_client.clone());
    for c in clusters.list(&ListParams::default()).await.unwrap().items {
        if !c.finalizers().is_empty() {
            let release = serde_json::json!({"metadata": {"finalizers": null}});
            clusters
                .patch(
                    &c.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(release),
                )
                .await
                .unwrap();
        }
    }
    let crds: Api<CustomResourceDefinition> = Api::all(hub_client.clone());
    let name = "managedclusters.cluster.open-cluster-management.io";
    let uid = crds.get(name).await.unwrap().metadata.uid.unwrap();
    let _ = crds.delete(name, &DeleteParams::default()).await;
    crate::registration_fixture::wait_deleted(crds.clone(), name, &uid).await;

    let started = Instant::now();
    join(
        &hub,
        "it-early",
        &["--ca-cert-hash", &hub.hash, "--timeout", "3s"],
    )
    .assert()
    .code(1)
    .stderr(predicate::str::contains(
        "did not get its OCM API within 3s",
    ))
    .stderr(predicate::str::contains("clusteradm get hub-info"));
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_nothing_joined(&managed).await;

    // Started again with time to spare: it says it waits, and joins once the API is served.
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("clusteradm"));
    cmd.args(join_args(
        &hub,
        "it-early",
        &["--ca-cert-hash", &hub.hash, "--timeout", "120s"],
    ))
    .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // Read to the end (a closed pipe would fail join's later lines); tell when it says it waits.
    let stderr = child.stderr.take().unwrap();
    let (said_tx, said_rx) = tokio::sync::oneshot::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead as _;
        let mut said_tx = Some(said_tx);
        let mut lines = Vec::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line.unwrap();
            if line.contains("waiting for the hub's OCM API")
                && let Some(tx) = said_tx.take()
            {
                let _ = tx.send(());
            }
            lines.push(line);
        }
        lines
    });
    let said = tokio::time::timeout(Duration::from_secs(60), said_rx).await;
    assert!(
        matches!(said, Ok(Ok(()))),
        "join never said it waits for the API"
    );
    common::install_crds(
        &hub_client,
        &clusteradm::api::hub_crds(),
        Duration::from_secs(60),
    )
    .await;
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let lines = reader.join().unwrap();
    assert!(
        status.success(),
        "join failed after the API appeared: {lines:?}"
    );
    let k = Api::<Klusterlet>::all(managed.clone())
        .get("klusterlet")
        .await
        .unwrap();
    assert_eq!(k.spec.cluster_name.as_deref(), Some("it-early"));
    reset(&managed).await;
}
