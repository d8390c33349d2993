//! The Klusterlet operator loop in this process, `unjoin` with and without it, and Hosted mode.
use std::time::{Duration, Instant};

use clusteradm::api::operator::Klusterlet;
use clusteradm::operator::klusterlet as operator;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt as _};

use super::{AGENT_NS, KLUSTERLET_CRD, MANAGED_SINGLETON, assert_nothing_joined, hub, join, reset};
use crate::common;

/// Runs the klusterlet loop against `client` in a task, until the sender is dropped or fires.
fn spawn_loop(
    client: Client,
) -> (
    clusteradm::runtime::Shutdown,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    spawn_loop_with(client, false)
}

/// [`spawn_loop`], with the operator's `--enable-sync-labels` as `sync_labels` says.
fn spawn_loop_with(
    client: Client,
    sync_labels: bool,
) -> (
    clusteradm::runtime::Shutdown,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let tx = clusteradm::runtime::Shutdown::new();
    let opts = operator::Options {
        cleanup_timeout: Duration::from_secs(60),
        sync_labels,
        ..Default::default()
    };
    let task = tokio::spawn(clusteradm::inprocess::klusterlet::run_operator(
        client,
        opts,
        tx.clone(),
        |holder| panic!("another process ({holder}) holds the operator Lease"),
    ));
    (tx, task)
}

/// Runs the binary off the async runtime, so the loop keeps running meanwhile.
async fn run_blocking(mut cmd: assert_cmd::Command) -> assert_cmd::assert::Assert {
    tokio::task::spawn_blocking(move || cmd.assert())
        .await
        .unwrap()
}

async fn exists<K>(api: &Api<K>, name: &str) -> bool
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.get_opt(name).await.unwrap().is_some()
}

/// Waits until the Klusterlet `name` reports Applied for its generation; returns it.
async fn applied(client: &Client, name: &str) -> Klusterlet {
    let api: Api<Klusterlet> = Api::all(client.clone());
    common::eventually(
        "the Klusterlet to report Applied",
        Duration::from_secs(90),
        || async { api.get(name).await.ok().filter(operator::is_applied) },
    )
    .await
}

fn condition<'a>(
    k: &'a Klusterlet,
    type_: &str,
) -> &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
    let status = k.status.as_ref().unwrap();
    clusteradm::api::conditions::find(&status.conditions, type_)
        .unwrap_or_else(|| panic!("no {type_} condition: {status:?}"))
}

fn unjoin(kubeconfig: &std::path::Path, cluster: &str) -> assert_cmd::Command {
    let mut cmd = common::clusteradm();
    cmd.args([
        "unjoin",
        "-y",
        "--timeout",
        "120s",
        "--cluster-name",
        cluster,
        "--kubeconfig",
    ])
    .arg(kubeconfig);
    cmd
}

