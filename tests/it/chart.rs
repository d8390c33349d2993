//! Our Helm charts (`templates/charts/`, generated from the install plans) against the commands:
//! `helm template` with some values gives exactly the objects `init --dry-run` / `join --dry-run`
//! give with the matching flags. Needs `helm` (`HELM`, which `scripts/control-plane env` sets).
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::Value;

use crate::common;
use crate::registration::fixture;

/// `HELM`, which `scripts/control-plane env` sets to the helm `scripts/control-plane build` built.
fn helm() -> PathBuf {
    let helm = std::env::var_os("HELM").map(PathBuf::from);
    helm.filter(|p| p.is_file()).unwrap_or_else(|| {
        panic!(
            "HELM does not name a helm binary: run `scripts/control-plane build` and \
             `eval \"$(scripts/control-plane env)\"` (or set HELM to a helm v3)"
        )
    })
}

fn chart(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("templates/charts")
        .join(name)
}

/// The objects of a YAML stream, as JSON, in a stable order (Helm sorts by kind, we apply in
/// dependency order: the sets must agree, not the order).
fn objects(text: &str, source: &str) -> Vec<Value> {
    let mut out: Vec<Value> = clusteradm::apply::parse_objects(text, source)
        .unwrap()
        .into_iter()
        .map(|o| serde_json::to_value(o).unwrap())
        .collect();
    out.sort_by_key(|o| {
        let m = &o["metadata"];
        format!("{}/{}/{}", o["kind"], m["namespace"], m["name"])
    });
    out
}

/// `helm template` of chart `name` with `values` (`--set`/`--set-file` arguments).
async fn helm_template(name: &str, values: &[&str]) -> Vec<Value> {
    let mut cmd = assert_cmd::Command::new(helm());
    cmd.args(["template", "t"])
        .arg(chart(name))
        .arg("--include-crds")
        .args(values);
    let out = fixture::run(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "helm template {name} {values:?}: {stderr}"
    );
    objects(&String::from_utf8_lossy(&out.stdout), "helm template")
}

/// The kubeconfig in join's bootstrap secret among `objects`.
fn bootstrap_kubeconfig(objects: &[Value]) -> String {
    let encoded = objects
        .iter()
        .find(|o| o["metadata"]["name"] == "bootstrap-hub-kubeconfig")
        .unwrap()["data"]["kubeconfig"]
        .as_str()
        .unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    String::from_utf8(decoded).unwrap()
}

