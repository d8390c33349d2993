//! How a template add-on's health is judged, by the prober its AddOnTemplate's annotation names:
//! the Deployment's fed-back replicas (the default), the deploy work being applied, fields of the
//! Deployment checked by CEL, the agent's lease as the registration agent reports it, nobody
//! (`None`); and a name that is none of these, said in `ManifestApplied`.
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::api::addon::{
    AddOnTemplate, ClusterManagementAddOn, HEALTH_PROBE_FIELDS_ANNOTATION,
    HEALTH_PROBER_ANNOTATION, HealthCheckMode, ManagedClusterAddOn,
};
use clusteradm::api::work::ManifestWork;

use super::succeeds;
use super::template::{condition, supervised_agent};
use crate::common;
use crate::registration::fixture;

/// Waits until the add-on's condition `type_` has this status and reason; returns its message.
async fn wait_condition(
    addons: &Api<ManagedClusterAddOn>,
    addon: &str,
    type_: &'static str,
    status: &'static str,
    reason: &'static str,
) -> String {
    let mca = fixture::wait(
        addons.clone(),
        addon,
        &format!("{type_} {status} ({reason})"),
        move |m: Option<&ManagedClusterAddOn>| {
            condition(m, type_).is_some_and(|c| c.status == status && c.reason == reason)
        },
    )
    .await;
    condition(Some(&mca), type_).unwrap().message.clone()
}

/// An agent's lease for `addon`, renewed now, in its install namespace (which exists).
async fn lease_renewed(managed: &kube::Client, namespace: &str, addon: &str) {
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": addon, "namespace": namespace},
        "spec": {"renewTime": Timestamp::now().to_string()}}))
    .unwrap();
    Api::<Lease>::namespaced(managed.clone(), namespace)
        .create(&PostParams::default(), &lease)
        .await
        .unwrap();
}

/// Waits until the add-on's health-check mode is `Customized`.
async fn customized(addons: &Api<ManagedClusterAddOn>, addon: &str) {
    fixture::wait(
        addons.clone(),
        addon,
        "health-check mode Customized",
        |m: Option<&ManagedClusterAddOn>| {
            m.and_then(|m| m.status.as_ref())
                .and_then(|s| s.health_check.as_ref())
                .is_some_and(|h| h.mode == Some(HealthCheckMode::Customized))
        },
    )
    .await;
}

