//! A hub lost and rebuilt from a backup: three clusters with their agents, works, a cluster set
//! with a binding and a placement, and a template add-on; `clusteradm backup`; the hub's etcd
//! wiped (the API server restarted on nothing); `clusteradm init` and `clusteradm restore`. Every
//! cluster is Available again with no new join, accept or CSR, every work applied, the add-ons
//! Available, the placement deciding again, and nothing on the managed cluster deleted or made
//! again (the UIDs of what the works applied compared). It wipes the shared hub, so it lives in
//! this serial binary.
use std::time::{Duration, Instant};

use clusteradm::agent::work::WorkAgentOptions;
use clusteradm::api::addon::ManagedClusterAddOn;
use clusteradm::api::cluster::ManagedCluster;
use clusteradm::api::work::ManifestWork;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::common;
use crate::control_plane;
use crate::registration_fixture::{self as fixture, wait_condition};

const CLUSTERS: usize = 3;
const WAIT: Duration = Duration::from_secs(120);

/// One cluster: its registration agent, and a work agent with its hub certificate.
struct Cluster {
    registration: fixture::Agent,
    work: clusteradm::runtime::Shutdown,
}

impl Cluster {
    fn name(&self) -> &str {
        self.registration.cluster()
    }
}

async fn join_one(managed: &kube::Client) -> Cluster {
    let registration = fixture::joined(fixture::options(managed.clone(), "it-restore")).await;
    let hub = fixture::cert_client(&registration.hub_secret().await).await;
    let (server, _) = common::server_and_ca(&common::env().hub);
    let cluster = registration.cluster().to_owned();
    let mut opts = WorkAgentOptions::new(
        hub,
        server,
        managed.clone(),
        &cluster,
        format!("{cluster}-work"),
    );
    opts.resync = Duration::from_secs(5);
    // Three clusters share the managed API server: their records must not share names.
    opts.applied_names = clusteradm::agent::work::AppliedNames::PerCluster;
    let work = clusteradm::runtime::Shutdown::new();
    tokio::spawn(clusteradm::agent::work::run(opts, work.clone()));
    Cluster { registration, work }
}

/// A work applying a namespace and a ConfigMap named after the cluster.
fn work_of(cluster: &str) -> ManifestWork {
    serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "restore-app", "namespace": cluster},
        "spec": {"workload": {"manifests": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("{cluster}-app")}},
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "app", "namespace": format!("{cluster}-app")}, "data": {"k": "v"}},
        ]}},
    }))
    .unwrap()
}

/// A template add-on judged by its work being applied, whose ConfigMap is named after the cluster.
fn addon_template(addon: &str) -> std::path::PathBuf {
    let text = format!(
        r"apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata:
  name: {addon}
  annotations:
    clusteradm-rs.io/health-prober: Work
spec:
  addonName: {addon}
  agentSpec:
    workload:
      manifests:
      - apiVersion: v1
        kind: ConfigMap
        metadata:
          name: '{addon}-{{{{CLUSTER_NAME}}}}'
          namespace: default
        data: {{k: v}}
"
    );
    common::temp_file("restore-addon.yaml", &text)
}

async fn clusteradm_ok(args: &[&str]) -> String {
    let mut cmd = common::clusteradm();
    cmd.args(args).arg("--kubeconfig").arg(common::env().hub);
    let out = fixture::run(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "clusteradm {args:?}: {stderr}");
    stderr
}

/// The UIDs of what the works and the add-ons applied on the managed cluster.
async fn applied_uids(managed: &kube::Client, clusters: &[Cluster], addon: &str) -> Vec<String> {
    let mut uids = Vec::new();
    for c in clusters {
        let name = c.name();
        let ns: Api<Namespace> = Api::all(managed.clone());
        uids.push(ns.get(&format!("{name}-app")).await.unwrap().uid().unwrap());
        let app: Api<ConfigMap> = Api::namespaced(managed.clone(), &format!("{name}-app"));
        uids.push(app.get("app").await.unwrap().uid().unwrap());
        let default: Api<ConfigMap> = Api::namespaced(managed.clone(), "default");
        uids.push(
            default
                .get(&format!("{addon}-{name}"))
                .await
                .unwrap()
                .uid()
                .unwrap(),
        );
    }
    uids
}

