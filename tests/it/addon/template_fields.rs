//! The AddOnTemplate's and the add-on's fields a platform team sets besides the manifests, each
//! seen where it lands: a template's `addonName` (a change to the template re-renders its
//! clusters' works; `addon create` refuses another add-on's template), its work options
//! (`agentSpec.deleteOption` and `executor`) on the deploy work, a `SingleNamespace` hub
//! permission bound in its namespace for every cluster's agent, and AddOnDeploymentConfigs named
//! with their namespace by a placement strategy and by one cluster's add-on; the add-on's
//! display name and CRD name, which nothing acts on (upstream neither) but kubectl shows.
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, Role, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use clusteradm::api::addon::{
    AddOnDeploymentConfig, AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn,
};
use clusteradm::api::cluster::PlacementDecision;
use clusteradm::api::work::ManifestWork;

use super::{clusters, succeeds};
use crate::common;
use crate::registration::fixture::{self, on_hub};

const GROUP: &str = "addon.open-cluster-management.io";

/// The add-on's deploy work on `cluster`, once `check` holds for it.
async fn deploy_work(
    hub: &kube::Client,
    cluster: &str,
    addon: &str,
    what: &str,
    check: impl Fn(&ManifestWork) -> bool,
) -> ManifestWork {
    fixture::wait(
        Api::<ManifestWork>::namespaced(hub.clone(), cluster),
        &format!("addon-{addon}-deploy-0"),
        what,
        |w: Option<&ManifestWork>| w.is_some_and(&check),
    )
    .await
}

/// The `data` of the first manifest (the template's ConfigMap).
fn data(w: &ManifestWork) -> &Value {
    &w.spec.workload.manifests[0]["data"]
}

async fn create<K>(api: &Api<K>, object: Value)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(object).unwrap();
    api.create(&PostParams::default(), &object).await.unwrap();
}

/// ClusterManagementAddOn `addon`, whose default config is AddOnTemplate `template`.
async fn template_addon(hub: &kube::Client, addon: &str, template: &str) {
    create(
        &Api::<ClusterManagementAddOn>::all(hub.clone()),
        json!({
        "apiVersion": format!("{GROUP}/v1alpha1"), "kind": "ClusterManagementAddOn",
        "metadata": {"name": addon},
        "spec": {"supportedConfigs": [{"group": GROUP, "resource": "addontemplates",
            "defaultConfig": {"name": template}}]}}),
    )
    .await;
}

