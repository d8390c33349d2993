//! Template add-ons end to end: `addon create` from the shipped helloworld template, the hub's
//! add-on manager (deploy work, hub RBAC, status), registration of the agent's own identity, and
//! the example agent run in-process copying a ConfigMap hub → cluster; the Placements install
//! strategy; `addon create`'s bad input.
use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::api::rbac::v1::{ClusterRole, Role, RoleBinding};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::agent::registration::rotate::Renewal;
use clusteradm::agent::work::AppliedNames;
use clusteradm::agent::work::supervisor::{self, Supervised};
use clusteradm::api::addon::{
    AddOnDeploymentConfig, AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn,
};
use clusteradm::api::cluster::PlacementDecision;
use clusteradm::api::conditions::find;
use clusteradm::api::work::ManifestWork;
use clusteradm::runtime::Shutdown;

use super::{client_of, clusters, only_configmaps_in, says, succeeds};
use crate::common;
use crate::registration::fixture::{self, on_hub};

const TEMPLATE: &str = "templates/addons/helloworld.yaml";
const INSTALL: &str = "helloworld-addon";

pub(super) fn condition<'a>(
    m: Option<&'a ManagedClusterAddOn>,
    type_: &str,
) -> Option<&'a clusteradm::api::conditions::Condition> {
    m.and_then(|m| m.status.as_ref())
        .and_then(|s| find(&s.conditions, type_))
}

/// A joined cluster whose agents run as `join --in-process` runs them: registration, then the
/// work agent, add-on registration and the example add-on's agent under the supervisor (until the
/// token is cancelled).
pub(super) async fn supervised_agent(prefix: &str) -> (fixture::Agent, Shutdown) {
    let managed = common::managed().await;
    fixture::install_managed_crds(&managed).await;
    let agent = fixture::joined(fixture::options(managed.clone(), prefix)).await;
    let shutdown = supervise(&agent, clusteradm::agent::addon::token::Auth::default());
    (agent, shutdown)
}

/// Runs `agent`'s work agent and add-on registration (with the example add-on's agent), its
/// add-ons' hub clients registered by `auth`, until the returned token is cancelled.
pub(super) fn supervise(
    agent: &fixture::Agent,
    auth: clusteradm::agent::addon::token::Auth,
) -> Shutdown {
    let managed = agent.opts.managed.clone();
    let shutdown = Shutdown::new();
    let supervised = Supervised {
        management: managed.clone(),
        managed,
        namespace: agent.opts.namespace.clone(),
        cluster: agent.cluster().to_string(),
        applied_names: AppliedNames::PerHub,
        addons: true,
        work_agent: true,
        example_agents: true,
        gates: clusteradm::agent::gates::Gates::default(),
        work: clusteradm::agent::work::Settings::default(),
        addon_auth: auth,
        addon_renewal: Renewal::default(),
    };
    tokio::spawn(supervisor::run(supervised, shutdown.clone()));
    shutdown
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
    let (agent, shutdown) = supervised_agent("it-hw").await;
    let c = agent.cluster().to_string();
    let (hub, managed) = (common::hub().await, common::managed().await);

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
        "ManifestApplied, and Available by the agent's lease",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "ManifestApplied").is_some_and(|c| c.status == "True")
                // The template's prober is Lease: the in-process agent renews it.
                && condition(m, "Available").is_some_and(|c| {
                    c.status == "True" && c.reason == "ManagedClusterAddOnLeaseUpdated"
                })
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
    the_agent_cannot_be_sent_elsewhere(&managed).await;

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