/// Waits until every cluster is Available, its work applied, its add-on Available, and the
/// placement decides all of them.
async fn all_running(
    hub: &kube::Client,
    clusters: &[Cluster],
    addon: &str,
    placement: (&str, &str),
) {
    for c in clusters {
        wait_condition(c.name(), "ManagedClusterConditionAvailable", "True").await;
        let works: Api<ManifestWork> = Api::namespaced(hub.clone(), c.name());
        fixture::wait(
            works,
            "restore-app",
            "the work applied",
            |w: Option<&ManifestWork>| {
                w.and_then(|w| w.status.as_ref()).is_some_and(|s| {
                    s.conditions
                        .iter()
                        .any(|c| c.type_ == "Applied" && c.status == "True")
                })
            },
        )
        .await;
        let addons: Api<ManagedClusterAddOn> = Api::namespaced(hub.clone(), c.name());
        fixture::wait(
            addons,
            addon,
            "the add-on applied and Available",
            // Its manifests applied: the `Work` prober, as upstream's, says Available at once.
            |a: Option<&ManagedClusterAddOn>| {
                let conditions = a.and_then(|a| a.status.as_ref()).map(|s| &s.conditions);
                let holds = |t: &str| {
                    conditions
                        .is_some_and(|cs| cs.iter().any(|c| c.type_ == t && c.status == "True"))
                };
                holds("ManifestApplied") && holds("Available")
            },
        )
        .await;
    }
    let decisions: Api<DynamicObject> = Api::namespaced_with(
        hub.clone(),
        placement.0,
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "cluster.open-cluster-management.io",
            "v1beta1",
            "PlacementDecision",
        )),
    );
    let selector = format!(
        "cluster.open-cluster-management.io/placement={}",
        placement.1
    );
    common::eventually("the placement deciding every cluster", WAIT, || {
        let (decisions, selector) = (decisions.clone(), selector.clone());
        async move {
            let list = decisions
                .list(&ListParams::default().labels(&selector))
                .await
                .ok()?;
            let n: usize = list
                .items
                .iter()
                .map(|d| d.data["status"]["decisions"].as_array().map_or(0, Vec::len))
                .sum();
            (n == CLUSTERS).then_some(())
        }
    })
    .await;
}

/// A set holding the clusters, bound to a namespace of its own with a placement of them all.
async fn set_and_placement(hub: &kube::Client, clusters: &[Cluster], set: &str) -> String {
    let apply = PatchParams::apply("it-restore");
    let resource = |kind: &str, version: &str| {
        kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "cluster.open-cluster-management.io",
            version,
            kind,
        ))
    };
    let sets: Api<DynamicObject> =
        Api::all_with(hub.clone(), &resource("ManagedClusterSet", "v1beta2"));
    let body: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
        "metadata": {"name": set}, "spec": {}}))
    .unwrap();
    sets.patch(set, &apply, &Patch::Apply(&body)).await.unwrap();
    let mcs: Api<ManagedCluster> = Api::all(hub.clone());
    for c in clusters {
        let label =
            json!({"metadata": {"labels": {"cluster.open-cluster-management.io/clusterset": set}}});
        mcs.patch(c.name(), &PatchParams::default(), &Patch::Merge(label))
            .await
            .unwrap();
    }
    let ns = format!("{set}-apps");
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
    Api::<Namespace>::all(hub.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    let bindings: Api<DynamicObject> = Api::namespaced_with(
        hub.clone(),
        &ns,
        &resource("ManagedClusterSetBinding", "v1beta2"),
    );
    let binding: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
        "metadata": {"name": set, "namespace": ns}, "spec": {"clusterSet": set}}))
    .unwrap();
    bindings
        .patch(set, &apply, &Patch::Apply(&binding))
        .await
        .unwrap();
    let placements: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), &ns, &resource("Placement", "v1beta1"));
    let placement: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
        "metadata": {"name": "all", "namespace": ns}, "spec": {"clusterSets": [set]}}))
    .unwrap();
    placements
        .patch("all", &apply, &Patch::Apply(&placement))
        .await
        .unwrap();
    ns
}