/// The Klusterlet's placement, priority, host alias and client rates, set on the running
/// Klusterlet, reach the agents' Deployments as upstream's operator puts them; a registration
/// driver no agent here has is refused on the Klusterlet, naming the field.
async fn assert_placement_and_rates_reach_the_agents(managed: &Client) {
    let klusterlets: Api<Klusterlet> = Api::all(managed.clone());
    let patch = serde_json::json!({"spec": {
        "nodePlacement": {"nodeSelector": {"zone": "a"}},
        "priorityClassName": "agents-high",
        "hubApiServerHostAlias": {"ip": "10.0.0.7", "hostname": "hub.example.com"},
        "registrationConfiguration": {"kubeAPIQPS": 10, "kubeAPIBurst": 40},
        "workConfiguration": {"hubKubeAPIQPS": 7, "hubKubeAPIBurst": 9},
    }});
    klusterlets
        .patch("klusterlet", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let deployments: Api<Deployment> = Api::namespaced(managed.clone(), AGENT_NS);
    for (name, flag) in [
        ("klusterlet-registration-agent", "--kube-api-qps=10"),
        ("klusterlet-work-agent", "--hub-kube-api-qps=7"),
    ] {
        let pod = common::eventually(
            "the Klusterlet's placement on the agent Deployment",
            Duration::from_secs(60),
            || async {
                let pod = deployments.get(name).await.ok()?.spec?.template.spec?;
                let placed = pod.node_selector.as_ref()?.get("zone")? == "a";
                let args = pod.containers[0].args.clone()?;
                (placed && args.contains(&flag.to_owned())).then_some(pod)
            },
        )
        .await;
        assert_eq!(pod.priority_class_name.as_deref(), Some("agents-high"));
        assert_eq!(pod.host_aliases.unwrap()[0].ip, "10.0.0.7");
    }
    assert_registration_drivers_reach_upstreams_agents(managed, &klusterlets, &deployments).await;
}

/// AWS IRSA reaches upstream's agents as upstream's operator writes it; gRPC is refused, naming
/// the field; then the Klusterlet is back to CSR.
async fn assert_registration_drivers_reach_upstreams_agents(
    managed: &Client,
    klusterlets: &Api<Klusterlet>,
    deployments: &Api<Deployment>,
) {
    let irsa = serde_json::json!({"spec": {"registrationConfiguration":
        {"registrationDriver": {"authType": "awsirsa", "awsIrsa": {
            "hubClusterArn": "arn:aws:eks:us-west-2:123456789012:cluster/hub",
            "managedClusterArn": "arn:aws:eks:us-west-2:123456789012:cluster/c1"}}}}});
    klusterlets
        .patch("klusterlet", &PatchParams::default(), &Patch::Merge(&irsa))
        .await
        .unwrap();
    let pod = common::eventually(
        "upstream's registration agent told of AWS IRSA",
        Duration::from_secs(60),
        || async {
            let pod = deployments
                .get("klusterlet-registration-agent")
                .await
                .ok()?
                .spec?
                .template
                .spec?;
            let args = pod.containers[0].args.clone()?;
            args.contains(&"--registration-auth=awsirsa".to_owned())
                .then_some(pod)
        },
    )
    .await;
    assert_eq!(
        pod.init_containers.unwrap()[0].image.as_deref(),
        Some("amazon/aws-cli:latest")
    );
    let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> =
        Api::namespaced(managed.clone(), AGENT_NS);
    let role = accounts
        .get("klusterlet-registration-sa")
        .await
        .unwrap()
        .metadata
        .annotations
        .unwrap_or_default()
        .remove("eks.amazonaws.com/role-arn");
    assert!(
        role.as_deref()
            .is_some_and(|r| r.starts_with("arn:aws:iam::123456789012:role/ocm-managed-cluster-")),
        "{role:?}"
    );
    // A driver no agent here has is refused, naming the field.
    let unsupported = serde_json::json!({"spec": {"registrationConfiguration":
        {"registrationDriver": {"authType": "grpc", "awsIrsa": null}}}});
    klusterlets
        .patch(
            "klusterlet",
            &PatchParams::default(),
            &Patch::Merge(&unsupported),
        )
        .await
        .unwrap();
    let refused = common::eventually(
        "the Klusterlet refusing the grpc driver",
        Duration::from_secs(60),
        || async {
            let k = klusterlets.get("klusterlet").await.ok()?;
            let status = k.status.as_ref()?;
            clusteradm::api::conditions::find(&status.conditions, "Applied")
                .filter(|c| c.message.contains("registrationDriver.authType grpc"))
                .cloned()
        },
    )
    .await;
    assert_eq!(refused.status, "False", "{refused:?}");
    let back =
        serde_json::json!({"spec": {"registrationConfiguration": {"registrationDriver": null}}});
    klusterlets
        .patch("klusterlet", &PatchParams::default(), &Patch::Merge(&back))
        .await
        .unwrap();
}

/// Labels the Klusterlet `name` with a team label and a reserved `app` one.
async fn label_klusterlet(client: &Client, name: &str, team: &str) {
    let patch = serde_json::json!({"metadata": {"labels": {"team": team, "app": "not-copied"}}});
    Api::<Klusterlet>::all(client.clone())
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

/// The pull secret join put in the operator namespace is copied where the agents run and named
/// by their ServiceAccounts; the Klusterlet's team label is on the agent namespace.
async fn assert_pulls_with(managed: &Client, docker_config: &[u8]) {
    // The pull secret join put in the operator namespace, copied where the agents run and named
    // by their ServiceAccounts and pods.
    let copy = Api::<Secret>::namespaced(managed.clone(), AGENT_NS)
        .get("open-cluster-management-image-pull-credentials")
        .await
        .unwrap();
    assert_eq!(
        copy.type_.as_deref(),
        Some("kubernetes.io/dockerconfigjson")
    );
    assert_eq!(copy.data.unwrap()[".dockerconfigjson"].0, docker_config);
    let accounts: Api<ServiceAccount> = Api::namespaced(managed.clone(), AGENT_NS);
    for sa in ["klusterlet-registration-sa", "klusterlet-work-sa"] {
        let pulls = accounts.get(sa).await.unwrap().image_pull_secrets.unwrap();
        assert_eq!(
            pulls[0].name, "open-cluster-management-image-pull-credentials",
            "{sa}"
        );
    }
    let namespace = Api::<Namespace>::all(managed.clone())
        .get(AGENT_NS)
        .await
        .unwrap();
    assert_eq!(
        namespace.labels()["team"],
        "it-loop-team",
        "the CR's labels on every object"
    );
}

/// The klusterlet operator's Deployment runs with `--enable-sync-labels`.
async fn assert_operator_syncs_labels(managed: &Client) {
    let operator_args = Api::<Deployment>::namespaced(managed.clone(), "open-cluster-management")
        .get("klusterlet")
        .await
        .unwrap()
        .spec
        .unwrap()
        .template
        .spec
        .unwrap()
        .containers[0]
        .args
        .clone()
        .unwrap();
    assert!(
        operator_args.contains(&"--enable-sync-labels".to_string()),
        "{operator_args:?}"
    );
}

/// `d` and its pods carry the Klusterlet's `team` label, and not its reserved `app` one.
fn assert_team_label(d: &Deployment, team: &str) {
    let name = d.name_any();
    assert_eq!(d.labels()["team"], team, "{name}");
    assert_ne!(
        d.labels().get("app").map(String::as_str),
        Some("not-copied"),
        "{name}"
    );
    let template = d.spec.as_ref().unwrap().template.metadata.as_ref().unwrap();
    assert_eq!(template.labels.as_ref().unwrap()["team"], team, "{name}");
}

/// The agents' ClusterRoles exist.
async fn assert_agent_roles(roles: &Api<ClusterRole>) {
    for role in ["registration:agent", "work:agent", "work:execution"] {
        let name = format!("open-cluster-management:klusterlet-{role}");
        assert!(exists(roles, &name).await, "{role}");
    }
}

/// A ClusterRole labelled `open-cluster-management.io/aggregate-to-work=true` grants the work
/// agent its rules (kube-controller-manager aggregates it into `…-work:aggregate`), as upstream's
/// e2e "With CRD/CR" grants it a new kind. `work_sa` is the agent's ServiceAccount user.
async fn assert_work_role_aggregates(managed: &Client, work_sa: &str) {
    use k8s_openapi::api::authorization::v1::SubjectAccessReview;
    let name = common::unique("it-aggregate-to-work");
    let role: ClusterRole = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": {"open-cluster-management.io/aggregate-to-work": "true"}},
        "rules": [{"apiGroups": ["it.example"], "resources": ["guestbooks"], "verbs": ["create"]}],
    }))
    .unwrap();
    let roles: Api<ClusterRole> = Api::all(managed.clone());
    roles
        .create(&kube::api::PostParams::default(), &role)
        .await
        .unwrap();
    let review: SubjectAccessReview = serde_json::from_value(serde_json::json!({
        "spec": {
            "user": work_sa,
            "resourceAttributes": {"group": "it.example", "resource": "guestbooks", "verb": "create", "namespace": "default"},
        },
    }))
    .unwrap();
    let reviews: Api<SubjectAccessReview> = Api::all(managed.clone());
    common::eventually(
        "the work agent to be granted the aggregated role",
        Duration::from_secs(30),
        || async {
            let answer = reviews
                .create(&kube::api::PostParams::default(), &review)
                .await
                .unwrap();
            answer.status.is_some_and(|s| s.allowed).then_some(())
        },
    )
    .await;
    roles
        .delete(&name, &kube::api::DeleteParams::default())
        .await
        .unwrap();
}

