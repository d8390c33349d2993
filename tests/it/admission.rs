//! The hub's admission rules as ValidatingAdmissionPolicies (`init --admission policies`: what
//! the ClusterManager operator applies in place of webhooks), enforced by the real API server and
//! its real authorizer. For each rule that needs a permission: a user with the base permission is
//! refused with the policy's message, and the same user with the special permission succeeds. The
//! shape rules refuse everyone. The shared hub fixture binds the policies to objects labelled
//! [`fixture::POLICIES_LABEL`], which every object here carries; the shared hub's webhooks
//! (`tests/it/admission_webhooks.rs`) see them too, after the policies, so every allowed case
//! passes both.
use std::time::Duration;

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::ResourceExt as _;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use clusteradm::api::cluster::{CLUSTER_SET_LABEL, ManagedCluster};

use crate::common;
use crate::registration::fixture;

const CLUSTER: &str = "cluster.open-cluster-management.io";

pub(crate) fn resource(kind: &str) -> ApiResource {
    let (group, version, plural) = match kind {
        "ManagedCluster" => (CLUSTER, "v1", "managedclusters"),
        "ManagedClusterSetBinding" => (CLUSTER, "v1beta2", "managedclustersetbindings"),
        "ManifestWork" => ("work.open-cluster-management.io", "v1", "manifestworks"),
        "ManifestWorkReplicaSet" => (
            "work.open-cluster-management.io",
            "v1alpha1",
            "manifestworkreplicasets",
        ),
        other => panic!("no resource for {other}"),
    };
    ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk(group, version, kind),
        plural,
    )
}

/// A dry-run create of `object` as `user`: `Ok` or the API server's message.
async fn try_create(user: &kube::Client, mut object: Value) -> Result<(), String> {
    object["metadata"]["labels"][fixture::POLICIES_LABEL] = json!("true");
    let obj: DynamicObject = serde_json::from_value(object).unwrap();
    let ar = resource(&obj.types.as_ref().unwrap().kind);
    let api: Api<DynamicObject> = match &obj.metadata.namespace {
        Some(ns) => Api::namespaced_with(user.clone(), ns, &ar),
        None => Api::all_with(user.clone(), &ar),
    };
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    match api.create(&dry, &obj).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) => Err(s.message),
        Err(e) => Err(e.to_string()),
    }
}

/// Waits until `user` may create `object` (RBAC and policies take moments to apply).
async fn allowed(what: &str, user: &kube::Client, object: Value) {
    common::eventually(what, Duration::from_secs(30), || {
        let (user, object) = (user.clone(), object.clone());
        async move { try_create(&user, object).await.ok() }
    })
    .await;
}

/// Waits until admission refuses `user` `object`, and returns the message. An RBAC
/// refusal doesn't count: a grant made just before takes moments to reach the authorizer.
async fn refused(what: &str, user: &kube::Client, object: Value) -> String {
    common::eventually(what, Duration::from_secs(30), || {
        let (user, object) = (user.clone(), object.clone());
        async move {
            try_create(&user, object)
                .await
                .err()
                .filter(|message| !is_rbac_refusal(message))
        }
    })
    .await
}

/// The authorizer's wording: `User "u" cannot create resource "r" ...`.
fn is_rbac_refusal(message: &str) -> bool {
    message.contains("\" cannot ") && message.contains(" resource \"")
}

/// A ClusterRole with `rules` bound to `group`, removed on drop of the returned guard's names.
pub(crate) async fn grant(hub: &kube::Client, name: &str, group: &str, rules: Value) {
    let ssa = PatchParams::apply("it-admission").force();
    let role: ClusterRole =
        serde_json::from_value(json!({"metadata": {"name": name}, "rules": rules})).unwrap();
    Api::<ClusterRole>::all(hub.clone())
        .patch(name, &ssa, &Patch::Apply(&role))
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group}]
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(hub.clone())
        .patch(name, &ssa, &Patch::Apply(&binding))
        .await
        .unwrap();
}

/// `execute-as` on ManifestWorks for `user`, granted to `group` as ClusterRole `name`.
async fn grant_execute_as(hub: &kube::Client, name: &str, group: &str, user: &str) {
    grant(
        hub,
        name,
        group,
        json!([{
        "apiGroups": ["work.open-cluster-management.io"], "resources": ["manifestworks"],
        "resourceNames": [user], "verbs": ["execute-as"]}]),
    )
    .await;
}

