//! What the integration test binaries (`tests/it`, `tests/lifecycle`, `tests/pods`) share:
//! attaching to the control plane, unique names, waiting on conditions, running the binary, and
//! registration agents joined to the hub ([`registration`]).

pub mod open_watches;
pub mod proxy;
pub mod registration;

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The two clusters under test.
pub struct Env {
    /// Admin kubeconfig of the hub.
    pub hub: PathBuf,
    /// Admin kubeconfig of the managed cluster.
    pub managed: PathBuf,
}

/// The clusters named by HUB_KUBECONFIG and MANAGED_KUBECONFIG. A missing variable fails the test
/// with the command to run: a silent skip would hide that nothing was tested.
#[must_use]
pub fn env() -> Env {
    log_to_file();
    let get = |name: &str| -> PathBuf {
        let value = std::env::var_os(name).unwrap_or_else(|| {
            panic!(
                "{name} is not set: start the test control plane with `eval \"$(scripts/control-plane start)\"` \
                 (or run `scripts/test`), or point {name} at a real cluster's kubeconfig"
            )
        });
        let path = PathBuf::from(value);
        assert!(path.exists(), "{name}={} does not exist", path.display());
        path
    };
    Env {
        hub: get("HUB_KUBECONFIG"),
        managed: get("MANAGED_KUBECONFIG"),
    }
}

/// The hub API server's URL, from the hub kubeconfig (what an in-process hub is given).
#[allow(dead_code)] // each test binary uses a different part of this module
#[must_use]
pub fn hub_url() -> http::Uri {
    let kubeconfig = kube::config::Kubeconfig::read_from(env().hub).unwrap();
    let server = kubeconfig.clusters[0]
        .cluster
        .as_ref()
        .unwrap()
        .server
        .clone()
        .unwrap();
    server.parse().unwrap()
}

/// With `IT_LOG=<file>`, the in-process hub controllers and agents of this test binary log there
/// (`RUST_LOG` filters, default info): what `scripts/test` shows when a test fails.
fn log_to_file() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Some(path) = std::env::var_os("IT_LOG") else {
            return;
        };
        let Ok(file) = std::fs::File::create(&path) else {
            return;
        };
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(file))
            .try_init();
    });
}

/// An admin client for a kubeconfig file.
pub async fn client(kubeconfig: &PathBuf) -> Client {
    let kc = Kubeconfig::read_from(kubeconfig).expect("read kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("kube config");
    Client::try_from(config).expect("client")
}

/// Admin client of the hub.
pub async fn hub() -> Client {
    client(&env().hub).await
}

/// Admin client of the managed cluster.
pub async fn managed() -> Client {
    client(&env().managed).await
}

/// A name no other test (or earlier run) uses: `<prefix>-<pid>-<n>-<time>`, DNS-1123 safe.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        % 1_000_000;
    format!("{prefix}-{}-{n}-{t}", std::process::id() % 100_000)
}

/// Polls `check` until it returns `Some`, failing after `timeout` with `what` in the message.
/// For conditions with no watchable event (for example, an authenticator cache catching up).
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    /// What a check that returns `None` saw: nothing to add to the message.
    struct Unseen;
    impl std::fmt::Display for Unseen {
        fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            Ok(())
        }
    }
    eventually_seen(what, timeout, move || {
        let checked = check();
        async move { checked.await.ok_or(Unseen) }
    })
    .await
}

/// [`eventually`] for a check that says what it saw when it is not yet satisfied (`Err`): a
/// timeout's message ends with the last of those, so a failure shows what was short.
pub async fn eventually_seen<T, S, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    S: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, S>>,
{
    let start = Instant::now();
    let mut delay = Duration::from_millis(50);
    loop {
        match check().await {
            Ok(v) => return v,
            Err(seen) => assert!(
                start.elapsed() < timeout,
                "timed out after {timeout:?} waiting for {what}{seen}"
            ),
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(1));
    }
}

