//! A work whose ClusterRole, aggregated into the agent's own role, is what lets the agent manage
//! the work's custom resources (upstream's e2e "With CRD/CR should create crd/cr with aggregated
//! cluster role"): deleting the work removes everything and the work goes. The agent acts as a
//! ServiceAccount holding only what upstream's work agent holds for this, so removing the
//! ClusterRole first would leave it unable to see its custom resource go, and the work forever.
use std::time::Duration;

use clusteradm::api::work::ManifestWork;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, GroupVersionKind, PostParams};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use super::{Agent, TestCluster, applied_and_available, wait_gone, wait_work};
use crate::common;

/// The agent's own ClusterRole and the aggregating one, bound to a fresh ServiceAccount name;
/// returns the managed client acting as it, and the aggregation label.
async fn least_privileged_agent(managed: &Client, name: &str) -> (Client, (String, String)) {
    let label = (format!("it.example.com/{name}"), "true".to_string());
    let account = ("default", name);
    let agent_rules = json!([
        {"apiGroups": ["work.open-cluster-management.io"], "resources": ["appliedmanifestworks"],
         "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
        {"apiGroups": ["work.open-cluster-management.io"],
         "resources": ["appliedmanifestworks/status", "appliedmanifestworks/finalizers"],
         "verbs": ["patch", "update"]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
         "verbs": ["get", "list", "watch", "create", "delete", "update", "patch"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
         "verbs": ["get", "list", "watch", "create", "update", "patch", "delete", "escalate", "bind"]},
    ]);
    let roles: Api<ClusterRole> = Api::all(managed.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(managed.clone());
    let aggregate = format!("{name}-aggregate");
    for (role, body) in [
        (name.to_string(), json!({"rules": agent_rules})),
        (
            aggregate.clone(),
            json!({"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {&label.0: &label.1}}]}}),
        ),
    ] {
        let mut object = json!({"metadata": {"name": role}});
        object
            .as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        roles
            .create(
                &PostParams::default(),
                &serde_json::from_value(object).unwrap(),
            )
            .await
            .unwrap();
        let binding = json!({"metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "namespace": account.0, "name": account.1}]});
        bindings
            .create(
                &PostParams::default(),
                &serde_json::from_value(binding).unwrap(),
            )
            .await
            .unwrap();
    }
    let (user, groups) = clusteradm::runtime::impersonate::service_account(account.0, account.1);
    let client = clusteradm::runtime::impersonate::as_user(managed, &user, &groups);
    (client, label)
}

/// Removes the agent's roles and bindings when dropped, also when the test fails.
struct AgentRoles(Client, String);

impl Drop for AgentRoles {
    fn drop(&mut self) {
        let (managed, name) = (self.0.clone(), self.1.clone());
        super::run_from_drop(async move {
            for role in [
                name.clone(),
                format!("{name}-aggregate"),
                format!("{name}-widgets"),
            ] {
                let _ = Api::<ClusterRoleBinding>::all(managed.clone())
                    .delete(&role, &DeleteParams::default())
                    .await;
                let _ = Api::<ClusterRole>::all(managed.clone())
                    .delete(&role, &DeleteParams::default())
                    .await;
            }
        });
    }
}

// Multi-threaded: the in-process agent runs beside the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_deletes_the_rbac_that_lets_its_agent_see_its_resources_last() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-rbac").await;
    let ns = c.managed_namespace().await;
    let name = common::unique("rbac-last");
    let _roles = AgentRoles(c.managed.clone(), name.clone());
    let (agent_client, label) = least_privileged_agent(&c.managed, &name).await;
    let _agent = Agent::start(
        c.hub.clone(),
        agent_client,
        &c.name,
        Duration::from_secs(60),
    );
    let group = format!("{name}.example.com");
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": format!("{name}-widgets"), "labels": {&label.0: &label.1}},
        "rules": [{"apiGroups": [group], "resources": ["widgets"], "verbs": ["*"]}]});
    let widget = json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
        "metadata": {"name": "w1", "namespace": ns}, "spec": {"size": 1}});
    let work: ManifestWork = serde_json::from_value(json!({
        "metadata": {"name": "widgets"},
        "spec": {"workload": {"manifests": [crd, role, widget]}}}))
    .unwrap();
    c.create_work("widgets", work.spec).await;
    wait_work(&c.works(), "widgets", "applied", applied_and_available).await;
    let widgets: Api<DynamicObject> = Api::namespaced_with(
        c.managed.clone(),
        &ns,
        &kube::api::ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(&group, "v1", "Widget"),
            "widgets",
        ),
    );
    assert!(widgets.get_opt("w1").await.unwrap().is_some());

    let uid = c.works().get("widgets").await.unwrap().uid().unwrap();
    c.works()
        .delete("widgets", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(c.works(), "widgets", &uid).await;
    let crds: Api<CustomResourceDefinition> = Api::all(c.managed.clone());
    assert!(
        crds.get_opt(&format!("widgets.{group}"))
            .await
            .unwrap()
            .is_none()
    );
    let roles: Api<ClusterRole> = Api::all(c.managed.clone());
    assert!(
        roles
            .get_opt(&format!("{name}-widgets"))
            .await
            .unwrap()
            .is_none()
    );
}