pub(crate) async fn revoke(hub: &kube::Client, names: &[&str]) {
    for name in names {
        let _ = Api::<ClusterRoleBinding>::all(hub.clone())
            .delete(name, &DeleteParams::default())
            .await;
        let _ = Api::<ClusterRole>::all(hub.clone())
            .delete(name, &DeleteParams::default())
            .await;
    }
}

/// A user in a group of its own, with the installed hub and its policies.
pub(crate) async fn user(id: &str) -> (kube::Client, kube::Client, String) {
    fixture::hub().await;
    let hub = common::hub().await;
    let group = format!("{id}-group");
    let user = common::certificate_client(&hub, &format!("{id}-user"), &group).await;
    (hub, user, group)
}

fn cluster(name: &str, accepts: bool, set: Option<&str>) -> Value {
    let mut labels = json!({fixture::POLICIES_LABEL: "true"});
    if let Some(s) = set {
        labels[CLUSTER_SET_LABEL] = json!(s);
    }
    json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": labels}, "spec": {"hubAcceptsClient": accepts}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_and_joining_a_set_need_upstreams_permissions() {
    // The bootstrap credential may create ManagedClusters, but not accepted ones.
    let token = fixture::hub().await;
    let bootstrap = common::hub_client_with_token(&token).await;
    let own = common::unique("it-vap-self");
    let message = refused("self-acceptance", &bootstrap, cluster(&own, true, None)).await;
    assert!(message.contains("managedclusters/accept"), "{message}");
    try_create(&bootstrap, cluster(&own, false, None))
        .await
        .unwrap();

    let id = common::unique("it-vap");
    let (hub, user, group) = user(&id).await;
    let writer = format!("{id}-writer");
    grant(
        &hub,
        &writer,
        &group,
        json!([{
        "apiGroups": [CLUSTER], "resources": ["managedclusters"],
        "verbs": ["create", "get", "update", "patch"]},
        // A cluster without a set lands in `default` (the mutating webhook labels it first).
        {"apiGroups": [CLUSTER], "resources": ["managedclustersets/join"],
         "resourceNames": ["default"], "verbs": ["create"]}]),
    )
    .await;
    let c = common::unique("it-vap-c");
    // Not accepting, no set: allowed.
    allowed("the writer's RBAC", &user, cluster(&c, false, None)).await;
    // Accepting without managedclusters/accept: refused, saying which permission would allow it.
    let message = refused("accepting", &user, cluster(&c, true, None)).await;
    assert!(
        message.contains("update on managedclusters/accept"),
        "{message}"
    );
    // Joining a set without managedclustersets/join: refused.
    let set = format!("{id}-set");
    let message = try_create(&user, cluster(&c, false, Some(&set)))
        .await
        .unwrap_err();
    assert!(
        message.contains("create on managedclustersets/join"),
        "{message}"
    );

    let accepter = format!("{id}-accepter");
    grant(&hub, &accepter, &group, json!([
        {"apiGroups": ["register.open-cluster-management.io"], "resources": ["managedclusters/accept"],
         "resourceNames": [c], "verbs": ["update"]},
        {"apiGroups": [CLUSTER], "resources": ["managedclustersets/join"],
         "resourceNames": [set], "verbs": ["create"]}])).await;
    allowed(
        "accepting with managedclusters/accept",
        &user,
        cluster(&c, true, Some(&set)),
    )
    .await;
    // The permission is per cluster and per set.
    let other = common::unique("it-vap-other");
    assert!(
        try_create(&user, cluster(&other, true, None))
            .await
            .is_err()
    );
    assert!(
        try_create(&user, cluster(&c, false, Some("another-set")))
            .await
            .is_err()
    );
    revoke(&hub, &[&writer, &accepter]).await;
}