#[allow(clippy::too_many_lines)] // one story, told in order
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_rebuilt_from_a_backup_keeps_every_cluster_and_deletes_nothing() {
    let _one_at_a_time = crate::serial().await;
    assert!(
        std::env::var_os("CP_DIR").is_some(),
        "this test wipes the local control plane's hub: run it with CP_DIR set \
         (eval \"$(scripts/control-plane env)\"), or skip it by name"
    );
    let (hub, managed) = (common::hub().await, common::managed().await);
    // The work agents' CRD (the Klusterlet operator installs it; no operator runs here).
    common::install_crds(&managed, &clusteradm::api::managed_crds(), WAIT).await;
    let mut clusters = Vec::new();
    for _ in 0..CLUSTERS {
        clusters.push(join_one(&managed).await);
    }
    let names: Vec<String> = clusters.iter().map(|c| c.name().to_owned()).collect();
    for c in &names {
        Api::<ManifestWork>::namespaced(hub.clone(), c)
            .create(&PostParams::default(), &work_of(c))
            .await
            .unwrap();
    }
    let set = common::unique("it-restore-set");
    let placement_ns = set_and_placement(&hub, &clusters, &set).await;
    let addon = common::unique("it-restore-addon");
    let template = addon_template(&addon);
    clusteradm_ok(&["addon", "create", &addon, "-f", template.to_str().unwrap()]).await;
    clusteradm_ok(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &names.join(","),
    ])
    .await;
    all_running(&hub, &clusters, &addon, (&placement_ns, "all")).await;
    let before = applied_uids(&managed, &clusters, &addon).await;

    // The backup: what users made, none of what the hub's controllers make from it.
    let file = common::temp_file("unused", "").with_file_name("hub-backup.yaml");
    clusteradm_ok(&["backup", "--output-file", file.to_str().unwrap()]).await;
    let backup = std::fs::read_to_string(&file).unwrap();
    let objects = clusteradm::apply::parse_objects(&backup, "the backup").unwrap();
    let count = |kind: &str| {
        objects
            .iter()
            .filter(|o| o.types.as_ref().unwrap().kind == kind)
            .count()
    };
    assert!(count("ManagedCluster") >= CLUSTERS, "{backup}");
    assert!(count("ManifestWork") >= CLUSTERS, "{backup}");
    assert_eq!(count("Secret"), 0);
    assert!(
        !backup.contains(&format!("addon-{addon}-deploy")),
        "an add-on's own work was backed up"
    );
    assert!(!backup.contains("uid:"), "server fields were kept");

    // The hub lost: its controllers stopped, its etcd data deleted, its API server started on
    // nothing. The agents keep running against it.
    tokio::task::spawn_blocking(fixture::stop_hub_controller)
        .await
        .unwrap();
    tokio::task::spawn_blocking(|| control_plane("wipe-hub"))
        .await
        .unwrap();
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(hub.clone());
    assert!(
        crds.get_opt("managedclusters.cluster.open-cluster-management.io")
            .await
            .unwrap()
            .is_none()
    );

    // Rebuilt: init (and this binary's hub controllers), then the restore.
    fixture::hub().await;
    let t = Instant::now();
    let said = clusteradm_ok(&["restore", "-f", file.to_str().unwrap()]).await;
    assert!(said.contains("restored"), "{said}");
    all_running(&hub, &clusters, &addon, (&placement_ns, "all")).await;
    let to_available = t.elapsed();
    let after = applied_uids(&managed, &clusters, &addon).await;
    assert_eq!(
        before, after,
        "something on the managed cluster was deleted or made again"
    );
    for c in &names {
        assert_eq!(
            fixture::csr_count(c).await,
            0,
            "{c} sent a CSR: it joined again"
        );
    }
    // Twice: nothing more to do, and said so.
    let again = clusteradm_ok(&["restore", "-f", file.to_str().unwrap()]).await;
    assert!(again.contains("nothing to restore"), "{again}");
    println!(
        "restore: {} objects, {CLUSTERS} clusters Available, works applied and add-ons Available \
         {:.1} s after `restore`; {} of {} objects on the managed cluster deleted or made again",
        objects.len(),
        to_available.as_secs_f64(),
        before.iter().zip(&after).filter(|(b, a)| b != a).count(),
        before.len()
    );

    // Leave: the add-on, the clusters (the hub releases them), the placement's namespace.
    clusteradm_ok(&[
        "addon",
        "disable",
        "--names",
        &addon,
        "--clusters",
        &names.join(","),
    ])
    .await;
    // Every work gone while the work agents still run to remove what they applied.
    for c in &names {
        let works: Api<ManifestWork> = Api::namespaced(hub.clone(), c);
        let _ = works.delete("restore-app", &DeleteParams::default()).await;
        common::eventually("the cluster's works gone", WAIT, || {
            let works = works.clone();
            async move {
                works
                    .list(&ListParams::default())
                    .await
                    .ok()?
                    .items
                    .is_empty()
                    .then_some(())
            }
        })
        .await;
    }
    for c in clusters {
        c.work.cancel();
        c.registration.remove().await;
    }
    let _ = Api::<Namespace>::all(hub.clone())
        .delete(&placement_ns, &DeleteParams::default())
        .await;
    tokio::task::spawn_blocking(fixture::stop_hub_controller)
        .await
        .unwrap();
}
