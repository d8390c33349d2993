//! Hosted add-ons (a ManagedClusterAddOn naming a hosting cluster): the hub's add-on manager sends
//! the template's `hosting` manifests to the hosting cluster's namespace and the rest to the
//! add-on's own, holds the add-on until the hosting work is gone, and says when the hosting
//! cluster is not one of the hub's; the cluster's agent keeps the add-on's hub credential and reads
//! its Lease where the add-on's agent runs (the cluster the agent itself runs on), not on the
//! managed cluster.
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::agent::registration::rotate::Renewal;
use clusteradm::agent::work::AppliedNames;
use clusteradm::agent::work::supervisor::{self, Supervised};
use clusteradm::api::addon::{
    ClusterManagementAddOn, ClusterManagementAddOnSpec, HOSTING_CLUSTER_ANNOTATION,
    HOSTING_MANIFEST_FINALIZER, ManagedClusterAddOn,
};
use clusteradm::api::work::ManifestWork;
use clusteradm::runtime::Shutdown;

use super::template::condition;
use super::{cleanup, clusters, register_and_grant, renew_lease, succeeds};
use crate::common;
use crate::registration::fixture;

/// A template add-on with one ConfigMap for each location: hosting, managed, unmarked, none.
fn hosted_template(addon: &str) -> std::path::PathBuf {
    let cm = |name: &str, location: Option<&str>| {
        let annotation = location.map_or_else(String::new, |l| {
            format!(
                "\n          annotations:\n            addon.open-cluster-management.io/hosted-manifest-location: {l}"
            )
        });
        format!(
            "      - apiVersion: v1\n        kind: ConfigMap\n        metadata:\n          name: {name}\n          namespace: default{annotation}\n"
        )
    };
    common::temp_file(
        "hosted.yaml",
        &format!(
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnTemplate\nmetadata:\n  name: {addon}\n\
             spec:\n  addonName: {addon}\n  agentSpec:\n    workload:\n      manifests:\n{}{}{}{}",
            cm("on-hosting", Some("hosting")),
            cm("on-managed", Some("managed")),
            cm("unmarked", None),
            cm("nowhere", Some("none")),
        ),
    )
}

/// Names `cluster` as the add-on's hosting cluster.
async fn host_on(addons: &Api<ManagedClusterAddOn>, addon: &str, cluster: &str) {
    let patch = json!({"metadata": {"annotations": {HOSTING_CLUSTER_ANNOTATION: cluster}}});
    addons
        .patch(addon, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
}

/// Waits until the add-on's `HostingClusterValidity` is `status`.
async fn validity(
    addons: &Api<ManagedClusterAddOn>,
    addon: &str,
    status: &str,
) -> ManagedClusterAddOn {
    fixture::wait(
        addons.clone(),
        addon,
        &format!("HostingClusterValidity {status}"),
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "HostingClusterValidity").is_some_and(|c| c.status == status)
        },
    )
    .await
}

/// The names of a work's manifests.
pub(super) fn names(work: &ManifestWork) -> Vec<&str> {
    work.spec
        .workload
        .manifests
        .iter()
        .filter_map(|m| m["metadata"]["name"].as_str())
        .collect()
}

// One story, told in order: each step needs the state the previous one made.
#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_addon_deploys_to_both_clusters_and_cleans_the_hosting_one() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-hosted").await;
    let (managed, hosting) = (&c[0], &c[1]);
    let addon = common::unique("it-hosted-addon");
    let file = hosted_template(&addon);
    succeeds(&["addon", "create", &addon, "-f", file.to_str().unwrap()]).await;
    let annotate = format!("{HOSTING_CLUSTER_ANNOTATION}={hosting}");
    succeeds(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        managed,
        "--annotate",
        &annotate,
    ])
    .await;

    // The hosting work in the hosting cluster's namespace, named and labelled as upstream's, not
    // owned (the add-on is in another namespace); the managed one keeps the rest but `none`.
    let hosting_name = format!("addon-{addon}-deploy-hosting-{managed}-0");
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
    assert_eq!(
        hosting_work.labels()["open-cluster-management.io/addon-name"],
        addon
    );
    assert!(hosting_work.owner_references().is_empty());
    let managed_work = fixture::wait(
        Api::<ManifestWork>::namespaced(hub.clone(), managed),
        &format!("addon-{addon}-deploy-0"),
        "the managed work",
        |w: Option<&ManifestWork>| w.is_some(),
    )
    .await;
    assert_eq!(names(&managed_work), ["on-managed", "unmarked"]);
    let addons = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), managed);
    let mca = validity(&addons, &addon, "True").await;
    assert!(
        mca.finalizers()
            .iter()
            .any(|f| f == HOSTING_MANIFEST_FINALIZER)
    );
    assert_eq!(
        condition(Some(&mca), "HostingClusterValidity")
            .unwrap()
            .reason,
        "HostingClusterValid"
    );

    // A hosting cluster the hub does not know: the hosting work goes, the finalizer with it, and
    // the add-on says why.
    let unknown = common::unique("it-hosted-unknown");
    host_on(&addons, &addon, &unknown).await;
    let uid = hosting_work.uid().unwrap();
    fixture::wait_deleted(hosting_works.clone(), &hosting_name, &uid).await;
    let mca = validity(&addons, &addon, "False").await;
    assert_eq!(
        condition(Some(&mca), "HostingClusterValidity")
            .unwrap()
            .message,
        format!("hosting cluster {unknown} is not a managed cluster of the hub")
    );
    assert!(
        !mca.finalizers()
            .iter()
            .any(|f| f == HOSTING_MANIFEST_FINALIZER)
    );

    // Hosted again, then disabled: the add-on goes only with its hosting work.
    host_on(&addons, &addon, hosting).await;
    let again = fixture::wait(
        hosting_works.clone(),
        &hosting_name,
        "the hosting work again",
        |w: Option<&ManifestWork>| w.is_some(),
    )
    .await;
    succeeds(&["addon", "disable", "--names", &addon, "--clusters", managed]).await;
    fixture::wait_deleted(hosting_works, &hosting_name, &again.uid().unwrap()).await;
    fixture::wait_deleted(addons, &addon, &mca.uid().unwrap()).await;

    let _ = Api::<clusteradm::api::addon::AddOnTemplate>::all(hub.clone())
        .delete(&addon, &DeleteParams::default())
        .await;
    cleanup(&addon, &c).await;
}

