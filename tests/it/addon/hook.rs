//! A pre-delete hook: the Pod a template marks as one is not deployed with the agent; when the
//! add-on is disabled, or its cluster is deleted, the hook runs on the cluster first, and the
//! add-on (and with it the agent's objects) goes only once the work agent reports the Pod
//! `Succeeded`.
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

use clusteradm::api::addon::{
    AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn, PRE_DELETE_HOOK_FINALIZER,
};
use clusteradm::api::cluster::ManagedCluster;
use clusteradm::api::work::ManifestWork;
use clusteradm::runtime::Shutdown;

use super::succeeds;
use super::template::{condition, supervised_agent};
use crate::common;
use crate::registration::fixture;

/// A joined cluster with an add-on enabled whose template has an agent ConfigMap and a hook Pod.
struct Hooked {
    agent: fixture::Agent,
    shutdown: Shutdown,
    cluster: String,
    addon: String,
    agent_cm: String,
    hook_pod: String,
    hub: kube::Client,
    managed: kube::Client,
}

impl Hooked {
    async fn enabled(prefix: &str) -> Self {
        let (agent, shutdown) = supervised_agent(prefix).await;
        let (hub, managed) = (common::hub().await, common::managed().await);
        let hooked = Self {
            cluster: agent.cluster().to_string(),
            agent,
            shutdown,
            addon: common::unique(&format!("{prefix}-addon")),
            agent_cm: common::unique(&format!("{prefix}-agent")),
            hook_pod: common::unique(&format!("{prefix}-pod")),
            hub,
            managed,
        };
        let file = common::temp_file(
            "hooked.yaml",
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  namespace: default\n\
                 ---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {}\n  namespace: default\n  \
                 annotations:\n    addon.open-cluster-management.io/addon-pre-delete: ''\n\
                 spec:\n  restartPolicy: Never\n  containers:\n  - name: cleanup\n    \
                 image: registry.invalid/cleanup:1\n",
                hooked.agent_cm, hooked.hook_pod
            ),
        );
        let (addon, c) = (&hooked.addon, &hooked.cluster);
        succeeds(&["addon", "create", addon, "-f", file.to_str().unwrap()]).await;
        succeeds(&["addon", "enable", "--names", addon, "--clusters", c]).await;
        fixture::wait(
            hooked.addons(),
            addon,
            "the hook finalizer",
            |m: Option<&ManagedClusterAddOn>| {
                m.is_some_and(|m| {
                    m.finalizers()
                        .iter()
                        .any(|f| f == PRE_DELETE_HOOK_FINALIZER)
                })
            },
        )
        .await;
        let deploy = fixture::wait(
            hooked.works(),
            &format!("addon-{addon}-deploy-0"),
            "the deploy work",
            |w: Option<&ManifestWork>| w.is_some(),
        )
        .await;
        assert_eq!(
            deploy.spec.workload.manifests.len(),
            1,
            "the hook is not deployed with the agent"
        );
        fixture::wait(
            hooked.config_maps(),
            &hooked.agent_cm,
            "the agent's ConfigMap",
            |m: Option<&ConfigMap>| m.is_some(),
        )
        .await;
        assert!(
            hooked
                .pods()
                .get_opt(&hooked.hook_pod)
                .await
                .unwrap()
                .is_none(),
            "no hook before the add-on is removed"
        );
        hooked
    }

    fn addons(&self) -> Api<ManagedClusterAddOn> {
        Api::namespaced(self.hub.clone(), &self.cluster)
    }

    fn works(&self) -> Api<ManifestWork> {
        Api::namespaced(self.hub.clone(), &self.cluster)
    }

    fn config_maps(&self) -> Api<ConfigMap> {
        Api::namespaced(self.managed.clone(), "default")
    }

    fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.managed.clone(), "default")
    }

    /// Once removal began: the hook runs, the add-on and its agent are held until the Pod
    /// succeeds, then both go. Returns when the add-on is gone.
    async fn hook_runs_then_releases(&self) {
        fixture::wait(
            self.pods(),
            &self.hook_pod,
            "the hook Pod on the cluster",
            |p: Option<&Pod>| p.is_some(),
        )
        .await;
        let held = fixture::wait(
            self.addons(),
            &self.addon,
            "HookManifestCompleted False",
            |m: Option<&ManagedClusterAddOn>| {
                condition(m, "HookManifestCompleted").is_some_and(|c| c.status == "False")
            },
        )
        .await;
        assert!(held.metadata.deletion_timestamp.is_some());
        let hook_work = self
            .works()
            .get(&format!("addon-{}-pre-delete", self.addon))
            .await
            .unwrap();
        assert!(
            self.config_maps()
                .get_opt(&self.agent_cm)
                .await
                .unwrap()
                .is_some(),
            "the agent stays while its hook runs"
        );

        // No kubelet here: the test finishes the Pod as one would.
        let finished = std::time::Instant::now();
        self.pods()
            .patch_status(
                &self.hook_pod,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"phase": "Succeeded"}})),
            )
            .await
            .unwrap();
        fixture::wait_deleted(self.addons(), &self.addon, &held.uid().unwrap()).await;
        eprintln!(
            "pre-delete hook: Pod Succeeded → add-on released in {} ms",
            finished.elapsed().as_millis()
        );
        // The garbage collector takes the deploy work, and the work agent what it applied.
        if let Some(left) = self.config_maps().get_opt(&self.agent_cm).await.unwrap() {
            fixture::wait_deleted(self.config_maps(), &self.agent_cm, &left.uid().unwrap()).await;
        }
        fixture::wait_deleted(
            self.works(),
            &hook_work.name_any(),
            &hook_work.uid().unwrap(),
        )
        .await;
    }

    async fn remove(self) {
        self.shutdown.cancel();
        let dp = DeleteParams::default();
        let _ = Api::<ClusterManagementAddOn>::all(self.hub.clone())
            .delete(&self.addon, &dp)
            .await;
        let _ = Api::<AddOnTemplate>::all(self.hub.clone())
            .delete(&format!("{}-0.0.1", self.addon), &dp)
            .await;
        let _ = self.pods().delete(&self.hook_pod, &dp).await;
        self.agent.remove().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_delete_hook_runs_before_a_disabled_addon_goes() {
    let hooked = Hooked::enabled("it-hook").await;
    let (addon, c) = (&hooked.addon, &hooked.cluster);
    succeeds(&["addon", "disable", "--names", addon, "--clusters", c]).await;
    hooked.hook_runs_then_releases().await;
    hooked.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_delete_hook_runs_before_a_deleted_cluster_goes() {
    let hooked = Hooked::enabled("it-hookmc").await;
    let clusters = Api::<ManagedCluster>::all(hooked.hub.clone());
    let cluster = clusters.get(&hooked.cluster).await.unwrap();
    clusters
        .delete(&hooked.cluster, &DeleteParams::default())
        .await
        .unwrap();
    hooked.hook_runs_then_releases().await;
    fixture::wait_deleted(clusters, &hooked.cluster, &cluster.uid().unwrap()).await;
    hooked.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_delete_hook_runs_when_the_addon_itself_is_deleted() {
    let hooked = Hooked::enabled("it-hookcma").await;
    // Its ManagedClusterAddOns go by the garbage collector; the hook still runs first.
    Api::<ClusterManagementAddOn>::all(hooked.hub.clone())
        .delete(&hooked.addon, &DeleteParams::default())
        .await
        .unwrap();
    hooked.hook_runs_then_releases().await;
    hooked.remove().await;
}

/// An add-on of its own manager (no template): the hook finalizer is that manager's (the Go
/// addon-framework's hook controller adds and drops it around its pre-delete hook), so the hub
/// must leave it. It once dropped it, and the policy add-ons' uninstall pods never ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hub_leaves_the_hook_finalizer_of_an_addon_it_does_not_deploy() {
    let (agent, shutdown) = supervised_agent("it-ownhook").await;
    let hub = common::hub().await;
    let (cluster, addon) = (
        agent.cluster().to_string(),
        common::unique("it-ownhook-addon"),
    );
    let cma: ClusterManagementAddOn = serde_json::from_value(json!({
        "metadata": {"name": addon,
            "annotations": {"addon.open-cluster-management.io/lifecycle": "addon-manager"}},
        "spec": {},
    }))
    .unwrap();
    let cmas = Api::<ClusterManagementAddOn>::all(hub.clone());
    cmas.create(&kube::api::PostParams::default(), &cma)
        .await
        .unwrap();
    succeeds(&["addon", "enable", "--names", &addon, "--clusters", &cluster]).await;
    let addons: Api<ManagedClusterAddOn> = Api::namespaced(hub.clone(), &cluster);
    // The hub has reconciled this add-on: it made the ClusterManagementAddOn its owner.
    let owner = cmas.get(&addon).await.unwrap().uid().unwrap();
    fixture::wait(
        addons.clone(),
        &addon,
        "the hub's owner reference",
        |m: Option<&ManagedClusterAddOn>| {
            m.is_some_and(|m| m.owner_references().iter().any(|o| o.uid == owner))
        },
    )
    .await;
    // What the add-on's own manager does before it deploys anything.
    let held = json!({"metadata": {"finalizers": [PRE_DELETE_HOOK_FINALIZER]}});
    addons
        .patch(&addon, &PatchParams::default(), &Patch::Merge(&held))
        .await
        .unwrap();
    succeeds(&[
        "addon",
        "disable",
        "--names",
        &addon,
        "--clusters",
        &cluster,
    ])
    .await;
    common::never(
        "the hub dropped the add-on manager's hook finalizer",
        std::time::Duration::from_secs(3),
        || async {
            let m = addons.get_opt(&addon).await.unwrap();
            (!m.as_ref().is_some_and(|m| {
                m.finalizers()
                    .iter()
                    .any(|f| f == PRE_DELETE_HOOK_FINALIZER)
            }))
            .then_some(m.map(|m| m.finalizers().to_vec()))
        },
    )
    .await;
    // The manager's hook is done: it lets go, and the add-on goes.
    let released = json!({"metadata": {"finalizers": null}});
    addons
        .patch(&addon, &PatchParams::default(), &Patch::Merge(&released))
        .await
        .unwrap();
    common::eventually(
        "the add-on gone",
        std::time::Duration::from_secs(30),
        || async {
            addons
                .get_opt(&addon)
                .await
                .unwrap()
                .is_none()
                .then_some(())
        },
    )
    .await;
    shutdown.cancel();
    let _ = cmas.delete(&addon, &DeleteParams::default()).await;
    agent.remove().await;
}
