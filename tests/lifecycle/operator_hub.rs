//! The ClusterManager operator loop on the real hub apiserver, run in-process (no pod can run on
//! the test control plane): it installs the hub and reports it, follows spec edits, re-issues a
//! serving certificate near expiry, removes everything when the ClusterManager is deleted, and
//! holds its liveness Lease only while it runs. Each test leaves the hub without a
//! ClusterManager (deleted through the loop's own cleanup).
use std::time::Duration;

use clusteradm::api::conditions::{self, APPLIED, FALSE, TRUE};
use clusteradm::api::names::HUB_NAMESPACE;
use clusteradm::api::operator::{
    CLUSTER_MANAGER_FINALIZER, CLUSTER_MANAGER_NAME, ClusterManager, HUB_PLACEMENT_DEGRADED,
    HUB_REGISTRATION_DEGRADED, VALID_FEATURE_GATES,
};
use clusteradm::operator::cluster_manager::{self as operator, certs, desired, validate};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions::is_deleted};
use kube::{Client, Resource as _};

use clusteradm::apply::{ObjectRef, Resolver, gvk_of};

use crate::common;

/// The lock every test that touches the hub singletons (the ClusterManager, the operator
/// namespace, the hub CRDs) holds; the same lock as `common::HUB_SINGLETON`.
pub(crate) use crate::common::HUB_SINGLETON;

const WAIT: Duration = Duration::from_secs(90);

/// The operator running in a task of this test, until [`Operator::stop`].
struct Operator {
    stop: clusteradm::runtime::Shutdown,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Operator {
    fn start(client: &Client) -> Self {
        Self::start_with(client, false)
    }

    /// `sync_labels`: the operator's `--enable-sync-labels`.
    fn start_with(client: &Client, sync_labels: bool) -> Self {
        let stop = clusteradm::runtime::Shutdown::new();
        let task = tokio::spawn(clusteradm::inprocess::hub::run(
            client.clone(),
            crate::common::hub_url(),
            sync_labels,
            stop.clone(),
            |holder| panic!("another process ({holder}) holds the operator Lease"),
        ));
        Self { stop, task }
    }

    /// The operator alone (`clusteradm operator hub`): every hub component deployed, nothing
    /// run in this process.
    fn start_alone(client: &Client) -> Self {
        let stop = clusteradm::runtime::Shutdown::new();
        let task = tokio::spawn(clusteradm::inprocess::hub::run_operator(
            client.clone(),
            false,
            stop.clone(),
            |holder| panic!("another process ({holder}) holds the operator Lease"),
        ));
        Self { stop, task }
    }

    async fn stop(self) {
        self.stop.cancel();
        tokio::time::timeout(WAIT, self.task)
            .await
            .expect("the operator stops on shutdown")
            .unwrap()
            .unwrap();
    }
}

/// What `init --in-process` applies: the ClusterManager CRD, the operator namespace, the CR.
async fn install(client: &Client) {
    let opts = clusteradm::install::hub::InitOptions {
        deploy_operator: false,
        admission: operator::Admission::Policies,
        ..Default::default()
    };
    let objects = clusteradm::install::hub::plan(&opts)
        .unwrap()
        .into_iter()
        .filter(|o| {
            let kind = &o.types.as_ref().unwrap().kind;
            ["CustomResourceDefinition", "Namespace", "ClusterManager"].contains(&kind.as_str())
        })
        .collect();
    clusteradm::apply::Applier::new(client.clone(), WAIT)
        .apply(objects)
        .await
        .unwrap();
}

/// A hub with the operator running on it: first finishes the cleanup of a ClusterManager that an
/// earlier failed run left terminating (as `clusteradm clean` would), then applies what
/// `init --in-process` applies and starts the loop.
async fn setup() -> (Client, Operator) {
    setup_with(false).await
}

/// [`setup`], with the operator's `--enable-sync-labels` as `sync_labels` says.
async fn setup_with(sync_labels: bool) -> (Client, Operator) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter("clusteradm=info")
        .with_test_writer()
        .try_init();
    let client = common::hub().await;
    // On a fresh plane the ClusterManager CRD is not served yet (404): nothing to clean.
    let left = match cms(&client).get_opt(CLUSTER_MANAGER_NAME).await {
        Err(kube::Error::Api(e)) if e.code == 404 => None,
        other => other.unwrap(),
    };
    if let Some(cm) = left
        && cm.metadata.deletion_timestamp.is_some()
    {
        operator::cleanup(&client, WAIT).await.unwrap();
        let strip = serde_json::json!({"metadata": {"finalizers": null}});
        let params = PatchParams::default();
        cms(&client)
            .patch(CLUSTER_MANAGER_NAME, &params, &Patch::Merge(&strip))
            .await
            .unwrap();
        gone(&client, &cm).await;
    }
    install(&client).await;
    let op = Operator::start_with(&client, sync_labels);
    (client, op)
}

