//! `addon enable`, `addon disable` and `get addon` on the real hub: ManagedClusterAddOns written
//! as upstream's `clusteradm` writes them, idempotent, and nothing written when any cluster or
//! add-on named is unknown; and add-on registration: an add-on agent's own hub identity, signed
//! only as registered, and the credential gone when the add-on is.
use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use clusteradm::agent::gates::Gates;
use clusteradm::agent::registration::rotate::Renewal;
use clusteradm::agent::work::AppliedNames;
use clusteradm::agent::work::supervisor::{self, Supervised};
use clusteradm::api::addon::{
    ClusterManagementAddOn, ClusterManagementAddOnSpec, ManagedClusterAddOn,
};
use clusteradm::api::cluster::{ManagedCluster, ManagedClusterSpec};
use clusteradm::api::names::CLIENT_SIGNER;
use clusteradm::identity::CsrFacts;
use clusteradm::identity::addon::{AddonSubject, default_group, default_user};
use clusteradm::runtime::Shutdown;

use crate::common;
use crate::registration::fixture::{self, on_hub};

mod cluster_sync;
mod conversion;
mod conversion_limits;
mod framework;
mod hook;
mod hosted;
mod probers;
mod rollout;
mod template;
mod template_fields;
mod token;

/// A ManagedCluster and nothing else: no agent, no namespace (the hub has not accepted it).
async fn new_cluster(prefix: &str) -> String {
    let name = common::unique(prefix);
    Api::<ManagedCluster>::all(common::hub().await)
        .create(
            &PostParams::default(),
            &ManagedCluster::new(&name, ManagedClusterSpec::default()),
        )
        .await
        .unwrap();
    name
}

/// Two clusters with their namespaces (as the hub makes them on accept), no agents.
async fn clusters(prefix: &str) -> Vec<String> {
    let hub = common::hub().await;
    let mut names = Vec::new();
    for _ in 0..2 {
        let name = new_cluster(prefix).await;
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(hub.clone())
            .create(&PostParams::default(), &ns)
            .await
            .unwrap();
        names.push(name);
    }
    names
}

async fn known_addon(name: &str) {
    let hub = common::hub().await;
    Api::<ClusterManagementAddOn>::all(hub)
        .create(
            &PostParams::default(),
            &ClusterManagementAddOn::new(name, ClusterManagementAddOnSpec::default()),
        )
        .await
        .unwrap();
}

