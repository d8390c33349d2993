//! An add-on written on the Rust add-on framework (`crates/addon-framework`), its example
//! `status-report` (`crates/status-report`): its manager runs beside the hub as its own process
//! would (here a task of the test, with the hub's admin credential), deploys the agent to a
//! joined cluster, registers its identity and signs its certificate with the add-on's own CA;
//! the agent's report over HTTPS, authenticated by that certificate alone, makes the add-on
//! Available on its cluster. A caller holding a certificate of another CA is refused.
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};

use clusteradm::api::addon::{
    ClusterManagementAddOn, DEFAULT_INSTALL_NAMESPACE, ManagedClusterAddOn,
};
use clusteradm::api::work::ManifestWork;
use ocm_addon_framework::{CertKey, signer};

use super::template::{condition, supervised_agent};
use super::{client_of, only_configmaps_in, succeeds};
use crate::common;
use crate::registration::fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_addon_deploys_registers_and_hears_its_agent_over_https() {
    let (agent, agent_shutdown) = supervised_agent("it-fw").await;
    let c = agent.cluster().to_string();
    let (hub, managed) = (common::hub().await, common::managed().await);
    let name = common::unique("it-status");

    let (url, shutdown, manager_task) = start_manager(&hub, &name).await;
    let enabled = std::time::Instant::now();
    succeeds(&["addon", "enable", "--names", &name, "--clusters", &c]).await;

    // Deployed: the agent's manifests in the add-on's work, applied on the cluster.
    let addons = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c);
    let mca = fixture::wait(
        addons.clone(),
        &name,
        "ManifestApplied",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "ManifestApplied").is_some_and(|c| c.status == "True")
        },
    )
    .await;
    let status = mca.status.unwrap();
    assert_eq!(status.namespace.as_deref(), Some(DEFAULT_INSTALL_NAMESPACE));
    assert_eq!(
        serde_json::to_value(&status.health_check).unwrap()["mode"],
        "Customized"
    );
    assert_eq!(status.registrations.len(), 1, "{:?}", status.registrations);
    let work = Api::<ManifestWork>::namespaced(hub.clone(), &c)
        .get(&format!("addon-{name}-deploy-0"))
        .await
        .unwrap();
    assert_eq!(work.spec.workload.manifests.len(), 3);

    // Registered: the cluster's agent holds a certificate of the add-on's CA, for its cluster.
    let secret = format!("{name}-open-cluster-management.io-{name}-client-cert");
    let stored = fixture::wait(
        Api::<Secret>::namespaced(managed.clone(), DEFAULT_INSTALL_NAMESPACE),
        &secret,
        "the agent's certificate, signed by the add-on's manager",
        |s: Option<&Secret>| s.is_some(),
    )
    .await;
    let field = |k: &str| clusteradm::runtime::secrets::field(&stored, k).unwrap();
    let client = CertKey {
        cert: field("tls.crt"),
        key: field("tls.key"),
    };
    let der = clusteradm::pki::certificates_der(client.cert.as_bytes())
        .unwrap()
        .remove(0);
    assert_eq!(
        ocm_addon_framework::identity::cluster_of(&der, &name).as_deref(),
        Some(c.as_str())
    );
    let ca = signer::load_or_create(&hub, "default", &format!("{name}-ca"))
        .await
        .unwrap();

    // Heard: the agent's report makes the add-on Available there.
    // Retried: a report is refused, or times out, while the manager's endpoint is not serving yet.
    let tls = signer::client_config(&ca.cert, &client).unwrap();
    common::eventually("the report taken", Duration::from_secs(90), || {
        let tls = tls.clone();
        let url = url.clone();
        async move {
            status_report::agent::report(&url, tls, "v1.2.3-it")
                .await
                .map_err(|e| eprintln!("report: {e:#}"))
                .ok()
        }
    })
    .await;
    fixture::wait(
        addons.clone(),
        &name,
        "Available by the agent's report",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "Available").is_some_and(|c| {
                c.status == "True"
                    && c.reason == "StatusReported"
                    && c.message.contains("v1.2.3-it")
            })
        },
    )
    .await;
    eprintln!(
        "addon enable → Available by report: {} ms",
        enabled.elapsed().as_millis()
    );

    strangers_are_refused(&url, &ca).await;

    // Disabled: the work goes with the add-on, and the agent's identity is not issued again.
    succeeds(&["addon", "disable", "--names", &name, "--clusters", &c]).await;
    fixture::wait_deleted(
        Api::<ManifestWork>::namespaced(hub.clone(), &c),
        &work.metadata.name.clone().unwrap(),
        &work.metadata.uid.clone().unwrap(),
    )
    .await;
    not_issued_once_disabled(&agent, &c, &name).await;
    stop(&shutdown, manager_task).await;
    agent_shutdown.cancel();
    let _ = Api::<ClusterManagementAddOn>::all(hub.clone())
        .delete(&name, &DeleteParams::default())
        .await;
    let _ = Api::<Secret>::namespaced(hub, "default")
        .delete(&format!("{name}-ca"), &DeleteParams::default())
        .await;
}

