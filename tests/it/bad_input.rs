//! Every class of bad input gets a specific message, a hint where one helps, and exit code 1
//! (probed with `get hub-info`, which needs the cluster; `version` needs none and says why it
//! printed no server version).
use predicates::prelude::*;

use crate::common;

#[test]
fn wrong_context_names_the_available_contexts() {
    common::clusteradm()
        .args([
            "get",
            "hub-info",
            "--context",
            "no-such-context",
            "--kubeconfig",
        ])
        .arg(&common::env().hub)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "context \"no-such-context\" not found",
        ))
        .stderr(predicate::str::contains(format!(
            "(contexts: {})",
            context_names(&common::env().hub).join(", ")
        )));
}

/// The context names of a kubeconfig file, in order.
fn context_names(path: &std::path::Path) -> Vec<String> {
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let names: Vec<String> = doc["contexts"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.is_empty(), "{} names no context", path.display());
    names
}

#[test]
fn missing_kubeconfig_file() {
    common::clusteradm()
        .args(["get", "hub-info", "--kubeconfig", "/nonexistent/kubeconfig"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "kubeconfig file /nonexistent/kubeconfig does not exist",
        ))
        .stderr(predicate::str::contains("hint:"));
}

#[test]
fn no_kubeconfig_at_all() {
    let home = std::env::temp_dir().join(common::unique("empty-home"));
    std::fs::create_dir_all(&home).unwrap();
    common::clusteradm()
        .env("HOME", &home)
        .args(["get", "hub-info"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no kubeconfig found"));
}

#[test]
fn kubeconfig_env_var_is_honoured() {
    common::clusteradm()
        .env("KUBECONFIG", &common::env().hub)
        .arg("version")
        .assert()
        .success()
        .stdout(predicate::str::contains("server release\tversion\t:v1."));
}

#[test]
fn unreachable_server() {
    let (_, ca) = common::server_and_ca(&common::env().hub);
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    let kubeconfig = common::temp_file(
        "kubeconfig",
        &admin_kubeconfig_with("https://127.0.0.1:1", &ca),
    );
    common::clusteradm()
        .args(["get", "hub-info", "--kubeconfig"])
        .arg(&kubeconfig)
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "cannot talk to the Kubernetes API server at https://127.0.0.1:1",
        ))
        .stderr(predicate::str::contains("hint:"));
}

#[test]
fn wrong_ca_is_a_tls_error_not_a_silent_success() {
    let (server, _) = common::server_and_ca(&common::env().hub);
    // The managed cluster's CA did not sign the hub's serving certificate.
    let (_, other_ca) = common::server_and_ca(&common::env().managed);
    let kubeconfig = common::temp_file("kubeconfig", &admin_kubeconfig_with(&server, &other_ca));
    common::clusteradm()
        .args(["get", "hub-info", "--kubeconfig"])
        .arg(&kubeconfig)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "cannot talk to the Kubernetes API server",
        ))
        .stderr(predicate::str::contains(
            "not signed by the CA in the kubeconfig",
        ));
}

#[test]
fn malformed_kubeconfig_yaml() {
    let kubeconfig = common::temp_file("kubeconfig", "apiVersion: v1\nclusters: [oops\n");
    common::clusteradm()
        .args(["get", "hub-info", "--kubeconfig"])
        .arg(&kubeconfig)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot load kubeconfig"));
}

#[test]
fn version_needs_no_cluster_and_says_why_it_has_no_server_version() {
    common::clusteradm()
        .args(["version", "--kubeconfig", "/nonexistent/kubeconfig"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("client\t\tversion\t:"))
        .stdout(predicate::str::contains("default bundle\tversion\t:1.3.1"))
        .stdout(predicate::str::contains("server release").not())
        .stderr(predicate::str::contains(
            "server version unknown: kubeconfig file /nonexistent/kubeconfig does not exist",
        ));
    common::clusteradm()
        .args([
            "version",
            "--client",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
        ])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
}

#[test]
fn one_hub_is_not_a_list_of_hubs() {
    common::clusteradm()
        .args([
            "controller",
            "agent",
            "--cluster-name",
            "c1",
            "--bootstrap-kubeconfig-secrets",
            "only-one",
            "--kubeconfig",
        ])
        .arg(&common::env().managed)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "--bootstrap-kubeconfig-secrets names one secret: MultipleHubs needs at least two",
        ));
}