/// `clusteradm <args>` on the hub, which must succeed: its stdout.
async fn succeeds(args: &[&str]) -> String {
    let (code, out, err) = on_hub(args).await;
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

fn says(out: &str, text: &str) {
    assert!(out.contains(text), "expected {text:?} in:\n{out}");
}

/// Whether `addon` has its ManagedClusterAddOn on `cluster`.
async fn enabled_on(hub: &kube::Client, cluster: &str, addon: &str) -> bool {
    Api::<ManagedClusterAddOn>::namespaced(hub.clone(), cluster)
        .get_opt(addon)
        .await
        .unwrap()
        .is_some()
}

/// The hub set up, two accepted clusters without agents, and an add-on the hub knows.
async fn two_clusters_and_an_addon(prefix: &str) -> (kube::Client, Vec<String>, String) {
    fixture::hub().await;
    let c = clusters(prefix).await;
    let addon = common::unique("it-hello");
    known_addon(&addon).await;
    (common::hub().await, c, addon)
}

async fn cleanup(addon: &str, clusters: &[String]) {
    let hub = common::hub().await;
    let _ = Api::<ClusterManagementAddOn>::all(hub.clone())
        .delete(addon, &DeleteParams::default())
        .await;
    for c in clusters {
        let _ = Api::<ManagedCluster>::all(hub.clone())
            .delete(c, &DeleteParams::default())
            .await;
        let _ = Api::<Namespace>::all(hub.clone())
            .delete(c, &DeleteParams::default())
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enable_get_and_disable_an_addon_on_two_clusters() {
    let (hub, c, addon) = two_clusters_and_an_addon("it-addon").await;
    let both = c.join(",");

    let args = [
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &both,
        "--namespace",
        "hello-ns",
        "--annotate",
        "owner=platform",
        "--labels",
        "tier=gold",
    ];
    let out = succeeds(&args).await;
    says(
        &out,
        &format!(
            "Deploying {addon} add-on to namespaces hello-ns of managed cluster: {}.",
            c[0]
        ),
    );
    for cluster in &c {
        let mca = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), cluster)
            .get(&addon)
            .await
            .unwrap();
        assert_eq!(mca.spec.install_namespace.as_deref(), Some("hello-ns"));
        assert_eq!(mca.metadata.annotations.unwrap()["owner"], "platform");
        assert_eq!(mca.metadata.labels.unwrap()["tier"], "gold");
    }
    // Twice: nothing changes, and it says so.
    let out = succeeds(&args).await;
    assert_eq!(out.matches("is already enabled").count(), 2, "{out}");

    let out = succeeds(&["get", "addon", &addon]).await;
    for cluster in &c {
        let row = [
            addon.as_str(),
            cluster.as_str(),
            "hello-ns",
            "Unknown",
            "Unknown",
            "Unknown",
        ];
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == row),
            "{out}"
        );
    }
    let out = succeeds(&["get", "addon", &addon, "--clusters", &c[1], "-o", "json"]).await;
    // One object alone, as kubectl prints one.
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["kind"], "ManagedClusterAddOn", "{out}");
    assert_eq!(listed["metadata"]["namespace"], c[1].as_str());
    // Upstream's `-c` names one cluster, beside `--clusters`.
    let out = succeeds(&["get", "addon", &addon, "-c", &c[0], "-o", "json"]).await;
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["metadata"]["namespace"], c[0].as_str(), "{out}");

    // --dry-run says what it would do and deletes nothing.
    let disable = ["addon", "disable", "--names", &addon, "--clusters", &c[0]];
    let out = succeeds(&[&disable[..], &["--dry-run"]].concat()).await;
    says(&out, "Undeploying");
    assert!(enabled_on(&hub, &c[0], &addon).await);
    let out = succeeds(&disable).await;
    says(
        &out,
        &format!("Undeploying {addon} add-on in managed cluster: {}.", c[0]),
    );
    // No finalizer holds a ManagedClusterAddOn until the add-on manager adds its own.
    assert!(!enabled_on(&hub, &c[0], &addon).await);
    let out = succeeds(&disable).await;
    says(
        &out,
        &format!("{addon} add-on not found in cluster: {}.", c[0]),
    );
    succeeds(&["addon", "disable", "--names", &addon, "--all-clusters"]).await;
    assert!(!enabled_on(&hub, &c[1], &addon).await);
    cleanup(&addon, &c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enabling_on_an_unknown_cluster_or_an_unknown_addon_writes_nothing() {
    let (hub, c, addon) = two_clusters_and_an_addon("it-addon-bad").await;
    let nothing_on = |cluster: String| {
        let hub = hub.clone();
        let addon = addon.clone();
        async move {
            Api::<ManagedClusterAddOn>::namespaced(hub, &cluster)
                .get_opt(&addon)
                .await
                .unwrap()
                .is_none()
        }
    };

    let unknown = common::unique("it-nowhere");
    let (code, _, err) = on_hub(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &format!("{},{unknown}", c[0]),
    ])
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("managed cluster {unknown} not found on the hub")),
        "{err}"
    );
    assert!(nothing_on(c[0].clone()).await, "a cluster was half-enabled");

    let (code, _, err) = on_hub(&[
        "addon",
        "enable",
        "--names",
        &format!("{addon},no-such-addon"),
        "--clusters",
        &c[0],
    ])
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("unknown addon no-such-addon"), "{err}");
    assert!(nothing_on(c[0].clone()).await, "an add-on was half-enabled");

    let (code, _, err) = on_hub(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &c[0],
        "--annotate",
        "novalue",
    ])
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("expected key=value"), "{err}");

    // A cluster the hub has not accepted has no namespace for the add-on.
    let unaccepted = new_cluster("it-addon-new").await;
    let (code, _, err) = on_hub(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &unaccepted,
    ])
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains("not accepted") && err.contains("clusteradm accept"),
        "{err}"
    );

    let (code, _, err) = on_hub(&[
        "addon",
        "disable",
        "--names",
        &addon,
        "--clusters",
        &unknown,
    ])
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("not found on the hub"), "{err}");
    let mut all = c.clone();
    all.push(unaccepted);
    cleanup(&addon, &all).await;
}