/// Polls `check` for `window` and fails (with `what`) if it ever returns `Some`: for what must
/// not happen, in a window a few times longer than the same thing takes when it does happen
/// (which the test shows first, so the check can fail).
pub async fn never<T: std::fmt::Debug, F, Fut>(what: &str, window: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    while start.elapsed() < window {
        if let Some(v) = check().await {
            panic!("{what}: {v:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Applies `crds` to `client` (as the operators would), each waited on up to `timeout`.
pub async fn install_crds(
    client: &Client,
    crds: &[k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition],
    timeout: Duration,
) {
    clusteradm::apply::Applier::new(client.clone(), timeout)
        .apply(crds.iter().map(clusteradm::apply::to_dynamic).collect())
        .await
        .unwrap();
}

/// The clusteradm binary, with a clean environment (no KUBECONFIG, no colour).
#[must_use]
pub fn clusteradm() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("clusteradm").expect("binary built");
    cmd.env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    cmd
}

/// Writes a file into a fresh temporary directory and returns its path.
#[must_use]
pub fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique("clusteradm-it"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// The server URL and CA (base64 PEM) of a kubeconfig's first cluster.
#[must_use]
pub fn server_and_ca(kubeconfig: &PathBuf) -> (String, String) {
    let kc = Kubeconfig::read_from(kubeconfig).unwrap();
    let cluster = kc.clusters[0].cluster.clone().unwrap();
    (
        cluster.server.unwrap(),
        cluster.certificate_authority_data.unwrap(),
    )
}

/// A client that authenticates to the hub with a bearer token (TLS verified against the hub CA).
pub async fn hub_client_with_token(token: &str) -> Client {
    let (server, ca) = server_and_ca(&env().hub);
    client_from_yaml(&format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: '{server}', certificate-authority-data: {ca}}}}}]\n\
         users: [{{name: u, user: {{token: '{token}'}}}}]\ncontexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n"
    ))
    .await
}

/// A client that authenticates to the hub with a client certificate.
pub async fn hub_client_with_cert(cert_pem: &str, key_pem: &str) -> Client {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let (server, ca) = server_and_ca(&env().hub);
    client_from_yaml(&format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: '{server}', certificate-authority-data: {ca}}}}}]\n\
         users: [{{name: u, user: {{client-certificate-data: {}, client-key-data: {}}}}}]\n\
         contexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n",
        b64(cert_pem),
        b64(key_pem)
    ))
    .await
}

/// A client from kubeconfig text.
pub async fn client_from_yaml(yaml: &str) -> Client {
    let kc = Kubeconfig::from_yaml(yaml).expect("kubeconfig yaml");
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    Client::try_from(config).expect("client")
}

/// Who the server says this client is (SelfSubjectReview).
pub async fn whoami(client: &Client) -> Result<String, kube::Error> {
    use k8s_openapi::api::authentication::v1::SelfSubjectReview;
    let api: kube::Api<SelfSubjectReview> = kube::Api::all(client.clone());
    let review = api
        .create(
            &kube::api::PostParams::default(),
            &SelfSubjectReview::default(),
        )
        .await?;
    Ok(review
        .status
        .and_then(|s| s.user_info)
        .and_then(|u| u.username)
        .unwrap_or_default())
}

/// A fresh bootstrap-token id (`[a-z0-9]{6}`).
#[must_use]
pub fn token_id() -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    unique("t").hash(&mut h);
    format!("{:06x}", h.finish() & 0xff_ffff)
}

/// The flags every real `init` of the shared hub passes, so that none switches off what the
/// others rely on: upstream's `ManifestWorkReplicaSet` gate (off by default) for the replica-set
/// tests.
pub const SHARED_HUB_GATES: [&str; 2] = ["--feature-gates", "ManifestWorkReplicaSet=true"];

/// Serialises tests that change hub-wide singletons (the ClusterManager, the operator namespace,
/// the bootstrap credential): they share one hub by design.
pub static HUB_SINGLETON: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A kubeconfig (text) for the hub that authenticates with `token`.
#[must_use]
pub fn hub_kubeconfig_with_token(token: &str) -> String {
    kubeconfig_with_token(&env().hub, token)
}

/// A kubeconfig for the server and CA of `admin`'s first cluster, authenticating with `token`.
#[must_use]
pub fn kubeconfig_with_token(admin: &PathBuf, token: &str) -> String {
    let (server, ca) = server_and_ca(admin);
    format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: hub, cluster: {{server: '{server}', certificate-authority-data: {ca}}}}}]\n\
         users: [{{name: u, user: {{token: '{token}'}}}}]\ncontexts: [{{name: hub, context: {{cluster: hub, user: u}}}}]\ncurrent-context: hub\n"
    )
}