/// The hub fills in what upstream's mutating webhook did — the `default` set, taint times — and a
/// user who may only edit the spec may not write a taint's time himself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hub_sets_default_set_and_taint_times_and_users_may_not() {
    let id = common::unique("it-vap-taint");
    let (hub, user, group) = user(&id).await;
    let name = common::unique("it-vap-t");
    let clusters: Api<ManagedCluster> = Api::all(hub.clone());
    let mut mc = cluster(&name, false, None);
    mc["spec"]["taints"] = json!([{"key": "example.com/maintenance", "effect": "NoSelect"}]);
    clusters
        .create(&PostParams::default(), &serde_json::from_value(mc).unwrap())
        .await
        .unwrap();
    let filled = fixture::wait(
        clusters.clone(),
        &name,
        "the default set and the taint's time",
        |mc: Option<&ManagedCluster>| {
            mc.is_some_and(|mc| {
                mc.labels().get(CLUSTER_SET_LABEL).map(String::as_str) == Some("default")
                    && mc.spec.taints.iter().all(|t| t.time_added.is_some())
            })
        },
    )
    .await;
    let time = filled.spec.taints[0].time_added.clone().unwrap();

    let writer = format!("{id}-writer");
    grant(
        &hub,
        &writer,
        &group,
        json!([{
        "apiGroups": [CLUSTER], "resources": ["managedclusters"],
        "verbs": ["create", "get", "update", "patch"]},
        {"apiGroups": [CLUSTER], "resources": ["managedclustersets/join"],
         "resourceNames": ["default"], "verbs": ["create"]}]),
    )
    .await;
    // A new taint with a time: refused. (Without one it is allowed by the policy, but here the
    // shared hub's mutating webhook, which runs first, gives it the hub's time: the lifecycle
    // test of policies mode checks that case with no webhook.)
    let with_taints = |taints: Value| {
        let mut mc = cluster(&common::unique("it-vap-t2"), false, Some("default"));
        mc["spec"]["taints"] = taints;
        mc
    };
    let backdated = with_taints(
        json!([{"key": "a", "effect": "NoSelect", "timeAdded": "2020-01-01T00:00:00Z"}]),
    );
    let message = refused("a backdated taint", &user, backdated.clone()).await;
    assert!(
        message.contains("timeAdded of taint a")
            && message.contains("update on managedclusters/status"),
        "{message}"
    );
    // Changing the time of an existing taint, as the user: refused; keeping it: allowed.
    let users: Api<ManagedCluster> = Api::all(user.clone());
    let change = |at: &str| json!({"spec": {"taints": [{"key": "example.com/maintenance", "effect": "NoSelect", "timeAdded": at}]}});
    let dry = PatchParams {
        dry_run: true,
        ..Default::default()
    };
    let err = users
        .patch(&name, &dry, &Patch::Merge(change("2020-01-01T00:00:00Z")))
        .await
        .unwrap_err();
    // The shared hub's mutating webhook runs before the policy, and refuses it first.
    let err = err.to_string();
    assert!(
        err.contains("managedclusters/status") || err.contains("not allowed to set TimeAdded"),
        "{err}"
    );
    let kept = serde_json::to_value(&time).unwrap();
    users
        .patch(&name, &dry, &Patch::Merge(change(kept.as_str().unwrap())))
        .await
        .unwrap();

    // With update on managedclusters/status (the hub controller's permission), allowed.
    let status = format!("{id}-status");
    grant(
        &hub,
        &status,
        &group,
        json!([{
        "apiGroups": [CLUSTER], "resources": ["managedclusters/status"], "verbs": ["update"]}]),
    )
    .await;
    allowed(
        "a backdated taint with managedclusters/status",
        &user,
        backdated,
    )
    .await;

    revoke(&hub, &[&writer, &status]).await;
    clusters
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_a_set_needs_bind_and_the_sets_name() {
    let id = common::unique("it-vap-bind");
    let (hub, user, group) = user(&id).await;
    let ns = "default";
    let set = format!("{id}-set");
    let binding = |name: &str, set: &str| {
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
               "metadata": {"name": name, "namespace": ns}, "spec": {"clusterSet": set}})
    };
    let creator = format!("{id}-creator");
    grant(
        &hub,
        &creator,
        &group,
        json!([{
        "apiGroups": [CLUSTER], "resources": ["managedclustersetbindings"], "verbs": ["create"]}]),
    )
    .await;
    let message = refused("binding without bind", &user, binding(&set, &set)).await;
    assert!(
        message.contains("create on managedclustersets/bind"),
        "{message}"
    );
    assert!(message.contains(&set), "{message}");
    let message = try_create(&user, binding("other-name", &set))
        .await
        .unwrap_err();
    assert!(message.contains("must be the name of the set"), "{message}");

    let binder = format!("{id}-binder");
    grant(
        &hub,
        &binder,
        &group,
        json!([{
        "apiGroups": [CLUSTER], "resources": ["managedclustersets/bind"],
        "resourceNames": [set], "verbs": ["create"]}]),
    )
    .await;
    allowed("binding with bind", &user, binding(&set, &set)).await;
    // The name rule holds for everyone.
    assert!(
        try_create(&user, binding("other-name", &set))
            .await
            .is_err()
    );
    revoke(&hub, &[&creator, &binder]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifest_works_must_be_well_formed_and_executors_need_execute_as() {
    let id = common::unique("it-vap-work");
    let (hub, user, group) = user(&id).await;
    let ns = "default";
    let config_map = |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}});
    let work = |spec: Value| {
        json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
               "metadata": {"name": "w", "namespace": ns}, "spec": spec})
    };
    let one = json!({"manifests": [config_map("a")]});
    let creator = format!("{id}-creator");
    grant(&hub, &creator, &group, json!([{
        "apiGroups": ["work.open-cluster-management.io"], "resources": ["manifestworks"], "verbs": ["create"]}]))
    .await;
    allowed("a plain work", &user, work(json!({"workload": one}))).await;

    let big = "x".repeat(clusteradm::work::manifests::MAX_BYTES);
    let cases = [
        (json!({}), "spec.workload.manifests is empty"),
        (
            json!({"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "a-"}}]}}),
            "lack apiVersion, kind or metadata.name",
        ),
        (
            json!({"workload": {"manifests": [config_map("a"), config_map("a")]}}),
            "manifest v1/ConfigMap/default/a (apiVersion/kind/namespace/name) appears more than once",
        ),
        (
            json!({"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": big}}]}}),
            "over the 500 KiB a ManifestWork may hold",
        ),
        (
            json!({"workload": one, "deleteOption": {"ttlSecondsAfterFinished": -1}}),
            "ttlSecondsAfterFinished is negative",
        ),
        (
            json!({"workload": one, "deleteOption": {"propagationPolicy": "SelectivelyOrphan",
                   "selectivelyOrphans": {"orphaningRules": [{"resource": "configmaps", "name": ""}]}}}),
            "orphaningRules needs a resource and a name",
        ),
        (
            json!({"workload": one, "manifestConfigs": [{"resourceIdentifier": {"resource": "", "name": "a"}}]}),
            "manifestConfigs needs resourceIdentifier.resource",
        ),
        (
            json!({"workload": one, "executor": {"subject": {"type": "ServiceAccount"}}}),
            "spec.executor needs subject.type ServiceAccount and subject.serviceAccount",
        ),
    ];
    for (spec, expected) in cases {
        let message = try_create(&user, work(spec)).await.unwrap_err();
        assert!(
            message.contains(expected),
            "want {expected:?}, got {message}"
        );
    }

    let executor = json!({"workload": one, "executor": {"subject": {"type": "ServiceAccount",
                          "serviceAccount": {"namespace": "apps", "name": "deployer"}}}});
    let message = try_create(&user, work(executor.clone())).await.unwrap_err();
    assert!(
        message.contains("execute-as on manifestworks")
            && message.contains("system:serviceaccount:apps:deployer"),
        "{message}"
    );
    let executes = format!("{id}-executes");
    grant_execute_as(
        &hub,
        &executes,
        &group,
        "system:serviceaccount:apps:deployer",
    )
    .await;
    allowed(
        "a work run as a service account with execute-as",
        &user,
        work(executor),
    )
    .await;
    revoke(&hub, &[&creator, &executes]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_names_and_client_urls_are_checked_for_everyone() {
    fixture::hub().await;
    let hub = common::hub().await;
    let mut mc = cluster(&common::unique("it-vap-url"), false, Some("default"));
    mc["spec"]["managedClusterClientConfigs"] =
        json!([{"url": "https://ok.example:6443"}, {"url": "http://plain.example"}]);
    let message = refused("an http client URL", &hub, mc).await;
    assert!(
        message.contains("\"http://plain.example\" is not an https URL"),
        "{message}"
    );
    let message = try_create(&hub, cluster("dotted.name", false, Some("default")))
        .await
        .unwrap_err();
    assert!(message.contains("must be a DNS-1123 label"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replica_set_templates_follow_the_manifest_rules() {
    let id = common::unique("it-vap-rs");
    let (hub, user, group) = user(&id).await;
    grant(&hub, &format!("{id}-creator"), &group, json!([{
        "apiGroups": ["work.open-cluster-management.io"], "resources": ["manifestworkreplicasets"], "verbs": ["create"]}]))
    .await;
    let set = |name: &str, manifests: Value| {
        json!({"apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
               "metadata": {"name": name, "namespace": "default"},
               "spec": {"manifestWorkTemplate": {"workload": {"manifests": manifests}}, "placementRefs": [{"name": "p"}]}})
    };
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}});
    let message = refused("an empty replica set", &user, set(&id, json!([]))).await;
    assert!(
        message.contains(&format!("ManifestWorkReplicaSet default/{id} is refused: spec.manifestWorkTemplate.workload.manifests is empty")),
        "{message}"
    );
    let message = try_create(&user, set(&id, json!([cm.clone(), cm.clone()])))
        .await
        .unwrap_err();
    assert!(message.contains("appears more than once"), "{message}");
    allowed("a well-formed replica set", &user, set(&id, json!([cm]))).await;
    revoke(&hub, &[&format!("{id}-creator")]).await;
}

/// The ManifestWork policy with `NilExecutorValidating` on, under the name `id` and bound to
/// namespace `id` alone.
async fn bind_gated_work_policy(hub: &kube::Client, id: &str) {
    use clusteradm::operator::cluster_manager::desired::admission::{
        Gates, MANIFEST_WORK_POLICY, policies_with,
    };
    use k8s_openapi::api::admissionregistration::v1::{
        ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    };
    let mut policy = policies_with(Gates {
        nil_executor_validating: true,
    })
    .into_iter()
    .find(|p| p.metadata.name.as_deref() == Some(MANIFEST_WORK_POLICY))
    .unwrap();
    policy.metadata.name = Some(id.to_owned());
    Api::<ValidatingAdmissionPolicy>::all(hub.clone())
        .create(&PostParams::default(), &policy)
        .await
        .unwrap();
    let binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
        "metadata": {"name": id},
        "spec": {"policyName": id, "validationActions": ["Deny"],
                 "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": id}}}}
    }))
    .unwrap();
    Api::<ValidatingAdmissionPolicyBinding>::all(hub.clone())
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
}

