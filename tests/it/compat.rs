//! Upstream clusteradm's spellings and flags, run as an upstream script would run them against the
//! real hub: klog verbosity, `_` in flag names, `clusterset set --namespaces`, `--output-file`,
//! `--create-namespace=false`, the registration drivers refused with their reason, and
//! `kubectl clusteradm` as a kubectl plugin. (`src/cli/compat.rs` checks that every upstream flag
//! is taken or explained; this runs them.)
use std::os::unix::fs::PermissionsExt as _;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams};

use clusteradm::api::cluster::ManagedClusterSet;
use clusteradm::cli::bundle::BundleArgs;

use crate::common;
use crate::registration::fixture;

#[tokio::test]
async fn klog_verbosity_and_underscored_flags_work_as_upstream() {
    fixture::hub().await;
    for verbosity in [&["-v", "2"][..], &["--v=2"], &["-v=5"]] {
        let mut args = verbosity.to_vec();
        args.extend(["get", "clusters", "-o", "json"]);
        let (code, out, err) = fixture::on_hub(&args).await;
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str::<serde_json::Value>(&out).expect("JSON on stdout, logs on stderr");
    }
    // Upstream's default layout for getters, on request.
    let (code, out, err) = fixture::on_hub(&["get", "clusters", "-o", "tree"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("<ManagedCluster> \n"), "{out}");
    let (code, out, err) =
        fixture::on_hub(&["get", "placements", "--all_namespaces", "-o", "json"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("--all_namespaces has been converted to --all-namespaces"),
        "upstream's warning: {err}"
    );
    serde_json::from_str::<serde_json::Value>(&out).unwrap();
}

#[tokio::test]
async fn clusterset_set_namespaces_adds_managed_namespaces_once() {
    fixture::hub().await;
    let hub = common::hub().await;
    let set = common::unique("it-compat-set");
    let (code, _, err) = fixture::on_hub(&["create", "clusterset", &set]).await;
    assert_eq!(code, 0, "{err}");

    let (code, out, err) =
        fixture::on_hub(&["clusterset", "set", &set, "--namespaces", "ns-a,ns-b"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Added 2 managed namespace(s): ns-a, ns-b"),
        "{out}"
    );
    let (code, out, _) =
        fixture::on_hub(&["clusterset", "set", &set, "--namespaces", "ns-a,ns-c"]).await;
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!(
            "Managed namespace ns-a already exists in Clusterset {set}"
        )),
        "{out}"
    );
    assert!(
        out.contains("Total managed namespaces in clusterset: 3"),
        "{out}"
    );
    let (_, out, _) = fixture::on_hub(&["clusterset", "set", &set, "--namespaces", "ns-c"]).await;
    assert!(
        out.contains("All specified namespaces already exist"),
        "twice changes nothing: {out}"
    );

    let sets: Api<ManagedClusterSet> = Api::all(hub.clone());
    let names: Vec<String> = sets
        .get(&set)
        .await
        .unwrap()
        .spec
        .managed_namespaces
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(names, ["ns-a", "ns-b", "ns-c"]);

    let (code, _, err) =
        fixture::on_hub(&["clusterset", "set", &set, "--namespaces", "Bad_Name"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("is not a namespace name"), "{err}");
    let (code, _, err) = fixture::on_hub(&["clusterset", "set", &set]).await;
    assert_eq!(
        code, 2,
        "neither --clusters nor --namespaces is a usage error: {err}"
    );
    sets.delete(&set, &DeleteParams::default()).await.unwrap();
}

#[tokio::test]
async fn output_file_holds_the_objects_init_would_apply() {
    let dir = std::env::temp_dir().join(common::unique("it-compat-out"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hub.yaml");
    // --dry-run sends no request: the file is the whole bundle, for GitOps.
    let (code, out, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--output-file",
        file.to_str().unwrap(),
        "--registration-drivers",
        "csr",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.is_empty(),
        "the objects go to the file, not stdout: {out}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let objects = clusteradm::apply::parse_objects(&text, "output file").unwrap();
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o.types.as_ref().unwrap().kind.as_str())
        .collect();
    assert!(
        kinds.contains(&"ClusterManager") && kinds.contains(&"Namespace"),
        "{kinds:?}"
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "it may hold a credential");

    // Where upstream takes --output-file and writes nothing, so does this, and says so.
    let ignored = dir.join("token.yaml");
    let (_, _, err) =
        fixture::on_hub(&["get", "token", "--output-file", ignored.to_str().unwrap()]).await;
    assert!(
        err.contains("--output-file") && err.contains("ignored"),
        "{err}"
    );
    assert!(!ignored.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn init_takes_upstreams_resource_and_version_bundle_flags() {
    let dir = std::env::temp_dir().join(common::unique("it-compat-flags"));
    std::fs::create_dir_all(&dir).unwrap();
    // Upstream's resource flags: on the ClusterManager and the operator's own container.
    let (code, out, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--resource-qos-class",
        "ResourceRequirement",
        "--resource-requests",
        "cpu=100m",
        "--resource-limits",
        "cpu=1,memory=1Gi",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    let objects = clusteradm::apply::parse_objects(&out, "stdout").unwrap();
    let of = |kind: &str| {
        objects
            .iter()
            .find(|o| o.types.as_ref().unwrap().kind == kind)
            .unwrap()
            .data
            .clone()
    };
    let cm = of("ClusterManager");
    assert_eq!(
        cm["spec"]["resourceRequirement"]["type"],
        "ResourceRequirement"
    );
    assert_eq!(
        cm["spec"]["resourceRequirement"]["resourceRequirements"]["limits"]["memory"],
        "1Gi"
    );
    let operator = of("Deployment");
    assert_eq!(
        operator["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "100m"
    );
    let (code, _, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--resource-qos-class",
        "BestEffort",
        "--resource-limits",
        "cpu=1",
    ])
    .await;
    assert_eq!(
        code, 1,
        "upstream's rule: limits need class ResourceRequirement"
    );
    assert!(
        err.contains("need --resource-qos-class ResourceRequirement"),
        "{err}"
    );

    // Upstream's --enable-sync-labels and --image-pull-credential-file: the operator runs with
    // the flag, and the pull secret holds the file.
    let pull = dir.join("config.json");
    std::fs::write(&pull, r#"{"auths":{}}"#).unwrap();
    let (code, out, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--enable-sync-labels",
        "--image-pull-credential-file",
        pull.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    let objects = clusteradm::apply::parse_objects(&out, "stdout").unwrap();
    let operator = objects
        .iter()
        .find(|o| o.types.as_ref().unwrap().kind == "Deployment")
        .unwrap();
    let args = &operator.data["spec"]["template"]["spec"]["containers"][0]["args"];
    assert!(args.to_string().contains("--enable-sync-labels"), "{args}");
    let secret = objects
        .iter()
        .find(|o| {
            o.metadata.name.as_deref() == Some("open-cluster-management-image-pull-credentials")
        })
        .unwrap();
    assert_eq!(secret.data["data"][".dockerconfigjson"], "eyJhdXRocyI6e319");

    // Upstream's version bundle overrides: the OCM images' tag from a JSON file.
    let overrides = dir.join("bundle.json");
    std::fs::write(
        &overrides,
        r#"{"ocm": "v1.2.0", "policy_addon": "v0.18.0"}"#,
    )
    .unwrap();
    let (code, out, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--bundle-version-overrides",
        overrides.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("quay.io/open-cluster-management/registration:v1.2.0")
            && !out.contains(":v1.3.1"),
        "{out}"
    );

    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn drivers_other_than_csr_and_other_cluster_managers_are_refused_with_the_reason() {
    // Our components: refused with the reason.
    let (code, _, err) = fixture::on_hub(&[
        "init",
        "--registration-drivers",
        "csr,awsirsa",
        "--image",
        "registry.invalid/clusteradm:dev",
    ])
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("\"awsirsa\" is not supported") && err.contains("EKS"),
        "{err}"
    );
    // Upstream's: written as upstream's init writes them (tests/lifecycle/upstream_scripts.rs),
    // but only for an EKS hub: this one's kubeconfig names no EKS cluster ARN, and nothing is
    // applied.
    let (code, _, err) = fixture::on_hub(&["init", "--registration-drivers", "csr,awsirsa"]).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("is not an EKS cluster ARN") && err.contains("--hub-cluster-arn"),
        "{err}"
    );
    let (code, _, err) = fixture::on_hub(&[
        "join",
        "--hub-token",
        "x",
        "--hub-apiserver",
        "https://127.0.0.1:1",
        "--cluster-name",
        "c1",
        "--registration-auth",
        "grpc",
    ])
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("\"grpc\" is not supported"), "{err}");
    let (code, _, err) = fixture::on_hub(&["clean", "--name", "other", "-y"]).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("a hub has one, named cluster-manager"),
        "{err}"
    );
}

#[tokio::test]
async fn create_namespace_false_needs_the_namespaces_to_exist() {
    let hub = common::hub().await;
    let missing = common::unique("it-compat-ns");
    let namespace = |name: &str| {
        clusteradm::apply::to_dynamic(&Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        })
    };
    let keep = BundleArgs {
        create_namespace: false,
        ..BundleArgs::default()
    };
    let err = keep
        .namespaces(&hub, vec![namespace(&missing)])
        .await
        .unwrap_err();
    assert!(
        format!("{err:#}").contains(&format!("namespace {missing} does not exist")),
        "{err:#}"
    );
    let left = keep
        .namespaces(&hub, vec![namespace("default")])
        .await
        .unwrap();
    assert!(left.is_empty(), "an existing namespace is not applied");
    assert!(
        Api::<Namespace>::all(hub)
            .get_opt(&missing)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn clusteradm_runs_as_a_kubectl_plugin() {
    fixture::hub().await;
    let kubectl = std::env::var_os("KUBECTL").expect(
        "KUBECTL is not set: `eval \"$(scripts/control-plane env)\"` exports the kubectl built beside the API servers",
    );
    let dir = std::env::temp_dir().join(common::unique("it-compat-plugin"));
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin("clusteradm"),
        dir.join("kubectl-clusteradm"),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let plugin = |args: &[&str]| {
        let mut cmd = std::process::Command::new(&kubectl);
        cmd.args(args).env("PATH", &path).env("NO_COLOR", "1");
        cmd
    };
    let mut get = plugin(&[
        "clusteradm",
        "get",
        "clusters",
        "-o",
        "json",
        "--kubeconfig",
    ]);
    get.arg(common::env().hub);
    let out = tokio::task::spawn_blocking(move || get.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap();
    let mut list = plugin(&["plugin", "list", "--name-only"]);
    let out = tokio::task::spawn_blocking(move || list.output().unwrap())
        .await
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("kubectl-clusteradm"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Upstream-spelled invocations of the commands scripts use day to day, each with the outcome it
/// must have on the hub: the exit code and a line of what it says.
#[tokio::test]
#[allow(clippy::too_many_lines)] // a table of cases, one per line before formatting
async fn upstream_spelled_invocations_have_their_outcomes() {
    fixture::hub().await;
    let missing = common::unique("it-compat-none");
    let set = common::unique("it-compat-set");
    let manifest = common::temp_file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n",
    );
    let manifest = manifest.to_str().unwrap();
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (
            vec!["get", "clusters", "--clusterset", "default", "-o", "yaml"],
            0,
            "kind:".into(),
        ),
        (
            vec!["get", "clustersets", "-o", "json"],
            0,
            "\"default\"".into(),
        ),
        (
            vec!["get", "placements", "-n", "default", "-o", "yaml"],
            0,
            "kind:".into(),
        ),
        (
            vec!["get", "works", "--cluster", &missing],
            0,
            format!("No works found in cluster {missing}"),
        ),
        (vec!["get", "addon", "-o", "json"], 0, "\"kind\"".into()),
        (vec!["get", "hub-info"], 0, "Registration Operator:".into()),
        (
            vec!["get", "token", "-o", "json", "--use-bootstrap-token=false"],
            0,
            "\"ca-cert-hash\"".into(),
        ),
        (vec!["version"], 0, "default bundle\tversion\t:1.3.1".into()),
        (
            vec!["create", "clusterset", &set, "--dry-run"],
            0,
            format!("Clusterset {set} is created"),
        ),
        (
            vec!["delete", "clusterset", &missing],
            0,
            "not found or is already deleted".into(),
        ),
        (
            vec!["delete", "token", "--dry-run"],
            0,
            "would delete ServiceAccount".into(),
        ),
        (
            vec!["clusterset", "unbind", "default", "--namespace", &missing],
            0,
            "is not bound".into(),
        ),
        (
            vec!["clusterset", "bind", &missing, "--namespace", "default"],
            1,
            "not found on the hub".into(),
        ),
        (
            vec!["clusterset", "set", "default", "--clusters", &missing],
            1,
            format!("{missing} not found"),
        ),
        (
            vec!["accept", "--cluster", &missing, "--skip-approve-check=true"],
            1,
            "not found on the hub".into(),
        ),
        (
            vec![
                "create",
                "work",
                "w1",
                "-f",
                manifest,
                "--cluster",
                &missing,
            ],
            1,
            "unknown cluster".into(),
        ),
        (
            vec!["delete", "work", "w1", "--cluster", &missing, "--force"],
            1,
            "not found in cluster".into(),
        ),
        (
            vec!["addon", "enable", "--names", "x", "--cluster", &missing],
            1,
            "no add-on was enabled".into(),
        ),
        (
            vec!["addon", "disable", "--names", "x", "-c", &missing],
            1,
            "no add-on was disabled".into(),
        ),
        (
            vec![
                "init",
                "--dry-run",
                "--wait=false",
                "--use-bootstrap-token=true",
                "--feature-gates",
                "ManifestWorkReplicaSet=true",
                "-o",
                "text",
            ],
            0,
            "kind: ClusterManager".into(),
        ),
    ];
    let mut wrong = Vec::new();
    for (args, code, says) in &cases {
        let (got, out, err) = fixture::on_hub(args).await;
        if got != *code || !(out.contains(says.as_str()) || err.contains(says.as_str())) {
            wrong.push(format!(
                "clusteradm {}: exit {got} (want {code}), no {says:?} in:\n{out}{err}",
                args.join(" ")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n---\n"));
}

/// The objects `clusteradm <args>` prints (a `--dry-run`), by kind.
fn printed(out: &str, kind: &str) -> serde_json::Value {
    clusteradm::apply::parse_objects(out, "stdout")
        .unwrap()
        .into_iter()
        .find(|o| o.types.as_ref().unwrap().kind == kind)
        .unwrap_or_else(|| panic!("no {kind} in {out}"))
        .data
}

#[tokio::test]
async fn values_files_override_the_flags_and_refuse_what_they_cannot_honour() {
    let hub_values = common::temp_file(
        "cm-values.yaml",
        "images: {registry: r.example/ocm, tag: v1.2.0}
clusterManager:
  registrationConfiguration:
    featureGates: [{feature: ManagedClusterAutoApproval, mode: Enable}]
    autoApproveUsers: [alice]
",
    );
    let (code, out, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--bundle-version",
        "1.1.0",
        "--cluster-manager-values-file",
        hub_values.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    let spec = printed(&out, "ClusterManager")["spec"].clone();
    assert_eq!(
        spec["workImagePullSpec"], "r.example/ocm/work:v1.2.0",
        "the file wins"
    );
    let registration = spec["registrationConfiguration"].to_string();
    assert!(
        registration.contains("ManagedClusterAutoApproval") && registration.contains("alice"),
        "{registration}"
    );
    let unsupported = common::temp_file("cm-bad.yaml", "imagePullSecrets: [{name: regcred}]\n");
    let (code, _, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--cluster-manager-values-file",
        unsupported.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("imagePullSecrets is not supported here"),
        "{err}"
    );

    let out = join_dry_run_with_values(
        "k-values.yaml",
        "klusterlet: {mode: Singleton, nodePlacement: {nodeSelector: {zone: a}}, registrationConfiguration: {kubeAPIQPS: 20}, workConfiguration: {statusSyncInterval: 30s}}\npriorityClassName: agents-high\nenableSyncLabels: true\n",
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let klusterlet = printed(&stdout, "Klusterlet");
    assert_eq!(klusterlet["spec"]["deployOption"]["mode"], "Singleton");
    // The chart's Klusterlet fields, merged over the flags' (the registration configuration
    // keeps what the flags put there).
    assert_eq!(
        klusterlet["spec"]["nodePlacement"]["nodeSelector"]["zone"],
        "a"
    );
    assert_eq!(klusterlet["spec"]["priorityClassName"], "agents-high");
    assert_eq!(
        klusterlet["spec"]["registrationConfiguration"]["kubeAPIQPS"],
        20
    );
    assert_eq!(
        klusterlet["spec"]["workConfiguration"]["statusSyncInterval"],
        "30s"
    );
    let operator = printed(&stdout, "Deployment");
    let args = operator["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(args.contains("--enable-sync-labels"), "{args}");
}

/// `join --dry-run` with a pinned token, a new cluster name and `--klusterlet-values-file` of
/// `values` (written to a file `name`).
async fn join_dry_run_with_values(name: &str, values: &str) -> std::process::Output {
    let file = common::temp_file(name, values);
    join_dry_run(&["--klusterlet-values-file", file.to_str().unwrap()]).await
}

/// `join --dry-run` with a pinned token, a new cluster name and `extra` flags.
async fn join_dry_run(extra: &[&str]) -> std::process::Output {
    let token = fixture::hub().await;
    let env = common::env();
    let (server, ca) = common::server_and_ca(&env.hub);
    let ca = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, ca).unwrap();
    let pin = clusteradm::pki::ca_cert_hash(&ca).unwrap();
    let mut join = common::clusteradm();
    join.args([
        "join",
        "--dry-run",
        "--hub-token",
        &token,
        "--hub-apiserver",
        &server,
    ])
    .args([
        "--ca-cert-hash",
        &pin,
        "--cluster-name",
        &common::unique("it-values"),
    ])
    .args(extra)
    .arg("--kubeconfig")
    .arg(&env.managed);
    fixture::run(join).await
}

#[tokio::test]
async fn aws_irsa_registration_is_written_for_upstreams_agents_and_refused_for_ours() {
    let hub_arn = "arn:aws:eks:us-west-2:123456789012:cluster/hub-cluster1";
    let managed_arn = "arn:aws:eks:us-west-2:123456789012:cluster/managed-cluster1";
    let irsa = [
        "--registration-auth",
        "awsirsa",
        "--hub-cluster-arn",
        hub_arn,
        "--managed-cluster-arn",
        managed_arn,
    ];
    // Upstream's images: the Klusterlet carries upstream's fields, as upstream's join writes them.
    let out = join_dry_run(&irsa).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let klusterlet = printed(&stdout, "Klusterlet");
    assert_eq!(
        klusterlet["spec"]["registrationConfiguration"]["registrationDriver"],
        serde_json::json!({"authType": "awsirsa", "awsIrsa": {"hubClusterArn": hub_arn, "managedClusterArn": managed_arn}}),
    );
    // Our image, or agents in this process: refused, nothing applied.
    for ours in [
        &["--image", "registry.invalid/clusteradm:dev"][..],
        &["--in-process"],
    ] {
        let out = join_dry_run(&[&irsa[..], ours].concat()).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{ours:?}: {err}");
        assert!(
            err.contains("\"awsirsa\" is not supported") && err.contains("EKS"),
            "{err}"
        );
    }
    // A missing or malformed ARN, or ARNs without the driver: named before the hub is asked; a
    // kubeconfig context naming no EKS cluster (this plane's), once it is read.
    let cases: [(&[&str], &str); 4] = [
        (&irsa[..2], "needs --hub-cluster-arn"),
        (&irsa[..4], "managedClusterArn"),
        (
            &[
                "--registration-auth",
                "awsirsa",
                "--hub-cluster-arn",
                "arn:aws:bks:us-west-2:123456789012:cluster/h",
                "--managed-cluster-arn",
                managed_arn,
            ],
            "--hub-cluster-arn \"arn:aws:bks",
        ),
        (&irsa[2..4], "read with --registration-auth awsirsa only"),
    ];
    for (flags, says) in cases {
        let out = join_dry_run(flags).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
    }
}

/// Every field of `given` is in `stored` with its value (the API server may add defaults).
fn assert_kept(given: &serde_json::Value, stored: &serde_json::Value, at: &str) {
    match (given, stored) {
        (serde_json::Value::Object(g), _) => {
            for (k, v) in g {
                assert_kept(v, &stored[k], &format!("{at}.{k}"));
            }
        }
        (serde_json::Value::Array(g), serde_json::Value::Array(s)) if g.len() == s.len() => {
            for (i, (g, s)) in g.iter().zip(s).enumerate() {
                assert_kept(g, s, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(given, stored, "{at}: dropped or changed by the API server"),
    }
}

/// The kinds of the objects `clusteradm <args>` prints (a `--dry-run`).
fn kinds_of(out: &str) -> Vec<String> {
    clusteradm::apply::parse_objects(out, "stdout")
        .unwrap()
        .iter()
        .map(|o| o.types.as_ref().unwrap().kind.clone())
        .collect()
}

/// The API server's answer to creating the operator.open-cluster-management.io/v1 `kind` of
/// `data` (a printed object's) named `name` (a dry run: nothing is stored).
async fn server_dry_run(
    client: &kube::Client,
    kind: &str,
    data: &serde_json::Value,
    name: &str,
) -> serde_json::Value {
    let mut object = data.clone();
    object["apiVersion"] = "operator.open-cluster-management.io/v1".into();
    object["kind"] = kind.into();
    let mut object: kube::api::DynamicObject = serde_json::from_value(object).unwrap();
    object.metadata.name = Some(name.to_owned());
    let types = object.types.clone().unwrap();
    let gvk = kube::api::GroupVersionKind::try_from(&types).unwrap();
    let plural = format!("{}s", types.kind.to_lowercase());
    let resource = kube::api::ApiResource::from_gvk_with_plural(&gvk, &plural);
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(client.clone(), &resource);
    let params = kube::api::PostParams {
        dry_run: true,
        ..Default::default()
    };
    serde_json::to_value(api.create(&params, &object).await.unwrap()).unwrap()
}

/// Upstream v1.3.1's cluster-manager chart values, every key at its default or a value a user
/// sets.
const WHOLE_CLUSTER_MANAGER_VALUES: &str = r#"replicaCount: 3
images:
  overrides: {registrationImage: "r.example/reg:v9", workImage: "", placementImage: "", addOnManagerImage: "", operatorImage: ""}
  registry: r.example/ocm
  tag: v1.3.1
  imagePullPolicy: Always
  imageCredentials: {createImageCredentials: false, userName: "", password: "", dockerConfigJson: ""}
podSecurityContext: {runAsNonRoot: true}
securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, privileged: false, runAsNonRoot: true, readOnlyRootFilesystem: true}
resources: {requests: {cpu: 2m, memory: 16Mi}}
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 30
      podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchExpressions: [{key: app, operator: In, values: [cluster-manager]}]}}
enableSyncLabels: false
createBootstrapToken: true
createBootstrapSA: false
clusterManager:
  create: true
  mode: Default
  resourceRequirement: {type: Default}
  registrationConfiguration:
    featureGates: [{feature: DefaultClusterSet, mode: Enable}]
    registrationDrivers: [{authType: csr}]
  workConfiguration: {workDriver: kube}
  addOnManagerConfiguration: {}
  placementConfiguration:
    featureGates: [{feature: PlacementDebugServer, mode: Enable}]
"#;

/// Upstream v1.3.1's cluster-manager chart values, every key at its default or a value a user
/// sets: each lands where upstream's chart puts it, and the API server keeps every field of
/// the ClusterManager (nothing pruned).
#[tokio::test]
async fn a_whole_cluster_manager_values_file_is_honoured() {
    let file = common::temp_file("cm-whole.yaml", WHOLE_CLUSTER_MANAGER_VALUES);
    let (code, out, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--cluster-manager-values-file",
        file.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    let operator = printed(&out, "Deployment");
    assert_eq!(operator["spec"]["replicas"], 3);
    let pod = &operator["spec"]["template"]["spec"];
    assert_eq!(pod["nodeSelector"]["kubernetes.io/os"], "linux");
    assert_eq!(pod["tolerations"][0]["effect"], "NoSchedule");
    assert_eq!(
        pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"],
        30
    );
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let container = &pod["containers"][0];
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(
        container["image"],
        "r.example/ocm/registration-operator:v1.3.1"
    );
    assert_eq!(container["resources"]["requests"]["memory"], "16Mi");
    assert!(
        !container["args"]
            .to_string()
            .contains("--disable-leader-election"),
        "three replicas elect a leader: {}",
        container["args"]
    );
    // The printed credential is the ServiceAccount's (no --use-bootstrap-token); the file asks
    // for the bootstrap token besides.
    let kinds: Vec<String> = clusteradm::apply::parse_objects(&out, "stdout")
        .unwrap()
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o.types.as_ref().unwrap().kind,
                o.metadata.name.as_deref().unwrap()
            )
        })
        .collect();
    for wanted in [
        "Secret/bootstrap-token-ocmhub",
        "ServiceAccount/agent-registration-bootstrap",
        "ClusterRoleBinding/open-cluster-management:bootstrap:managedcluster",
        "ClusterRoleBinding/open-cluster-management:bootstrap:agent-registration",
    ] {
        assert!(kinds.iter().any(|k| k == wanted), "{wanted} in {kinds:?}");
    }
    let cm = printed(&out, "ClusterManager");
    let spec = &cm["spec"];
    assert_eq!(spec["registrationImagePullSpec"], "r.example/reg:v9");
    assert_eq!(spec["workImagePullSpec"], "r.example/ocm/work:v1.3.1");
    assert_eq!(spec["workConfiguration"]["workDriver"], "kube");
    assert_eq!(spec["resourceRequirement"]["type"], "Default");
    let stored = server_dry_run(
        &common::hub().await,
        "ClusterManager",
        &cm,
        &common::unique("cm-values"),
    )
    .await;
    for field in [
        "registrationConfiguration",
        "workConfiguration",
        "placementConfiguration",
        "resourceRequirement",
    ] {
        assert_kept(&spec[field], &stored["spec"][field], field);
    }
}

/// The whole cluster-manager values file with our image is taken; in process, the gate only our
/// hub pods serve is refused by name; `clusterManager.create: false` makes no ClusterManager, as
/// upstream's chart.
#[tokio::test]
async fn a_cluster_manager_values_file_for_our_image_or_without_a_cr() {
    let file = common::temp_file("cm-whole.yaml", WHOLE_CLUSTER_MANAGER_VALUES);
    let (code, _, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--image",
        "r.example/clusteradm:v9",
        "--cluster-manager-values-file",
        file.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "our hub pods take the copied file: {err}");
    let (code, _, err) = fixture::on_hub(&[
        "init",
        "--in-process",
        "--cluster-manager-values-file",
        file.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "PlacementDebugServer=true is not honoured by this project's hub placement in process"
        ),
        "{err}"
    );

    // clusterManager.create: false makes no ClusterManager, as upstream's chart.
    let none = common::temp_file("cm-none.yaml", "clusterManager: {create: false}\n");
    let (code, out, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--cluster-manager-values-file",
        none.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        kinds_of(&out).iter().all(|k| k != "ClusterManager"),
        "{out}"
    );
}

/// Upstream v1.3.1's klusterlet chart values, every key set: PriorityClass `class`, two hubs'
/// bootstrap kubeconfigs with MultipleHubs.
fn whole_klusterlet_values(class: &str, hub1: &str, hub2: &str) -> String {
    let indent = |text: &str| {
        text.lines().fold(String::new(), |mut out, l| {
            out.push_str("    ");
            out.push_str(l);
            out.push('\n');
            out
        })
    };
    format!(
        r#"replicaCount: 1
images:
  overrides: {{registrationImage: "", workImage: "r.example/work:v9", operatorImage: "r.example/op:v9"}}
  registry: r.example/ocm
  tag: v1.3.1
  imagePullPolicy: IfNotPresent
  imageCredentials: {{createImageCredentials: false, userName: "", password: "", dockerConfigJson: ""}}
podSecurityContext: {{runAsNonRoot: true}}
securityContext: {{allowPrivilegeEscalation: false, capabilities: {{drop: [ALL]}}, privileged: false, runAsNonRoot: true, readOnlyRootFilesystem: true}}
resources: {{requests: {{cpu: 2m, memory: 16Mi}}, limits: {{memory: 2Gi}}}}
nodeSelector: {{kubernetes.io/os: linux}}
tolerations: []
affinity: {{}}
enableSyncLabels: false
bootstrapHubKubeConfig: ""
grpcConfig: ""
multiHubBootstrapHubKubeConfigs:
- name: hub1
  kubeConfig: |
{}- name: hub2
  kubeConfig: |
{}externalManagedKubeConfig: ""
noOperator: false
priorityClassName: {class}
klusterlet:
  create: true
  mode: Singleton
  name: klusterlet
  clusterName: cluster1
  namespace: ""
  externalServerURLs: []
  resourceRequirement: {{type: Default}}
  nodePlacement: {{tolerations: [{{key: dedicated, operator: Exists}}]}}
  registrationConfiguration:
    clientCertExpirationSeconds: 3600
    featureGates: [{{feature: MultipleHubs, mode: Enable}}]
    bootstrapKubeConfigs: {{type: LocalSecrets, localSecretsConfig: {{kubeConfigSecrets: [{{name: hub1}}, {{name: hub2}}], hubConnectionTimeoutSeconds: 600}}}}
  workConfiguration: {{statusSyncInterval: 30s}}
"#,
        indent(hub1),
        indent(hub2),
    )
}

/// Upstream v1.3.1's klusterlet chart values, every key set: the operator Deployment, the
/// PriorityClass, the hubs' bootstrap secrets and the Klusterlet as upstream's chart makes
/// them, with no credential printed; the API server keeps every field of the Klusterlet.
#[tokio::test]
async fn a_whole_klusterlet_values_file_is_honoured() {
    let env = common::env();
    let (server, ca) = common::server_and_ca(&env.hub);
    let kubeconfig = |token: &str| {
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: hub, cluster: {{server: '{server}', certificate-authority-data: {ca}}}}}]\ncontexts: [{{name: hub, context: {{cluster: hub, user: bootstrap}}}}]\nusers: [{{name: bootstrap, user: {{token: {token}}}}}]\ncurrent-context: hub\n"
        )
    };
    let class = common::unique("ocm-agents");
    let values =
        whole_klusterlet_values(&class, &kubeconfig("secret-one"), &kubeconfig("secret-two"));
    let out = join_dry_run_with_values("k-whole.yaml", &values).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains("secret-one")
            && !stdout.contains(&base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                "secret-one"
            )),
        "a credential printed"
    );
    let objects = clusteradm::apply::parse_objects(&stdout, "stdout").unwrap();
    let named = |kind: &str, name: &str| {
        objects.iter().find(|o| {
            o.types.as_ref().unwrap().kind == kind && o.metadata.name.as_deref() == Some(name)
        })
    };
    assert!(named("Secret", "hub1").is_some() && named("Secret", "hub2").is_some());
    assert!(
        named("Secret", "bootstrap-hub-kubeconfig").is_none(),
        "the hubs' secrets replace it, as upstream's chart"
    );
    let priority = named("PriorityClass", &class).expect("the chart's PriorityClass");
    assert_eq!(priority.data["value"], 1_000_000);
    let operator = printed(&stdout, "Deployment");
    let pod = &operator["spec"]["template"]["spec"];
    assert_eq!(pod["priorityClassName"], class.as_str());
    assert_eq!(pod["containers"][0]["image"], "r.example/op:v9");
    assert_eq!(pod["containers"][0]["resources"]["limits"]["memory"], "2Gi");
    let klusterlet = printed(&stdout, "Klusterlet");
    let spec = &klusterlet["spec"];
    assert_eq!(spec["deployOption"]["mode"], "Singleton");
    assert_eq!(
        spec["clusterName"], "cluster1",
        "the file's name wins over the flag's"
    );
    assert_eq!(spec["imagePullSpec"], "r.example/op:v9");
    assert_eq!(spec["workImagePullSpec"], "r.example/work:v9");
    assert_eq!(
        spec["registrationImagePullSpec"],
        "r.example/ocm/registration:v1.3.1"
    );
    assert_eq!(spec["priorityClassName"], class.as_str());
    assert_eq!(
        spec["registrationConfiguration"]["clientCertExpirationSeconds"],
        3600
    );
    let managed = common::managed().await;
    common::install_crds(
        &managed,
        &[clusteradm::api::operator_crd_klusterlet()],
        std::time::Duration::from_secs(30),
    )
    .await;
    let stored = server_dry_run(
        &managed,
        "Klusterlet",
        &klusterlet,
        &common::unique("k-values"),
    )
    .await;
    for field in [
        "registrationConfiguration",
        "workConfiguration",
        "nodePlacement",
        "priorityClassName",
        "imagePullSpec",
    ] {
        assert_kept(&spec[field], &stored["spec"][field], field);
    }
}

/// `noOperator` and `klusterlet.create: false`: neither the operator nor the Klusterlet, the
/// bootstrap secret still.
#[tokio::test]
async fn a_klusterlet_values_file_without_operator_or_cr() {
    let out = join_dry_run_with_values(
        "k-bare.yaml",
        "noOperator: true\nklusterlet: {create: false}\n",
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kinds = kinds_of(&stdout);
    assert!(
        !kinds.iter().any(|k| k == "Deployment" || k == "Klusterlet"),
        "{kinds:?}"
    );
    assert!(
        stdout.contains("name: bootstrap-hub-kubeconfig"),
        "{stdout}"
    );
}

/// A Klusterlet field no agent here acts on, given in a values file: refused before anything is
/// applied, naming it.
#[tokio::test]
async fn a_values_file_field_the_operator_would_refuse_is_refused_by_join() {
    let out = join_dry_run_with_values(
        "k-refused.yaml",
        "klusterlet: {registrationConfiguration: {registrationDriver: {authType: grpc}}}\n",
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("registrationDriver.authType grpc"),
        "{stderr}"
    );
}

#[tokio::test]
async fn gates_our_components_would_not_honour_are_refused_before_anything_is_applied() {
    // With upstream's images the gate goes to upstream's component, which implements it.
    let (code, out, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--feature-gates",
        "ClusterImporter=true",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ClusterImporter"), "{out}");
    // Upstream's operator adds the placement debug server's sidecar; our hub pods serve it.
    for extra in [&[][..], &["--image", "r.example/clusteradm:v9"][..]] {
        let mut args = vec![
            "init",
            "--dry-run",
            "--feature-gates",
            "PlacementDebugServer=true",
        ];
        args.extend(extra);
        let (code, out, err) = fixture::on_hub(&args).await;
        assert_eq!(code, 0, "{extra:?}: {err}");
        assert!(out.contains("PlacementDebugServer"), "{out}");
    }
    // Ours would not: refused, naming the gate and why.
    for (args, gate) in [
        (
            vec![
                "init",
                "--in-process",
                "--feature-gates",
                "ClusterImporter=true",
            ],
            "ClusterImporter=true",
        ),
        (
            vec![
                "init",
                "--dry-run",
                "--image",
                "r.example/clusteradm:v9",
                "--feature-gates",
                "CloudEventsDrivers=true",
            ],
            "CloudEventsDrivers=true",
        ),
        // Our hub pods serve the placement debug endpoint; in process there is no Service.
        (
            vec![
                "init",
                "--in-process",
                "--feature-gates",
                "PlacementDebugServer=true",
            ],
            "PlacementDebugServer=true",
        ),
    ] {
        let (code, _, err) = fixture::on_hub(&args).await;
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.contains(&format!("{gate} is not honoured by this project's")),
            "{args:?}: {err}"
        );
    }
}
