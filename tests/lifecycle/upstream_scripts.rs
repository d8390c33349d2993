//! Command lines as scripts written for upstream's `clusteradm` v1.3.1 spell them, in the order a
//! script runs them, against the real hub and managed API servers: a join reduced to
//! `--hub-token` and `--hub-apiserver` for every kind of credential (the hub still verified where
//! anything can vouch for it), unknown feature gates refused, repeated flags and stray
//! arguments taken as cobra takes them, and hub commands run the moment the hub's CRDs appear.
use std::time::Duration;

use base64::Engine as _;
use clusteradm::api::cluster::ManagedCluster;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt as _;
use kube::api::{Api, DeleteParams, PostParams};
use predicates::prelude::*;

use crate::common;
use crate::join::{Hub, MANAGED_SINGLETON, hub, join, reset};

/// `join --dry-run` with the token and the API server only, as a script builds it.
fn token_only_join(token: &str, server: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = common::clusteradm();
    cmd.args(["join", "--hub-token", token, "--hub-apiserver", server])
        .args(["--cluster-name", &common::unique("script"), "--dry-run"])
        .args(["--timeout", "60", "--kubeconfig"])
        .arg(common::env().managed)
        .args(extra);
    cmd
}

/// A token of the bootstrap service account minted as a user would (`kubectl create token`):
/// nothing in it names the hub's CA.
pub(crate) async fn user_minted_token() -> String {
    let accounts: Api<ServiceAccount> =
        Api::namespaced(common::hub().await, "open-cluster-management");
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(600),
            ..Default::default()
        }),
        ..Default::default()
    };
    accounts
        .create_token_request(
            "agent-registration-bootstrap",
            &PostParams::default(),
            &request,
        )
        .await
        .unwrap()
        .status
        .unwrap()
        .token
        .unwrap()
}

#[tokio::test]
async fn a_join_with_only_token_and_server_verifies_the_hub_for_every_credential() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;

    // init's service-account token carries the pin `init` prints beside it.
    let Hub {
        token,
        server,
        hash,
    } = hub(false).await;
    assert_eq!(
        clusteradm::join::trust::carried_pin(&token).as_deref(),
        Some(hash.as_str())
    );
    // The hub's API server still takes it (for its own audience).
    let who = common::whoami(&common::hub_client_with_token(&token).await)
        .await
        .unwrap();
    assert_eq!(
        who,
        "system:serviceaccount:open-cluster-management:agent-registration-bootstrap"
    );
    let verified = |out: &assert_cmd::assert::Assert| {
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(!stderr.contains("TRUSTING"), "{stderr}");
    };
    verified(&token_only_join(&token, &server, &[]).assert().success());
    // A pin that contradicts the token's is refused before anything is sent.
    let other_pin = format!("sha256:{}", "0".repeat(64));
    token_only_join(&token, &server, &["--ca-cert-hash", &other_pin])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "differs from the pin the token carries",
        ));

    // `get token`'s, read as scripts read it (`token=`).
    let out = common::clusteradm()
        .args(["get", "token", "--kubeconfig"])
        .arg(common::env().hub)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let got = text
        .lines()
        .find_map(|l| l.strip_prefix("token="))
        .unwrap()
        .to_owned();
    assert_eq!(
        clusteradm::join::trust::carried_pin(&got).as_deref(),
        Some(hash.as_str())
    );
    verified(&token_only_join(&got, &server, &[]).assert().success());

    // The bootstrap token: the hub's signature on cluster-info vouches for the CA.
    let bootstrap = hub(true).await;
    verified(
        &token_only_join(&bootstrap.token, &bootstrap.server, &[])
            .assert()
            .success(),
    );

    // A token that names no CA: trusted on first use, loudly, as upstream's join trusts it.
    let minted = user_minted_token().await;
    assert_eq!(clusteradm::join::trust::carried_pin(&minted), None);
    token_only_join(&minted, &server, &[])
        .assert()
        .success()
        .stderr(predicate::str::contains("TRUSTING THE HUB ON FIRST USE"))
        .stderr(predicate::str::contains(&hash));
}