#[test]
fn join_refuses_multiple_hubs_it_cannot_list() {
    common::clusteradm()
        .args([
            "join",
            "--hub-token",
            "abcdef.0123456789abcdef",
            "--hub-apiserver",
            "https://127.0.0.1:1",
            "--cluster-name",
            "c1",
            "--feature-gates",
            "MultipleHubs=true",
            "--kubeconfig",
        ])
        .arg(&common::env().managed)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "MultipleHubs=true needs the Klusterlet's spec.registrationConfiguration.bootstrapKubeConfigs",
        ));
}

#[test]
fn usage_error_exits_2() {
    common::clusteradm()
        .args(["version", "--no-such-flag"])
        .assert()
        .code(2);
}

/// The hub's admin kubeconfig with its server and CA replaced.
fn admin_kubeconfig_with(server: &str, ca: &str) -> String {
    let text = std::fs::read_to_string(common::env().hub).unwrap();
    let (orig_server, orig_ca) = common::server_and_ca(&common::env().hub);
    text.replace(&orig_server, server).replace(&orig_ca, ca)
}

/// A reader that goes away (`clusteradm ... | head -1`) is not an error: exit 0, no panic.
#[test]
fn a_closed_stdout_pipe_exits_zero_without_a_panic() {
    common::assert_closed_pipe_is_no_error(&["completion", "bash"]);
    common::assert_closed_pipe_is_no_error(&[
        "version",
        "--kubeconfig",
        common::env().hub.to_str().unwrap(),
    ]);
}

/// `-f /dev/zero` (or an endless stdin) stops after the most any work could hold, at once.
#[test]
fn an_endless_input_is_refused_without_reading_it_all() {
    let started = std::time::Instant::now();
    common::clusteradm()
        .args([
            "create",
            "work",
            "w",
            "-f",
            "/dev/zero",
            "--clusters",
            "c1",
            "--kubeconfig",
        ])
        .arg(&common::env().hub)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("/dev/zero is over"))
        .stderr(predicate::str::contains("split the manifests"));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    common::clusteradm()
        .args([
            "create",
            "work",
            "w",
            "-f",
            "-",
            "--clusters",
            "c1",
            "--kubeconfig",
        ])
        .arg(&common::env().hub)
        .write_stdin(vec![b'#'; 3 * 1024 * 1024])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("- is over"));
}

/// `-R` into a directory that links back to its parent: refused, not followed forever.
#[test]
fn a_symlink_loop_under_recursive_input_is_refused() {
    let dir = std::env::temp_dir().join(common::unique("it-loop"));
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(
        dir.join("a/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("..", dir.join("a/up")).unwrap();
    common::clusteradm()
        .args(["create", "work", "w", "-R", "--clusters", "c1", "-f"])
        .arg(&dir)
        .arg("--kubeconfig")
        .arg(&common::env().hub)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("symbolic link loop"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn image_cannot_go_with_in_process() {
    for command in ["init", "join"] {
        common::clusteradm()
            .args([
                command,
                "--image",
                "registry.example.com/clusteradm:v1",
                "--in-process",
            ])
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("--in-process").and(predicate::str::contains("--image")),
            );
    }
}

#[test]
fn probe_address_must_be_a_socket_address() {
    for args in [
        vec!["controller", "hub", "--probe-address", "8000"],
        vec!["operator", "hub", "--probe-address", "localhost:port"],
    ] {
        common::clusteradm()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--probe-address"));
    }
}

/// Without `--cluster-name` the agent registers under its stored or a generated name (as
/// upstream's), so only the kubeconfig is missing here.
#[test]
fn controller_agent_without_a_cluster_name_asks_only_for_a_cluster() {
    common::clusteradm()
        .args(["controller", "agent", "--kubeconfig", "/nonexistent"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("/nonexistent"))
        .stderr(predicate::str::contains("--cluster-name").not());
}

#[test]
fn missing_mounted_files_name_the_file() {
    let missing = std::env::temp_dir().join(common::unique("no-such-dir"));
    let missing = missing.to_str().unwrap();
    let managed_kubeconfig = format!("{missing}/kubeconfig");
    for (args, names) in [
        (
            vec!["controller", "hub", "--conversion-cert-dir", missing],
            format!("{missing}/tls.crt"),
        ),
        (
            vec![
                "controller",
                "agent",
                "--cluster-name",
                "c1",
                "--agent-namespace",
                "default",
                "--managed-kubeconfig",
                &managed_kubeconfig,
            ],
            managed_kubeconfig.clone(),
        ),
    ] {
        common::clusteradm()
            .args(&args)
            .arg("--kubeconfig")
            .arg(&common::env().hub)
            .timeout(std::time::Duration::from_secs(30))
            .assert()
            .failure()
            .stderr(predicate::str::contains(names));
    }
}
