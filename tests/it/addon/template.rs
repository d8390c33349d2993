//! Template add-ons end to end: `addon create` from the shipped helloworld template, the hub's
//! add-on manager (deploy work, hub RBAC, status), registration of the agent's own identity, and
//! the example agent run in-process copying a ConfigMap hub → cluster; the Placements install
//! strategy; `addon create`'s bad input.
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::api::rbac::v1::{ClusterRole, RoleBinding};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::agent::work::AppliedNames;
use clusteradm::agent::work::supervisor::{self, Supervised};
use clusteradm::api::addon::{AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn};
use clusteradm::api::cluster::PlacementDecision;
use clusteradm::api::conditions::find;
use clusteradm::api::work::ManifestWork;
use clusteradm::runtime::Shutdown;

use super::{client_of, clusters, only_configmaps_in, says, succeeds};
use crate::common;
use crate::registration::fixture::{self, on_hub};

const TEMPLATE: &str = "templates/addons/helloworld.yaml";
const INSTALL: &str = "helloworld-addon";

fn condition<'a>(
    m: Option<&'a ManagedClusterAddOn>,
    type_: &str,
) -> Option<&'a clusteradm::api::conditions::Condition> {
    m.and_then(|m| m.status.as_ref())
        .and_then(|s| find(&s.conditions, type_))
}

/// The manager's part: the deploy work (rendered for the cluster, owned by the add-on), the hub
/// RoleBinding for the template's identity, and the status upstream's manager writes.
async fn deployed_by_the_manager(hub: &kube::Client, c: &str) -> ManifestWork {
    let mca = fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), c),
        "helloworld",
        "the manager's status",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "RegistrationApplied").is_some_and(|c| c.status == "True")
                && condition(m, "Configured")
                    .is_some_and(|c| c.reason == "ConfigurationsConfigured")
        },
    )
    .await;
    let status = mca.status.unwrap();
    assert_eq!(status.namespace.as_deref(), Some(INSTALL));
    let subject = status.registrations[0].subject.clone().unwrap();
    assert_eq!(
        subject.user.as_deref(),
        Some(
            format!(
                "system:open-cluster-management:cluster:{c}:addon:helloworld:agent:helloworld-agent"
            )
            .as_str()
        )
    );
    assert_eq!(
        status.config_references[0]
            .desired_config
            .as_ref()
            .unwrap()
            .name,
        "helloworld-0.0.1"
    );
    assert!(
        mca.metadata
            .owner_references
            .unwrap()
            .iter()
            .any(|o| o.kind == "ClusterManagementAddOn")
    );
    let work = fixture::wait(
        Api::<ManifestWork>::namespaced(hub.clone(), c),
        "addon-helloworld-deploy-0",
        "the deploy work",
        |w: Option<&ManifestWork>| w.is_some(),
    )
    .await;
    assert_eq!(
        work.labels()["open-cluster-management.io/addon-name"],
        "helloworld"
    );
    assert_eq!(work.owner_references()[0].kind, "ManagedClusterAddOn");
    let deployment = work
        .spec
        .workload
        .manifests
        .iter()
        .find(|m| m["kind"] == "Deployment")
        .unwrap();
    let args = &deployment["spec"]["template"]["spec"]["containers"][0]["args"];
    assert!(
        args.as_array()
            .unwrap()
            .iter()
            .any(|a| a == &json!(format!("--cluster-name={c}"))),
        "{args}"
    );
    let binding = Api::<RoleBinding>::namespaced(hub.clone(), c)
        .get("open-cluster-management:helloworld:clusterrole:agent")
        .await
        .unwrap();
    assert_eq!(
        binding.role_ref.name,
        "open-cluster-management:helloworld:agent"
    );
    work
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_helloworld_template_addon_runs_end_to_end() {
    clusteradm::apply::Applier::new(common::managed().await, Duration::from_secs(60))
        .apply(
            clusteradm::api::managed_crds()
                .iter()
                .map(clusteradm::apply::to_dynamic)
                .collect(),
        )
        .await
        .unwrap();
    let agent = fixture::joined(fixture::options(common::managed().await, "it-hw")).await;
    let c = agent.cluster().to_string();
    let (hub, managed) = (common::hub().await, common::managed().await);
    // As `join --in-process` runs it: the work agent, add-on registration and the example agent.
    let shutdown = Shutdown::new();
    let supervised = Supervised {
        managed: managed.clone(),
        namespace: agent.opts.namespace.clone(),
        cluster: c.clone(),
        applied_names: AppliedNames::PerHub,
        addons: true,
    };
    tokio::spawn(supervisor::run(supervised, shutdown.clone()));

    remove_helloworld(&hub).await;
    let repo = env!("CARGO_MANIFEST_DIR");
    let file = format!("{repo}/{TEMPLATE}");
    let out = succeeds(&["addon", "create", "helloworld", "-f", &file]).await;
    says(&out, "ClusterManagementAddon helloworld is created");
    says(&out, "AddonTemplate helloworld-0.0.1 is created");
    let again = succeeds(&["addon", "create", "helloworld", "-f", &file]).await;
    says(&again, "ClusterManagementAddon helloworld is unchanged");
    says(&again, "AddonTemplate helloworld-0.0.1 is unchanged");
    succeeds(&["addon", "enable", "--names", "helloworld", "--clusters", &c]).await;

    let work = deployed_by_the_manager(&hub, &c).await;
    fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c),
        "helloworld",
        "ManifestApplied and a probed Available",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "ManifestApplied").is_some_and(|c| c.status == "True")
                // No pod runs here and this work agent feeds back no replica counts: upstream's
                // prober then says it has no result.
                && condition(m, "Available").is_some_and(|c| c.reason == "NoProbeResult")
        },
    )
    .await;

    // The agent's own identity, from the secret the registration agent keeps.
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), INSTALL);
    let secret = fixture::wait(
        secrets,
        "helloworld-hub-kubeconfig",
        "the add-on's hub kubeconfig",
        |s: Option<&Secret>| s.is_some(),
    )
    .await;
    only_configmaps_in(&client_of(&secret).await, &c).await;

    a_configmap_travels(&hub, &managed, &c).await;

    // Disabled: the garbage collector takes the work and the binding with the add-on.
    succeeds(&[
        "addon",
        "disable",
        "--names",
        "helloworld",
        "--clusters",
        &c,
    ])
    .await;
    let works = Api::<ManifestWork>::namespaced(hub.clone(), &c);
    fixture::wait_deleted(works, &work.name_any(), &work.uid().unwrap()).await;
    common::eventually("the hub RoleBinding gone", Duration::from_secs(60), || {
        let bindings = Api::<RoleBinding>::namespaced(hub.clone(), &c);
        async move {
            bindings
                .get_opt("open-cluster-management:helloworld:clusterrole:agent")
                .await
                .ok()
                .filter(Option::is_none)
                .map(|_| ())
        }
    })
    .await;

    shutdown.cancel();
    remove_helloworld(&hub).await;
    let _ = Api::<Namespace>::all(managed)
        .delete(INSTALL, &DeleteParams::default())
        .await;
    agent.remove().await;
}

