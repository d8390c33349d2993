//! The Klusterlet operator loop in this process, `unjoin` with and without it, and Hosted mode.
use std::time::{Duration, Instant};

use clusteradm::api::operator::Klusterlet;
use clusteradm::operator::klusterlet as operator;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams};
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
    let tx = clusteradm::runtime::Shutdown::new();
    let opts = operator::Options {
        cleanup_timeout: Duration::from_secs(60),
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

/// The CRDs the klusterlet installs on the managed cluster.
const MANAGED_CRDS: [&str; 2] = [
    "appliedmanifestworks.work.open-cluster-management.io",
    "clusterclaims.cluster.open-cluster-management.io",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_installs_the_agents_and_unjoin_removes_everything() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub = hub(false).await;
    // Upstream's resource flags: on the Klusterlet, and from it on every agent container.
    join(
        &hub,
        "it-loop",
        &[
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
    let (stop, task) = spawn_loop(managed.clone());

    let k = applied(&managed, "klusterlet").await;
    let deployments: Api<Deployment> = Api::namespaced(managed.clone(), AGENT_NS);
    for name in ["klusterlet-registration-agent", "klusterlet-work-agent"] {
        let d = deployments
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
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
    let roles: Api<ClusterRole> = Api::all(managed.clone());
    for role in ["registration:agent", "work:agent", "work:execution"] {
        assert!(
            exists(
                &roles,
                &format!("open-cluster-management:klusterlet-{role}")
            )
            .await,
            "{role}"
        );
    }
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
    // The loop runs, puts its finalizer on, and stops: nobody will remove the finalizer now.
    let (stop, task) = spawn_loop(managed.clone());
    applied(&managed, "klusterlet").await;
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
    Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(managed.clone(), "kube-public")
        .delete("cluster-info", &kube::api::DeleteParams::default())
        .await
        .unwrap();
}