/// The CRDs the klusterlet installs on the managed cluster.
const MANAGED_CRDS: [&str; 2] = [
    "appliedmanifestworks.work.open-cluster-management.io",
    "clusterclaims.cluster.open-cluster-management.io",
];

/// Default → Singleton → Default: each switch leaves exactly the new layout's agent Deployments
/// and ServiceAccounts, so that two sets of agents never run for one cluster.
async fn the_former_layouts_agents_go(managed: &Client) {
    let klusterlets: Api<Klusterlet> = Api::all(managed.clone());
    let deployments: Api<Deployment> = Api::namespaced(managed.clone(), AGENT_NS);
    let accounts: Api<ServiceAccount> = Api::namespaced(managed.clone(), AGENT_NS);
    let default = (
        ["klusterlet-registration-agent", "klusterlet-work-agent"].as_slice(),
        ["klusterlet-registration-sa", "klusterlet-work-sa"].as_slice(),
    );
    let singleton = (
        ["klusterlet-agent"].as_slice(),
        ["klusterlet-agent-sa"].as_slice(),
    );
    for (mode, (wanted, wanted_accounts), (former, former_accounts)) in [
        ("Singleton", singleton, default),
        ("Default", default, singleton),
    ] {
        let patch = serde_json::json!({"spec": {"deployOption": {"mode": mode}}});
        klusterlets
            .patch("klusterlet", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
        common::eventually(
            &format!("only {mode} mode's agents"),
            Duration::from_secs(60),
            || async {
                let mut only_new = true;
                for name in wanted {
                    only_new &= exists(&deployments, name).await;
                }
                for name in wanted_accounts {
                    only_new &= exists(&accounts, name).await;
                }
                for name in former {
                    only_new &= !exists(&deployments, name).await;
                }
                for name in former_accounts {
                    only_new &= !exists(&accounts, name).await;
                }
                only_new.then_some(())
            },
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_installs_the_agents_and_unjoin_removes_everything() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    let docker_config = r#"{"auths":{"registry.example:5000":{"auth":"dTpw"}}}"#;
    let pull_file = common::temp_file("config.json", docker_config);
    // Upstream's resource flags: on the Klusterlet, and from it on every agent container.
    join(
        &hub,
        "it-loop",
        &[
            "--image-pull-credential-file",
            pull_file.to_str().unwrap(),
            "--enable-sync-labels",
            "--ca-cert-hash",
            &hub.hash,
            "--resource-qos-class",
            "ResourceRequirement",
            "--resource-limits",
            "cpu=800m,memory=800Mi",
            "--resource-requests",
            "cpu=100m,memory=100Mi",
        ],
    )
    .assert()
    .success();
    // The operator's own Deployment runs with the flag; the loop here runs as it would.
    assert_operator_syncs_labels(&managed).await;
    label_klusterlet(&managed, "klusterlet", "it-loop-team").await;
    let (stop, task) = spawn_loop_with(managed.clone(), true);

    let k = applied(&managed, "klusterlet").await;
    assert_pulls_with(&managed, docker_config.as_bytes()).await;
    let deployments: Api<Deployment> = Api::namespaced(managed.clone(), AGENT_NS);
    for name in ["klusterlet-registration-agent", "klusterlet-work-agent"] {
        let d = deployments
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_team_label(&d, "it-loop-team");
        let container = d.spec.unwrap().template.spec.unwrap().containers[0].clone();
        let args = container.args.clone().unwrap();
        assert!(
            args.contains(&"--spoke-cluster-name=it-loop".to_string()),
            "{args:?}"
        );
        let resources = container.resources.unwrap();
        assert_eq!(resources.limits.unwrap()["memory"].0, "800Mi", "{name}");
        assert_eq!(resources.requests.unwrap()["cpu"].0, "100m", "{name}");
    }
    assert_placement_and_rates_reach_the_agents(&managed).await;
    let roles: Api<ClusterRole> = Api::all(managed.clone());
    assert_agent_roles(&roles).await;
    let work_sa = format!("system:serviceaccount:{AGENT_NS}:klusterlet-work-sa");
    assert_work_role_aggregates(&managed, &work_sa).await;
    let crds: Api<CustomResourceDefinition> = Api::all(managed.clone());
    for crd in MANAGED_CRDS {
        assert!(exists(&crds, crd).await, "{crd} missing");
    }
    assert!(
        k.finalizers()
            .contains(&"operator.open-cluster-management.io/klusterlet-cleanup".to_string())
    );
    let hub_connection = condition(&k, "HubConnectionDegraded");
    assert_eq!(
        (
            hub_connection.status.as_str(),
            hub_connection.reason.as_str()
        ),
        (
            "True",
            "BootstrapSecretFunctional,HubKubeConfigSecretMissing"
        )
    );
    // No pod ever runs on this control plane: the agents are wanted but unavailable.
    assert_eq!(
        condition(&k, "RegistrationDesiredDegraded").reason,
        "UnavailablePods"
    );
    assert_eq!(condition(&k, "Available").status, "False");
    assert!(operator::is_running(&managed).await.unwrap());
    the_former_layouts_agents_go(&managed).await;

    // unjoin while the loop runs: the loop's finalizer does the cleanup.
    let start = Instant::now();
    run_blocking(unjoin(&common::env().managed, "it-loop"))
        .await
        .success();
    assert!(start.elapsed() < Duration::from_secs(120));
    assert!(!exists(&crds, KLUSTERLET_CRD).await);
    for crd in MANAGED_CRDS {
        assert!(!exists(&crds, crd).await, "{crd} left behind");
    }
    assert!(
        !exists(
            &roles,
            "open-cluster-management:klusterlet-registration:agent"
        )
        .await
    );
    let namespaces: Api<Namespace> = Api::all(managed.clone());
    assert!(!exists(&namespaces, AGENT_NS).await);
    assert!(!exists(&namespaces, "open-cluster-management").await);
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unjoin_without_an_operator_cleans_up_itself() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    join(&hub, "it-orphan", &["--ca-cert-hash", &hub.hash])
        .assert()
        .success();
    // Without --enable-sync-labels, the Klusterlet's labels stay its own.
    label_klusterlet(&managed, "klusterlet", "it-orphan-team").await;
    // The loop runs, puts its finalizer on, and stops: nobody will remove the finalizer now.
    let (stop, task) = spawn_loop(managed.clone());
    applied(&managed, "klusterlet").await;
    let agent = Api::<Deployment>::namespaced(managed.clone(), AGENT_NS)
        .get("klusterlet-registration-agent")
        .await
        .unwrap();
    assert!(!agent.labels().contains_key("team"), "{:?}", agent.labels());
    stop.cancel();
    task.await.unwrap().unwrap();
    assert!(
        !operator::is_running(&managed).await.unwrap(),
        "the lease outlived the loop"
    );

    let start = Instant::now();
    run_blocking(unjoin(&common::env().managed, "it-orphan"))
        .await
        .success();
    assert!(start.elapsed() < Duration::from_secs(120));
    assert_nothing_joined(&managed).await;
    let deployments: Api<Deployment> = Api::namespaced(managed.clone(), AGENT_NS);
    assert!(!exists(&deployments, "klusterlet-registration-agent").await);
}

/// Whether `client`'s identity may `verb` `resource` in `namespace` (a SelfSubjectAccessReview).
async fn may(client: &Client, verb: &str, resource: &str, namespace: &str) -> bool {
    use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
    let review: SelfSubjectAccessReview = serde_json::from_value(serde_json::json!({
        "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}}
    }))
    .unwrap();
    Api::<SelfSubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .is_some_and(|s| s.allowed)
}

/// Hosted mode: each agent mounts a kubeconfig of its own ServiceAccount on the managed cluster
/// (upstream's Secret names), never the user's admin one; its token authenticates there as that
/// account, lives 8640 hours, and a second pass of the loop leaves it as it is.
async fn agents_get_their_own_kubeconfigs(
    management: &Client,
    deployments: &Api<Deployment>,
    klusterlet: &str,
    server: &str,
) {
    let secrets: Api<Secret> = Api::namespaced(management.clone(), klusterlet);
    for (agent, secret) in [
        ("registration", "external-managed-kubeconfig-registration"),
        ("work", "external-managed-kubeconfig-work"),
    ] {
        let s = secrets.get(secret).await.unwrap();
        let data = s.data.clone().unwrap();
        let text = |k: &str| String::from_utf8(data[k].0.clone()).unwrap();
        let kubeconfig = text("kubeconfig");
        assert!(kubeconfig.contains(server), "{kubeconfig}");
        assert!(
            kubeconfig.contains("tokenFile: /spoke/config/token"),
            "{kubeconfig}"
        );
        let with_token = kubeconfig.replace(
            "tokenFile: /spoke/config/token",
            &format!("token: {}", text("token")),
        );
        let client = common::client_from_yaml(&with_token).await;
        let account = format!("{klusterlet}-{agent}-sa");
        let user = format!(
            "system:serviceaccount:{}:{account}",
            text("serviceaccount_namespace")
        );
        assert_eq!(common::whoami(&client).await.unwrap(), user);
        if agent == "registration" {
            // An add-on's hub credential goes into its namespace on the managed cluster, which
            // the registration agent writes from the management cluster (upstream's managed-side
            // `…-registration:addon-management` role).
            assert!(
                may(&client, "create", "secrets", "some-addon-namespace").await,
                "{user} may not write an add-on's secret on the managed cluster"
            );
        }
        if agent == "work" {
            // The aggregate role grants a new kind to that identity, in Hosted mode too.
            assert_work_role_aggregates(&common::managed().await, &user).await;
        }
        let expires: k8s_openapi::jiff::Timestamp = text("expiration").parse().unwrap();
        let lifetime = expires.duration_since(k8s_openapi::jiff::Timestamp::now());
        assert!(
            lifetime.as_hours() > 8600 && lifetime.as_hours() <= 8640,
            "{lifetime:?}"
        );
        let pod = deployments
            .get(&format!("{klusterlet}-{agent}-agent"))
            .await
            .unwrap()
            .spec
            .unwrap()
            .template
            .spec
            .unwrap();
        let mounted = common::mounted_secrets(&pod);
        assert!(mounted.contains(&secret.to_string()), "{mounted:?}");
        assert!(
            !mounted.contains(&"external-managed-kubeconfig".to_string()),
            "{mounted:?}"
        );
    }
    // Idempotent: another pass writes nothing while the tokens are fresh.
    let k = Api::<Klusterlet>::all(management.clone())
        .get(klusterlet)
        .await
        .unwrap();
    let v = operator::validate::validate(&k).unwrap();
    let deployed =
        operator::desired::service_account::deployed_agents(&v, operator::InProcess::default());
    let external = secrets.get("external-managed-kubeconfig").await.unwrap();
    let text = String::from_utf8(external.data.unwrap()["kubeconfig"].0.clone()).unwrap();
    let cluster =
        operator::managed_kubeconfig::ManagedCluster::from_kubeconfig(&text, "test").unwrap();
    let managed = common::managed().await;
    let written = operator::managed_kubeconfig::sync(management, &managed, &v, &deployed, &cluster)
        .await
        .unwrap();
    assert_eq!(written, 0, "fresh tokens rewritten");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosted_mode_runs_the_agents_on_the_management_cluster() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    // The hub doubles as the management cluster: keep other hub tests out meanwhile.
    let _h = common::HUB_SINGLETON.lock().await;
    let management = common::hub().await;
    reset(&management).await;
    let env = common::env();
    // Upstream's --force-internal-endpoint-lookup-managed needs the managed cluster's
    // cluster-info: without it, refused before anything is applied.
    let hosted_join = || {
        let mut cmd = common::clusteradm();
        cmd.args([
            "join",
            "--mode",
            "hosted",
            "--hub-token",
            &hub.token,
            "--hub-apiserver",
            &hub.server,
            "--ca-cert-hash",
            &hub.hash,
            "--cluster-name",
            "it-hosted",
            "--force-internal-endpoint-lookup-managed",
        ])
        .arg("--managed-cluster-kubeconfig")
        .arg(&env.managed)
        .arg("--kubeconfig")
        .arg(&env.hub);
        cmd
    };
    let out = run_blocking(hosted_join()).await.code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("no kube-public/cluster-info naming its API server"),
        "{err}"
    );
    // With it, the agents reach the managed cluster where it says (`localhost`, which its
    // certificate names, instead of the kubeconfig's 127.0.0.1).
    let (server, ca) = common::server_and_ca(&env.managed);
    let internal = server.replace("127.0.0.1", "localhost");
    assert_ne!(internal, server);
    let ca_pem = String::from_utf8(
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &ca).unwrap(),
    )
    .unwrap();
    clusteradm::install::cluster_info::ensure(&managed, &internal, &ca_pem)
        .await
        .unwrap();
    run_blocking(hosted_join()).await.success();
    let klusterlets: Api<Klusterlet> = Api::all(management.clone());
    let k = klusterlets
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|k| k.spec.cluster_name.as_deref() == Some("it-hosted"))
        .expect("a hosted Klusterlet on the management cluster");
    let name = k.name_any();
    assert!(name.starts_with("klusterlet-hosted-"), "{name}");
    let secrets: Api<Secret> = Api::namespaced(management.clone(), &name);
    assert!(exists(&secrets, "bootstrap-hub-kubeconfig").await);
    // The agents reach the managed cluster where its cluster-info says (upstream's
    // --force-internal-endpoint-lookup-managed).
    let external = secrets.get("external-managed-kubeconfig").await.unwrap();
    let text = String::from_utf8(external.data.unwrap()["kubeconfig"].0.clone()).unwrap();
    let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    assert_eq!(
        kc.clusters[0].cluster.as_ref().unwrap().server.as_deref(),
        Some(internal.as_str())
    );

    let (stop, task) = spawn_loop(management.clone());
    applied(&management, &name).await;
    let deployments: Api<Deployment> = Api::namespaced(management.clone(), &name);
    assert!(exists(&deployments, &format!("{name}-registration-agent")).await);
    assert!(exists(&deployments, &format!("{name}-work-agent")).await);
    agents_get_their_own_kubeconfigs(&management, &deployments, &name, &internal).await;
    the_former_managed_namespace_goes(&management, &managed, &name).await;
    let managed_roles: Api<ClusterRole> = Api::all(managed.clone());
    let role = format!("open-cluster-management:{name}-registration:agent");
    assert!(
        exists(&managed_roles, &role).await,
        "the agents' RBAC belongs on the managed cluster"
    );
    assert!(!exists(&Api::<ClusterRole>::all(management.clone()), &role).await);
    let managed_ns: Api<Namespace> = Api::all(managed.clone());
    assert!(
        !exists(&managed_ns, &name).await,
        "the agent namespace belongs on the management cluster"
    );

    run_blocking(unjoin(&env.hub, "it-hosted")).await.success();
    let hub_ns: Api<Namespace> = Api::all(management.clone());
    assert!(!exists(&hub_ns, &name).await);
    assert!(
        exists(&hub_ns, "open-cluster-management").await,
        "the hub's operator namespace must stay"
    );
    assert!(!exists(&managed_roles, &role).await);
    stop.cancel();
    task.await.unwrap().unwrap();
    forget_cluster_info(&managed).await;
}