async fn namespace(hub: &kube::Client, name: &str) {
    create(
        &Api::<Namespace>::all(hub.clone()),
        json!({"metadata": {"name": name}}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one template's fields, each where it lands
async fn a_templates_name_work_options_and_namespaced_permission_reach_the_hub() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-atf").await;
    let addon = common::unique("it-atf-addon");
    let (template, shared) = (format!("{addon}-t"), format!("{addon}-shared"));
    namespace(&hub, &shared).await;
    // The role the permission binds; RBAC lets the add-on manager bind only a role that exists
    // and grants no more than it holds.
    create(
        &Api::<Role>::namespaced(hub.clone(), &shared),
        json!({"metadata": {"name": "reader", "namespace": shared},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}),
    )
    .await;
    let manifest = |greeting: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "hello", "namespace": "default"}, "data": {"greeting": greeting}})
    };
    let executor = json!({"subject": {"type": "ServiceAccount",
        "serviceAccount": {"namespace": "default", "name": "deployer"}}});
    let templates = Api::<AddOnTemplate>::all(hub.clone());
    create(&templates, json!({
        "apiVersion": format!("{GROUP}/v1alpha1"), "kind": "AddOnTemplate",
        "metadata": {"name": template},
        "spec": {"addonName": addon,
            "agentSpec": {"workload": {"manifests": [manifest("hello")]},
                "deleteOption": {"propagationPolicy": "Orphan"}, "executor": executor},
            "registration": [{"type": "KubeClient", "kubeClient": {"hubPermissions": [
                {"type": "SingleNamespace", "singleNamespace": {"namespace": shared,
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}}}]}}]}})).await;
    template_addon(&hub, &addon, &template).await;
    succeeds(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &c.join(","),
    ])
    .await;

    // The work options reach the deploy work as the template gives them.
    let work = deploy_work(&hub, &c[0], &addon, "the deploy work", |w| {
        data(w)["greeting"] == "hello"
    })
    .await;
    let spec = serde_json::to_value(&work.spec).unwrap();
    assert_eq!(spec["deleteOption"], json!({"propagationPolicy": "Orphan"}));
    assert_eq!(spec["executor"], executor);

    // One binding in the named namespace, for the agent of every cluster (upstream's name).
    let binding = fixture::wait(
        Api::<RoleBinding>::namespaced(hub.clone(), &shared),
        &format!("open-cluster-management:{addon}:role:agent"),
        "the SingleNamespace binding",
        |b: Option<&RoleBinding>| b.is_some(),
    )
    .await;
    assert_eq!(binding.role_ref.name, "reader");
    assert_eq!(binding.role_ref.kind, "Role");
    let subjects: Vec<(String, String)> = binding
        .subjects
        .unwrap_or_default()
        .into_iter()
        .map(|s| (s.kind, s.name))
        .collect();
    assert!(
        subjects.contains(&(
            "Group".into(),
            format!("system:open-cluster-management:addon:{addon}")
        )),
        "every cluster's agent shares the binding: {subjects:?}"
    );
    assert!(
        !subjects.iter().any(|(_, n)| n == "system:authenticated"),
        "{subjects:?}"
    );

    // A change to the template (its addonName names the add-on) re-renders every cluster's work.
    let patch = json!({"spec": {"agentSpec": {"workload": {"manifests": [manifest("bye")]}}}});
    templates
        .patch(&template, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
    for cluster in &c {
        deploy_work(&hub, cluster, &addon, "the work re-rendered", |w| {
            data(w)["greeting"] == "bye"
        })
        .await;
    }

    // addon create refuses a template written for another add-on, and creates nothing.
    let other = common::unique("it-atf-other");
    let file = common::temp_file(
        "template.yaml",
        &format!(
            "apiVersion: {GROUP}/v1alpha1\nkind: AddOnTemplate\nmetadata:\n  name: t\nspec:\n  addonName: {addon}\n  agentSpec:\n    workload:\n      manifests:\n      - {}\n",
            manifest("x")
        ),
    );
    let (code, _, err) = on_hub(&["addon", "create", &other, "-f", file.to_str().unwrap()]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("is for add-on \"{addon}\", not \"{other}\"")),
        "{err}"
    );
    assert!(
        Api::<ClusterManagementAddOn>::all(hub.clone())
            .get_opt(&other)
            .await
            .unwrap()
            .is_none()
    );

    let dp = DeleteParams::default();
    let _ = templates.delete(&template, &dp).await;
    let _ = Api::<Namespace>::all(hub.clone())
        .delete(&shared, &dp)
        .await;
    super::cleanup(&addon, &c).await;
}

