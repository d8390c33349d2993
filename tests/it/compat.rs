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
    let unsupported = common::temp_file("cm-bad.yaml", "images: {overrides: {workImage: x}}\n");
    let (code, _, err) = fixture::on_hub(&[
        "init",
        "--dry-run",
        "--cluster-manager-values-file",
        unsupported.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("images.overrides.workImage is not supported here"),
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
    let token = fixture::hub().await;
    let env = common::env();
    let (server, ca) = common::server_and_ca(&env.hub);
    let ca = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, ca).unwrap();
    let pin = clusteradm::pki::ca_cert_hash(&ca).unwrap();
    let file = common::temp_file(name, values);
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
    .arg("--klusterlet-values-file")
    .arg(&file)
    .arg("--kubeconfig")
    .arg(&env.managed);
    fixture::run(join).await
}

/// A Klusterlet field no agent here acts on, given in a values file: refused before anything is
/// applied, naming it.
#[tokio::test]
async fn a_values_file_field_the_operator_would_refuse_is_refused_by_join() {
    let out = join_dry_run_with_values(
        "k-refused.yaml",
        "klusterlet: {registrationConfiguration: {registrationDriver: {authType: awsirsa, awsIrsa: {hubClusterArn: 'arn:aws:eks:us-west-2:123456789012:cluster/hub', managedClusterArn: 'arn:aws:eks:us-west-2:123456789012:cluster/c1'}}}}\n",
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("registrationDriver.authType"), "{stderr}");
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
        // Upstream's operator adds the placement debug server's sidecar; this one does not, so
        // it is refused with upstream's images too.
        (
            vec![
                "init",
                "--dry-run",
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