/// A CSR the cluster's agent sends for an add-on of its cluster, asking for `subject`.
pub(super) async fn send_csr(
    agent: &kube::Client,
    cluster: &str,
    addon: &str,
    user: String,
    groups: Vec<String>,
    signer: &str,
) -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let pem = clusteradm::agent::addon::request_pem(
        &AddonSubject {
            user,
            groups,
            organization_units: Vec::new(),
        },
        addon,
        &key,
    )
    .unwrap();
    let csr = clusteradm::agent::addon::csr_object(cluster, addon, signer, &pem, None);
    Api::<CertificateSigningRequest>::all(agent.clone())
        .create(&PostParams::default(), &csr)
        .await
        .unwrap()
        .name_any()
}

fn is_forbidden<T>(result: &Result<T, kube::Error>) -> bool {
    matches!(result, Err(kube::Error::Api(s)) if s.code == 403)
}

/// A new add-on (names from the prefixes) enabled on `cluster` in a new install namespace, and
/// its hub side done ([`register_and_grant`]): (add-on, install namespace).
async fn enabled_and_granted(
    hub: &kube::Client,
    cluster: &str,
    addon_prefix: &str,
    install_prefix: &str,
) -> (String, String) {
    let addon = common::unique(addon_prefix);
    let install = common::unique(install_prefix);
    known_addon(&addon).await;
    succeeds(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        cluster,
        "-n",
        &install,
    ])
    .await;
    register_and_grant(hub, cluster, &addon, &install).await;
    (addon, install)
}

/// What the add-on's hub side does: registers an identity on the hub's signer, and grants it
/// ConfigMaps in the cluster namespace.
async fn register_and_grant(hub: &kube::Client, cluster: &str, addon: &str, install: &str) {
    Api::<ManagedClusterAddOn>::namespaced(hub.clone(), cluster)
        .patch_status(
            addon,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "namespace": install,
                "registrations": [{"signerName": CLIENT_SIGNER}]}})),
        )
        .await
        .unwrap();
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": addon, "namespace": cluster},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}))
    .unwrap();
    Api::<Role>::namespaced(hub.clone(), cluster)
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": addon, "namespace": cluster},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": addon},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                      "name": default_group(cluster, addon)}]}))
    .unwrap();
    Api::<RoleBinding>::namespaced(hub.clone(), cluster)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
}

/// Forged requests by the cluster's agent for its add-on: another cluster's identity, another
/// add-on's, an extra group, a signer the add-on did not register.
async fn forge_csrs(me: &kube::Client, c: &str, addon: &str) -> [String; 4] {
    let (user, group) = (default_user(c, addon), default_group(c, addon));
    let other = (default_user("other", addon), default_group("other", addon));
    let other_addon = (
        default_user(c, "other-addon"),
        default_group(c, "other-addon"),
    );
    [
        send_csr(me, c, addon, other.0, vec![other.1], CLIENT_SIGNER).await,
        send_csr(
            me,
            c,
            addon,
            other_addon.0,
            vec![other_addon.1],
            CLIENT_SIGNER,
        )
        .await,
        send_csr(
            me,
            c,
            addon,
            user.clone(),
            vec![group.clone(), "hub-admins".into()],
            CLIENT_SIGNER,
        )
        .await,
        send_csr(
            me,
            c,
            addon,
            user,
            vec![group],
            "example.com/not-registered",
        )
        .await,
    ]
}

/// The add-on identity reads ConfigMaps in its cluster namespace (once its grant is in force),
/// and nothing else.
pub(super) async fn only_configmaps_in(as_addon: &kube::Client, c: &str) {
    common::eventually("the add-on's RBAC", Duration::from_secs(30), || {
        let cms = Api::<ConfigMap>::namespaced(as_addon.clone(), c);
        async move { cms.list(&ListParams::default()).await.ok() }
    })
    .await;
    let lp = ListParams::default();
    let elsewhere = Api::<ConfigMap>::namespaced(as_addon.clone(), "default");
    assert!(is_forbidden(&elsewhere.list(&lp).await));
    let secrets = Api::<Secret>::namespaced(as_addon.clone(), c);
    assert!(is_forbidden(&secrets.list(&lp).await));
    let clusters = Api::<ManagedCluster>::all(as_addon.clone());
    assert!(is_forbidden(&clusters.list(&lp).await));
}