/// The CA a pin-less join trusted is recorded in the bootstrap kubeconfig: a later pin-less join
/// to the same server must find it again, and is refused when the server presents another.
#[tokio::test]
async fn a_later_pinless_join_must_find_the_ca_trusted_before() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let Hub { server, hash, .. } = hub(false).await;
    let minted = user_minted_token().await;
    let (_, real_ca) = common::server_and_ca(&common::env().hub);

    // An earlier join recorded another CA for this server: refused, nothing sent or applied.
    let other_ca = rcgen::CertificateParams::new(Vec::<String>::new())
        .unwrap()
        .self_signed(&rcgen::KeyPair::generate().unwrap())
        .unwrap()
        .pem();
    let b64 = base64::engine::general_purpose::STANDARD;
    record_bootstrap_kubeconfig(&managed, &server, &b64.encode(other_ca)).await;
    token_only_join(&minted, &server, &[])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "other than the one this cluster trusted when it joined it before",
        ))
        .stderr(predicate::str::contains("--ca-cert-hash"));
    // Given the pin, the same join verifies the hub and goes through.
    token_only_join(&minted, &server, &["--ca-cert-hash", &hash])
        .assert()
        .success();

    // The real CA recorded: trusted again, without the first-use warning.
    record_bootstrap_kubeconfig(&managed, &server, &real_ca).await;
    token_only_join(&minted, &server, &[])
        .assert()
        .success()
        .stderr(predicate::str::contains("trusted when it joined it before"))
        .stderr(predicate::str::contains("TRUSTING").not());
    reset(&managed).await;
}

/// Writes `open-cluster-management-agent/bootstrap-hub-kubeconfig` as a join to `server` with
/// `ca_b64` would have.
async fn record_bootstrap_kubeconfig(managed: &kube::Client, server: &str, ca_b64: &str) {
    let namespaces: Api<Namespace> = Api::all(managed.clone());
    let ns: Namespace = serde_json::from_value(
        serde_json::json!({"metadata": {"name": "open-cluster-management-agent"}}),
    )
    .unwrap();
    let _ = namespaces.create(&PostParams::default(), &ns).await;
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), "open-cluster-management-agent");
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca_b64}\n"
    );
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "bootstrap-hub-kubeconfig"},
        "stringData": {"kubeconfig": kubeconfig}
    }))
    .unwrap();
    let _ = secrets
        .delete("bootstrap-hub-kubeconfig", &DeleteParams::default())
        .await;
    common::eventually(
        "the old bootstrap secret gone",
        Duration::from_secs(30),
        || {
            let secrets = secrets.clone();
            async move {
                secrets
                    .get_opt("bootstrap-hub-kubeconfig")
                    .await
                    .unwrap()
                    .is_none()
                    .then_some(())
            }
        },
    )
    .await;
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}

#[tokio::test]
async fn upstream_spellings_of_init_are_taken_or_refused_as_upstream() {
    let _one_at_a_time = crate::serial().await;
    let _hub = common::HUB_SINGLETON.lock().await;
    let hub = common::env().hub;
    // A gate upstream does not define: refused with either images, before anything is applied.
    for extra in [&[][..], &["--image", "registry.invalid/clusteradm:dev"][..]] {
        common::clusteradm()
            .args(["init", "--feature-gates", "NoSuchGate=true", "--kubeconfig"])
            .arg(&hub)
            .args(extra)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "unrecognized feature gate: NoSuchGate",
            ));
    }
    // A harness that appends its defaults: the last value of a repeated flag wins, and a stray
    // argument is ignored with a warning, as cobra does.
    common::clusteradm()
        .args([
            "init",
            "--dry-run",
            "--bundle-version",
            "0.0.1",
            "--bundle-version",
            "default",
        ])
        .args([
            "--image-registry",
            "a.invalid",
            "--image-registry",
            "quay.io/open-cluster-management",
        ])
        .args(["--kubeconfig"])
        .arg(&hub)
        .arg("stray")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "quay.io/open-cluster-management/registration-operator:v1.3.1",
        ))
        .stdout(predicate::str::contains("a.invalid").not())
        .stderr(predicate::str::contains(
            "`init` takes no arguments: stray ignored",
        ));
}