/// Removes the managed cluster's kube-public/cluster-info, which a hosted join's lookup needs.
async fn forget_cluster_info(managed: &Client) {
    Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(managed.clone(), "kube-public")
        .delete("cluster-info", &kube::api::DeleteParams::default())
        .await
        .unwrap();
}

/// A Hosted Klusterlet's `spec.namespace` changed: its agents' former namespace on the managed
/// cluster goes once they are applied in the new one (upstream's e2e spec "Update klusterlet CR
/// namespace", in Hosted mode); the agents' namespace on the management cluster stays.
async fn the_former_managed_namespace_goes(management: &Client, managed: &Client, name: &str) {
    use clusteradm::operator::klusterlet::desired::KLUSTERLET_LABEL;
    let namespaces: Api<Namespace> = Api::all(managed.clone());
    let labelled = ListParams::default().labels(&format!("{KLUSTERLET_LABEL}={name}"));
    let former: Vec<String> = namespaces
        .list_metadata(&labelled)
        .await
        .unwrap()
        .items
        .iter()
        .map(kube::ResourceExt::name_any)
        .collect();
    assert_eq!(former.len(), 1, "{former:?}");
    let another = "open-cluster-management-agent-another".to_owned();
    let klusterlets: Api<Klusterlet> = Api::all(management.clone());
    klusterlets
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"namespace": another}})),
        )
        .await
        .unwrap();
    common::eventually(
        "the agents' namespace moved on the managed cluster",
        Duration::from_secs(60),
        || {
            let namespaces = namespaces.clone();
            let (former, another) = (former[0].clone(), another.clone());
            async move {
                let now = namespaces.get_opt(&another).await.ok()??;
                let gone = namespaces
                    .get_opt(&former)
                    .await
                    .ok()?
                    .is_none_or(|n| n.metadata.deletion_timestamp.is_some());
                (now.metadata.deletion_timestamp.is_none() && gone).then_some(())
            }
        },
    )
    .await;
    assert!(
        exists(&Api::<Namespace>::all(management.clone()), name).await,
        "the agents' namespace on the management cluster stays"
    );
}