fn cms(client: &Client) -> Api<ClusterManager> {
    Api::all(client.clone())
}

/// Merges `spec` into the ClusterManager's spec (a gate switched, say).
async fn patch_spec(client: &Client, spec: serde_json::Value) {
    cms(client)
        .patch(
            CLUSTER_MANAGER_NAME,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({ "spec": spec })),
        )
        .await
        .unwrap();
}

/// Waits until the ClusterManager reports Applied=True for its current generation.
async fn wait_applied(client: &Client) -> ClusterManager {
    let applied = |cm: Option<&ClusterManager>| {
        cm.is_some_and(|cm| {
            let list = cm
                .status
                .as_ref()
                .map(|s| s.conditions.as_slice())
                .unwrap_or_default();
            conditions::find(list, APPLIED).is_some_and(|c| {
                c.status == TRUE && c.observed_generation == cm.metadata.generation
            })
        })
    };
    let wait = await_condition(cms(client), CLUSTER_MANAGER_NAME, applied);
    let Ok(cm) = tokio::time::timeout(WAIT, wait).await else {
        let cm = cms(client).get_opt(CLUSTER_MANAGER_NAME).await.unwrap();
        panic!("ClusterManager not Applied for its generation within {WAIT:?}: {cm:#?}")
    };
    cm.unwrap().unwrap()
}

/// Waits until `cm` is gone from the server.
async fn gone(client: &Client, cm: &ClusterManager) {
    let uid = cm.meta().uid.clone().unwrap();
    let deleted = await_condition(cms(client), CLUSTER_MANAGER_NAME, is_deleted(&uid));
    tokio::time::timeout(Duration::from_secs(180), deleted)
        .await
        .expect("the ClusterManager is removed after cleanup")
        .unwrap();
}

/// Deletes the ClusterManager and waits until the loop's cleanup lets it go, then stops the loop.
async fn teardown(client: &Client, op: Operator) {
    if let Some(cm) = cms(client).get_opt(CLUSTER_MANAGER_NAME).await.unwrap() {
        cms(client)
            .delete(CLUSTER_MANAGER_NAME, &DeleteParams::default())
            .await
            .unwrap();
        gone(client, &cm).await;
    }
    op.stop().await;
}

fn condition<'a>(cm: &'a ClusterManager, type_: &str) -> &'a conditions::Condition {
    conditions::find(&cm.status.as_ref().unwrap().conditions, type_)
        .unwrap_or_else(|| panic!("condition {type_} missing"))
}

/// The objects a hub built from `cm` in `mode` consists of (with throwaway certificates).
fn objects(cm: &ClusterManager, mode: operator::InProcess) -> Vec<kube::api::DynamicObject> {
    let v = validate::validate(cm).unwrap();
    let specs = desired::serving_specs(mode.hub_deployment);
    let issued = certs::plan(&certs::Existing::default(), &specs, 1_800_000_000).unwrap();
    desired::build(&v, &issued, mode).objects()
}

/// Whether `obj` exists on the hub (a kind nobody serves any more counts as absent).
async fn exists(resolver: &Resolver, obj: &kube::api::DynamicObject) -> bool {
    let gvk = gvk_of(obj).unwrap();
    let Ok(api) = resolver
        .api_for(&gvk, obj.metadata.namespace.as_deref())
        .await
    else {
        return false;
    };
    api.get_opt(obj.metadata.name.as_deref().unwrap())
        .await
        .unwrap()
        .is_some()
}