/// A template's hub permission that binds more than upstream's add-on manager's account holds
/// (Secrets) is refused by RBAC, since the binding is written as that account, and the add-on
/// says why (`RegistrationApplied` False, upstream's `SetPermissionFailed`); once the user grants
/// that account the role, as add-ons' charts do for upstream's, the binding is made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_permission_beyond_the_addon_managers_rights_is_refused_and_said() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-perm").await;
    let addon = common::unique("it-perm-addon");
    let (template, role) = (format!("{addon}-t"), format!("{addon}-secrets"));
    create(
        &Api::<ClusterRole>::all(hub.clone()),
        json!({"metadata": {"name": role},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}),
    )
    .await;
    create(
        &Api::<AddOnTemplate>::all(hub.clone()),
        json!({
        "apiVersion": format!("{GROUP}/v1alpha1"), "kind": "AddOnTemplate",
        "metadata": {"name": template},
        "spec": {"addonName": addon,
            "agentSpec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "hello", "namespace": "default"}}]}},
            "registration": [{"type": "KubeClient", "kubeClient": {"hubPermissions": [
                {"type": "CurrentCluster", "currentCluster": {"clusterRoleName": role}}]}}]}}),
    )
    .await;
    template_addon(&hub, &addon, &template).await;
    succeeds(&["addon", "enable", "--names", &addon, "--clusters", &c[0]]).await;

    let registration = |reason: &'static str| {
        move |a: Option<&ManagedClusterAddOn>| {
            a.and_then(|a| a.status.as_ref()).is_some_and(|s| {
                s.conditions
                    .iter()
                    .any(|c| c.type_ == "RegistrationApplied" && c.reason == reason)
            })
        }
    };
    let refused = fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[0]),
        &addon,
        "the refused permission reported",
        registration("SetPermissionFailed"),
    )
    .await;
    let condition = refused
        .status
        .unwrap()
        .conditions
        .into_iter()
        .find(|c| c.type_ == "RegistrationApplied")
        .unwrap();
    assert_eq!(condition.status, "False");
    assert!(
        condition
            .message
            .contains("Failed to set permission for hub agent")
            && condition.message.contains("forbidden"),
        "{}",
        condition.message
    );
    let bindings = Api::<RoleBinding>::namespaced(hub.clone(), &c[0]);
    let binding = format!("open-cluster-management:{addon}:clusterrole:agent");
    assert!(bindings.get_opt(&binding).await.unwrap().is_none());

    // Granted to the add-on manager's account (in the cluster's namespace), the permission is
    // bound.
    create(
        &bindings,
        json!({"metadata": {"name": format!("{addon}-grant"), "namespace": c[0]},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "addon-manager-controller-sa",
                "namespace": "open-cluster-management-hub"}]}),
    )
    .await;
    fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[0]),
        &addon,
        "the permission applied",
        registration("SetPermissionApplied"),
    )
    .await;
    assert_eq!(
        bindings.get(&binding).await.unwrap().role_ref.name,
        role,
        "the binding made"
    );

    let dp = DeleteParams::default();
    let _ = Api::<AddOnTemplate>::all(hub.clone())
        .delete(&template, &dp)
        .await;
    let _ = Api::<ClusterRole>::all(hub.clone())
        .delete(&role, &dp)
        .await;
    super::cleanup(&addon, &c).await;
}