/// With upstream's `NilExecutorValidating` work gate, a work without an executor runs as the
/// work agent's account: creating one, or removing an executor on update, needs `execute-as` on
/// `system:serviceaccount::klusterlet-work-sa`. The gate-on policy is bound to this test's
/// namespace only, under a name of its own, so the shared hub keeps its gate-off policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_nil_executor_validating_a_work_without_executor_needs_execute_as() {
    use clusteradm::operator::cluster_manager::desired::admission::NIL_EXECUTOR_USER;
    use k8s_openapi::api::admissionregistration::v1::{
        ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    };
    let id = common::unique("it-vap-nilexec");
    let (hub, user, group) = user(&id).await;
    let ns: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(json!({"metadata": {"name": id}})).unwrap();
    Api::<k8s_openapi::api::core::v1::Namespace>::all(hub.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    bind_gated_work_policy(&hub, &id).await;

    let work = |executor: Option<Value>| {
        let mut spec = json!({"workload": {"manifests": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}]}});
        if let Some(e) = executor {
            spec["executor"] = e;
        }
        json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
               "metadata": {"name": "w", "namespace": id}, "spec": spec})
    };
    let writer = format!("{id}-writer");
    grant(
        &hub,
        &writer,
        &group,
        json!([{
        "apiGroups": ["work.open-cluster-management.io"], "resources": ["manifestworks"],
        "verbs": ["create", "update", "get"]}]),
    )
    .await;
    let message = refused("a work without executor", &user, work(None)).await;
    assert!(
        message.contains("needs execute-as on manifestworks")
            && message.contains(NIL_EXECUTOR_USER),
        "{message}"
    );

    // Removing an executor is checked as well: a work created (by an admin) with one, updated
    // by the user without it.
    let deployer = json!({"subject": {"type": "ServiceAccount",
                          "serviceAccount": {"namespace": "apps", "name": "deployer"}}});
    let works: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), &id, &resource("ManifestWork"));
    let created = works
        .create(
            &PostParams::default(),
            &serde_json::from_value(work(Some(deployer))).unwrap(),
        )
        .await
        .unwrap();
    let mut without: DynamicObject = serde_json::from_value(work(None)).unwrap();
    without.metadata.resource_version = created.resource_version();
    let as_user: Api<DynamicObject> =
        Api::namespaced_with(user.clone(), &id, &resource("ManifestWork"));
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let err = as_user.replace("w", &dry, &without).await.unwrap_err();
    assert!(err.to_string().contains(NIL_EXECUTOR_USER), "{err}");

    let executes = format!("{id}-executes");
    grant_execute_as(&hub, &executes, &group, NIL_EXECUTOR_USER).await;
    let mut other = work(None);
    other["metadata"]["name"] = "w2".into();
    allowed("a work without executor, with execute-as", &user, other).await;

    revoke(&hub, &[&writer, &executes]).await;
    let _ = Api::<ValidatingAdmissionPolicyBinding>::all(hub.clone())
        .delete(&id, &DeleteParams::default())
        .await;
    let _ = Api::<ValidatingAdmissionPolicy>::all(hub.clone())
        .delete(&id, &DeleteParams::default())
        .await;
    let _ = Api::<k8s_openapi::api::core::v1::Namespace>::all(hub.clone())
        .delete(&id, &DeleteParams::default())
        .await;
}