/// `init` returns before the ClusterManager operator installs the hub's CRDs: a hub command run
/// at once waits for the CRDs it uses (saying so) instead of failing. Twenty times in a row, each
/// command started while the CRD is missing and installed a moment later.
#[tokio::test]
async fn hub_commands_run_right_after_init_wait_for_the_hub_apis() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    hub(false).await;
    let client = common::hub().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let commands: [&[&str]; 4] = [
        &["get", "clusters"],
        &["get", "clustersets"],
        &["get", "works", "--clusters", "nosuch"],
        &["accept", "--clusters", "nosuch"],
    ];
    for round in 0..20 {
        let args = commands[round % commands.len()];
        let crd = ManagedCluster::crd_name();
        let crd = if args[1] == "works" {
            clusteradm::api::work::ManifestWork::crd_name()
        } else if args[1] == "clustersets" {
            clusteradm::api::cluster::ManagedClusterSet::crd_name()
        } else {
            crd
        };
        let _ = crds.delete(crd, &DeleteParams::default()).await;
        common::eventually(&format!("{crd} deleted"), Duration::from_secs(60), || {
            let crds = crds.clone();
            async move { crds.get_opt(crd).await.unwrap().is_none().then_some(()) }
        })
        .await;
        // Started while the CRD is missing; the CRD comes once it says what it waits for.
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("clusteradm"))
            .args(args)
            .args(["--timeout", "60", "--kubeconfig"])
            .arg(common::env().hub)
            .env_remove("KUBECONFIG")
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let said = tokio::task::spawn_blocking(move || {
            use std::io::BufRead as _;
            let mut lines = std::io::BufReader::new(stderr_pipe).lines();
            let mut seen = Vec::new();
            for line in lines.by_ref() {
                let line = line.unwrap();
                let waiting = line.contains("waiting for the hub to serve");
                seen.push(line);
                if waiting {
                    break;
                }
            }
            (seen, lines)
        });
        let (seen, rest) = tokio::time::timeout(Duration::from_secs(60), said)
            .await
            .expect("the command never said it waits for the hub")
            .unwrap();
        assert!(
            seen.last().is_some_and(|l| l.contains(crd)),
            "round {round}: {seen:?}"
        );
        common::install_crds(
            &client,
            &clusteradm::api::hub_crds(),
            Duration::from_secs(60),
        )
        .await;
        let rest: Vec<String> =
            tokio::task::spawn_blocking(move || rest.map(Result::unwrap).collect())
                .await
                .unwrap();
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        let out = std::process::Output {
            stderr: [seen, rest].concat().join("\n").into_bytes(),
            ..out
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("not an OCM hub"),
            "round {round}: {stderr}"
        );
        if args[0] == "accept" {
            // The hub is served; the cluster is not there.
            assert_eq!(out.status.code(), Some(1), "round {round}: {stderr}");
            assert!(stderr.contains("nosuch"), "round {round}: {stderr}");
        } else {
            assert!(out.status.success(), "round {round} {args:?}: {stderr}");
        }
    }
}