#[tokio::test]
async fn the_loop_installs_the_hub_and_reports_it() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    let cm = wait_applied(&client).await;

    assert!(
        cm.meta()
            .finalizers
            .as_ref()
            .unwrap()
            .contains(&CLUSTER_MANAGER_FINALIZER.into())
    );
    let status = cm.status.as_ref().unwrap();
    assert_eq!(status.observed_generation, cm.metadata.generation);
    assert!(!status.related_resources.is_empty());
    assert_eq!(condition(&cm, VALID_FEATURE_GATES).status, TRUE);
    let registration = condition(&cm, HUB_REGISTRATION_DEGRADED);
    assert_eq!(
        (registration.status.as_str(), registration.reason.as_str()),
        (FALSE, "RegistrationInProcess")
    );
    let placement = condition(&cm, HUB_PLACEMENT_DEGRADED);
    assert_eq!(
        (placement.status.as_str(), placement.reason.as_str()),
        (FALSE, "PlacementInProcess")
    );

    // Everything of in-process mode is there; what only Default mode has is not.
    let resolver = Resolver::new(client.clone());
    let in_process = objects(&cm, operator::InProcess::HUB_CONTROLLERS);
    for obj in &in_process {
        assert!(
            exists(&resolver, obj).await,
            "{} missing",
            ObjectRef::of(obj)
        );
    }
    let default = objects(&cm, operator::InProcess::NOTHING);
    let only_default: Vec<_> = default
        .iter()
        .filter(|o| {
            !in_process
                .iter()
                .any(|i| ObjectRef::of(i) == ObjectRef::of(o))
        })
        .collect();
    assert_eq!(
        only_default.len(),
        6 + 6 * 3 + 3 - 1,
        "6 Deployments (upstream's add-on manager and add-on webhook among them), their RBAC \
         (the add-on webhook has none; the add-on manager's executor role instead; its \
         ServiceAccount is in-process mode's too, as which our add-on manager binds templates' \
         permissions), 3 Services (admission by policies: no webhook configuration)"
    );
    for upstreams in [
        "cluster-manager-addon-manager-controller",
        "cluster-manager-addon-webhook",
    ] {
        assert!(
            only_default
                .iter()
                .any(|o| o.metadata.name.as_deref() == Some(upstreams)),
            "{upstreams}"
        );
    }
    for obj in &only_default {
        assert!(
            !exists(&resolver, obj).await,
            "{} must not exist in-process",
            ObjectRef::of(obj)
        );
    }
    let bundle = Api::<ConfigMap>::namespaced(client.clone(), HUB_NAMESPACE)
        .get(certs::CA_BUNDLE_CONFIGMAP)
        .await
        .unwrap();
    assert!(bundle.data.unwrap()[certs::CA_BUNDLE_KEY].contains("BEGIN CERTIFICATE"));

    // The Default-mode objects (webhook configurations, Deployments, Services) are valid for the
    // server: a server-side dry run accepts each, without changing the shared hub.
    for obj in &default {
        let gvk = gvk_of(obj).unwrap();
        // The add-on CRDs here convert through this process's webhook by URL (written by the
        // in-process hub, not the operator): merged with a Service they are no valid CRD. Their
        // Service-based conversion is what our hub pods run on (the pod tests).
        let name = obj.metadata.name.as_deref().unwrap_or_default();
        if gvk.kind == "CustomResourceDefinition"
            && clusteradm::hub::conversion::CRDS.contains(&name)
        {
            continue;
        }
        let api = resolver
            .api_for(&gvk, obj.metadata.namespace.as_deref())
            .await
            .unwrap();
        let name = obj.metadata.name.clone().unwrap();
        api.patch(
            &name,
            &PatchParams::apply("clusteradm-it").dry_run().force(),
            &Patch::Apply(obj),
        )
        .await
        .unwrap_or_else(|e| panic!("{} {name} rejected: {e}", gvk.kind));
    }

    teardown(&client, op).await;
}

#[tokio::test]
async fn a_spec_edit_is_followed_and_reported() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    let before = wait_applied(&client).await;

    let gate = format!("NoSuchGate{}", std::process::id());
    let patch = serde_json::json!({"spec": {"registrationConfiguration": {
        "featureGates": [{"feature": gate, "mode": "Enable"}]}}});
    cms(&client)
        .patch(
            CLUSTER_MANAGER_NAME,
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .unwrap();
    let after = wait_applied(&client).await;
    assert!(after.metadata.generation > before.metadata.generation);
    let gates = condition(&after, VALID_FEATURE_GATES);
    assert_eq!(gates.status, FALSE);
    assert!(gates.message.contains(&gate), "{}", gates.message);

    teardown(&client, op).await;
}