/// The example's manager for add-on `name`, serving on loopback, and its ClusterManagementAddOn:
/// its URL, its shutdown and its task.
async fn start_manager(
    hub: &kube::Client,
    name: &str,
) -> (
    String,
    ocm_addon_framework::Shutdown,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let opts = status_report::ManagerOptions {
        name: name.to_owned(),
        namespace: "default".into(),
        image: "status-report:test".into(),
        url: url.clone(),
        dns_names: vec!["127.0.0.1".into()],
    };
    let shutdown = ocm_addon_framework::Shutdown::new();
    let task = tokio::spawn(status_report::run_manager(
        hub.clone(),
        opts,
        listener,
        shutdown.clone(),
    ));
    create_cluster_management_addon(hub, name).await;
    (url, shutdown, task)
}

/// A caller of the manager's endpoint with a certificate of another CA is refused in the TLS
/// handshake; one with a certificate of the add-on's CA that names no cluster, by a 403.
async fn strangers_are_refused(url: &str, ca: &CertKey) {
    use clusteradm::runtime::pki::{now_seconds, webhook};
    let client_of = |signer: &CertKey| {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::default();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "someone");
        let request = params.serialize_request(&key).unwrap().pem().unwrap();
        CertKey {
            cert: webhook::sign_client_request(&request, signer, now_seconds()).unwrap(),
            key: key.serialize_pem(),
        }
    };
    let stranger = webhook::issue_signer(now_seconds()).unwrap();
    let tls = signer::client_config(&ca.cert, &client_of(&stranger)).unwrap();
    let refused = status_report::agent::report(url, tls, "x").await;
    assert!(refused.is_err(), "a certificate of another CA was taken");
    let tls = signer::client_config(&ca.cert, &client_of(ca)).unwrap();
    let refused = status_report::agent::report(url, tls, "x").await;
    let refusal = format!(
        "{:#}",
        refused.expect_err("a certificate naming no cluster was taken")
    );
    assert!(refusal.contains("403"), "{refusal}");
}

/// An add-on whose agent reads ConfigMaps of its cluster's namespace on the hub.
struct Reader {
    name: String,
    role: String,
}

impl ocm_addon_framework::AgentAddon for Reader {
    fn name(&self) -> &str {
        &self.name
    }

    fn manifests(
        &self,
        _: &ocm_addon_framework::api::ManagedCluster,
        _: &ManagedClusterAddOn,
    ) -> anyhow::Result<Vec<serde_json::Value>> {
        Ok(vec![
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": self.name, "namespace": "default"}, "data": {"a": "b"}}),
        ])
    }