/// What an add-on's agent does to say it is alive: its install namespace and a Lease named after
/// the add-on there, renewed now.
async fn renew_lease(managed: &kube::Client, install: &str, addon: &str) {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": install}})).unwrap();
    Api::<Namespace>::all(managed.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": addon, "namespace": install},
        "spec": {"renewTime": Timestamp::now().to_string()}}))
    .unwrap();
    Api::<Lease>::namespaced(managed.clone(), install)
        .create(&PostParams::default(), &lease)
        .await
        .unwrap();
}

/// The hub hears from the cluster that the add-on is available, and `get addon` shows it.
async fn available_by_lease(hub: &kube::Client, c: &str, addon: &str) {
    let api = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), c);
    fixture::wait(
        api,
        addon,
        "Available from the add-on's lease",
        |m: Option<&ManagedClusterAddOn>| {
            m.and_then(|m| m.status.as_ref())
                .and_then(|s| clusteradm::api::conditions::find(&s.conditions, "Available"))
                .is_some_and(|a| {
                    a.status == "True" && a.reason == "ManagedClusterAddOnLeaseUpdated"
                })
        },
    )
    .await;
    let out = succeeds(&["get", "addon", addon, "--clusters", c]).await;
    let row: Vec<&str> = out
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row.get(3), Some(&"True"), "{out}");
}

/// Upstream's agent reports each stored certificate on the add-on (`ClusterCertificateRotated`;
/// its e2e suite reads it).
async fn rotation_reported(hub: &kube::Client, c: &str, addon: &str) {
    fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), c),
        addon,
        "ClusterCertificateRotated on the add-on",
        |m: Option<&ManagedClusterAddOn>| {
            m.and_then(|m| m.status.as_ref())
                .and_then(|s| {
                    clusteradm::api::conditions::find(&s.conditions, "ClusterCertificateRotated")
                })
                .is_some_and(|c| {
                    c.status == "True"
                        && c.reason == "ClientCertificateUpdated"
                        && c.message
                            .starts_with("client certificate rotated starting from ")
                })
        },
    )
    .await;
}