/// A Hosted Klusterlet says whether the operator can build the managed cluster's clients
/// (upstream's `ReadyToApply`, and then its hosted finalizer); removed after its external managed
/// kubeconfig, it waits for that Secret; once it is back but its managed cluster cannot be reached
/// (a destroyed cluster), the operator annotates when it first failed and, five minutes on, lets it
/// go with its management side only (upstream's e2e specs "Delete klusterlet CR in Hosted mode").
#[tokio::test]
async fn a_hosted_klusterlet_of_a_destroyed_cluster_goes_after_the_eviction_grace() {
    use clusteradm::operator::klusterlet::cleanup::EVICTION_ANNOTATION;
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let _h = common::HUB_SINGLETON.lock().await;
    let management = common::hub().await;
    common::install_crds(
        &management,
        &[clusteradm::api::operator_crd_klusterlet()],
        Duration::from_secs(60),
    )
    .await;
    let namespaces: Api<Namespace> = Api::all(management.clone());
    let name = common::unique("it-evict");
    for ns in ["open-cluster-management", name.as_str()] {
        let body = serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).unwrap();
        let _ = namespaces.create(&PostParams::default(), &body).await;
    }
    let klusterlets: Api<Klusterlet> = Api::all(management.clone());
    let k: Klusterlet = serde_json::from_value(serde_json::json!({
        "apiVersion": "operator.open-cluster-management.io/v1", "kind": "Klusterlet",
        "metadata": {"name": name},
        "spec": {"clusterName": name, "deployOption": {"mode": "Hosted"}},
    }))
    .unwrap();
    klusterlets
        .create(&PostParams::default(), &k)
        .await
        .unwrap();
    let (stop, task) = spawn_loop(management.clone());
    let condition = |reason: &'static str| {
        let klusterlets = klusterlets.clone();
        let name = name.clone();
        move || {
            let (klusterlets, name) = (klusterlets.clone(), name.clone());
            async move {
                let k = klusterlets.get(&name).await.ok()?;
                let list = k.status.map(|s| s.conditions).unwrap_or_default();
                let c = clusteradm::api::conditions::find(&list, "ReadyToApply")?;
                (c.reason == reason).then_some(())
            }
        }
    };
    let wait = Duration::from_secs(60);
    common::eventually(
        "ReadyToApply False",
        wait,
        condition("KlusterletPrepareFailed"),
    )
    .await;
    give_an_unreachable_cluster(&management, &name).await;
    common::eventually("ReadyToApply True", wait, condition("KlusterletPrepared")).await;
    removal_waits_for_the_secret(&management, &name).await;
    give_an_unreachable_cluster(&management, &name).await;
    let since = common::eventually("the eviction annotation", wait, || {
        let (klusterlets, name) = (klusterlets.clone(), name.clone());
        async move {
            let k = klusterlets.get(&name).await.ok()?;
            k.annotations().get(EVICTION_ANNOTATION).cloned()
        }
    })
    .await;
    assert!(
        since.parse::<k8s_openapi::jiff::Timestamp>().is_ok(),
        "{since}"
    );
    // Still there within the grace period: the removal is retried.
    assert!(klusterlets.get_opt(&name).await.unwrap().is_some());
    // Six minutes ago, as upstream's spec sets it: the Klusterlet goes, its namespace with it.
    let earlier =
        k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_mins(6);
    let earlier = k8s_openapi::jiff::Timestamp::from_second(earlier.as_second()).unwrap();
    let patch = serde_json::json!({"metadata": {"annotations": {EVICTION_ANNOTATION: earlier.to_string()}}});
    klusterlets
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    common::eventually("the Klusterlet gone", Duration::from_secs(120), || {
        let (klusterlets, name) = (klusterlets.clone(), name.clone());
        async move {
            klusterlets
                .get_opt(&name)
                .await
                .ok()?
                .is_none()
                .then_some(())
        }
    })
    .await;
    let agents_ns = namespaces.get_opt(&name).await.unwrap();
    assert!(
        agents_ns.is_none_or(|n| n.metadata.deletion_timestamp.is_some()),
        "the agents' namespace on the management cluster goes"
    );
    stop.cancel();
    task.await.unwrap().unwrap();
}