/// An AddOnDeploymentConfig in `ns` setting GREETING to `greeting`.
async fn greeting_config(hub: &kube::Client, ns: &str, greeting: &str) {
    create(
        &Api::<AddOnDeploymentConfig>::namespaced(hub.clone(), ns),
        json!({"apiVersion": format!("{GROUP}/v1alpha1"), "kind": "AddOnDeploymentConfig",
            "metadata": {"name": "cfg", "namespace": ns},
            "spec": {"customizedVariables": [{"name": "GREETING", "value": greeting}]}}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configs_named_with_their_namespace_by_a_placement_or_a_cluster_fill_the_template() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-cfgns").await;
    let addon = common::unique("it-cfgns-addon");
    let placement = common::unique("it-cfgns");
    let file = common::temp_file(
        "agent.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n  namespace: default\ndata:\n  greeting: '{{GREETING}}'\n",
    );
    succeeds(&["addon", "create", &addon, "-f", file.to_str().unwrap()]).await;
    let (by_placement, by_cluster) = (format!("{addon}-p"), format!("{addon}-c"));
    for (ns, greeting) in [
        (&by_placement, "from-placement"),
        (&by_cluster, "from-cluster"),
    ] {
        namespace(&hub, ns).await;
        greeting_config(&hub, ns, greeting).await;
    }
    let adc = |ns: &str| json!({"group": GROUP, "resource": "addondeploymentconfigs", "namespace": ns, "name": "cfg"});
    let patch = json!({"spec": {
        "supportedConfigs": [
            {"group": GROUP, "resource": "addontemplates", "defaultConfig": {"name": format!("{addon}-0.0.1")}},
            {"group": GROUP, "resource": "addondeploymentconfigs"}],
        "installStrategy": {"type": "Placements", "placements": [
            {"namespace": "default", "name": placement, "configs": [adc(&by_placement)]}]}}});
    Api::<ClusterManagementAddOn>::all(hub.clone())
        .patch(&addon, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
    let decisions: Api<PlacementDecision> = Api::namespaced(hub.clone(), "default");
    let decision = format!("{placement}-decision-1");
    create(
        &decisions,
        json!({"metadata": {"name": decision, "namespace": "default",
        "labels": {"cluster.open-cluster-management.io/placement": placement}}}),
    )
    .await;
    let list: Vec<Value> = c
        .iter()
        .map(|c| json!({"clusterName": c, "reason": ""}))
        .collect();
    decisions
        .patch_status(
            &decision,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"decisions": list}})),
        )
        .await
        .unwrap();

    // The strategy's config, found in its namespace, fills both clusters' works.
    for cluster in &c {
        deploy_work(
            &hub,
            cluster,
            &addon,
            "rendered with the placement's config",
            |w| data(w)["greeting"] == "from-placement",
        )
        .await;
    }
    // One cluster's add-on names its own config, in another namespace: it wins there only.
    let own = json!({"spec": {"configs": [adc(&by_cluster)]}});
    Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[1])
        .patch(&addon, &PatchParams::default(), &Patch::Merge(own))
        .await
        .unwrap();
    deploy_work(
        &hub,
        &c[1],
        &addon,
        "rendered with the cluster's config",
        |w| data(w)["greeting"] == "from-cluster",
    )
    .await;
    let first = Api::<ManifestWork>::namespaced(hub.clone(), &c[0])
        .get(&format!("addon-{addon}-deploy-0"))
        .await
        .unwrap();
    assert_eq!(data(&first)["greeting"], "from-placement");

    let dp = DeleteParams::default();
    let _ = decisions.delete(&decision, &dp).await;
    let _ = Api::<AddOnTemplate>::all(hub.clone())
        .delete(&format!("{addon}-0.0.1"), &dp)
        .await;
    for ns in [&by_placement, &by_cluster] {
        let _ = Api::<Namespace>::all(hub.clone()).delete(ns, &dp).await;
    }
    super::cleanup(&addon, &c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_addons_meta_and_crd_name_are_what_kubectl_shows() {
    fixture::hub().await;
    let hub = common::hub().await;
    let addon = common::unique("it-meta-addon");
    create(
        &Api::<ClusterManagementAddOn>::all(hub.clone()),
        json!({
        "apiVersion": format!("{GROUP}/v1alpha1"), "kind": "ClusterManagementAddOn",
        "metadata": {"name": addon},
        "spec": {"addOnMeta": {"displayName": "Hello World", "description": "says hello"},
            "addOnConfiguration": {"crdName": "hellos.example.com"}}}),
    )
    .await;
    // The table kubectl asks the API server for (`kubectl get clustermanagementaddons`).
    let request = http::Request::get(format!(
        "/apis/{GROUP}/v1alpha1/clustermanagementaddons/{addon}"
    ))
    .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
    .body(Vec::new())
    .unwrap();
    let table: Value = serde_json::from_str(&hub.request_text(request).await.unwrap()).unwrap();
    let columns: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let cells = table["rows"][0]["cells"].as_array().unwrap();
    let cell = |name: &str| &cells[columns.iter().position(|c| *c == name).unwrap()];
    assert_eq!(cell("DISPLAY NAME"), "Hello World", "{table}");
    assert_eq!(cell("CRD NAME"), "hellos.example.com", "{table}");
    // Stored whole: the description too, read back from the served version.
    let stored = Api::<ClusterManagementAddOn>::all(hub.clone())
        .get(&addon)
        .await
        .unwrap();
    let meta = serde_json::to_value(stored.spec.add_on_meta).unwrap();
    assert_eq!(meta["description"], "says hello");
    let _ = Api::<ClusterManagementAddOn>::all(hub)
        .delete(&addon, &DeleteParams::default())
        .await;
}