/// Whoever holds the cluster's hub credential may write the add-on's `status.namespace`; pointed
/// at a namespace holding `kube-root-ca.crt`, the in-process agent (which acts as its
/// ServiceAccount there, with no rights) cannot overwrite it with the hub's copy, while in the
/// install namespace the same client writes what the agent writes.
async fn the_agent_cannot_be_sent_elsewhere(managed: &kube::Client) {
    use clusteradm::agent::addon::helloworld;
    let victim = common::unique("it-hw-victim");
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": victim}})).unwrap();
    Api::<Namespace>::all(managed.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let root_cas = Api::<ConfigMap>::namespaced(managed.clone(), &victim);
    let original = fixture::wait(
        root_cas.clone(),
        "kube-root-ca.crt",
        "the namespace's root CA ConfigMap",
        |m: Option<&ConfigMap>| m.is_some(),
    )
    .await;
    // What the agent sends for a ConfigMap it copies (the hub's own `kube-root-ca.crt`).
    let copy = |ns: &str, name: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": ns, "labels": {helloworld::SYNCED_LABEL: ""}},
               "data": {"ca.crt": "the hub's CA"}})
    };
    let ssa = PatchParams::apply("helloworld-agent").force();
    let as_agent =
        Api::<ConfigMap>::namespaced(helloworld::managed_client(managed, &victim), &victim);
    let err = as_agent
        .patch(
            "kube-root-ca.crt",
            &ssa,
            &Patch::Apply(copy(&victim, "kube-root-ca.crt")),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 403),
        "the agent wrote outside its namespace: {err}"
    );
    assert_eq!(
        root_cas.get("kube-root-ca.crt").await.unwrap().data,
        original.data
    );
    let in_install =
        Api::<ConfigMap>::namespaced(helloworld::managed_client(managed, INSTALL), INSTALL);
    in_install
        .patch(
            "it-agent-may",
            &ssa,
            &Patch::Apply(copy(INSTALL, "it-agent-may")),
        )
        .await
        .unwrap();
    let _ = Api::<Namespace>::all(managed.clone())
        .delete(&victim, &DeleteParams::default())
        .await;
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
    let file = common::temp_file(
        "agent.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n  namespace: default\n",
    );
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
    let write =
        |name: &str, text: &str| common::temp_file(name, text).to_str().unwrap().to_string();
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
    let prober = write(
        "prober.yaml",
        &format!(
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnTemplate\nmetadata:\n  name: x\n  annotations:\n    clusteradm-rs.io/health-prober: Sometimes\nspec:\n  addonName: {addon}\n  agentSpec: {{}}\n"
        ),
    );
    let fields = write(
        "fields.yaml",
        &format!(
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnTemplate\nmetadata:\n  name: x\n  annotations:\n    clusteradm-rs.io/health-prober: WorkField\n    clusteradm-rs.io/health-probe-fields: |\n      - resourceIdentifier: {{resource: deployments, name: a, namespace: '{{{{INSTALL_NAMESPACE}}}}'}}\n        probeRules: [{{type: WellKnownStatus}}]\n        healthyWhen: 'ReadyReplicas >'\nspec:\n  addonName: {addon}\n  agentSpec: {{}}\n"
        ),
    );
    let fine = write(
        "fine.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    let cases: [(Vec<&str>, &str); 8] = [
        (
            vec!["-f", &fields],
            "probe field deployments {{INSTALL_NAMESPACE}}/a: healthyWhen:",
        ),
        (
            vec!["-f", &prober],
            "unknown health prober \"Sometimes\" in annotation clusteradm-rs.io/health-prober",
        ),
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

/// The hub CA secret `<addon>-ca` and a template file for `addon` whose registration is the
/// custom signer `example.com/<addon>` with that CA, and whose manifests hold no workload.
async fn signed_addon(hub: &kube::Client, addon: &str) -> std::path::PathBuf {
    let ca = clusteradm::operator::cluster_manager::certs::issue_signer(
        k8s_openapi::jiff::Timestamp::now().as_second(),
    )
    .unwrap();
    let ns = signing_namespace(addon);
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": format!("{addon}-ca"), "namespace": ns},
        "stringData": {"tls.crt": ca.cert, "tls.key": ca.key},
    }))
    .unwrap();
    Api::<Namespace>::all(hub.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
        )
        .await
        .unwrap();
    Api::<Secret>::namespaced(hub.clone(), &ns)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let signer = format!("example.com/{addon}");
    common::temp_file(
        "template.yaml",
        &format!(
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnTemplate\nmetadata:\n  name: t\nspec:\n  addonName: {addon}\n  registration:\n  - type: CustomSigner\n    customSigner:\n      signerName: {signer}\n      signingCA:\n        name: {addon}-ca\n        namespace: {ns}\n      subject:\n        user: {addon}-agent\n        groups: [{addon}-group]\n        organizationUnit: [{addon}-unit]\n  agentSpec:\n    workload:\n      manifests:\n      - apiVersion: v1\n        kind: ConfigMap\n        metadata:\n          name: {addon}\n          namespace: default\n        data:\n          a: b\n"
        ),
    )
}