/// A hub client from the kubeconfig in an add-on's secret.
pub(super) async fn client_of(secret: &Secret) -> kube::Client {
    let text = String::from_utf8(secret.data.as_ref().unwrap()["kubeconfig"].0.clone()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::from_yaml(&text).unwrap(),
        &KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// The work agent and add-on registration of `agent`'s cluster, as `join --in-process` runs them:
/// beside the work agent, with the credential the cluster's registration agent keeps in its hub
/// kubeconfig secret, with `gates`.
fn supervised(agent: &fixture::Agent, managed: &kube::Client, gates: Gates) -> Supervised {
    Supervised {
        managed: managed.clone(),
        management: managed.clone(),
        namespace: agent.opts.namespace.clone(),
        cluster: agent.cluster().to_string(),
        applied_names: AppliedNames::PerHub,
        addons: true,
        work_agent: true,
        example_agents: true,
        gates,
        work: clusteradm::agent::work::Settings::default(),
        // 600 s is the API's minimum lifetime: renew when less than 99 % of it remains instead.
        addon_auth: clusteradm::agent::addon::token::Auth::default(),
        addon_renewal: Renewal {
            expiration_seconds: Some(600),
            threshold: 0.99,
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_addon_agent_gets_its_own_hub_identity_and_nothing_more() {
    let agent = fixture::joined(fixture::options(common::managed().await, "it-addon-reg")).await;
    let c = agent.cluster().to_string();
    let (hub, managed) = (common::hub().await, common::managed().await);
    let me = fixture::cert_client(&agent.hub_secret().await).await;
    let (addon, install) = enabled_and_granted(&hub, &c, "it-hello", "it-addon-ns").await;

    let forged = forge_csrs(&me, &c, &addon).await;

    renew_lease(&managed, &install, &addon).await;

    let shutdown = Shutdown::new();
    let supervised = supervised(&agent, &managed, Gates::default());
    tokio::spawn(supervisor::run(supervised, shutdown.clone()));
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), &install);
    let name = format!("{addon}-hub-kubeconfig");
    let secret = fixture::wait(
        secrets.clone(),
        &name,
        "the add-on's hub kubeconfig",
        |s: Option<&Secret>| {
            s.and_then(|s| s.data.as_ref())
                .is_some_and(|d| d.contains_key("kubeconfig"))
        },
    )
    .await;

    // The hub signed the add-on's own request, approved by the hub, and none of the forged ones.
    let csrs: Api<CertificateSigningRequest> = Api::all(hub.clone());
    for forged in &forged {
        let csr = csrs.get(forged).await.unwrap();
        assert!(
            CsrFacts::of(&csr).pending,
            "forged CSR {forged} was decided: {:?}",
            csr.status
        );
    }

    only_configmaps_in(&client_of(&secret).await, &c).await;
    available_by_lease(&hub, &c, &addon).await;
    rotation_reported(&hub, &c, &addon).await;

    // Renewed before it expires: a new certificate for the same identity, in a kubeconfig that
    // works.
    let first = secret.data.as_ref().unwrap()["tls.crt"].clone();
    let renewed = fixture::wait(
        secrets.clone(),
        &name,
        "a renewed add-on certificate",
        move |s: Option<&Secret>| {
            s.and_then(|s| s.data.as_ref())
                .and_then(|d| d.get("tls.crt"))
                .is_some_and(|crt| *crt != first)
        },
    )
    .await;
    assert_eq!(
        common::whoami(&client_of(&renewed).await).await.unwrap(),
        default_user(&c, &addon)
    );

    // Disabled: the credential is deleted from the managed cluster.
    succeeds(&["addon", "disable", "--names", &addon, "--clusters", &c]).await;
    let uid = secret.metadata.uid.clone().unwrap();
    fixture::wait_deleted(secrets, &name, &uid).await;

    shutdown.cancel();
    for forged in &forged {
        let _ = csrs.delete(forged, &DeleteParams::default()).await;
    }
    let _ = Api::<Namespace>::all(managed)
        .delete(&install, &DeleteParams::default())
        .await;
    let _ = Api::<ClusterManagementAddOn>::all(hub)
        .delete(&addon, &DeleteParams::default())
        .await;
    agent.remove().await;
}

/// With the Klusterlet's `AddonManagement` gate off, the agent registers no add-on: an enabled
/// and granted add-on gets no hub credential.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_addon_management_the_agent_registers_no_addon() {
    let agent = fixture::joined(fixture::options(common::managed().await, "it-addon-off")).await;
    let c = agent.cluster().to_string();
    let (hub, managed) = (common::hub().await, common::managed().await);
    let (addon, install) = enabled_and_granted(&hub, &c, "it-hello-off", "it-addon-off-ns").await;
    let shutdown = Shutdown::new();
    let supervised = supervised(
        &agent,
        &managed,
        Gates::from_flags(&["AddonManagement=false"]),
    );
    tokio::spawn(supervisor::run(supervised, shutdown.clone()));
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), &install);
    let name = format!("{addon}-hub-kubeconfig");
    common::never(
        "the add-on's hub kubeconfig",
        Duration::from_secs(6),
        || {
            let (secrets, name) = (secrets.clone(), name.clone());
            async move {
                secrets
                    .get_opt(&name)
                    .await
                    .ok()
                    .flatten()
                    .map(|_| "written")
            }
        },
    )
    .await;
    let csrs: Api<CertificateSigningRequest> = Api::all(hub.clone());
    let selector = format!(
        "open-cluster-management.io/cluster-name={c},open-cluster-management.io/addon-name={addon}"
    );
    let sent = csrs
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap();
    assert!(
        sent.items.is_empty(),
        "the agent sent add-on CSRs with the gate off"
    );

    shutdown.cancel();
    succeeds(&["addon", "disable", "--names", &addon, "--clusters", &c]).await;
    let _ = Api::<Namespace>::all(managed)
        .delete(&install, &DeleteParams::default())
        .await;
    let _ = Api::<ClusterManagementAddOn>::all(hub)
        .delete(&addon, &DeleteParams::default())
        .await;
    agent.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enable_with_a_config_file_applies_and_names_the_configs() {
    let (hub, c, addon) = two_clusters_and_an_addon("it-addon-cfg").await;
    let config = common::unique("it-adc");
    let file = common::temp_file(
        "configs.yaml",
        &format!(
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnDeploymentConfig\n\
             metadata:\n  name: {config}\n  namespace: default\nspec:\n  customizedVariables:\n  - name: LOG_LEVEL\n    value: debug\n"
        ),
    );
    let bad = common::temp_file("bad.yaml", "kind: [unclosed\n");
    let args = |file: &std::path::Path| {
        [
            "addon",
            "enable",
            "--names",
            &addon,
            "--clusters",
            &c[0],
            "--config-file",
            file.to_str().unwrap(),
        ]
        .map(str::to_owned)
    };
    let (code, _, err) = on_hub(&args(&bad).each_ref().map(String::as_str)).await;
    assert_ne!(code, 0);
    assert!(err.contains("is not valid YAML"), "{err}");
    assert!(
        !enabled_on(&hub, &c[0], &addon).await,
        "enabled despite a bad config file"
    );
    let missing = std::path::Path::new("/nonexistent/config.yaml");
    let (code, _, err) = on_hub(&args(missing).each_ref().map(String::as_str)).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("cannot read /nonexistent/config.yaml"),
        "{err}"
    );

    let out = succeeds(&args(&file).each_ref().map(String::as_str)).await;
    says(&out, &format!("AddOnDeploymentConfig default/{config}"));
    let mca = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[0])
        .get(&addon)
        .await
        .unwrap();
    let named = &mca.spec.configs;
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(
        (named[0].group.as_str(), named[0].resource.as_str()),
        ("addon.open-cluster-management.io", "addondeploymentconfigs")
    );
    assert_eq!(
        (named[0].namespace.as_deref(), named[0].name.as_str()),
        (Some("default"), config.as_str())
    );
    let again = succeeds(&args(&file).each_ref().map(String::as_str)).await;
    says(&again, "is already enabled");

    let _ =
        Api::<clusteradm::api::addon::AddOnDeploymentConfig>::namespaced(hub.clone(), "default")
            .delete(&config, &DeleteParams::default())
            .await;
    cleanup(&addon, &c).await;
}