    fn registration(&self) -> ocm_addon_framework::Registration {
        ocm_addon_framework::Registration {
            hub_client: Some(ocm_addon_framework::HubClient {
                cluster_role: Some(self.role.clone()),
            }),
            ..Default::default()
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_addons_hub_client_holds_its_role_in_its_cluster_namespace_only() {
    use k8s_openapi::api::rbac::v1::{ClusterRole, RoleBinding};
    let (agent, agent_shutdown) = supervised_agent("it-fw-client").await;
    let c = agent.cluster().to_string();
    let (hub, managed) = (common::hub().await, common::managed().await);
    let name = common::unique("it-reader");
    let role: ClusterRole = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
    }))
    .unwrap();
    Api::<ClusterRole>::all(hub.clone())
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    create_cluster_management_addon(&hub, &name).await;
    let shutdown = ocm_addon_framework::Shutdown::new();
    let addon = Reader {
        name: name.clone(),
        role: name.clone(),
    };
    let manager_task =
        tokio::spawn(ocm_addon_framework::Manager::new(hub.clone(), addon).run(shutdown.clone()));
    succeeds(&["addon", "enable", "--names", &name, "--clusters", &c]).await;

    let binding = fixture::wait(
        Api::<RoleBinding>::namespaced(hub.clone(), &c),
        &format!("open-cluster-management:{name}:agent"),
        "the agent's RoleBinding in its cluster's namespace",
        |b: Option<&RoleBinding>| b.is_some(),
    )
    .await;
    assert_eq!(binding.role_ref.name, name);
    let subjects = binding.subjects.unwrap();
    assert_eq!(
        subjects[0].name,
        format!("system:open-cluster-management:cluster:{c}:addon:{name}")
    );
    let secret = fixture::wait(
        Api::<Secret>::namespaced(managed.clone(), DEFAULT_INSTALL_NAMESPACE),
        &format!("{name}-hub-kubeconfig"),
        "the agent's hub kubeconfig",
        |s: Option<&Secret>| s.is_some(),
    )
    .await;
    only_configmaps_in(&client_of(&secret).await, &c).await;

    succeeds(&["addon", "disable", "--names", &name, "--clusters", &c]).await;
    fixture::wait_deleted(
        Api::<RoleBinding>::namespaced(hub.clone(), &c),
        &binding.metadata.name.clone().unwrap(),
        &binding.metadata.uid.clone().unwrap(),
    )
    .await;
    stop(&shutdown, manager_task).await;
    agent_shutdown.cancel();
    let dp = DeleteParams::default();
    let _ = Api::<ClusterManagementAddOn>::all(hub.clone())
        .delete(&name, &dp)
        .await;
    let _ = Api::<ClusterRole>::all(hub).delete(&name, &dp).await;
}

/// A CSR the cluster's agent sends for add-on `name`'s own signer once the add-on is disabled
/// there stays pending: the manager approves only for clusters the add-on is enabled on.
async fn not_issued_once_disabled(agent: &fixture::Agent, c: &str, name: &str) {
    use clusteradm::runtime::identity::addon::{default_group, default_user};
    use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
    let me = fixture::cert_client(&agent.hub_secret().await).await;
    let csr = super::send_csr(
        &me,
        c,
        name,
        default_user(c, name),
        vec![default_group(c, name)],
        &format!("open-cluster-management.io/{name}"),
    )
    .await;
    let csrs = Api::<CertificateSigningRequest>::all(common::hub().await);
    common::never(
        "a disabled add-on's CSR approved",
        Duration::from_secs(5),
        || async {
            let status = csrs.get(&csr).await.unwrap().status?;
            status.conditions.filter(|c| !c.is_empty())
        },
    )
    .await;
}

/// The ClusterManagementAddOn `name`, which `addon enable` needs.
async fn create_cluster_management_addon(hub: &kube::Client, name: &str) {
    let cma: ClusterManagementAddOn = serde_json::from_value(serde_json::json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
        "metadata": {"name": name}, "spec": {},
    }))
    .unwrap();
    Api::<ClusterManagementAddOn>::all(hub.clone())
        .create(&PostParams::default(), &cma)
        .await
        .unwrap();
}

/// Stops a manager started by the test: it must end, without error, within 10 s.
async fn stop(
    shutdown: &ocm_addon_framework::Shutdown,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the manager stops")
        .unwrap()
        .unwrap();
}

