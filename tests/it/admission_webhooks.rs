//! Upstream's admission webhooks as the hub serves them (the default mode): the shared hub of
//! this binary points the webhook configurations at itself, and the real API server sends it
//! every ManagedCluster, ManagedClusterSetBinding, ManifestWork and ManifestWorkReplicaSet write.
//! Each refusal is checked for upstream's status code (400 for a malformed object, 403 for a
//! missing permission) and upstream's message, as upstream's e2e suite checks them; defaults are
//! in the object the create returns, not filled in later.
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use clusteradm::api::cluster::{CLUSTER_SET_LABEL, ManagedCluster};
use clusteradm::operator::cluster_manager::desired::webhook as configs;

use crate::admission::{grant, resource, revoke, user};
use crate::common;
use crate::registration::fixture;

const CLUSTER: &str = "cluster.open-cluster-management.io";
const WORK: &str = "work.open-cluster-management.io";

/// A refusal as the client sees it.
#[derive(Debug)]
struct Refusal {
    code: u16,
    message: String,
}

/// Creates `object` as `user` (a dry run unless `persist`): the object as stored, or the refusal.
async fn create(user: &kube::Client, object: Value, persist: bool) -> Result<Value, Refusal> {
    let obj: DynamicObject = serde_json::from_value(object).unwrap();
    let ar = resource(&obj.types.as_ref().unwrap().kind);
    let api: Api<DynamicObject> = match &obj.metadata.namespace {
        Some(ns) => Api::namespaced_with(user.clone(), ns, &ar),
        None => Api::all_with(user.clone(), &ar),
    };
    let params = PostParams {
        dry_run: !persist,
        ..Default::default()
    };
    match api.create(&params, &obj).await {
        Ok(created) => Ok(serde_json::to_value(created).unwrap()),
        Err(kube::Error::Api(s)) => Err(Refusal {
            code: s.code,
            message: s.message,
        }),
        Err(e) => panic!("creating: {e}"),
    }
}

/// Waits until the shared hub's webhooks answer (it points the configurations at itself once it
/// has read the ClusterManager), then until `user` is refused `object` by a webhook, not by RBAC
/// (a grant made just before takes moments to reach the authorizer).
async fn refused(what: &str, user: &kube::Client, object: Value) -> Refusal {
    common::eventually(what, Duration::from_secs(30), || {
        let (user, object) = (user.clone(), object.clone());
        async move {
            create(&user, object, false)
                .await
                .err()
                .filter(|r| r.message.starts_with("admission webhook "))
        }
    })
    .await
}

/// Waits until `user` may create `object` (a dry run).
async fn allowed(what: &str, user: &kube::Client, object: Value) -> Value {
    common::eventually(what, Duration::from_secs(30), || {
        let (user, object) = (user.clone(), object.clone());
        async move { create(&user, object, false).await.ok() }
    })
    .await
}

/// The API server's prefix for a refusal by webhook `name`.
fn denied_by(name: &str) -> String {
    format!("admission webhook \"{name}\" denied the request: ")
}