/// The add-on manager's status write, when the configs an add-on names all go: its
/// `configReferences` empties on the hub too (a merge of the new status alone kept the old list,
/// which our type leaves out when empty, and managed-serviceaccount's manager then rendered its
/// agent with a config that was gone). The add-on has no ClusterManagementAddOn, so no hub
/// controller writes it meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_references_empty_when_the_configs_go() {
    use clusteradm::hub::addon::manager::writer::write_status;
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-cfgref").await;
    let addon = common::unique("it-cfgref-addon");
    let mcas = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[0]);
    let mca: ManagedClusterAddOn =
        serde_json::from_value(json!({"metadata": {"name": addon, "namespace": c[0]}, "spec": {}}))
            .unwrap();
    mcas.create(&PostParams::default(), &mca).await.unwrap();
    let referenced = json!({"status": {"configReferences": [{
        "group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs",
        "namespace": c[0], "name": "cfg", "desiredConfig": {"namespace": c[0], "name": "cfg", "specHash": "h"}}]}});
    mcas.patch_status(&addon, &PatchParams::default(), &Patch::Merge(referenced))
        .await
        .unwrap();
    let before = mcas.get(&addon).await.unwrap();
    let mut status = before.status.clone().unwrap();
    assert_eq!(status.config_references.len(), 1);
    status.config_references.clear();
    write_status(&hub, &before, &status).await.unwrap();
    let after = mcas.get(&addon).await.unwrap().status.unwrap();
    assert!(
        after.config_references.is_empty(),
        "{:?}",
        after.config_references
    );
    cleanup(&addon, &c).await;
}