/// Upstream's spec: the Secret goes first, then the Klusterlet. Its removal waits for the Secret
/// (its hosted finalizer says what was applied on the managed cluster is still to be removed).
async fn removal_waits_for_the_secret(management: &Client, name: &str) {
    use clusteradm::operator::klusterlet::cleanup::EVICTION_ANNOTATION;
    let klusterlets: Api<Klusterlet> = Api::all(management.clone());
    let k = klusterlets.get(name).await.unwrap();
    assert!(
        k.finalizers()
            .iter()
            .any(|f| f == clusteradm::api::operator::KLUSTERLET_HOSTED_FINALIZER),
        "the hosted finalizer marks a Klusterlet that reached its managed cluster: {:?}",
        k.finalizers()
    );
    Api::<Secret>::namespaced(management.clone(), name)
        .delete(
            "external-managed-kubeconfig",
            &kube::api::DeleteParams::default(),
        )
        .await
        .unwrap();
    klusterlets
        .delete(name, &kube::api::DeleteParams::default())
        .await
        .unwrap();
    common::never(
        "the Klusterlet gone or annotated",
        Duration::from_secs(8),
        || {
            let (klusterlets, name) = (klusterlets.clone(), name.to_owned());
            async move {
                match klusterlets.get_opt(&name).await {
                    Ok(Some(k)) => k.annotations().get(EVICTION_ANNOTATION).cloned(),
                    _ => Some("gone".to_owned()),
                }
            }
        },
    )
    .await;
}

/// The external managed kubeconfig of Klusterlet `name`: a managed cluster that no longer
/// answers (nothing listens on port 1).
async fn give_an_unreachable_cluster(management: &Client, name: &str) {
    let unreachable = common::kubeconfig_with_token(&common::env().managed, "t").replace(
        &common::server_and_ca(&common::env().managed).0,
        "https://127.0.0.1:1",
    );
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "external-managed-kubeconfig", "namespace": name},
        "stringData": {"kubeconfig": unreachable},
    }))
    .unwrap();
    Api::<Secret>::namespaced(management.clone(), name)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}