/// An operator trying settings runs `init` again and again with other flags: each run writes the
/// ClusterManager as upstream's does (the cloud drivers for upstream's images), and a plain run
/// brings the defaults back. With our components the cloud drivers are refused.
#[tokio::test]
async fn init_run_again_with_other_flags_rewrites_the_cluster_manager() {
    use clusteradm::api::operator::{ClusterManager, RegistrationAuthType};
    let _one_at_a_time = crate::serial().await;
    let _hub = common::HUB_SINGLETON.lock().await;
    let hub = common::env().hub;
    let arn = "arn:aws:eks:us-west-2:123456789012:cluster/hub";
    let cloud = [
        "--registration-drivers",
        "csr,awsirsa,grpc",
        "--hub-cluster-arn",
        arn,
        "--aws-resource-tags",
        "team=a",
        "--auto-approved-arn-patterns",
        "arn:aws:eks:us-west-2:123456789012:cluster/.*",
        "--grpc-server",
        "grpc.hub.example:8090",
        "--auto-approved-grpc-identities",
        "system:serviceaccount:ocm:grpc",
    ];
    let init = |extra: &[&str]| {
        let mut cmd = common::clusteradm();
        cmd.args(["init", "--kubeconfig"]).arg(&hub).args(extra);
        cmd
    };
    // Our components: refused, naming the driver.
    init(&[&cloud[..], &["--image", "registry.invalid/clusteradm:dev"]].concat())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "driver \"awsirsa\" is not supported",
        ));
    // Upstream's: written as upstream's init writes them; --dry-run shows it.
    init(&[&cloud[..], &["--dry-run"]].concat())
        .assert()
        .success()
        .stdout(predicate::str::contains("authType: awsirsa"))
        .stdout(predicate::str::contains(format!("hubClusterArn: {arn}")))
        .stdout(predicate::str::contains("authType: grpc"))
        .stdout(predicate::str::contains("host: grpc.hub.example:8090"));
    // upstream's own refusal: grpc by host name needs the host.
    init(&["--registration-drivers", "grpc", "--dry-run"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--grpc-server"));

    let managers: Api<ClusterManager> = Api::all(common::hub().await);
    let drivers = || async {
        let cm = managers.get("cluster-manager").await.unwrap();
        let registration = cm.spec.registration_configuration.unwrap_or_default();
        (
            registration.registration_drivers,
            registration.feature_gates,
            cm.spec.server_configuration,
        )
    };
    init(&[]).assert().success();
    init(&[
        "--feature-gates",
        "ManagedClusterAutoApproval=true",
        "--auto-approved-csr-identities",
        "alice",
    ])
    .assert()
    .success();
    let (d, gates, _) = drivers().await;
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].csr.as_ref().unwrap().auto_approved_identities,
        ["alice"]
    );
    assert!(
        gates
            .iter()
            .any(|g| g.feature == "ManagedClusterAutoApproval" && g.enabled()),
        "{gates:?}"
    );
    init(&cloud).assert().success();
    let (d, _, server) = drivers().await;
    let kinds: Vec<_> = d.iter().map(|d| d.auth_type).collect();
    assert_eq!(
        kinds,
        [
            RegistrationAuthType::Csr,
            RegistrationAuthType::Awsirsa,
            RegistrationAuthType::Grpc
        ]
    );
    assert_eq!(
        d[1].awsirsa.as_ref().unwrap().hub_cluster_arn.as_deref(),
        Some(arn)
    );
    assert!(server.is_some());
    // A plain run: the defaults again.
    init(&[]).assert().success();
    let (d, gates, server) = drivers().await;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].auth_type, RegistrationAuthType::Csr);
    assert!(d[0].csr.is_none(), "{d:?}");
    assert!(
        !gates
            .iter()
            .any(|g| g.feature == "ManagedClusterAutoApproval"),
        "{gates:?}"
    );
    assert!(server.is_none());
}