/// `clusteradm <args> --dry-run`'s objects.
async fn dry_run(args: &[&str], kubeconfig: &Path) -> Vec<Value> {
    let mut cmd = common::clusteradm();
    cmd.args(args)
        .arg("--dry-run")
        .arg("--kubeconfig")
        .arg(kubeconfig);
    let out = fixture::run(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    objects(&String::from_utf8_lossy(&out.stdout), "--dry-run")
}

#[tokio::test]
async fn the_hub_chart_renders_what_init_applies() {
    let pull = common::temp_file("config.json", r#"{"auths":{"r.example":{"auth":"dTpw"}}}"#);
    let pull = pull.to_str().unwrap();
    let hub = common::env().hub;
    let cases: [(&[&str], Vec<String>); 3] = [
        (&[], vec![]),
        (
            &[
                "--image-registry",
                "r.example/ocm",
                "--bundle-version",
                "1.2.0",
            ],
            vec![
                "--set".into(),
                "images.registry=r.example/ocm,images.tag=v1.2.0".into(),
            ],
        ),
        (
            &[
                "--image",
                "r.example/clusteradm:v9",
                "--enable-sync-labels",
                "--image-pull-credential-file",
                pull,
            ],
            vec![
                "--set".into(),
                "image=r.example/clusteradm:v9,enableSyncLabels=true".into(),
                "--set-file".into(),
                format!("imagePullCredential={pull}"),
            ],
        ),
    ];
    for (flags, values) in cases {
        let mut args = vec!["init"];
        args.extend_from_slice(flags);
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        let command = dry_run(&args, &hub).await;
        assert_eq!(command.len(), 13, "{flags:?}");
        // The registry credential is not printed: the chart's objects, redacted the same way.
        let pull_secret = command
            .iter()
            .find(|o| o["type"] == "kubernetes.io/dockerconfigjson")
            .unwrap();
        let printed = base64::engine::general_purpose::STANDARD
            .decode(pull_secret["data"][".dockerconfigjson"].as_str().unwrap())
            .unwrap();
        assert!(
            !String::from_utf8_lossy(&printed).contains("dTpw"),
            "{flags:?}: the registry credential printed"
        );
        let chart: Vec<kube::api::DynamicObject> = helm_template("cluster-manager", &values)
            .await
            .into_iter()
            .map(|o| serde_json::from_value(o).unwrap())
            .collect();
        let chart: Vec<Value> = clusteradm::secrets::redact_pull_secrets(&chart)
            .into_iter()
            .map(|o| serde_json::to_value(o).unwrap())
            .collect();
        pretty_assertions::assert_eq!(chart, command);
    }
}

#[tokio::test]
async fn the_klusterlet_chart_renders_what_join_applies() {
    let token = fixture::hub().await;
    let env = common::env();
    let (server, ca) = common::server_and_ca(&env.hub);
    let ca = base64::engine::general_purpose::STANDARD
        .decode(ca)
        .unwrap();
    let pin = clusteradm::pki::ca_cert_hash(&ca).unwrap();
    let cluster = common::unique("it-chart");
    let join = [
        "join",
        "--hub-token",
        &token,
        "--hub-apiserver",
        &server,
        "--ca-cert-hash",
        &pin,
        "--cluster-name",
        &cluster,
    ];
    let cases: [(&[&str], &str); 2] = [
        (&[], ""),
        (
            &[
                "--singleton",
                "--image",
                "r.example/clusteradm:v9",
                "--enable-sync-labels",
            ],
            ",mode=Singleton,image=r.example/clusteradm:v9,enableSyncLabels=true",
        ),
    ];
    for (flags, values) in cases {
        let mut args = join.to_vec();
        args.extend_from_slice(flags);
        let command = dry_run(&args, &env.managed).await;
        // What join derives from the clusters (its bootstrap kubeconfig, the managed cluster's
        // server) goes to the chart as values.
        let of = |kind: &str| command.iter().find(|o| o["kind"] == kind).unwrap().clone();
        let bootstrap = &bootstrap_kubeconfig(&command);
        assert!(
            !bootstrap.contains(&token) && bootstrap.contains("<redacted>"),
            "--dry-run prints no token: {bootstrap}"
        );
        let bootstrap = common::temp_file("bootstrap.kubeconfig", bootstrap);
        let external = of("Klusterlet")["spec"]["externalServerURLs"][0]["url"].clone();
        let set = format!(
            "clusterName={cluster},externalServerURL={}{values}",
            external.as_str().unwrap_or_default()
        );
        let set_file = format!("bootstrapHubKubeconfig={}", bootstrap.display());
        let chart = helm_template("klusterlet", &["--set", &set, "--set-file", &set_file]).await;
        assert_eq!(command.len(), 10, "{flags:?}");
        pretty_assertions::assert_eq!(chart, command);
    }

    // Asked for the objects to apply later, the user gets the token, in a private file only.
    let file = common::temp_file("unused", "").with_file_name("join.yaml");
    let mut args = join.to_vec();
    args.extend(["--output-file", file.to_str().unwrap()]);
    let printed = dry_run(&args, &env.managed).await;
    assert!(
        printed.is_empty(),
        "the objects go to the file: {printed:?}"
    );
    let written = objects(&std::fs::read_to_string(&file).unwrap(), "--output-file");
    assert!(
        bootstrap_kubeconfig(&written).contains(&token),
        "the file holds the bootstrap token"
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

/// A value that is not an image never reaches the YAML: the CLI refuses it before anything is
/// rendered, and the charts refuse it when rendered.
#[tokio::test]
async fn image_values_that_are_not_images_are_refused_by_the_cli_and_the_charts() {
    let hub = common::env().hub;
    let smuggled = "v1\n---\nkind: Secret";
    for flags in [
        &["--image-registry", "quay.io/x\n---\nkind: Secret"][..],
        &["--image", "r.example/clusteradm:v1\nkind: Secret"][..],
    ] {
        common::clusteradm()
            .args(["init", "--dry-run", "--kubeconfig"])
            .arg(&hub)
            .args(flags)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("is not a"))
            .stdout(predicates::str::is_empty());
    }
    let values = common::temp_file("values.yaml", &format!("images: {{tag: {smuggled:?}}}\n"));
    common::clusteradm()
        .args(["init", "--dry-run", "--cluster-manager-values-file"])
        .arg(&values)
        .arg("--kubeconfig")
        .arg(&hub)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("images.tag"))
        .stdout(predicates::str::is_empty());
    for (chart_name, set) in [
        ("cluster-manager", format!("images.tag={smuggled}")),
        ("klusterlet", "image=r.example/x:v1 y".to_owned()),
    ] {
        let mut cmd = assert_cmd::Command::new(helm());
        cmd.args(["template", "t"])
            .arg(chart(chart_name))
            .args(["--set", &set])
            .args(["--set", "clusterName=c1,bootstrapHubKubeconfig=x"]);
        let out = fixture::run(cmd).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{chart_name} rendered {set:?}");
        assert!(stderr.contains("is not an image value"), "{stderr}");
    }
}