fn cluster(name: &str, accepts: bool, set: Option<&str>) -> Value {
    let labels = set.map(|s| json!({CLUSTER_SET_LABEL: s}));
    json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"hubAcceptsClient": accepts, "managedClusterClientConfigs": [{"url": "https://c.example:6443"}]}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configurations_point_at_the_leading_hub() {
    fixture::hub().await;
    let hub = common::hub().await;
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(hub.clone());
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(hub.clone());
    common::eventually("the configurations", Duration::from_secs(30), || {
        let (validating, mutating) = (validating.clone(), mutating.clone());
        async move {
            for name in configs::VALIDATORS {
                let config = validating.get_opt(name).await.ok()??;
                let hook = &config.webhooks?[0];
                let url = hook.client_config.url.as_deref()?;
                assert!(url.starts_with("https://127.0.0.1:"), "{url}");
                assert_eq!(hook.failure_policy.as_deref(), Some("Fail"));
            }
            mutating
                .get_opt(configs::MANAGED_CLUSTER_MUTATOR)
                .await
                .ok()??;
            Some(())
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_cluster_is_defaulted_at_create() {
    let token = fixture::hub().await;
    // The agent's bootstrap credential creates clusters: the defaults are in what it gets back.
    let bootstrap = common::hub_client_with_token(&token).await;
    let name = common::unique("it-wh-default");
    let mut mc = cluster(&name, false, None);
    mc["spec"]["taints"] = json!([{"key": "example.com/a", "effect": "NoSelect"}]);
    let created = allowed(
        "a cluster created by the bootstrap credential",
        &bootstrap,
        mc,
    )
    .await;
    assert_eq!(created["metadata"]["labels"][CLUSTER_SET_LABEL], "default");
    assert!(
        created["spec"]["taints"][0]["timeAdded"].is_string(),
        "{created}"
    );
    assert_eq!(created["spec"]["leaseDurationSeconds"], 60);
    // A set chosen by the creator stays; an empty one becomes `default`.
    let mut empty = cluster(&common::unique("it-wh-empty"), false, None);
    empty["metadata"]["labels"] = json!({CLUSTER_SET_LABEL: "", "a": "b"});
    let created = allowed("an empty set label", &common::hub().await, empty).await;
    assert_eq!(created["metadata"]["labels"][CLUSTER_SET_LABEL], "default");
    assert_eq!(created["metadata"]["labels"]["a"], "b");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taint_time_is_the_hubs_and_is_renewed_when_the_taint_changes() {
    fixture::hub().await;
    let hub = common::hub().await;
    let name = common::unique("it-wh-taint");
    let mut mc = cluster(&name, false, Some("default"));
    mc["spec"]["taints"] = json!([{"key": "a", "effect": "NoSelect"}]);
    let created = create(&hub, mc.clone(), true).await.unwrap();
    let first = created["spec"]["taints"][0]["timeAdded"].clone();
    assert!(first.is_string(), "{created}");
    // A user who may only edit the spec may not change a time (on a create, the hub's time
    // replaces any, as upstream's).
    let id = common::unique("it-wh-taint-user");
    let (_, user, group) = user(&id).await;
    let writer = format!("{id}-writer");
    grant(&hub, &writer, &group, json!([
        {"apiGroups": [CLUSTER], "resources": ["managedclusters"], "verbs": ["get", "update", "patch"]}])).await;
    let as_user: Api<ManagedCluster> = Api::all(user.clone());
    let backdate = json!({"spec": {"taints": [{"key": "a", "effect": "NoSelect", "timeAdded": "2020-01-01T00:00:00Z"}]}});
    let dry = PatchParams {
        dry_run: true,
        ..Default::default()
    };
    let refusal = common::eventually(
        "a user's taint time refused",
        Duration::from_secs(30),
        || {
            let (as_user, name, backdate, dry) =
                (as_user.clone(), name.clone(), backdate.clone(), dry.clone());
            async move {
                match as_user.patch(&name, &dry, &Patch::Merge(&backdate)).await {
                    Err(kube::Error::Api(s)) if s.message.starts_with("admission webhook ") => {
                        Some(s)
                    }
                    _ => None,
                }
            }
        },
    )
    .await;
    assert_eq!(refusal.code, 400, "{refusal:?}");
    assert_eq!(
        refusal.message,
        format!(
            "{}It is not allowed to set TimeAdded of Taint \"a\".",
            denied_by(configs::MANAGED_CLUSTER_MUTATOR)
        )
    );
    // The taint's effect changed without a time: a new time (not the old one). Times have
    // second precision: first wait until the clock has left the second of the first one.
    let first_at: k8s_openapi::jiff::Timestamp = first.as_str().unwrap().parse().unwrap();
    common::eventually(
        "the clock past the taint's time",
        Duration::from_secs(5),
        || async {
            (k8s_openapi::jiff::Timestamp::now().as_second() > first_at.as_second()).then_some(())
        },
    )
    .await;
    let clusters: Api<ManagedCluster> = Api::all(hub.clone());
    let changed = clusters
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"taints": [{"key": "a", "effect": "NoSelectIfNew"}]}})),
        )
        .await
        .unwrap();
    let renewed = changed.spec.taints[0].time_added.clone();
    assert!(renewed.is_some());
    assert_ne!(serde_json::to_value(&renewed).unwrap(), first);
    revoke(&hub, &[&writer]).await;
    clusters
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_and_urls_are_bad_requests_in_upstreams_words() {
    fixture::hub().await;
    let hub = common::hub().await;
    let mut mc = cluster(&common::unique("it-wh-url"), false, Some("default"));
    mc["spec"]["managedClusterClientConfigs"] = json!([{"url": "http://plain.example"}]);
    let refusal = refused("an http client URL", &hub, mc).await;
    assert_eq!(refusal.code, 400);
    assert_eq!(
        refusal.message,
        format!(
            "{}url \"http://plain.example\" is invalid in client configs",
            denied_by(configs::MANAGED_CLUSTER_VALIDATOR)
        )
    );
    let refusal = refused("a dotted name", &hub, cluster("it-wh.dotted", false, None)).await;
    assert_eq!(refusal.code, 400);
    assert!(
        refusal
            .message
            .contains("metadata.name format is not correct"),
        "{refusal:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_and_joining_a_set_are_forbidden_without_upstreams_permissions() {
    let token = fixture::hub().await;
    let bootstrap = common::hub_client_with_token(&token).await;
    let own = common::unique("it-wh-self");
    let refusal = refused("self-acceptance", &bootstrap, cluster(&own, true, None)).await;
    assert_eq!(refusal.code, 403);
    assert!(
        refusal.message.starts_with(&format!(
            "{}managedclusters/accept.cluster.open-cluster-management.io \"{own}\" is forbidden: user \"",
            denied_by(configs::MANAGED_CLUSTER_VALIDATOR)
        )) && refusal.message.ends_with("cannot update the HubAcceptsClient field"),
        "{refusal:?}"
    );

    let id = common::unique("it-wh");
    let (hub, user, group) = user(&id).await;
    let writer = format!("{id}-writer");
    grant(&hub, &writer, &group, json!([{
        "apiGroups": [CLUSTER], "resources": ["managedclusters"], "verbs": ["create", "get", "update", "patch"]}])).await;
    let set = format!("{id}-set");
    let c = common::unique("it-wh-c");
    let refusal = refused("joining a set", &user, cluster(&c, false, Some(&set))).await;
    assert_eq!(refusal.code, 403);
    assert!(
        refusal.message.ends_with(&format!(
            "cannot add/remove a ManagedCluster to/from ManagedClusterSet \"{set}\""
        )),
        "{refusal:?}"
    );
    let joiner = format!("{id}-joiner");
    grant(&hub, &joiner, &group, json!([
        {"apiGroups": ["register.open-cluster-management.io"], "resources": ["managedclusters/accept"], "resourceNames": [c], "verbs": ["update"]},
        {"apiGroups": [CLUSTER], "resources": ["managedclustersets/join"], "resourceNames": [set], "verbs": ["create"]}])).await;
    allowed(
        "accepting and joining with both permissions",
        &user,
        cluster(&c, true, Some(&set)),
    )
    .await;
    revoke(&hub, &[&writer, &joiner]).await;
}

/// Upstream refuses accepting a cluster whose namespace is being deleted: the hub would make its
/// RBAC in a namespace about to vanish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_whose_namespace_is_terminating_cannot_be_accepted() {
    fixture::hub().await;
    let hub = common::hub().await;
    let name = common::unique("it-wh-ending");
    let namespaces: Api<Namespace> = Api::all(hub.clone());
    let ns: Namespace = serde_json::from_value(
        json!({"metadata": {"name": name, "finalizers": ["example.com/hold"]}}),
    )
    .unwrap();
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    namespaces
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    let refusal = refused(
        "accepting into a terminating namespace",
        &hub,
        cluster(&name, true, None),
    )
    .await;
    assert_eq!(refusal.code, 403);
    assert!(
        refusal
            .message
            .ends_with(&format!("cluster namespace \"{name}\" is terminating")),
        "{refusal:?}"
    );
    // Not accepting is allowed.
    allowed("an unaccepted cluster", &hub, cluster(&name, false, None)).await;
    namespaces
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_is_named_after_its_set_and_needs_bind() {
    let id = common::unique("it-wh-bind");
    let (hub, user, group) = user(&id).await;
    let set = format!("{id}-set");
    let binding = |name: &str| {
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
               "metadata": {"name": name, "namespace": "default"}, "spec": {"clusterSet": set}})
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
    let refusal = refused("a binding of another name", &user, binding("other")).await;
    assert_eq!(refusal.code, 400);
    assert_eq!(
        refusal.message,
        format!(
            "{}The ManagedClusterSetBinding must have the same name as the target ManagedClusterSet",
            denied_by(configs::CLUSTER_SET_BINDING_VALIDATOR)
        )
    );
    let refusal = refused("binding without bind", &user, binding(&set)).await;
    assert_eq!(refusal.code, 403);
    assert!(
        refusal
            .message
            .ends_with(&format!("is not allowed to bind cluster set \"{set}\"")),
        "{refusal:?}"
    );
    let binder = format!("{id}-binder");
    grant(&hub, &binder, &group, json!([{
        "apiGroups": [CLUSTER], "resources": ["managedclustersets/bind"], "resourceNames": [set], "verbs": ["create"]}])).await;
    allowed("binding with bind", &user, binding(&set)).await;
    revoke(&hub, &[&creator, &binder]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_are_bad_requests_when_malformed_or_run_as_someone_not_allowed() {
    let id = common::unique("it-wh-work");
    let (hub, user, group) = user(&id).await;
    let cm = |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}});
    let work = |spec: Value| {
        json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
               "metadata": {"name": "w", "namespace": "default"}, "spec": spec})
    };
    let creator = format!("{id}-creator");
    grant(&hub, &creator, &group, json!([{
        "apiGroups": [WORK], "resources": ["manifestworks", "manifestworkreplicasets"], "verbs": ["create"]}])).await;
    allowed(
        "a plain work",
        &user,
        work(json!({"workload": {"manifests": [cm("a")]}})),
    )
    .await;
    let prefix = denied_by(configs::MANIFEST_WORK_VALIDATOR);
    for (spec, expected) in [
        (json!({}), "manifests should not be empty".to_owned()),
        (
            json!({"workload": {"manifests": [cm("")]}}),
            "name must be set in manifest".to_owned(),
        ),
        (
            json!({"workload": {"manifests": [cm("a"), cm("a")]}}),
            "duplicate manifest for resource default/a with resource type v1.ConfigMap".to_owned(),
        ),
        (
            json!({"workload": {"manifests": [cm("a")]}, "executor": {"subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": "apps", "name": "deployer"}}}}),
            format!(
                "user {id}-user cannot manipulate the Manifestwork with executor apps/deployer in namespace default"
            ),
        ),
    ] {
        let refusal = refused(&expected, &user, work(spec)).await;
        assert_eq!(
            (refusal.code, refusal.message),
            (400, format!("{prefix}{expected}"))
        );
    }
    let set = json!({"apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
        "metadata": {"name": id, "namespace": "default"},
        "spec": {"manifestWorkTemplate": {"workload": {"manifests": [cm("a"), cm("a")]}}, "placementRefs": [{"name": "p"}]}});
    let refusal = refused("a replica set with a duplicate", &user, set).await;
    assert_eq!(refusal.code, 400);
    assert!(
        refusal
            .message
            .starts_with(&denied_by(configs::REPLICA_SET_VALIDATOR)),
        "{refusal:?}"
    );
    revoke(&hub, &[&creator]).await;
}