#[tokio::test]
async fn a_serving_cert_near_expiry_is_reissued() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    wait_applied(&client).await;

    let secrets: Api<Secret> = Api::namespaced(client.clone(), HUB_NAMESPACE);
    let text =
        |s: &Secret, k: &str| String::from_utf8(s.data.as_ref().unwrap()[k].0.clone()).unwrap();
    let signer = secrets.get(certs::SIGNER_SECRET).await.unwrap();
    let signer = certs::CertKey {
        cert: text(&signer, "tls.crt"),
        key: text(&signer, "tls.key"),
    };
    // Signed by the real signer, 9 of its 10 days gone: only its age should get it replaced.
    let now = k8s_openapi::jiff::Timestamp::now().as_second();
    let day = 24 * 3600;
    let dns = vec![format!(
        "cluster-manager-registration-webhook.{HUB_NAMESPACE}.svc"
    )];
    let old = certs::issue_serving_window(
        &certs::issuer(&signer).unwrap(),
        &dns,
        now - 9 * day,
        now + day,
    )
    .unwrap();
    let b64 = |s: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(s)
    };
    let patch = serde_json::json!({"data": {"tls.crt": b64(&old.cert), "tls.key": b64(&old.key)}});
    secrets
        .patch(
            "registration-webhook-serving-cert",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .unwrap();

    let fresh = common::eventually("the serving certificate to be re-issued", WAIT, || {
        let secrets = secrets.clone();
        async move {
            let s = secrets
                .get("registration-webhook-serving-cert")
                .await
                .ok()?;
            let info = certs::info(&text(&s, "tls.crt"))?;
            (info.not_after > now + 29 * day).then_some(info)
        }
    })
    .await;
    assert_eq!(
        fresh.not_after - fresh.not_before,
        certs::SERVING_LIFETIME_SECS
    );

    teardown(&client, op).await;
}

#[tokio::test]
async fn deleting_the_cluster_manager_removes_the_hub() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    let cm = wait_applied(&client).await;
    teardown(&client, op).await;

    assert!(
        cms(&client)
            .get_opt(CLUSTER_MANAGER_NAME)
            .await
            .unwrap()
            .is_none()
    );
    // Every object, namespace, CRD and RBAC of either mode is gone.
    let resolver = Resolver::new(client.clone());
    for obj in objects(&cm, operator::InProcess::NOTHING) {
        assert!(
            !exists(&resolver, &obj).await,
            "{} left behind",
            ObjectRef::of(&obj)
        );
    }
}

#[tokio::test]
async fn the_lease_says_whether_the_loop_runs() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    common::eventually("the operator Lease", WAIT, || {
        let client = client.clone();
        async move { operator::is_running(&client).await.unwrap().then_some(()) }
    })
    .await;
    wait_applied(&client).await;
    teardown(&client, op).await;
    assert!(
        !operator::is_running(&client).await.unwrap(),
        "the Lease is released on shutdown"
    );
}

/// Admission follows the ClusterManager's mode, in-process: by policies (the operator applies
/// them; no webhook configuration), then by webhooks (the leading hub points upstream's
/// configurations at itself and the operator removes the policies), and a hub that stops
/// removes the configurations that name it.
#[tokio::test]
async fn admission_follows_the_cluster_managers_mode() {
    use clusteradm::api::names::ADMISSION_ANNOTATION;
    use clusteradm::operator::cluster_manager::desired::webhook;
    use k8s_openapi::api::admissionregistration::v1::{
        MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
    };
    use kube::api::PostParams;
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    wait_applied(&client).await;
    let by_policies = || admission_is(client.clone(), false);
    let by_webhooks = || admission_is(client.clone(), true);
    common::eventually("admission by policies", WAIT, by_policies).await;

    // Under the policies alone (no mutating webhook), a user's new taint without a time passes:
    // the hub controller fills it in after the write.
    let id = common::unique("lc-admission");
    let clusters = cluster_creator(&client, &id).await;
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    common::eventually("a new taint without a time, by policies", WAIT, || {
        let (clusters, dry, object) = (
            clusters.clone(),
            dry.clone(),
            tainted(&id, "https://c:6443"),
        );
        async move { clusters.create(&dry, &object).await.ok() }
    })
    .await;

    // Webhooks: the configurations point here, the policies go, and a bad URL is upstream's 400.
    let annotate =
        |mode: &str| serde_json::json!({"metadata": {"annotations": {ADMISSION_ANNOTATION: mode}}});
    cms(&client)
        .patch(
            CLUSTER_MANAGER_NAME,
            &PatchParams::default(),
            &Patch::Merge(annotate("webhooks")),
        )
        .await
        .unwrap();
    common::eventually("admission by webhooks", WAIT, by_webhooks).await;
    let refusal = common::eventually("a webhook's refusal", WAIT, || {
        let (clusters, dry, object) = (clusters.clone(), dry.clone(), tainted(&id, "http://c"));
        async move {
            match clusters.create(&dry, &object).await {
                Err(kube::Error::Api(s)) if s.message.starts_with("admission webhook ") => Some(s),
                _ => None,
            }
        }
    })
    .await;
    assert_eq!(refusal.code, 400, "{refusal:?}");

    // Back to policies, then webhooks again; then the hub stops and takes its configurations.
    cms(&client)
        .patch(
            CLUSTER_MANAGER_NAME,
            &PatchParams::default(),
            &Patch::Merge(annotate("policies")),
        )
        .await
        .unwrap();
    common::eventually("admission by policies again", WAIT, by_policies).await;
    cms(&client)
        .patch(
            CLUSTER_MANAGER_NAME,
            &PatchParams::default(),
            &Patch::Merge(annotate("webhooks")),
        )
        .await
        .unwrap();
    common::eventually("admission by webhooks again", WAIT, by_webhooks).await;
    op.stop().await;
    // The stopped hub removed them as it stepped down, before its stop returned.
    let configs: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    for name in webhook::VALIDATORS {
        assert!(
            configs.get_opt(name).await.unwrap().is_none(),
            "{name} left"
        );
    }
    let mutator = Api::<MutatingWebhookConfiguration>::all(client.clone())
        .get_opt(webhook::MANAGED_CLUSTER_MUTATOR)
        .await
        .unwrap();
    assert!(mutator.is_none(), "the mutator left");
    let _ = Api::<k8s_openapi::api::rbac::v1::ClusterRole>::all(client.clone())
        .delete(&id, &DeleteParams::default())
        .await;
    let _ = Api::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>::all(client.clone())
        .delete(&id, &DeleteParams::default())
        .await;
    let op = Operator::start(&client);
    teardown(&client, op).await;
}