/// Merges `annotations` into the template's.
async fn annotate(templates: &Api<AddOnTemplate>, template: &str, annotations: serde_json::Value) {
    let patch = json!({"metadata": {"annotations": annotations}});
    templates
        .patch(template, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
}

/// The `WorkField` prober on the add-on's Deployment, which the work agent feeds back once the
/// work asks: kube-controller-manager counts the replica it made, and no node makes it Available.
/// A check that holds, then one that does not.
async fn by_fields(
    templates: &Api<AddOnTemplate>,
    template: &str,
    addons: &Api<ManagedClusterAddOn>,
    (addon, deployment): (&str, &str),
) {
    let fields = |healthy_when: &str| {
        let text = format!(
            "- resourceIdentifier: {{group: apps, resource: deployments, name: '{deployment}', \
             namespace: default}}\n  probeRules:\n  - type: JSONPaths\n    jsonPaths:\n    \
             - {{name: replicas, path: .status.replicas}}\n    - {{name: available, \
             path: '.status.conditions[?(@.type==\"Available\")].status'}}\n  \
             healthyWhen: '{healthy_when}'\n"
        );
        json!({HEALTH_PROBER_ANNOTATION: "WorkField", HEALTH_PROBE_FIELDS_ANNOTATION: text})
    };
    annotate(templates, template, fields("replicas >= 1")).await;
    let message = wait_condition(addons, addon, "Available", "True", "ProbeAvailable").await;
    assert_eq!(message, format!("{addon} add-on is available."));
    annotate(templates, template, fields("available == \"True\"")).await;
    let message = wait_condition(addons, addon, "Available", "False", "ProbeUnavailable").await;
    assert!(
        message.ends_with(&format!(
            "deployments default/{deployment}: available == \"True\" is false"
        )),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_health_prober_decides_available_its_way() {
    let (agent, shutdown) = supervised_agent("it-probe").await;
    let c = agent.cluster().to_string();
    let (hub, managed) = (common::hub().await, common::managed().await);
    let addon = common::unique("it-probed");
    let deployment = common::unique("it-probed-agent");
    let file = common::temp_file(
        "probed.yaml",
        &format!(
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnTemplate\n\
             metadata:\n  name: t\nspec:\n  addonName: {addon}\n  agentSpec:\n    workload:\n      \
             manifests:\n      - apiVersion: apps/v1\n        kind: Deployment\n        metadata:\n          \
             name: {deployment}\n          namespace: default\n        spec:\n          replicas: 1\n          \
             selector: {{matchLabels: {{app: {deployment}}}}}\n          template:\n            \
             metadata: {{labels: {{app: {deployment}}}}}\n            spec:\n              \
             containers: [{{name: agent, image: registry.invalid/agent:1}}]\n"
        ),
    );
    succeeds(&["addon", "create", &addon, "-f", file.to_str().unwrap()]).await;
    succeeds(&["addon", "enable", "--names", &addon, "--clusters", &c]).await;
    let addons = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c);

    // The default: no pod runs here, so the work agent feeds back a replica count without a
    // ready one, and upstream's workload prober says so.
    let message = wait_condition(&addons, &addon, "Available", "False", "ProbeUnavailable").await;
    assert!(message.ends_with("readyReplica is not probed"), "{message}");

    let templates = Api::<AddOnTemplate>::all(hub.clone());
    let template = format!("{addon}-0.0.1");
    let choose = |prober: &'static str| {
        let (templates, template) = (templates.clone(), template.clone());
        async move {
            let annotations = json!({HEALTH_PROBER_ANNOTATION: prober});
            annotate(&templates, &template, annotations).await;
        }
    };
    choose("Work").await;
    wait_condition(&addons, &addon, "Available", "True", "WorkApplied").await;

    by_fields(&templates, &template, &addons, (&addon, &deployment)).await;

    // Upstream's Deployment checker: the same verdict as the default's on this Deployment.
    choose("DeploymentAvailability").await;
    fixture::wait(
        addons.clone(),
        &addon,
        "Available False by the Deployment checker",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "Available").is_some_and(|c| {
                c.reason == "ProbeUnavailable" && c.message.ends_with("readyReplica is not probed")
            })
        },
    )
    .await;

    // A prober that does not exist: upstream's report of a template it cannot build; what is
    // deployed stays.
    choose("Sometimes").await;
    let message = wait_condition(
        &addons,
        &addon,
        "ManifestApplied",
        "False",
        "ManifestWorkApplyFailed",
    )
    .await;
    assert!(
        message.contains("unknown health prober \"Sometimes\""),
        "{message}"
    );
    let work = format!("addon-{addon}-deploy-0");
    assert!(
        Api::<ManifestWork>::namespaced(hub.clone(), &c)
            .get_opt(&work)
            .await
            .unwrap()
            .is_some()
    );

    // The install namespace is the one the template's manifests use.
    let install = addons.get(&addon).await.unwrap().install_namespace();
    assert_eq!(install, "default");
    lease_renewed(&managed, &install, &addon).await;
    choose("Lease").await;
    let mca = fixture::wait(
        addons.clone(),
        &addon,
        "Available from the agent's lease",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "Available").is_some_and(|c| {
                c.status == "True" && c.reason == "ManagedClusterAddOnLeaseUpdated"
            })
        },
    )
    .await;
    let mode = mca.status.unwrap().health_check.and_then(|h| h.mode);
    assert_eq!(mode, Some(HealthCheckMode::Lease));

    // None: the hub hands the condition to the add-on's own controller (mode Customized, which
    // the registration agent's lease reporter leaves alone too).
    choose("None").await;
    customized(&addons, &addon).await;

    // Disabled while the work agent runs: it releases the deploy work.
    let works = Api::<ManifestWork>::namespaced(hub.clone(), &c);
    let work = works.get(&format!("addon-{addon}-deploy-0")).await.unwrap();
    succeeds(&["addon", "disable", "--names", &addon, "--clusters", &c]).await;
    fixture::wait_deleted(works, &work.name_any(), &work.uid().unwrap()).await;
    shutdown.cancel();
    let dp = DeleteParams::default();
    let _ = Api::<ClusterManagementAddOn>::all(hub.clone())
        .delete(&addon, &dp)
        .await;
    let _ = templates.delete(&template, &dp).await;
    let _ = Api::<Lease>::namespaced(managed, &install)
        .delete(&addon, &dp)
        .await;
    agent.remove().await;
}