/// Removing a cluster's set label is a move into `default` (the hub fills it in right after):
/// it needs `join` on the old set and on `default`, as upstream's webhooks (mutating, then
/// validating as the user) require.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_the_set_label_needs_join_on_default_too() {
    let id = common::unique("it-vap-unset");
    let (hub, user, group) = user(&id).await;
    let set = format!("{id}-set");
    let c = common::unique("it-vap-unset-c");
    let clusters: Api<ManagedCluster> = Api::all(hub.clone());
    clusters
        .create(
            &PostParams::default(),
            &serde_json::from_value(cluster(&c, false, Some(&set))).unwrap(),
        )
        .await
        .unwrap();
    let mover = format!("{id}-mover");
    grant(&hub, &mover, &group, json!([
        {"apiGroups": [CLUSTER], "resources": ["managedclusters"], "verbs": ["get", "patch", "update"]},
        {"apiGroups": [CLUSTER], "resources": ["managedclustersets/join"],
         "resourceNames": [set], "verbs": ["create"]}])).await;
    let as_user: Api<ManagedCluster> = Api::all(user.clone());
    let unset = json!({"metadata": {"labels": {CLUSTER_SET_LABEL: null}}});
    let dry = PatchParams {
        dry_run: true,
        ..Default::default()
    };
    let message = common::eventually(
        "the label removal refused by the policy",
        Duration::from_secs(30),
        || {
            let (as_user, c, unset, dry) = (as_user.clone(), c.clone(), unset.clone(), dry.clone());
            async move {
                match as_user.patch(&c, &dry, &Patch::Merge(&unset)).await {
                    Err(kube::Error::Api(s)) if !is_rbac_refusal(&s.message) => Some(s.message),
                    _ => None,
                }
            }
        },
    )
    .await;
    assert!(
        message.contains(&format!("from \"{set}\" to \"default\""))
            && message.contains("managedclustersets/join"),
        "{message}"
    );
    let joiner = format!("{id}-joiner");
    grant(
        &hub,
        &joiner,
        &group,
        json!([
        {"apiGroups": [CLUSTER], "resources": ["managedclustersets/join"],
         "resourceNames": ["default"], "verbs": ["create"]}]),
    )
    .await;
    common::eventually(
        "the label removal allowed with join on default",
        Duration::from_secs(30),
        || {
            let (as_user, c, unset, dry) = (as_user.clone(), c.clone(), unset.clone(), dry.clone());
            async move { as_user.patch(&c, &dry, &Patch::Merge(&unset)).await.ok() }
        },
    )
    .await;
    revoke(&hub, &[&mover, &joiner]).await;
    let _ = clusters.delete(&c, &DeleteParams::default()).await;
}
