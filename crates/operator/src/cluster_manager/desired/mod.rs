//! The build step (pure): from a validated ClusterManager, the certificates and the in-process
//! options to [`Desired`], the typed objects of the hub. One file per kind; this file assembles
//! them and decides what a mode leaves out.
pub mod admission;
mod component;
mod config_map;
mod deployment;
pub mod hosted;
pub mod hub;
pub mod rbac;
mod secret;
mod service;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{
    ConfigMap, Endpoints, Namespace, Secret, Service, ServiceAccount,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::api::DynamicObject;

pub use component::Component;
pub use deployment::args;
pub use ocm_hub::admission::webhooks as webhook;
pub use rbac::rules;
pub use webhook::{
    CLUSTER_SET_BINDING_VALIDATOR, MANAGED_CLUSTER_MUTATOR, MANAGED_CLUSTER_VALIDATOR,
    MANIFEST_WORK_VALIDATOR,
};

use super::InProcess;
use super::certs::{CertKey, Certs, SIGNER_SECRET, ServingSpec};
use super::validate::Validated;
use ocm_api::names::HUB_NAMESPACE;
use ocm_api::operator::RelatedResourceMeta;
use ocm_runtime::apply::to_dynamic;

/// Everything the hub consists of, typed.
#[derive(Debug, Clone, Default)]
pub struct Desired {
    /// The hub CRDs.
    pub crds: Vec<CustomResourceDefinition>,
    /// The hub namespace.
    pub namespace: Namespace,
    /// One per deployed component.
    pub service_accounts: Vec<ServiceAccount>,
    /// One per deployed component.
    pub cluster_roles: Vec<ClusterRole>,
    /// One per deployed component.
    pub cluster_role_bindings: Vec<ClusterRoleBinding>,
    /// The signer and the serving certificates.
    pub secrets: Vec<Secret>,
    /// The CA bundle.
    pub config_maps: Vec<ConfigMap>,
    /// One per deployed webhook.
    pub services: Vec<Service>,
    /// A hosted hub's: where its API server reaches the hub pods' webhooks.
    pub endpoints: Vec<Endpoints>,
    /// One per deployed component.
    pub deployments: Vec<Deployment>,
    /// Who may connect to the hub pods, when they are deployed.
    pub network_policies: Vec<k8s_openapi::api::networking::v1::NetworkPolicy>,
    /// Validating admission, when the webhooks are deployed.
    pub validating_webhooks: Vec<ValidatingWebhookConfiguration>,
    /// Mutating admission, when the webhooks are deployed.
    pub mutating_webhooks: Vec<MutatingWebhookConfiguration>,
    /// The admission rules the API server enforces itself, when the webhooks are not deployed.
    pub admission_policies: Vec<ValidatingAdmissionPolicy>,
    /// Their bindings.
    pub admission_policy_bindings: Vec<ValidatingAdmissionPolicyBinding>,
    /// What the other admission mode left, deleted where present: the webhook configurations
    /// under admission by policies, the policies and bindings under admission by webhooks.
    pub removed: Vec<DynamicObject>,
    /// The ClusterManager's labels every object carries (`--enable-sync-labels`).
    pub synced_labels: std::collections::BTreeMap<String, String>,
}

/// The serving certificates the hub needs: one per webhook, whatever the mode (a webhook served
/// in-process needs one too), and with our hub pods (`hub_pods`) their Service's.
#[must_use]
pub fn serving_specs(hub_pods: bool) -> Vec<ServingSpec> {
    let mut specs: Vec<ServingSpec> = Component::ALL
        .iter()
        .filter_map(|c| {
            c.serving_secret().map(|secret| ServingSpec {
                secret,
                dns_names: vec![c.service_dns()],
            })
        })
        .collect();
    // Our hub pods' Service (admission and the add-on conversion webhook).
    if hub_pods {
        specs.push(ServingSpec {
            secret: hub::SERVING_SECRET,
            dns_names: vec![hub::service_dns()],
        });
    }
    specs
}

/// The hub namespace. Only the hub's pods run there, all held to Pod Security's `restricted`
/// profile, which is enforced unless a webhook is asked to use the host's network (which no
/// profile but `privileged` allows): then it is warned.
fn hub_namespace(v: &Validated) -> Namespace {
    use crate::pod_security;
    let host_network = v.registration_webhook.host_network || v.work_webhook.host_network;
    Namespace {
        metadata: ObjectMeta {
            name: Some(HUB_NAMESPACE.into()),
            labels: Some(pod_security::labels(!host_network)),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The hub for `v`. Components that run in this process are left out entirely; so are the
/// webhook Services and configurations when no webhook is deployed, so that nothing points at a
/// Service nobody serves.
#[must_use]
pub fn build(v: &Validated, certs: &Certs, in_process: InProcess) -> Desired {
    let deployed: Vec<Component> = Component::ALL
        .into_iter()
        .filter(|c| c.deployed(in_process) && c.wanted(v))
        .collect();
    let mut secrets = vec![secret::tls(SIGNER_SECRET, &certs.signer)];
    for spec in serving_specs(in_process.hub_deployment) {
        let empty = CertKey {
            cert: String::new(),
            key: String::new(),
        };
        secrets.push(secret::tls(
            spec.secret,
            certs.serving.get(spec.secret).unwrap_or(&empty),
        ));
    }
    let port = |c: Component| deployment::ports(c, v).map_or(0, |p| p.port);
    let bundle = certs.ca_bundle.as_bytes();
    let mut desired = Desired {
        crds: ocm_api::hub_crds(),
        namespace: hub_namespace(v),
        service_accounts: deployed.iter().map(|c| rbac::service_account(*c)).collect(),
        cluster_roles: deployed
            .iter()
            .filter(|c| !rbac::rules(**c).is_empty())
            .map(|c| rbac::cluster_role(*c))
            .collect(),
        cluster_role_bindings: deployed
            .iter()
            .filter(|c| !rbac::rules(**c).is_empty())
            .map(|c| rbac::cluster_role_binding(*c))
            .collect(),
        secrets,
        config_maps: vec![config_map::ca_bundle(&certs.ca_bundle)],
        services: deployed
            .iter()
            .filter(|c| c.is_served())
            .map(|c| service::service(*c, port(*c)))
            .collect(),
        deployments: deployed
            .iter()
            .map(|c| deployment::deployment(*c, v))
            .collect(),
        endpoints: Vec::new(),
        network_policies: Vec::new(),
        validating_webhooks: Vec::new(),
        mutating_webhooks: Vec::new(),
        admission_policies: Vec::new(),
        admission_policy_bindings: Vec::new(),
        removed: Vec::new(),
        synced_labels: std::collections::BTreeMap::new(),
    };
    add_admission(&mut desired, v, in_process, bundle);
    add_upstream_addon_and_work(&mut desired, v, &deployed, in_process, bundle);
    add_addon_manager_identity(&mut desired, &deployed);
    if in_process.hub_deployment {
        let image = v.single_image().unwrap_or(&v.registration_image);
        desired.service_accounts.push(hub::service_account());
        desired.cluster_roles.push(hub::cluster_role());
        desired
            .cluster_role_bindings
            .push(hub::cluster_role_binding());
        desired.deployments.push(hub::deployment(v, image));
        desired.services.push(hub::service());
        if v.placement_debug_server() {
            desired.services.push(hub::placement_debug_service());
        } else {
            desired
                .removed
                .push(to_dynamic(&hub::placement_debug_service()));
        }
        desired.network_policies.push(hub::network_policy(v));
        for crd in &mut desired.crds {
            if ocm_hub::conversion::CRDS.contains(&crd.metadata.name.as_deref().unwrap_or("")) {
                hub::convert_through_service(crd, hub::NAME, hub::webhook_port(v), bundle);
            }
        }
    }
    if v.cluster_profile() {
        add_cluster_profiles(&mut desired);
    }
    desired
}

/// With upstream's images, what goes with upstream's add-on manager, add-on webhook and work
/// controller: the work-executor role upstream binds the add-on manager to, the add-on API's
/// conversion through upstream's add-on webhook; and, to be removed, a gated component whose
/// gate is now off.
fn add_upstream_addon_and_work(
    desired: &mut Desired,
    v: &Validated,
    deployed: &[Component],
    in_process: InProcess,
    bundle: &[u8],
) {
    if deployed.contains(&Component::AddonManager) {
        let (role, binding) = rbac::work_executor_admin();
        desired.cluster_roles.push(role);
        desired.cluster_role_bindings.push(binding);
    }
    if deployed.contains(&Component::AddonWebhook) {
        let c = Component::AddonWebhook;
        for crd in &mut desired.crds {
            if ocm_hub::conversion::CRDS.contains(&crd.metadata.name.as_deref().unwrap_or("")) {
                hub::convert_through_service(crd, c.deployment(), v.addon_webhook.port, bundle);
            }
        }
    }
    for c in Component::ALL {
        if c.deployed(in_process) && !c.wanted(v) {
            desired.removed.extend([
                to_dynamic(&deployment::deployment(c, v)),
                to_dynamic(&rbac::cluster_role_binding(c)),
                to_dynamic(&rbac::cluster_role(c)),
                to_dynamic(&rbac::service_account(c)),
            ]);
        }
    }
}

/// Upstream's add-on manager's ServiceAccount, as which our add-on manager (in our hub pods or in
/// this process) reads templates' signing CAs and binds their hub permissions, with the rights
/// [`hub::addon_manager_cluster_role`] gives it; upstream's add-on manager, when deployed, runs as
/// that account with its own role, and ours goes.
fn add_addon_manager_identity(desired: &mut Desired, deployed: &[Component]) {
    if deployed.contains(&Component::AddonManager) {
        desired.removed.extend([
            to_dynamic(&hub::addon_manager_cluster_role_binding()),
            to_dynamic(&hub::addon_manager_cluster_role()),
        ]);
        return;
    }
    desired
        .service_accounts
        .push(hub::addon_manager_service_account());
    desired
        .cluster_roles
        .push(hub::addon_manager_cluster_role());
    desired
        .cluster_role_bindings
        .push(hub::addon_manager_cluster_role_binding());
}

/// The `ClusterProfile` gate: the ClusterInventory's CRD, and the rights to write profiles for
/// whichever of the registration controller and our hub pods is deployed (the in-process hub
/// runs with the caller's own rights).
fn add_cluster_profiles(desired: &mut Desired) {
    desired.crds.push(ocm_api::cluster_profile_crd());
    let writers = [
        Component::RegistrationController.cluster_role(),
        hub::CLUSTER_ROLE,
    ];
    for role in &mut desired.cluster_roles {
        if writers.contains(&role.metadata.name.as_deref().unwrap_or_default()) {
            role.rules
                .get_or_insert_with(Vec::new)
                .extend(rbac::cluster_profile_rules());
        }
    }
}

/// Admission: the policies, or webhooks served by upstream's Deployments, by our hub pods behind
/// their Service, or (no configuration here) by the in-process hub, which points the
/// configurations at itself while it leads; and, to be removed, what the other mode left.
fn add_admission(desired: &mut Desired, v: &Validated, in_process: InProcess, bundle: &[u8]) {
    if v.admission == super::Admission::Policies {
        desired.admission_policies =
            admission::policies_with(admission::Gates::from_work_flags(&v.work_gates));
        desired.admission_policy_bindings = admission::bindings();
        let any = webhook::Endpoint::HubService(0);
        let validating = webhook::validating(any, bundle);
        let mutating = webhook::mutating(any, bundle);
        desired.removed = validating
            .iter()
            .map(to_dynamic)
            .chain(mutating.iter().map(to_dynamic))
            .collect();
        return;
    }
    let endpoint = if !in_process.webhooks {
        Some(webhook::Endpoint::Upstream {
            registration_port: v.registration_webhook.port,
            work_port: v.work_webhook.port,
        })
    } else if in_process.hub_deployment {
        Some(webhook::Endpoint::HubService(hub::webhook_port(v)))
    } else {
        None
    };
    if let Some(endpoint) = endpoint {
        desired.validating_webhooks = webhook::validating(endpoint, bundle);
        desired.mutating_webhooks = webhook::mutating(endpoint, bundle);
    }
    let policies = admission::policies();
    let bindings = admission::bindings();
    desired.removed = policies
        .iter()
        .map(to_dynamic)
        .chain(bindings.iter().map(to_dynamic))
        .collect();
}

/// Calls `f` with every object of `d` as a dynamic object and as a related-resource entry.
macro_rules! each {
    ($d:expr, $f:expr) => {{
        let d = $d;
        let mut f = $f;
        d.crds.iter().for_each(|o| f(to_dynamic(o), related(o)));
        f(to_dynamic(&d.namespace), related(&d.namespace));
        d.service_accounts
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.cluster_roles
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.cluster_role_bindings
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.secrets.iter().for_each(|o| f(to_dynamic(o), related(o)));
        d.config_maps
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.services.iter().for_each(|o| f(to_dynamic(o), related(o)));
        d.endpoints
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.deployments
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.network_policies
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.validating_webhooks
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.mutating_webhooks
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.admission_policies
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.admission_policy_bindings
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
    }};
}

impl Desired {
    /// Every object, ready for the apply engine.
    #[must_use]
    pub fn objects(&self) -> Vec<DynamicObject> {
        let mut out = Vec::new();
        each!(self, |o, _| out.push(o));
        crate::sync_labels::stamp(&mut out, &self.synced_labels);
        out
    }

    /// The operator namespace's image pull secret, copied to the hub namespace and named by
    /// every hub pod.
    pub fn pull_with(&mut self, source: &Secret) {
        self.secrets.push(crate::pull_secret::copy(
            source,
            HUB_NAMESPACE,
            ObjectMeta::default(),
        ));
        crate::pull_secret::attach_to_pods(&mut self.deployments);
    }

    /// Every object as a `relatedResources` entry of the ClusterManager status.
    #[must_use]
    pub fn related(&self) -> Vec<RelatedResourceMeta> {
        let mut out = Vec::new();
        each!(self, |_, r| out.push(r));
        out
    }
}

fn related<K: Resource<DynamicType = ()>>(obj: &K) -> RelatedResourceMeta {
    RelatedResourceMeta {
        group: K::group(&()).into_owned(),
        version: K::version(&()).into_owned(),
        resource: K::plural(&()).into_owned(),
        namespace: obj.meta().namespace.clone(),
        name: obj.meta().name.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of the build step from minimal ClusterManager fixtures.
    use super::*;
    use crate::cluster_manager::test_support::{IMAGES, certs, cluster_manager};
    use crate::cluster_manager::validate::validate;

    fn desired(yaml: &str, in_process: InProcess) -> (Desired, Certs) {
        let certs = certs();
        (
            build(
                &validate(&cluster_manager(yaml)).unwrap(),
                &certs,
                in_process,
            ),
            certs,
        )
    }

    fn names<K: Resource>(list: &[K]) -> Vec<&str> {
        list.iter()
            .map(|o| o.meta().name.as_deref().unwrap())
            .collect()
    }

    /// The operator's role grants Secrets only by the names in
    /// [`crate::cluster_manager::SECRETS`]: every Secret it builds in either layout, with a pull
    /// secret, and every certificate it keeps, is one of them.
    #[test]
    fn every_secret_the_operator_writes_is_named_in_its_role() {
        use crate::cluster_manager::SECRETS;
        for in_process in [InProcess::NOTHING, InProcess::HUB_DEPLOYMENT] {
            let (mut d, _) = desired(IMAGES, in_process);
            d.pull_with(&Secret::default());
            let names: Vec<String> = d
                .objects()
                .into_iter()
                .filter(|o| o.types.as_ref().is_some_and(|t| t.kind == "Secret"))
                .map(|o| o.metadata.name.unwrap())
                .collect();
            assert!(names.len() > 1, "{names:?}");
            for name in names {
                assert!(SECRETS.contains(&name.as_str()), "{name}");
            }
        }
        for spec in serving_specs(true) {
            assert!(SECRETS.contains(&spec.secret), "{}", spec.secret);
        }
        assert!(SECRETS.contains(&hosted::KUBECONFIG_SECRET));
    }

    #[test]
    fn a_pull_secret_is_copied_to_the_hub_namespace_and_named_by_every_pod() {
        let (mut d, _) = desired(IMAGES, InProcess::NOTHING);
        let source = Secret {
            type_: Some("kubernetes.io/dockerconfigjson".into()),
            data: Some(
                [(
                    ".dockerconfigjson".into(),
                    k8s_openapi::ByteString(b"{}".to_vec()),
                )]
                .into(),
            ),
            ..Default::default()
        };
        d.pull_with(&source);
        let copy = d.secrets.last().unwrap();
        assert_eq!(copy.metadata.namespace.as_deref(), Some(HUB_NAMESPACE));
        assert_eq!(copy.data, source.data);
        assert!(!d.deployments.is_empty());
        for deployment in &d.deployments {
            let pod = deployment
                .spec
                .as_ref()
                .unwrap()
                .template
                .spec
                .as_ref()
                .unwrap();
            assert_eq!(
                pod.image_pull_secrets.as_ref().unwrap()[0].name,
                ocm_api::names::IMAGE_PULL_SECRET
            );
        }
        d.synced_labels = [("team".to_string(), "a".to_string())].into();
        assert!(
            d.objects()
                .iter()
                .all(|o| o.metadata.labels.as_ref().unwrap()["team"] == "a")
        );
    }

    #[test]
    fn default_mode_deploys_every_component_with_the_images_of_the_spec() {
        let (d, certs) = desired(IMAGES, InProcess::NOTHING);
        assert_eq!(
            names(&d.deployments),
            [
                "cluster-manager-registration-controller",
                "cluster-manager-registration-webhook",
                "cluster-manager-work-webhook",
                "cluster-manager-placement-controller",
                "cluster-manager-addon-manager-controller",
                "cluster-manager-addon-webhook"
            ]
        );
        let image = |name: &str| {
            let d = d
                .deployments
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(name))
                .unwrap();
            d.spec
                .as_ref()
                .unwrap()
                .template
                .spec
                .as_ref()
                .unwrap()
                .containers[0]
                .image
                .clone()
                .unwrap()
        };
        assert_eq!(
            image("cluster-manager-registration-controller"),
            "example.com/registration:v9"
        );
        assert_eq!(
            image("cluster-manager-registration-webhook"),
            "example.com/registration:v9"
        );
        assert_eq!(image("cluster-manager-work-webhook"), "example.com/work:v9");
        assert_eq!(
            image("cluster-manager-placement-controller"),
            "example.com/placement:v9"
        );
        for addon in [
            "cluster-manager-addon-manager-controller",
            "cluster-manager-addon-webhook",
        ] {
            assert_eq!(image(addon), "example.com/addon-manager:v9");
        }
        assert_eq!(
            names(&d.services),
            [
                "cluster-manager-registration-webhook",
                "cluster-manager-work-webhook",
                "cluster-manager-addon-webhook"
            ]
        );
        assert_eq!(
            names(&d.validating_webhooks),
            [
                MANAGED_CLUSTER_VALIDATOR,
                CLUSTER_SET_BINDING_VALIDATOR,
                MANIFEST_WORK_VALIDATOR
            ]
        );
        assert_eq!(names(&d.mutating_webhooks), [MANAGED_CLUSTER_MUTATOR]);
        for hook in d
            .validating_webhooks
            .iter()
            .flat_map(|c| c.webhooks.clone().unwrap())
        {
            assert_eq!(
                hook.client_config.ca_bundle.unwrap().0,
                certs.ca_bundle.as_bytes()
            );
            let svc = hook.client_config.service.unwrap();
            assert!(
                d.services
                    .iter()
                    .any(|s| s.metadata.name.as_deref() == Some(svc.name.as_str()))
            );
            assert_eq!(hook.failure_policy.as_deref(), Some("Fail"));
        }
        assert_eq!(d.service_accounts.len(), 6);
        // The add-on webhook holds no rights; the add-on manager is bound to two roles.
        assert_eq!(d.cluster_role_bindings.len(), 6);
    }

    #[test]
    fn in_process_leaves_out_every_controller_and_webhook_but_keeps_the_certs() {
        let (d, _) = desired(IMAGES, InProcess::HUB_CONTROLLERS);
        assert!(d.deployments.is_empty());
        // Only the identity this process's add-on manager binds templates' permissions as.
        assert_eq!(
            names(&d.service_accounts),
            [ocm_api::names::ADDON_MANAGER_SA]
        );
        assert_eq!(names(&d.cluster_roles), [hub::ADDON_MANAGER_ROLE]);
        assert!(
            d.services.is_empty()
                && d.validating_webhooks.is_empty()
                && d.mutating_webhooks.is_empty()
        );
        assert_eq!(
            names(&d.secrets),
            [
                SIGNER_SECRET,
                "registration-webhook-serving-cert",
                "work-webhook-serving-cert",
                "addon-webhook-serving-cert"
            ]
        );
        assert_eq!(d.crds.len(), ocm_api::hub_crds().len());
    }

    #[test]
    fn the_cluster_profile_gate_adds_the_inventory_crd_and_the_writers_rights() {
        let gated = "spec:\n  registrationConfiguration:\n    featureGates: [{feature: ClusterProfile, mode: Enable}]";
        let writes_profiles = |d: &Desired, role: &str| {
            d.cluster_roles
                .iter()
                .find(|r| r.metadata.name.as_deref() == Some(role))
                .and_then(|r| r.rules.as_ref())
                .is_some_and(|rules| {
                    rules.iter().any(|r| {
                        r.resources.as_deref() == Some(&["clusterprofiles/status".to_string()][..])
                    })
                })
        };
        let registration = Component::RegistrationController.cluster_role();
        let (on, _) = desired(gated, InProcess::NOTHING);
        assert!(
            on.crds
                .iter()
                .any(|c| c.metadata.name.as_deref() == Some(ocm_api::inventory::CRD_NAME))
        );
        assert!(writes_profiles(&on, registration));
        let (ours, _) = desired(gated, InProcess::HUB_DEPLOYMENT);
        assert!(writes_profiles(&ours, hub::CLUSTER_ROLE));
        let (off, _) = desired("spec: {}", InProcess::NOTHING);
        assert_eq!(off.crds.len(), ocm_api::hub_crds().len());
        assert!(!writes_profiles(&off, registration));
    }

    #[test]
    fn every_namespaced_object_is_in_the_hub_namespace_and_cluster_scoped_ones_have_none() {
        let (d, _) = desired("spec: {}", InProcess::NOTHING);
        let namespaced = [
            "ServiceAccount",
            "Secret",
            "ConfigMap",
            "Service",
            "Deployment",
        ];
        for o in d.objects() {
            let kind = o.types.as_ref().unwrap().kind.clone();
            let want = namespaced.contains(&kind.as_str()).then_some(HUB_NAMESPACE);
            assert_eq!(
                o.metadata.namespace.as_deref(),
                want,
                "{kind} {:?}",
                o.metadata.name
            );
        }
        assert_eq!(d.related().len(), d.objects().len());
        assert!(
            d.related()
                .iter()
                .any(|r| r.resource == "deployments" && r.group == "apps")
        );
    }

    #[test]
    fn deployments_carry_upstream_labels_args_and_gates() {
        let (d, _) = desired(
            "spec:
  registrationConfiguration:
    featureGates: [{feature: ManagedClusterAutoApproval, mode: Enable}]
    autoApproveUsers: ['system:serviceaccount:ns:sa']
    registrationDrivers: [{authType: csr}]",
            InProcess::NOTHING,
        );
        let reg = &d.deployments[0];
        assert_eq!(
            reg.metadata.labels.as_ref().unwrap()["app"],
            "cluster-manager-registration-controller"
        );
        let spec = reg.spec.as_ref().unwrap();
        assert_eq!(
            spec.selector.match_labels.as_ref().unwrap()["app"],
            "clustermanager-registration-controller"
        );
        let pod = spec.template.spec.as_ref().unwrap();
        assert_eq!(
            pod.service_account_name.as_deref(),
            Some("registration-controller-sa")
        );
        assert_eq!(
            pod.containers[0].args.as_ref().unwrap(),
            &[
                "/registration",
                "controller",
                "--feature-gates=ManagedClusterAutoApproval=true",
                "--cluster-auto-approval-users=system:serviceaccount:ns:sa",
                "--enabled-registration-drivers=csr"
            ]
        );
        let webhook = &d.deployments[1];
        let pod = pod_spec(webhook);
        assert_eq!(
            pod.volumes.as_ref().unwrap()[0]
                .secret
                .as_ref()
                .unwrap()
                .secret_name
                .as_deref(),
            Some("registration-webhook-serving-cert")
        );
        assert_eq!(
            &pod.containers[0].args.as_ref().unwrap()[..3],
            ["/registration", "webhook-server", "--port=9443"]
        );
    }

    /// Upstream's add-on manager, add-on webhook and (gated) work controller, as upstream's
    /// operator deploys them: their images, args, rights, the add-on API's conversion through
    /// the add-on webhook, and a component whose gate goes off removed.
    #[test]
    fn upstreams_addon_manager_addon_webhook_and_work_controller_follow_their_gates() {
        let spec = format!(
            "{IMAGES}
  workConfiguration: {{featureGates: [{{feature: ManifestWorkReplicaSet, mode: Enable}}]}}
  deployOption: {{mode: Default, default: {{addonWebhookConfiguration: {{bindConfiguration: {{port: 9444}}}}}}}}"
        );
        let (d, _) = desired(&spec, InProcess::NOTHING);
        let args = |name: &str| {
            d.deployments
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(name))
                .and_then(|x| {
                    x.spec.as_ref()?.template.spec.as_ref()?.containers[0]
                        .args
                        .clone()
                })
                .unwrap()
        };
        assert_eq!(
            args("cluster-manager-addon-manager-controller")[..2],
            ["/addon", "manager"]
        );
        assert_eq!(
            args("cluster-manager-addon-webhook"),
            [
                "/addon",
                "webhook-server",
                "--port=9444",
                "--health-probe-port=8000",
                "--metrics-port=8080"
            ]
        );
        assert_eq!(
            args("cluster-manager-work-controller"),
            [
                "/work",
                "manager",
                "--feature-gates=ManifestWorkReplicaSet=true"
            ]
        );
        for crd in &d.crds {
            let name = crd.metadata.name.as_deref().unwrap();
            if ocm_hub::conversion::CRDS.contains(&name) {
                let service = crd
                    .spec
                    .conversion
                    .as_ref()
                    .unwrap()
                    .webhook
                    .as_ref()
                    .unwrap()
                    .client_config
                    .as_ref()
                    .unwrap()
                    .service
                    .clone()
                    .unwrap();
                assert_eq!(
                    (service.name.as_str(), service.port),
                    ("cluster-manager-addon-webhook", Some(9444))
                );
            }
        }
        let roles = names(&d.cluster_roles);
        for role in [
            "open-cluster-management:cluster-manager-addon-manager:controller",
            "open-cluster-management:cluster-manager-work:controller",
            "open-cluster-management:cluster-manager-work-executor-admin:webhook",
        ] {
            assert!(roles.contains(&role), "{role} in {roles:?}");
        }

        // Gates off: neither the add-on manager nor the work controller, and both removed.
        let off = format!(
            "{IMAGES}
  addOnManagerConfiguration: {{featureGates: [{{feature: AddonManagement, mode: Disable}}]}}"
        );
        let (d, _) = desired(&off, InProcess::NOTHING);
        let deployed = names(&d.deployments);
        assert!(!deployed.contains(&"cluster-manager-addon-manager-controller"));
        assert!(!deployed.contains(&"cluster-manager-work-controller"));
        assert!(deployed.contains(&"cluster-manager-addon-webhook"));
        let removed: Vec<_> = d
            .removed
            .iter()
            .filter_map(|o| o.metadata.name.as_deref())
            .collect();
        for gone in [
            "cluster-manager-addon-manager-controller",
            "cluster-manager-work-controller",
        ] {
            assert!(removed.contains(&gone), "{gone} in {removed:?}");
        }

        // With our image, the hub pod runs all three: none is deployed.
        let (ours, _) = desired(OURS, InProcess::HUB_DEPLOYMENT);
        assert!(
            names(&ours.deployments)
                .iter()
                .all(|n| !n.contains("addon") && *n != "cluster-manager-work-controller")
        );
    }

    #[test]
    fn each_binding_grants_its_role_to_its_service_account_only() {
        let (d, _) = desired("spec: {}", InProcess::NOTHING);
        for c in Component::ALL.iter().filter(|c| !rules(**c).is_empty()) {
            let crb = d
                .cluster_role_bindings
                .iter()
                .find(|b| b.metadata.name.as_deref() == Some(c.cluster_role()));
            let Some(crb) = crb else {
                assert_eq!(*c, Component::WorkController, "deployed but unbound");
                continue;
            };
            assert_eq!(crb.role_ref.name, c.cluster_role());
            let subjects = crb.subjects.as_ref().unwrap();
            assert_eq!(subjects.len(), 1);
            assert_eq!(subjects[0].name, c.service_account());
        }
        // Webhooks only review access; they cannot write anything.
        let writes = ["create", "update", "patch", "delete"];
        for rule in rules(Component::WorkWebhook) {
            let only_sar =
                rule.resources.as_deref() == Some(&["subjectaccessreviews".to_string()][..]);
            assert!(
                only_sar || !rule.verbs.iter().any(|v| writes.contains(&v.as_str())),
                "{rule:?}"
            );
        }
        // Nothing is granted on everything.
        for c in Component::ALL {
            for rule in rules(c) {
                assert!(
                    !rule.verbs.contains(&"*".to_string())
                        && !rule.resources.unwrap().contains(&"*".to_string())
                );
            }
        }
    }

    /// What the operator builds for the ClusterManager `spec` annotated for admission policies.
    fn with_policies(spec: &str) -> Desired {
        let mut cm = cluster_manager(spec);
        cm.metadata.annotations = Some(
            [(
                ocm_api::names::ADMISSION_ANNOTATION.into(),
                "policies".into(),
            )]
            .into(),
        );
        let v = validate(&cm).unwrap();
        build(&v, &certs(), InProcess::NOTHING.with(v.admission))
    }

    #[test]
    fn default_mode_with_admission_policies_deploys_no_webhook_but_the_policies() {
        let d = with_policies(IMAGES);
        assert_eq!(
            names(&d.deployments),
            [
                "cluster-manager-registration-controller",
                "cluster-manager-placement-controller",
                "cluster-manager-addon-manager-controller",
                "cluster-manager-addon-webhook"
            ],
            "the add-on webhook converts; it admits nothing"
        );
        assert_eq!(names(&d.services), ["cluster-manager-addon-webhook"]);
        assert!(d.validating_webhooks.is_empty() && d.mutating_webhooks.is_empty());
        assert_eq!(names(&d.admission_policies), names(&admission::policies()));
        assert_eq!(
            d.admission_policy_bindings.len(),
            d.admission_policies.len()
        );
        // Upstream's webhooks in Default mode, and no policies.
        let (webhooks, _) = desired(IMAGES, InProcess::NOTHING);
        assert!(webhooks.admission_policies.is_empty() && !webhooks.validating_webhooks.is_empty());
    }

    #[test]
    fn the_nil_executor_gate_reaches_the_manifest_work_policy() {
        let work_policy = |gates: &str| {
            let d = with_policies(&format!(
                "{IMAGES}\n  workConfiguration:\n    featureGates: {gates}"
            ));
            let p = d
                .admission_policies
                .into_iter()
                .find(|p| p.metadata.name.as_deref() == Some(admission::MANIFEST_WORK_POLICY))
                .unwrap();
            serde_json::to_string(&p).unwrap()
        };
        let on = work_policy("[{feature: NilExecutorValidating, mode: Enable}]");
        let off = work_policy("[{feature: NilExecutorValidating, mode: Disable}]");
        assert!(on.contains(admission::NIL_EXECUTOR_USER), "{on}");
        assert!(!off.contains(admission::NIL_EXECUTOR_USER), "{off}");
    }

    /// One image for every component: ours.
    const OURS: &str = "spec:
  registrationImagePullSpec: example.com/clusteradm:v1
  workImagePullSpec: example.com/clusteradm:v1
  placementImagePullSpec: example.com/clusteradm:v1";

    #[test]
    fn our_hub_pods_are_restricted_and_reachable_only_on_their_served_ports() {
        let v = validate(&cluster_manager(OURS)).unwrap();
        let d = build(&v, &certs(), InProcess::HUB_DEPLOYMENT);
        let pod = pod_spec(&d.deployments[0]);
        // Held to Pod Security's restricted profile, enforced on its namespace; only the webhook
        // and authenticated metrics ports open to other pods.
        let spec = serde_json::to_value(pod).unwrap();
        assert!(crate::pod_security::is_restricted(&spec), "{spec:#}");
        assert!(
            pod.containers[0]
                .resources
                .as_ref()
                .unwrap()
                .limits
                .is_some()
        );
        assert_eq!(
            d.namespace.metadata.labels.as_ref().unwrap()[crate::pod_security::ENFORCE],
            "restricted"
        );
        let policy = serde_json::to_value(&d.network_policies[0]).unwrap();
        let ports: Vec<_> = policy["spec"]["ingress"][0]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["port"].as_i64().unwrap())
            .collect();
        assert_eq!(
            ports,
            [i64::from(hub::WEBHOOK_PORT), i64::from(hub::METRICS_PORT)]
        );
    }

    #[test]
    fn the_placement_debug_gate_serves_upstreams_service_from_our_hub_pods() {
        let on = format!(
            "{OURS}\n  placementConfiguration: {{featureGates: [{{feature: PlacementDebugServer, mode: Enable}}]}}"
        );
        let v = validate(&cluster_manager(&on)).unwrap();
        let d = build(&v, &certs(), InProcess::HUB_DEPLOYMENT);
        assert_eq!(
            names(&d.services),
            [hub::NAME, hub::PLACEMENT_DEBUG_SERVICE]
        );
        let service = serde_json::to_value(&d.services[1]).unwrap();
        assert_eq!(service["spec"]["ports"][0]["port"], 9443);
        assert_eq!(
            service["spec"]["ports"][0]["targetPort"],
            i64::from(hub::PLACEMENT_DEBUG_PORT)
        );
        assert_eq!(service["spec"]["selector"]["app"], hub::NAME);
        let args = pod_spec(&d.deployments[0]).containers[0]
            .args
            .clone()
            .unwrap();
        assert!(
            args.contains(&format!(
                "--placement-debug-address=0.0.0.0:{}",
                hub::PLACEMENT_DEBUG_PORT
            )),
            "{args:?}"
        );
        let policy = serde_json::to_value(&d.network_policies[0]).unwrap();
        assert!(
            policy["spec"]["ingress"][0]["ports"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["port"] == i64::from(hub::PLACEMENT_DEBUG_PORT))
        );
        // Off again: the Service goes.
        let v = validate(&cluster_manager(OURS)).unwrap();
        let d = build(&v, &certs(), InProcess::HUB_DEPLOYMENT);
        assert!(
            d.removed
                .iter()
                .any(|o| o.metadata.name.as_deref() == Some(hub::PLACEMENT_DEBUG_SERVICE))
        );
    }

    #[test]
    fn one_image_for_every_component_is_our_hub_deployment_serving_every_webhook() {
        let v = validate(&cluster_manager(OURS)).unwrap();
        assert_eq!(v.single_image(), Some("example.com/clusteradm:v1"));
        assert_eq!(
            validate(&cluster_manager(IMAGES)).unwrap().single_image(),
            None
        );
        let issued = certs();
        let d = build(&v, &issued, InProcess::HUB_DEPLOYMENT);
        assert_eq!(names(&d.deployments), [hub::NAME]);
        let pod = pod_spec(&d.deployments[0]);
        let container = &pod.containers[0];
        assert_eq!(
            container.image.as_deref(),
            Some("example.com/clusteradm:v1")
        );
        assert_eq!(
            container.args.as_deref().unwrap()[..2],
            ["controller".to_string(), "hub".to_string()]
        );
        assert_eq!(
            pod.service_account_name.as_deref(),
            Some(hub::SERVICE_ACCOUNT)
        );
        assert!(container.liveness_probe.is_some() && container.readiness_probe.is_some());
        assert!(names(&d.cluster_roles).contains(&hub::CLUSTER_ROLE));
        // Every webhook (admission and conversion): every hub pod behind the Service, with the
        // operator's certificate, the configurations and add-on CRDs pointed there with the
        // operator's CA bundle; no policies, and any left by policies mode removed.
        let hooks: Vec<_> = d
            .validating_webhooks
            .iter()
            .flat_map(|c| c.webhooks.clone().unwrap())
            .chain(d.mutating_webhooks.iter().flat_map(|c| {
                serde_json::from_value::<
                    Vec<k8s_openapi::api::admissionregistration::v1::ValidatingWebhook>,
                >(serde_json::to_value(c.webhooks.clone().unwrap()).unwrap())
                .unwrap()
            }))
            .collect();
        assert_eq!(
            hooks.len(),
            5,
            "4 validating (replica sets too) and 1 mutating"
        );
        for hook in &hooks {
            let service = hook.client_config.service.as_ref().unwrap();
            assert_eq!(
                (service.name.as_str(), service.port),
                (hub::NAME, Some(i32::from(hub::WEBHOOK_PORT)))
            );
            assert!(ocm_hub::admission::serves(service.path.as_deref().unwrap()));
        }
        assert!(d.admission_policies.is_empty());
        // The policies and their bindings, and the placement debug Service (the gate is off).
        assert_eq!(d.removed.len(), admission::policies().len() * 2 + 1);
        assert_eq!(names(&d.services), [hub::NAME]);
        assert!(
            container
                .args
                .as_deref()
                .unwrap()
                .contains(&"--webhook-cert-dir=/serving-cert".to_string())
        );
        assert!(names(&d.secrets).contains(&hub::SERVING_SECRET));
        for crd in &d.crds {
            let name = crd.metadata.name.as_deref().unwrap();
            let conversion = crd.spec.conversion.as_ref();
            if ocm_hub::conversion::CRDS.contains(&name) {
                let webhook = conversion.unwrap().webhook.as_ref().unwrap();
                let config = webhook.client_config.as_ref().unwrap();
                let service = config.service.as_ref().unwrap();
                assert_eq!(
                    (service.name.as_str(), service.namespace.as_str()),
                    (hub::NAME, HUB_NAMESPACE)
                );
                assert_eq!(
                    config.ca_bundle.as_ref().unwrap().0,
                    issued.ca_bundle.as_bytes()
                );
            } else {
                assert!(conversion.is_none_or(|c| c.strategy == "None"), "{name}");
            }
        }
    }

    fn pod_spec(
        d: &k8s_openapi::api::apps::v1::Deployment,
    ) -> &k8s_openapi::api::core::v1::PodSpec {
        d.spec.as_ref().unwrap().template.spec.as_ref().unwrap()
    }

    #[test]
    fn awsirsa_settings_and_host_network_reach_upstreams_pods() {
        let spec = format!(
            "{IMAGES}
  registrationConfiguration:
    registrationDrivers:
    - authType: csr
      csr: {{autoApprovedIdentities: [system:serviceaccount:ns:sa]}}
    - authType: awsirsa
      awsirsa: {{hubClusterArn: 'arn:aws:eks:us-west-2:123456789012:cluster/hub', autoApprovedIdentities: ['arn:aws:eks:*'], tags: [team=a]}}
  deployOption:
    mode: Default
    default:
      workWebhookConfiguration: {{bindConfiguration: {{hostNetwork: true, port: 9443}}}}"
        );
        let (d, _) = desired(&spec, InProcess::NOTHING);
        let by_name = |name: &str| {
            d.deployments
                .iter()
                .find(|dep| dep.metadata.name.as_deref() == Some(name))
                .unwrap()
        };
        let controller = pod_spec(by_name("cluster-manager-registration-controller"));
        let args = controller.containers[0].args.clone().unwrap();
        for flag in [
            "--enabled-registration-drivers=csr,awsirsa",
            "--auto-approved-csr-users=system:serviceaccount:ns:sa",
            "--hub-cluster-arn=arn:aws:eks:us-west-2:123456789012:cluster/hub",
            "--auto-approved-arn-patterns=arn:aws:eks:*",
            "--aws-resource-tags=team=a",
        ] {
            assert!(args.contains(&flag.to_owned()), "{flag} not in {args:?}");
        }
        assert_eq!(
            pod_spec(by_name("cluster-manager-work-webhook")).host_network,
            Some(true)
        );
        assert_eq!(
            pod_spec(by_name("cluster-manager-registration-webhook")).host_network,
            None
        );
    }

    #[test]
    fn fields_nothing_here_acts_on_are_refused_with_the_field_named() {
        let refused = |extra: &str, images: &str| match validate(&cluster_manager(&format!(
            "{images}\n{extra}"
        ))) {
            Err(super::super::validate::Error::Unsupported(message)) => message,
            other => panic!("{extra}: {other:?}"),
        };
        for (extra, images, field) in [
            (
                "  workConfiguration: {workDriver: mqtt}",
                IMAGES,
                "workDriver",
            ),
            (
                "  serverConfiguration: {imagePullSpec: x.example/server:v1}",
                IMAGES,
                "serverConfiguration",
            ),
            (
                "  registrationConfiguration: {registrationDrivers: [{authType: grpc}]}",
                IMAGES,
                "grpc",
            ),
            (
                "  registrationConfiguration: {importerConfiguration: {renderers: [a]}}",
                IMAGES,
                "importerConfiguration",
            ),
            (
                "  deployOption: {mode: Default, default: {addonWebhookConfiguration: {}}}",
                OURS,
                "addonWebhookConfiguration",
            ),
            (
                "  registrationConfiguration: {registrationDrivers: [{authType: awsirsa}]}",
                OURS,
                "awsirsa",
            ),
            (
                "  deployOption: {mode: Default, default: {registrationWebhookConfiguration: {bindConfiguration: {hostNetwork: true}}}}",
                OURS,
                "hostNetwork",
            ),
        ] {
            let message = refused(extra, images);
            assert!(message.contains(field), "{field}: {message}");
        }
        // The defaults are no refusal.
        validate(&cluster_manager(&format!(
            "{IMAGES}\n  workConfiguration: {{workDriver: kube}}"
        )))
        .unwrap();
    }

    #[test]
    fn placement_resources_and_webhook_ports_reach_upstreams_pods() {
        let spec = format!(
            "{IMAGES}
  nodePlacement: {{nodeSelector: {{zone: a}}, tolerations: [{{key: dedicated, operator: Exists}}]}}
  resourceRequirement: {{type: ResourceRequirement, resourceRequirements: {{limits: {{memory: 300Mi}}}}}}
  deployOption:
    mode: Default
    default:
      registrationWebhookConfiguration: {{bindConfiguration: {{port: 9543, healthProbePort: 8100, metricsPort: 8180}}}}"
        );
        let (d, _) = desired(&spec, InProcess::NOTHING);
        assert!(d.deployments.len() >= 4, "{:?}", names(&d.deployments));
        for deployment in &d.deployments {
            let pod = pod_spec(deployment);
            assert_eq!(pod.node_selector.as_ref().unwrap()["zone"], "a");
            assert_eq!(
                pod.tolerations.as_ref().unwrap()[0].key.as_deref(),
                Some("dedicated")
            );
            let limits = pod.containers[0].resources.clone().unwrap().limits.unwrap();
            assert_eq!(limits["memory"].0, "300Mi");
        }
        let webhook = d
            .deployments
            .iter()
            .find(|dep| {
                dep.metadata.name.as_deref() == Some("cluster-manager-registration-webhook")
            })
            .unwrap();
        let args = pod_spec(webhook).containers[0].args.clone().unwrap();
        for flag in [
            "--port=9543",
            "--health-probe-port=8100",
            "--metrics-port=8180",
        ] {
            assert!(args.iter().any(|a| a == flag), "{flag} not in {args:?}");
        }
    }
}