/// A ConfigMap created on the hub in the cluster's namespace is copied by the agent.
async fn a_configmap_travels(hub: &kube::Client, managed: &kube::Client, c: &str) {
    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "greeting", "namespace": c}, "data": {"hello": "world"}}),
    )
    .unwrap();
    Api::<ConfigMap>::namespaced(hub.clone(), c)
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let copied = fixture::wait(
        Api::<ConfigMap>::namespaced(managed.clone(), INSTALL),
        "greeting",
        "the ConfigMap copied to the cluster",
        |m: Option<&ConfigMap>| m.is_some(),
    )
    .await;
    assert_eq!(copied.data.unwrap()["hello"], "world");
    assert!(
        copied
            .metadata
            .labels
            .unwrap()
            .contains_key("synced-from-hub")
    );
}

/// Deletes the example add-on from the hub (the name is fixed: an earlier run may have left it)
/// and waits until it is gone.
async fn remove_helloworld(hub: &kube::Client) {
    let dp = DeleteParams::default();
    let (cmas, templates) = (
        Api::<ClusterManagementAddOn>::all(hub.clone()),
        Api::<AddOnTemplate>::all(hub.clone()),
    );
    let _ = cmas.delete("helloworld", &dp).await;
    let _ = templates.delete("helloworld-0.0.1", &dp).await;
    let _ = Api::<ClusterRole>::all(hub.clone())
        .delete("open-cluster-management:helloworld:agent", &dp)
        .await;
    common::eventually(
        "the helloworld add-on gone",
        Duration::from_secs(30),
        || {
            let (cmas, templates) = (cmas.clone(), templates.clone());
            async move {
                let gone = cmas.get_opt("helloworld").await.ok()?.is_none()
                    && templates.get_opt("helloworld-0.0.1").await.ok()?.is_none();
                gone.then_some(())
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_placements_strategy_installs_on_decided_clusters_only() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-addon-pl").await;
    let addon = common::unique("it-pl-addon");
    let placement = common::unique("it-pl");
    let dir = std::env::temp_dir().join(&addon);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("agent.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n  namespace: default\n",
    )
    .unwrap();
    let out = succeeds(&[
        "addon",
        "create",
        &addon,
        "-f",
        file.to_str().unwrap(),
        "--placement-ref",
        &format!("default/{placement}"),
    ])
    .await;
    says(&out, &format!("ClusterManagementAddon {addon} is created"));

    // Decisions as the placement controller writes them (no Placement: nothing else writes these).
    let decisions: Api<PlacementDecision> = Api::namespaced(hub.clone(), "default");
    let decision: PlacementDecision = serde_json::from_value(json!({
        "metadata": {"name": format!("{placement}-decision-1"), "namespace": "default",
                     "labels": {"cluster.open-cluster-management.io/placement": placement}},
    }))
    .unwrap();
    decisions
        .create(&PostParams::default(), &decision)
        .await
        .unwrap();
    let decide = |clusters: &[String]| {
        let list: Vec<_> = clusters
            .iter()
            .map(|c| json!({"clusterName": c, "reason": ""}))
            .collect();
        json!({"status": {"decisions": list}})
    };
    let name = format!("{placement}-decision-1");
    decisions
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(decide(&c)))
        .await
        .unwrap();
    for cluster in &c {
        let mca = fixture::wait(
            Api::<ManagedClusterAddOn>::namespaced(hub.clone(), cluster),
            &addon,
            "the add-on installed by placement",
            |m: Option<&ManagedClusterAddOn>| m.is_some(),
        )
        .await;
        assert!(
            mca.owner_references()
                .iter()
                .any(|o| o.controller == Some(true) && o.name == addon)
        );
    }
    decisions
        .patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(decide(&c[..1])),
        )
        .await
        .unwrap();
    common::eventually(
        "the undecided cluster's add-on removed",
        Duration::from_secs(30),
        || {
            let api = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[1]);
            let addon = addon.clone();
            async move {
                api.get_opt(&addon)
                    .await
                    .ok()
                    .filter(Option::is_none)
                    .map(|_| ())
            }
        },
    )
    .await;
    assert!(super::enabled_on(&hub, &c[0], &addon).await);

    let _ = decisions.delete(&name, &DeleteParams::default()).await;
    let _ = Api::<AddOnTemplate>::all(hub.clone())
        .delete(&format!("{addon}-0.0.1"), &DeleteParams::default())
        .await;
    super::cleanup(&addon, &c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn addon_create_refuses_bad_input_and_creates_nothing() {
    fixture::hub().await;
    let hub = common::hub().await;
    let addon = common::unique("it-bad-addon");
    let dir = std::env::temp_dir().join(&addon);
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let unknown_type = write(
        "unknown.yaml",
        &format!(
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnTemplate\nmetadata:\n  name: x\nspec:\n  addonName: {addon}\n  agentSpec: {{}}\n  registration:\n  - type: Telepathy\n"
        ),
    );
    let no_kind = write("nokind.yaml", "apiVersion: v1\nmetadata:\n  name: a\n");
    let missing = write(
        "missing.yaml",
        &format!(
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnTemplate\nmetadata:\n  name: x\nspec:\n  addonName: {addon}\n  agentSpec: {{}}\n  registration:\n  - type: CustomSigner\n"
        ),
    );
    let fine = write(
        "fine.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec!["-f", &unknown_type],
            "line 9: not a valid AddOnTemplate: spec.registration[0].type: unknown variant `Telepathy`",
        ),
        (vec!["-f", &no_kind], "kind"),
        (
            vec!["-f", &missing],
            "spec.registration[0].customSigner is required",
        ),
        (
            vec!["-f", &fine, "--placement-ref", "nonamespace"],
            "must be in the format 'namespace/name'",
        ),
        (
            vec!["-f", &fine, "--version", "Bad Version"],
            "must be a DNS-1123 subdomain",
        ),
        (
            vec!["-f", "/nonexistent/agent.yaml"],
            "cannot read /nonexistent/agent.yaml",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["addon", "create", &addon];
        args.extend(extra);
        let (code, _, err) = on_hub(&args).await;
        assert_ne!(code, 0, "{args:?} succeeded");
        assert!(
            err.contains(expected),
            "{args:?}: expected {expected:?} in:\n{err}"
        );
    }
    let (code, _, err) = on_hub(&["addon", "create", "Not_A_Name", "-f", &fine]).await;
    assert_ne!(code, 0);
    assert!(err.contains("must be a DNS-1123 label"), "{err}");
    assert!(
        Api::<ClusterManagementAddOn>::all(hub.clone())
            .get_opt(&addon)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<AddOnTemplate>::all(hub)
            .get_opt(&format!("{addon}-0.0.1"))
            .await
            .unwrap()
            .is_none()
    );
}