/// The namespace the template's `signingCA.namespace` names (not the hub's).
fn signing_namespace(addon: &str) -> String {
    format!("{addon}-signing")
}

/// Lets upstream's add-on manager's ServiceAccount read `<addon>-ca`, as upstream's e2e suite
/// does (`signca_secret_role.yaml`, `signca_secret_rolebinding.yaml`).
async fn grant_signing_ca(hub: &kube::Client, addon: &str) {
    let ns = signing_namespace(addon);
    let name = format!("{addon}-ca");
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": [name]}],
    }))
    .unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "addon-manager-controller-sa",
            "namespace": "open-cluster-management-hub"}],
    }))
    .unwrap();
    Api::<Role>::namespaced(hub.clone(), &ns)
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    Api::<RoleBinding>::namespaced(hub.clone(), &ns)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
}

/// A template add-on without workloads, whose agent registers a custom signer: the hub approves
/// and signs its CSR with the template's CA (read from the namespace the template names), for
/// the subject the template names; the agent stores the certificate as upstream names it, and
/// the add-on is Available once its work is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_signer_is_signed_with_the_templates_ca() {
    let (agent, shutdown) = supervised_agent("it-signer").await;
    let c = agent.cluster().to_string();
    let (hub, managed) = (common::hub().await, common::managed().await);

    let addon = common::unique("it-signed");
    let file = signed_addon(&hub, &addon).await;
    succeeds(&["addon", "create", &addon, "-f", file.to_str().unwrap()]).await;
    // Without a Deployment the template's install namespace is upstream's default; the
    // registration agent makes it if need be when it stores the certificate.
    let enabled = std::time::Instant::now();
    succeeds(&["addon", "enable", "--names", &addon, "--clusters", &c]).await;

    let name = format!("{addon}-example.com-{addon}-client-cert");
    // The hub reads the CA as upstream's add-on manager: nothing is signed until that identity
    // may read it, as upstream's e2e suite grants it.
    let certificates = Api::<Secret>::namespaced(
        managed.clone(),
        clusteradm::api::addon::DEFAULT_INSTALL_NAMESPACE,
    );
    common::never(
        "signed before the add-on manager's identity may read the CA",
        std::time::Duration::from_secs(5),
        || async { certificates.get_opt(&name).await.unwrap() },
    )
    .await;
    grant_signing_ca(&hub, &addon).await;
    let stored = fixture::wait(
        Api::<Secret>::namespaced(
            managed.clone(),
            clusteradm::api::addon::DEFAULT_INSTALL_NAMESPACE,
        ),
        &name,
        "the custom-signed certificate",
        |s: Option<&Secret>| s.is_some(),
    )
    .await;
    let data = stored.data.unwrap();
    assert!(
        !data.contains_key("kubeconfig"),
        "a custom signer's secret holds no kubeconfig"
    );
    let der = clusteradm::pki::certificates_der(&data["tls.crt"].0)
        .unwrap()
        .remove(0);
    let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
    assert!(
        cert.issuer()
            .to_string()
            .contains("cluster-manager-webhook@"),
        "{}",
        cert.issuer()
    );
    let subject = cert.subject().to_string();
    for part in [
        format!("CN={addon}-agent"),
        format!("O={addon}-group"),
        format!("OU={addon}-unit"),
    ] {
        assert!(subject.contains(&part), "{part} in {subject}");
    }
    fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c),
        &addon,
        "Available (a template without workloads)",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "Available")
                .is_some_and(|c| c.status == "True" && c.reason == "ProbeAvailable")
        },
    )
    .await;
    eprintln!(
        "addon enable → Available on one cluster: {} ms",
        enabled.elapsed().as_millis()
    );

    // Disabled while the work agent runs: it releases the deploy work's finalizer.
    let work = Api::<ManifestWork>::namespaced(hub.clone(), &c)
        .get(&format!("addon-{addon}-deploy-0"))
        .await
        .unwrap();
    succeeds(&["addon", "disable", "--names", &addon, "--clusters", &c]).await;
    fixture::wait_deleted(
        Api::<ManifestWork>::namespaced(hub.clone(), &c),
        &work.name_any(),
        &work.uid().unwrap(),
    )
    .await;
    shutdown.cancel();
    let dp = DeleteParams::default();
    let _ = Api::<ClusterManagementAddOn>::all(hub.clone())
        .delete(&addon, &dp)
        .await;
    let _ = Api::<AddOnTemplate>::all(hub.clone())
        .delete(&format!("{addon}-0.0.1"), &dp)
        .await;
    let _ = Api::<Namespace>::all(hub)
        .delete(&signing_namespace(&addon), &dp)
        .await;
    let _ = Api::<Secret>::namespaced(managed, clusteradm::api::addon::DEFAULT_INSTALL_NAMESPACE)
        .delete(&name, &dp)
        .await;
    agent.remove().await;
}