// One story, told in order: each step needs the state the previous one made.
#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_addons_credential_and_lease_live_where_the_agent_runs() {
    let (hub, managed) = (common::hub().await, common::managed().await);
    let agent = fixture::joined(fixture::options(managed.clone(), "it-hosted-reg")).await;
    let c = agent.cluster().to_string();
    // The hub's API server stands in for the management cluster the agent runs on: another
    // cluster than the managed one.
    let management = hub.clone();
    let addon = common::unique("it-hosted-reg-addon");
    let install = common::unique("it-hosted-ns");
    Api::<ClusterManagementAddOn>::all(hub.clone())
        .create(
            &PostParams::default(),
            &ClusterManagementAddOn::new(&addon, ClusterManagementAddOnSpec::default()),
        )
        .await
        .unwrap();
    let annotate = format!("{HOSTING_CLUSTER_ANNOTATION}=some-hosting-cluster");
    succeeds(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &c,
        "-n",
        &install,
        "--annotate",
        &annotate,
    ])
    .await;
    register_and_grant(&hub, &c, &addon, &install).await;
    // The add-on's hosting manifests make its namespace there (the agent may not), and its agent
    // renews its Lease there.
    renew_lease(&management, &install, &addon).await;

    // In Hosted mode the agent's own secrets are on the management cluster too.
    let agent_ns = agent.opts.namespace.clone();
    let mut credential = agent.hub_secret().await;
    credential.metadata = kube::api::ObjectMeta {
        name: credential.metadata.name.clone(),
        namespace: Some(agent_ns.clone()),
        ..Default::default()
    };
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": agent_ns}})).unwrap();
    Api::<Namespace>::all(management.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    Api::<Secret>::namespaced(management.clone(), &agent_ns)
        .create(&PostParams::default(), &credential)
        .await
        .unwrap();

    let shutdown = Shutdown::new();
    tokio::spawn(supervisor::run(
        Supervised {
            managed: managed.clone(),
            management: management.clone(),
            namespace: agent.opts.namespace.clone(),
            cluster: c.clone(),
            applied_names: AppliedNames::PerHub,
            addons: true,
            work_agent: true,
            example_agents: true,
            gates: clusteradm::agent::gates::Gates::default(),
            work: clusteradm::agent::work::Settings::default(),
            addon_auth: clusteradm::agent::addon::token::Auth::default(),
            addon_renewal: Renewal::default(),
        },
        shutdown.clone(),
    ));
    let secrets = Api::<Secret>::namespaced(management.clone(), &install);
    let name = format!("{addon}-hub-kubeconfig");
    let secret = fixture::wait(
        secrets.clone(),
        &name,
        "the add-on's hub kubeconfig where its agent runs",
        |s: Option<&Secret>| {
            s.and_then(|s| s.data.as_ref())
                .is_some_and(|d| d.contains_key("kubeconfig"))
        },
    )
    .await;
    assert!(
        Api::<Namespace>::all(managed.clone())
            .get_opt(&install)
            .await
            .unwrap()
            .is_none(),
        "nothing of a Hosted add-on's agent on the managed cluster"
    );
    fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c),
        &addon,
        "Available from the Lease on the management cluster",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "Available").is_some_and(|a| {
                a.status == "True" && a.reason == "ManagedClusterAddOnLeaseUpdated"
            })
        },
    )
    .await;

    succeeds(&["addon", "disable", "--names", &addon, "--clusters", &c]).await;
    fixture::wait_deleted(secrets, &name, &secret.uid().unwrap()).await;

    shutdown.cancel();
    for ns in [&install, &agent_ns] {
        let _ = Api::<Namespace>::all(management.clone())
            .delete(ns, &DeleteParams::default())
            .await;
    }
    let _ = Api::<ClusterManagementAddOn>::all(hub)
        .delete(&addon, &DeleteParams::default())
        .await;
    agent.remove().await;
}