/// A klusterlet values file as a team copies it from upstream's chart and edits it, given to a
/// real `join`: the API server then holds what upstream's chart would have made (the operator
/// Deployment's settings, the PriorityClass, the hubs' bootstrap secrets instead of the default
/// one, the Klusterlet's fields), and the same join again changes nothing.
#[tokio::test]
async fn a_copied_klusterlet_values_file_joins_as_upstreams_chart_would() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::scheduling::v1::PriorityClass;
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let hub = hub(false).await;
    let managed = common::managed().await;
    reset(&managed).await;
    let class = common::unique("ocm-agents");
    let bootstrap = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: hub, cluster: {{server: '{}', insecure-skip-tls-verify: false}}}}]\ncontexts: [{{name: hub, context: {{cluster: hub, user: u}}}}]\nusers: [{{name: u, user: {{token: '{}'}}}}]\ncurrent-context: hub\n",
        hub.server, hub.token
    );
    let values = serde_json::json!({
        "replicaCount": 1,
        "images": {"registry": "quay.io/open-cluster-management", "tag": "", "imagePullPolicy": "IfNotPresent",
                   "overrides": {"registrationImage": "", "workImage": "", "operatorImage": ""}},
        "podSecurityContext": {"runAsNonRoot": true},
        "resources": {"requests": {"cpu": "2m", "memory": "16Mi"}, "limits": {"memory": "2Gi"}},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [], "affinity": {},
        "priorityClassName": class,
        "multiHubBootstrapHubKubeConfigs": [{"name": "hub1", "kubeConfig": bootstrap}, {"name": "hub2", "kubeConfig": bootstrap}],
        "klusterlet": {"create": true, "mode": "Singleton", "name": "klusterlet", "clusterName": common::unique("values"),
                       "registrationConfiguration": {
                           "featureGates": [{"feature": "MultipleHubs", "mode": "Enable"}],
                           "bootstrapKubeConfigs": {"type": "LocalSecrets", "localSecretsConfig": {"kubeConfigSecrets": [{"name": "hub1"}, {"name": "hub2"}]}}},
                       "workConfiguration": {"statusSyncInterval": "30s"}},
    });
    let file = common::temp_file("values.yaml", &serde_yaml::to_string(&values).unwrap());
    let args = ["--klusterlet-values-file", file.to_str().unwrap()];
    join(&hub, &common::unique("flag-name"), &args)
        .assert()
        .success();

    let priority: Api<PriorityClass> = Api::all(managed.clone());
    assert_eq!(priority.get(&class).await.unwrap().value, Some(1_000_000));
    let operator = Api::<Deployment>::namespaced(managed.clone(), "open-cluster-management")
        .get("klusterlet")
        .await
        .unwrap();
    let pod = operator.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.priority_class_name.as_deref(), Some(class.as_str()));
    assert_eq!(pod.node_selector.unwrap()["kubernetes.io/os"], "linux");
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), "open-cluster-management-agent");
    for name in ["hub1", "hub2"] {
        assert!(secrets.get_opt(name).await.unwrap().is_some(), "{name}");
    }
    assert!(
        secrets
            .get_opt("bootstrap-hub-kubeconfig")
            .await
            .unwrap()
            .is_none(),
        "the hubs' secrets replace the default one, as upstream's chart"
    );
    let klusterlet: Api<clusteradm::api::operator::Klusterlet> = Api::all(managed.clone());
    let spec = serde_json::to_value(klusterlet.get("klusterlet").await.unwrap().spec).unwrap();
    assert_eq!(spec["clusterName"], values["klusterlet"]["clusterName"]);
    assert_eq!(spec["priorityClassName"], class.as_str());
    assert_eq!(
        spec["registrationConfiguration"]["bootstrapKubeConfigs"]["localSecretsConfig"]["kubeConfigSecrets"]
            [1]["name"],
        "hub2"
    );
    assert_eq!(spec["workConfiguration"]["statusSyncInterval"], "30s");

    join(&hub, &common::unique("flag-name"), &args)
        .assert()
        .success()
        .stderr(predicate::str::contains("already joined: nothing changed"));

    reset(&managed).await;
    priority
        .delete(&class, &DeleteParams::default())
        .await
        .unwrap();
    for name in ["hub1", "hub2"] {
        let _ = secrets.delete(name, &DeleteParams::default()).await;
    }
}