/// The config's proxy and resource requirements in the rendered work: the Deployment's
/// environment and resources, and the proxy CA's ConfigMap in the install namespace.
fn proxied_and_sized(work: &ManifestWork, addon: &str, install: &str, pem: &str) {
    let manifests = &work.spec.workload.manifests;
    let container = &manifests[1]["spec"]["template"]["spec"]["containers"][0];
    let env: Vec<&str> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        env.ends_with(&["HTTPS_PROXY", "https_proxy", "CA_BUNDLE_FILE_PATH"]),
        "{env:?}"
    );
    assert_eq!(
        container["resources"],
        json!({"requests": {"memory": "64Mi"}})
    );
    let ca = manifests
        .iter()
        .find(|m| m["metadata"]["name"] == json!(format!("{addon}-proxy-ca")))
        .expect("the proxy CA's ConfigMap is deployed with the agent");
    assert_eq!(ca["metadata"]["namespace"], json!(install));
    assert_eq!(ca["data"]["ca-bundle.crt"], pem);
}

/// An AddOnDeploymentConfig named by the add-on: its variables fill the template, its install
/// namespace moves the manifests, its proxy and resource requirements reach the Deployment, and a
/// change to it re-renders the deploy work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_config_fills_and_moves_the_template() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-adc").await;
    let addon = common::unique("it-adc-addon");
    let file = common::temp_file(
        "agent.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n  namespace: default\ndata:\n  greeting: '{{GREETING}}'\n  cluster: '{{CLUSTER_NAME}}'\n\
         ---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: agent\n  namespace: default\n\
         spec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    \
         spec:\n      containers: [{name: main, image: registry.invalid/agent:1}]\n",
    );
    let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    succeeds(&["addon", "create", &addon, "-f", file.to_str().unwrap()]).await;
    let install = common::unique("it-adc-ns");
    let configs: Api<AddOnDeploymentConfig> = Api::namespaced(hub.clone(), &c[1]);
    let config = |greeting: &str| -> AddOnDeploymentConfig {
        serde_json::from_value(json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "AddOnDeploymentConfig",
            "metadata": {"name": "cfg", "namespace": c[1]},
            "spec": {"agentInstallNamespace": install, "customizedVariables": [{"name": "GREETING", "value": greeting}],
                "proxyConfig": {"httpsProxy": "http://proxy.example:3128",
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(pem)},
                "resourceRequirements": [{"containerID": "deployments:*:main",
                    "resources": {"requests": {"memory": "64Mi"}}}]},
        }))
        .unwrap()
    };
    configs
        .create(&PostParams::default(), &config("hello"))
        .await
        .unwrap();
    let group = "addon.open-cluster-management.io";
    let patch = json!({"spec": {"supportedConfigs": [
        {"group": group, "resource": "addontemplates", "defaultConfig": {"name": format!("{addon}-0.0.1")}},
        {"group": group, "resource": "addondeploymentconfigs", "defaultConfig": {"namespace": c[1], "name": "cfg"}},
    ]}});
    Api::<ClusterManagementAddOn>::all(hub.clone())
        .patch(&addon, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
    succeeds(&["addon", "enable", "--names", &addon, "--clusters", &c[0]]).await;

    let works = Api::<ManifestWork>::namespaced(hub.clone(), &c[0]);
    let rendered = |greeting: &'static str| {
        let (c0, install) = (c[0].clone(), install.clone());
        move |w: Option<&ManifestWork>| {
            w.and_then(|w| w.spec.workload.manifests.first())
                .is_some_and(|m| {
                    m["data"] == json!({"greeting": greeting, "cluster": c0})
                        && m["metadata"]["namespace"] == json!(install)
                })
        }
    };
    let work_name = format!("addon-{addon}-deploy-0");
    fixture::wait(
        works.clone(),
        &work_name,
        "the work rendered with the config",
        rendered("hello"),
    )
    .await;
    proxied_and_sized(&works.get(&work_name).await.unwrap(), &addon, &install, pem);
    // The add-on's status is written apart from its work: wait for it too.
    let placed = install.clone();
    let mca = fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[0]),
        &addon,
        "the add-on's status naming its namespace and configs",
        move |a: Option<&ManagedClusterAddOn>| {
            a.and_then(|a| a.status.as_ref()).is_some_and(|s| {
                s.namespace.as_deref() == Some(placed.as_str()) && s.config_references.len() >= 2
            })
        },
    )
    .await;
    let status = mca.status.unwrap();
    let resources: Vec<&str> = status
        .config_references
        .iter()
        .map(|r| r.resource.as_str())
        .collect();
    assert_eq!(resources, ["addondeploymentconfigs", "addontemplates"]);

    configs
        .replace("cfg", &PostParams::default(), &{
            let mut changed = config("bye");
            changed.metadata.resource_version =
                configs.get("cfg").await.unwrap().metadata.resource_version;
            changed
        })
        .await
        .unwrap();
    fixture::wait(
        works,
        &work_name,
        "the work re-rendered after the config changed",
        rendered("bye"),
    )
    .await;

    let _ = Api::<AddOnTemplate>::all(hub.clone())
        .delete(&format!("{addon}-0.0.1"), &DeleteParams::default())
        .await;
    super::cleanup(&addon, &c).await;
}