/// A hub client authenticated as `user` in `group`, by a certificate the hub's signer issued.
pub async fn certificate_client(hub: &Client, user: &str, group: &str) -> Client {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, user);
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, group);
    let request = params.serialize_request(&key).unwrap().pem().unwrap();
    let csrs: kube::Api<k8s_openapi::api::certificates::v1::CertificateSigningRequest> =
        kube::Api::all(hub.clone());
    let name = unique("it-work-csr");
    let csr = k8s_openapi::api::certificates::v1::CertificateSigningRequest {
        metadata: kube::api::ObjectMeta {
            name: Some(name.clone()),
            ..Default::default()
        },
        spec: k8s_openapi::api::certificates::v1::CertificateSigningRequestSpec {
            request: k8s_openapi::ByteString(request.into_bytes()),
            signer_name: "kubernetes.io/kube-apiserver-client".into(),
            usages: Some(vec!["client auth".into(), "digital signature".into()]),
            expiration_seconds: Some(3600),
            ..Default::default()
        },
        status: None,
    };
    csrs.create(&kube::api::PostParams::default(), &csr)
        .await
        .unwrap();
    let approval = serde_json::json!({"status": {"conditions": [{
        "type": "Approved", "status": "True", "reason": "ITApprove", "message": "approved by the work test"}]}});
    csrs.patch_approval(
        &name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&approval),
    )
    .await
    .unwrap();
    let signed = tokio::time::timeout(
        Duration::from_secs(30),
        kube::runtime::wait::await_condition(
            csrs.clone(),
            &name,
            |c: Option<&k8s_openapi::api::certificates::v1::CertificateSigningRequest>| {
                c.and_then(|c| c.status.as_ref())
                    .and_then(|s| s.certificate.as_ref())
                    .is_some()
            },
        ),
    )
    .await
    .expect("the controller-manager signs within 30 s")
    .unwrap()
    .unwrap();
    csrs.delete(&name, &kube::api::DeleteParams::default())
        .await
        .unwrap();
    let cert = String::from_utf8(signed.status.unwrap().certificate.unwrap().0).unwrap();
    hub_client_with_cert(&cert, &key.serialize_pem()).await
}

/// Runs clusteradm with `args` and its stdout's read end closed before it writes, so its first
/// write meets EPIPE (as under `| head -1`): it must exit 0 without a panic.
pub fn assert_closed_pipe_is_no_error(args: &[&str]) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("clusteradm"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
}

/// A token (10 minutes) of ServiceAccount `namespace/name`, which is made if it is not there.
pub async fn service_account_token(client: &Client, namespace: &str, name: &str) -> String {
    use k8s_openapi::api::authentication::v1::TokenRequest;
    use k8s_openapi::api::core::v1::ServiceAccount;
    let accounts: kube::Api<ServiceAccount> = kube::Api::namespaced(client.clone(), namespace);
    let sa: ServiceAccount = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name},
    }))
    .unwrap();
    let apply = kube::api::PatchParams::apply("it-service-account");
    accounts
        .patch(name, &apply, &kube::api::Patch::Apply(&sa))
        .await
        .unwrap();
    let request: TokenRequest =
        serde_json::from_value(serde_json::json!({"spec": {"expirationSeconds": 600}})).unwrap();
    accounts
        .create_token_request(name, &kube::api::PostParams::default(), &request)
        .await
        .unwrap()
        .status
        .and_then(|s| s.token)
        .unwrap()
}

/// Lets ServiceAccount `namespace/account` `get` the non-resource URL `/metrics` (as a
/// Prometheus may), by a ClusterRole and binding named `role`.
pub async fn allow_metrics(client: &Client, role: &str, namespace: &str, account: &str) {
    allow_urls(client, role, namespace, account, &["/metrics"], &["get"]).await;
}

/// Lets ServiceAccount `namespace/account` `verbs` the non-resource `urls`, by a ClusterRole and
/// binding named `role`.
pub async fn allow_urls(
    client: &Client,
    role: &str,
    namespace: &str,
    account: &str,
    urls: &[&str],
    verbs: &[&str],
) {
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    let apply = kube::api::PatchParams::apply("it-url-reader").force();
    let cluster_role: ClusterRole = serde_json::from_value(serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": role},
        "rules": [{"nonResourceURLs": urls, "verbs": verbs}],
    }))
    .unwrap();
    kube::Api::<ClusterRole>::all(client.clone())
        .patch(role, &apply, &kube::api::Patch::Apply(&cluster_role))
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }))
    .unwrap();
    kube::Api::<ClusterRoleBinding>::all(client.clone())
        .patch(role, &apply, &kube::api::Patch::Apply(&binding))
        .await
        .unwrap();
}

/// The Secrets a pod spec mounts as volumes.
#[must_use]
pub fn mounted_secrets(pod: &k8s_openapi::api::core::v1::PodSpec) -> Vec<String> {
    pod.volumes
        .iter()
        .flatten()
        .filter_map(|v| v.secret.as_ref()?.secret_name.clone())
        .collect()
}

/// What only a writer of spec or metadata changes. The resourceVersion serves where the API server
/// keeps no generation; where it does (the Deployment), kube-controller-manager's status writes move
/// the resourceVersion at any moment, so the generation and the metadata we set stand in for it.
#[must_use]
pub fn written_by_us(obj: &kube::api::DynamicObject) -> String {
    match obj.metadata.generation {
        Some(generation) => {
            // The deployment controller stamps its revision once it first syncs.
            let ours: std::collections::BTreeMap<_, _> = kube::ResourceExt::annotations(obj)
                .iter()
                .filter(|(key, _)| !key.starts_with("deployment.kubernetes.io/"))
                .collect();
            format!(
                "generation {generation}, labels {:?}, annotations {ours:?}",
                obj.metadata.labels
            )
        }
        None => obj.metadata.resource_version.clone().unwrap(),
    }
}