/// ManagedClusters as user `<id>-user`, who may create them and join any set (ClusterRole and
/// binding `id`).
async fn cluster_creator(client: &Client, id: &str) -> Api<kube::api::DynamicObject> {
    let rules = serde_json::json!([
        {"apiGroups": ["cluster.open-cluster-management.io"], "resources": ["managedclusters"], "verbs": ["create"]},
        {"apiGroups": ["cluster.open-cluster-management.io"], "resources": ["managedclustersets/join"], "verbs": ["create"]}]);
    let user = user_allowed(client, id, &format!("{id}-user"), rules).await;
    Api::all_with(
        user,
        &kube::api::ApiResource::erase::<clusteradm::api::cluster::ManagedCluster>(&()),
    )
}

/// A client for `user`, in group `<id>-group`, which ClusterRole and binding `id` allow `rules`.
async fn user_allowed(client: &Client, id: &str, user: &str, rules: serde_json::Value) -> Client {
    let group = format!("{id}-group");
    let ssa = PatchParams::apply("lc-test-user").force();
    let role = serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": id}, "rules": rules});
    Api::<k8s_openapi::api::rbac::v1::ClusterRole>::all(client.clone())
        .patch(id, &ssa, &Patch::Apply(role))
        .await
        .unwrap();
    let binding = serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": id},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": id},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group}]});
    Api::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>::all(client.clone())
        .patch(id, &ssa, &Patch::Apply(binding))
        .await
        .unwrap();
    common::certificate_client(client, user, &group).await
}

/// ManagedCluster `name` with a new taint (no time) and a client config at `url`.
fn tainted(name: &str, url: &str) -> kube::api::DynamicObject {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": name}, "spec": {"taints": [{"key": "a", "effect": "NoSelect"}],
        "managedClusterClientConfigs": [{"url": url}]}}))
    .unwrap()
}

/// `Some` when the hub's admission is by webhooks (every configuration pointed at this process on
/// loopback, no policy) or by policies (every policy, no configuration).
async fn admission_is(client: Client, webhooks: bool) -> Option<()> {
    use clusteradm::operator::cluster_manager::desired::{admission, webhook};
    use k8s_openapi::api::admissionregistration::v1::{
        MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingWebhookConfiguration,
    };
    let configs: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let policies: Api<ValidatingAdmissionPolicy> = Api::all(client.clone());
    for name in webhook::VALIDATORS {
        let config = configs.get_opt(name).await.ok()?;
        match (webhooks, config) {
            (true, Some(config)) => {
                let url = config.webhooks?[0].client_config.url.clone()?;
                assert!(url.starts_with("https://127.0.0.1:"), "{url}");
            }
            (false, None) => {}
            _ => return None,
        }
    }
    let mutator = Api::<MutatingWebhookConfiguration>::all(client)
        .get_opt(webhook::MANAGED_CLUSTER_MUTATOR)
        .await
        .ok()?;
    if mutator.is_some() != webhooks {
        return None;
    }
    for p in admission::policies() {
        let policy = policies.get_opt(p.metadata.name.as_deref()?).await.ok()?;
        if policy.is_some() == webhooks {
            return None;
        }
    }
    Some(())
}

mod addon_gate;
mod auto_approval;
mod cluster_profile;
mod completed_works;
mod default_cluster_set;
mod hosted;
mod replica_set_gate;
mod resource_cleanup;
mod sync_labels;
mod upgrade;