/// A cluster's `image-registries` annotation mirrors its add-on's images, and is followed when it
/// changes or goes; an AddOnDeploymentConfig naming mirrors of its own takes precedence, as
/// upstream's template agent ranks them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusters_image_mirrors_reach_its_addon_below_a_config() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-mirror").await;
    let addon = common::unique("it-mirror-addon");
    let file = common::temp_file(
        "agent.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: agent\n  namespace: default\n\
         spec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    \
         spec:\n      containers: [{name: main, image: quay.io/example/agent:1}]\n",
    );
    succeeds(&["addon", "create", &addon, "-f", file.to_str().unwrap()]).await;
    succeeds(&["addon", "enable", "--names", &addon, "--clusters", &c[0]]).await;
    let config: AddOnDeploymentConfig = serde_json::from_value(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "AddOnDeploymentConfig",
        "metadata": {"name": "mirrors", "namespace": c[1]},
        "spec": {"registries": [{"source": "quay.io/example", "mirror": "config.local/example"}]},
    }))
    .unwrap();
    Api::<AddOnDeploymentConfig>::namespaced(hub.clone(), &c[1])
        .create(&PostParams::default(), &config)
        .await
        .unwrap();
    let cluster_mirrors =
        json!({"registries": [{"source": "quay.io/example", "mirror": "mirror.local/example"}]});
    let group = "addon.open-cluster-management.io";
    let template = json!({"group": group, "resource": "addontemplates", "defaultConfig": {"name": format!("{addon}-0.0.1")}});
    let with_config = json!([template, {"group": group, "resource": "addondeploymentconfigs",
        "defaultConfig": {"namespace": c[1], "name": "mirrors"}}]);
    // (what changes, the cluster's annotation or the add-on's supported configs; the image then)
    let steps = [
        (None, "quay.io/example/agent:1"),
        (
            Some(("clusters", json!(cluster_mirrors.to_string()))),
            "mirror.local/example/agent:1",
        ),
        // A config with mirrors of its own wins over the cluster's.
        (
            Some(("configs", with_config)),
            "config.local/example/agent:1",
        ),
        (
            Some(("configs", json!([template]))),
            "mirror.local/example/agent:1",
        ),
        // The annotation removed: the template's own image comes back.
        (
            Some(("clusters", serde_json::Value::Null)),
            "quay.io/example/agent:1",
        ),
    ];
    let works = Api::<ManifestWork>::namespaced(hub.clone(), &c[0]);
    for (change, image) in steps {
        match change {
            Some(("clusters", value)) => {
                let patch = json!({"metadata": {"annotations": {"open-cluster-management.io/image-registries": value}}});
                Api::<clusteradm::api::cluster::ManagedCluster>::all(hub.clone())
                    .patch(&c[0], &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .unwrap();
            }
            Some((_, supported)) => {
                let patch = json!({"spec": {"supportedConfigs": supported}});
                Api::<ClusterManagementAddOn>::all(hub.clone())
                    .patch(&addon, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .unwrap();
            }
            None => {}
        }
        fixture::wait(
            works.clone(),
            &format!("addon-{addon}-deploy-0"),
            &format!("the deploy work with image {image}"),
            |w: Option<&ManifestWork>| {
                w.and_then(|w| w.spec.workload.manifests.first())
                    .is_some_and(|m| {
                        m["spec"]["template"]["spec"]["containers"][0]["image"] == image
                    })
            },
        )
        .await;
    }

    let _ = Api::<AddOnTemplate>::all(hub.clone())
        .delete(&format!("{addon}-0.0.1"), &DeleteParams::default())
        .await;
    super::cleanup(&addon, &c).await;
}

/// The example agent refuses a hub kubeconfig it cannot read, and an add-on it does not carry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn addon_agent_refuses_what_it_cannot_run() {
    let missing = "/nonexistent/hub-kubeconfig";
    let args = [
        "addon",
        "agent",
        "helloworld",
        "--hub-kubeconfig",
        missing,
        "--cluster-name",
        "c1",
    ];
    let (code, _, err) = on_hub(&args).await;
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("cannot read --hub-kubeconfig {missing}")),
        "{err}"
    );
    let garbage = common::temp_file("kubeconfig", "not: [a kubeconfig");
    let path = garbage.to_str().unwrap();
    let args = [
        "addon",
        "agent",
        "helloworld",
        "--hub-kubeconfig",
        path,
        "--cluster-name",
        "c1",
    ];
    let (code, _, err) = on_hub(&args).await;
    assert_ne!(code, 0);
    assert!(err.contains(path), "{err}");
    let (code, _, err) = on_hub(&[
        "addon",
        "agent",
        "nosuch",
        "--hub-kubeconfig",
        path,
        "--cluster-name",
        "c1",
    ])
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("invalid value 'nosuch'"), "{err}");
}