/// An add-on that may be Hosted (upstream's `helloworld_hosted`): its agent's Deployment-like
/// ConfigMap goes to the hosting cluster, its CRD-like one stays on the managed cluster.
struct HostedHello {
    name: String,
}

impl ocm_addon_framework::AgentAddon for HostedHello {
    fn name(&self) -> &str {
        &self.name
    }

    fn manifests(
        &self,
        _: &ocm_addon_framework::api::ManagedCluster,
        _: &ManagedClusterAddOn,
    ) -> anyhow::Result<Vec<serde_json::Value>> {
        let cm = |name: &str, location: &str| {
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default",
                    "annotations": {"addon.open-cluster-management.io/hosted-manifest-location": location}}})
        };
        Ok(vec![
            cm("on-hosting", "hosting"),
            cm("on-managed", "managed"),
        ])
    }

    fn hosted_mode(&self) -> bool {
        true
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_rust_addon_deploys_to_its_hosting_cluster_and_goes_only_with_that_work() {
    use clusteradm::api::addon::{HOSTING_CLUSTER_ANNOTATION, HOSTING_MANIFEST_FINALIZER};
    use kube::ResourceExt as _;
    crate::registration::fixture::hub().await;
    let hub = common::hub().await;
    let c = super::clusters("it-fw-hosted").await;
    let (managed, hosting) = (&c[0], &c[1]);
    let name = common::unique("it-fw-hosted-addon");
    create_cluster_management_addon(&hub, &name).await;
    let shutdown = ocm_addon_framework::Shutdown::new();
    let task = tokio::spawn(
        ocm_addon_framework::Manager::new(hub.clone(), HostedHello { name: name.clone() })
            .run(shutdown.clone()),
    );
    let annotate = format!("{HOSTING_CLUSTER_ANNOTATION}={hosting}");
    succeeds(&[
        "addon",
        "enable",
        "--names",
        &name,
        "--clusters",
        managed,
        "--annotate",
        &annotate,
    ])
    .await;

    let names = super::hosted::names;
    let hosting_name = format!("addon-{name}-deploy-hosting-{managed}-0");
    let hosting_works = Api::<ManifestWork>::namespaced(hub.clone(), hosting);
    let hosting_work = fixture::wait(
        hosting_works.clone(),
        &hosting_name,
        "the hosting work",
        |w: Option<&ManifestWork>| w.is_some(),
    )
    .await;
    assert_eq!(names(&hosting_work), ["on-hosting"]);
    assert_eq!(
        hosting_work.labels()["addon.open-cluster-management.io/namespace"],
        *managed
    );
    assert!(hosting_work.owner_references().is_empty());
    let managed_work = fixture::wait(
        Api::<ManifestWork>::namespaced(hub.clone(), managed),
        &format!("addon-{name}-deploy-0"),
        "the managed work",
        |w: Option<&ManifestWork>| w.is_some(),
    )
    .await;
    assert_eq!(names(&managed_work), ["on-managed"]);
    let addons = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), managed);
    let mca = fixture::wait(
        addons.clone(),
        &name,
        "HostingClusterValidity True",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "HostingClusterValidity").is_some_and(|c| c.status == "True")
        },
    )
    .await;
    assert!(
        mca.finalizers()
            .iter()
            .any(|f| f == HOSTING_MANIFEST_FINALIZER)
    );

    // Disabled: the add-on goes only once its hosting work is gone.
    succeeds(&["addon", "disable", "--names", &name, "--clusters", managed]).await;
    fixture::wait_deleted(hosting_works, &hosting_name, &hosting_work.uid().unwrap()).await;
    fixture::wait_deleted(addons, &name, &mca.uid().unwrap()).await;
    stop(&shutdown, task).await;
    let _ = Api::<ClusterManagementAddOn>::all(hub.clone())
        .delete(&name, &DeleteParams::default())
        .await;
    super::cleanup(&name, &c).await;
}
