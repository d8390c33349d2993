//! What `init` installs on a hub, as a pure plan ([`plan`]) from typed options to the objects to
//! apply: the ClusterManager CRD, the operator, the bootstrap credential's RBAC and the
//! ClusterManager.

use crate::api::names::ADMISSION_ANNOTATION;
use crate::operator::cluster_manager::Admission;
use base64::Engine as _;
use kube::api::DynamicObject;
use serde::Serialize;

use crate::api::names::{
    BOOTSTRAP_TOKEN_ID, DEFAULT_BUNDLE_VERSION, DEFAULT_REGISTRY, OPERATOR_NAMESPACE, image_ref,
};
use crate::api::operator::{
    CLUSTER_MANAGER_NAME, ClusterManager, ClusterManagerDeployOption, ClusterManagerSpec,
    FeatureGate, FeatureGateMode, FeatureGatesConfiguration, HubInstallMode, HubWorkConfiguration,
    RegistrationHubConfiguration,
};
use crate::apply::to_dynamic;
use crate::render;

/// Which bootstrap credential managed clusters join with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// A token of service account `open-cluster-management/agent-registration-bootstrap`.
    ServiceAccount,
    /// The bootstrap token `ocmhub.<secret>` in kube-system.
    BootstrapToken {
        /// The 16-character secret half (kept across re-runs so re-running init changes nothing).
        secret: String,
    },
}

/// Everything `init` needs to know to describe the hub.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// Image registry, e.g. `quay.io/open-cluster-management`.
    pub registry: String,
    /// Image tag, e.g. `v1.3.1`.
    pub tag: String,
    /// Our image, for the operator and every component (`--image`), instead of upstream's.
    pub single_image: Option<String>,
    /// The bootstrap credential kind.
    pub credential: Credential,
    /// Deploy the operator as a Deployment (false when it runs in this process).
    pub deploy_operator: bool,
    /// Contents of `--image-pull-credential-file` (a docker config JSON), if any.
    pub image_pull_credential: Option<Vec<u8>>,
    /// `--enable-sync-labels`: the operator copies the ClusterManager's labels to what it makes.
    pub sync_labels: bool,
    /// Extra hub feature gates `Name=true|false`.
    pub feature_gates: Vec<(String, bool)>,
    /// How the hub's admission rules are enforced.
    pub admission: Admission,
    /// `spec.resourceRequirement` (`--resource-*`), also the operator container's; `None`: the
    /// Default class, unset on the CR.
    pub resource_requirement: Option<crate::api::operator::ResourceRequirement>,
    /// The registration drivers and the gRPC server's exposure ([`super::drivers`]); the CSR
    /// driver's `autoApprovedIdentities` are the bootstrap identities whose clusters the hub
    /// approves without `accept`, with the `ManagedClusterAutoApproval` gate.
    pub drivers: super::drivers::Drivers,
    /// Spec fields of a values file, merged over what the flags give (a JSON merge patch,
    /// already checked against the ClusterManager's type).
    pub spec_overlay: Option<serde_json::Value>,
    /// A values file's settings of the operator's Deployment.
    pub operator_pod: super::operator_pod::OperatorPod,
    /// Bootstrap identities a values file asks for besides [`Self::credential`].
    pub extra_bootstrap: ExtraBootstrap,
    /// Make the ClusterManager CR (a values file's `clusterManager.create: false` does not).
    pub create_cluster_manager: bool,
    /// `--mode hosted`.
    pub hosted: Option<Hosted>,
}

/// `init --mode hosted`: the hub pods on the cluster `init` talks to (the management cluster),
/// acting on another (the hub).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hosted {
    /// The hub cluster's kubeconfig, for the operator (Secret `external-hub-kubeconfig`).
    pub hub_kubeconfig: Vec<u8>,
    /// Where the hub's API server reaches the hub pods' webhooks, when the user exposes them.
    /// With upstream's images, the address alone is taken: the port of each of their two
    /// webhook servers is its NodePort ([`UPSTREAM_WEBHOOK_NODE_PORTS`]).
    pub webhook: Option<(String, u16)>,
}

/// Upstream's images in Hosted mode: the NodePort (upstream's hosted sample's) at which `init`
/// exposes each webhook server on the management cluster's nodes, as `(Deployment and pod label,
/// NodePort)`. The hub's API server reaches them there: the ClusterManager names a node's address.
/// Each server also listens on its NodePort's number (`bindConfiguration.port`), because
/// upstream's webhook configurations call the hub's Service at the port the server binds.
pub const UPSTREAM_WEBHOOK_NODE_PORTS: [(&str, u16); 2] = [
    ("cluster-manager-registration-webhook", 30443),
    ("cluster-manager-work-webhook", 31443),
];

impl Default for InitOptions {
    /// Upstream's images at the default bundle version, the ServiceAccount credential, the
    /// operator deployed, admission by webhooks, nothing from a values file.
    fn default() -> Self {
        Self {
            registry: DEFAULT_REGISTRY.into(),
            tag: format!("v{DEFAULT_BUNDLE_VERSION}"),
            single_image: None,
            credential: Credential::ServiceAccount,
            deploy_operator: true,
            image_pull_credential: None,
            sync_labels: false,
            feature_gates: Vec::new(),
            admission: Admission::Webhooks,
            resource_requirement: None,
            drivers: super::drivers::Drivers::default(),
            spec_overlay: None,
            operator_pod: super::operator_pod::OperatorPod::default(),
            extra_bootstrap: ExtraBootstrap::default(),
            create_cluster_manager: true,
            hosted: None,
        }
    }
}

/// Upstream's chart values `createBootstrapToken` and `createBootstrapSA`: identities made
/// besides the credential init prints (which `--use-bootstrap-token` chooses).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraBootstrap {
    /// The bootstrap token `ocmhub`.
    pub token: bool,
    /// Its secret half, found or made by init when the printed credential is not the token.
    pub token_secret: String,
    /// The ServiceAccount `agent-registration-bootstrap`.
    pub service_account: bool,
}

/// Resolves `--bundle-version`: `default`, `latest`, or `x.y.z` (with or without `v`).
pub fn image_tag(bundle_version: &str) -> Result<String, String> {
    match bundle_version {
        "default" | "" => Ok(format!("v{DEFAULT_BUNDLE_VERSION}")),
        "latest" => Ok("latest".into()),
        v => {
            let bare = v.strip_prefix('v').unwrap_or(v);
            let parts: Vec<&str> = bare.split('.').collect();
            if parts.len() == 3
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
            {
                Ok(format!("v{bare}"))
            } else {
                Err(format!(
                    "invalid --bundle-version {v:?}: use default, latest or a version like 1.3.1"
                ))
            }
        }
    }
}

/// Parses `--feature-gates A=true,B=false`.
pub fn parse_feature_gates(text: &str) -> Result<Vec<(String, bool)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("invalid feature gate {kv:?}: expected Name=true|false"))?;
            let v = v
                .parse::<bool>()
                .map_err(|_| format!("invalid feature gate {kv:?}: value must be true or false"))?;
            Ok((k.to_string(), v))
        })
        .collect()
}

impl InitOptions {
    /// `<registry>/<component>:<tag>`.
    #[must_use]
    pub fn image(&self, component: &str) -> String {
        self.single_image
            .clone()
            .unwrap_or_else(|| image_ref(&self.registry, component, &self.tag))
    }
}

#[derive(Serialize)]
struct OperatorValues {
    namespace: &'static str,
    image: String,
    container: super::OperatorContainer,
    replicas: u32,
    docker_config_json_b64: String,
    /// The Secrets the operator may touch, by name.
    secrets: &'static [&'static str],
    /// The operator's image is upstream's (its role then holds what upstream's reads beyond ours).
    upstream_image: bool,
}

/// The Secrets upstream's ClusterManager operator (v1.3.1) reads and writes, by name, when its
/// image is named: its components' kubeconfigs of the Hosted mode, the gRPC server's certificate,
/// the work driver's and the cluster importer's configurations beside ours. Its own role holds
/// Secrets by these names; ours gives it no more.
const UPSTREAM_OPERATOR_SECRETS: &[&str] = &[
    "signer-secret",
    "registration-webhook-serving-cert",
    "work-webhook-serving-cert",
    "addon-webhook-serving-cert",
    "registration-controller-sa-kubeconfig",
    "registration-webhook-sa-kubeconfig",
    "work-webhook-sa-kubeconfig",
    "placement-controller-sa-kubeconfig",
    "work-controller-sa-kubeconfig",
    "addon-manager-controller-sa-kubeconfig",
    "addon-webhook-sa-kubeconfig",
    "external-hub-kubeconfig",
    "work-driver-config",
    "open-cluster-management-image-pull-credentials",
    "grpc-server-serving-cert",
    "cluster-import-config",
];

/// The Secrets the ClusterManager operator may touch: ours, or upstream's when its image runs.
fn operator_secrets(ours: bool) -> &'static [&'static str] {
    if ours {
        crate::operator::cluster_manager::SECRETS
    } else {
        UPSTREAM_OPERATOR_SECRETS
    }
}

#[derive(Serialize)]
struct BootstrapValues {
    namespace: &'static str,
    /// Make the bootstrap token (and its group's binding).
    create_token: bool,
    /// Make the bootstrap ServiceAccount (and its binding).
    create_service_account: bool,
    token_id: &'static str,
    token_secret: String,
}

/// The objects that make a hub, in apply order: the ClusterManager CRD, the operator (unless it
/// runs in-process), the bootstrap RBAC and credential, and the ClusterManager CR.
pub fn plan(opts: &InitOptions) -> Result<Vec<DynamicObject>, render::Error> {
    let mut objects = vec![to_dynamic(&crate::api::operator_crd_cluster_manager())];
    if opts.deploy_operator {
        let pull = opts
            .image_pull_credential
            .clone()
            .unwrap_or_else(|| b"{}".to_vec());
        objects.extend(render::render_bundle(
            "cluster-manager-operator",
            &OperatorValues {
                namespace: OPERATOR_NAMESPACE,
                image: opts.image("registration-operator"),
                // One replica: the operator's Lease would let more wait, but upstream runs one.
                container: super::OperatorContainer::new(
                    "hub",
                    opts.single_image.is_some(),
                    &["--disable-leader-election=true"],
                )
                .sync_labels(opts.sync_labels)
                .resources(opts.resource_requirement.as_ref()),
                replicas: 1,
                docker_config_json_b64: base64::engine::general_purpose::STANDARD.encode(pull),
                secrets: operator_secrets(opts.single_image.is_some()),
                upstream_image: opts.single_image.is_none(),
            },
        )?);
        opts.operator_pod.apply(&mut objects);
    } else {
        // The bootstrap service account still needs its namespace.
        objects.extend(
            render::render_bundle(
                "cluster-manager-operator",
                &OperatorValues {
                    namespace: OPERATOR_NAMESPACE,
                    image: String::new(),
                    container: super::OperatorContainer::new("hub", false, &[]),
                    replicas: 1,
                    docker_config_json_b64: String::new(),
                    secrets: &[],
                    upstream_image: false,
                },
            )?
            .into_iter()
            .filter(|o| o.types.as_ref().is_some_and(|t| t.kind == "Namespace")),
        );
    }
    objects.extend(bootstrap_objects(opts)?);
    if opts.create_cluster_manager {
        objects.push(to_dynamic(&cluster_manager(opts)));
    }
    Ok(objects)
}

/// The bootstrap credential: its ServiceAccount or token, and their RBAC.
fn bootstrap_objects(opts: &InitOptions) -> Result<Vec<DynamicObject>, render::Error> {
    let token_secret = match &opts.credential {
        Credential::ServiceAccount => None,
        Credential::BootstrapToken { secret } => Some(secret.clone()),
    };
    render::render_bundle(
        "hub-bootstrap",
        &BootstrapValues {
            namespace: OPERATOR_NAMESPACE,
            create_token: token_secret.is_some() || opts.extra_bootstrap.token,
            create_service_account: token_secret.is_none() || opts.extra_bootstrap.service_account,
            token_id: BOOTSTRAP_TOKEN_ID,
            token_secret: token_secret.unwrap_or_else(|| opts.extra_bootstrap.token_secret.clone()),
        },
    )
}

/// The ClusterManager CR: images from the options, Default mode, the CSR registration driver,
/// `DefaultClusterSet` on (as upstream) plus `--feature-gates`.
#[must_use]
pub fn cluster_manager(opts: &InitOptions) -> ClusterManager {
    use crate::api::gates::{Component, hub_component};
    // Each gate goes to the component that knows it; an unknown one goes to registration, where
    // the operator reports it (ValidFeatureGates=False) rather than dropping it silently.
    let mut registration = vec![FeatureGate {
        feature: "DefaultClusterSet".into(),
        mode: Some(FeatureGateMode::Enable),
    }];
    let (mut work, mut addon, mut placement) = (Vec::new(), Vec::new(), Vec::new());
    for (name, on) in &opts.feature_gates {
        let mode = if *on {
            FeatureGateMode::Enable
        } else {
            FeatureGateMode::Disable
        };
        let gates = match hub_component(name) {
            Component::HubWork => &mut work,
            Component::HubAddOnManager => &mut addon,
            Component::HubPlacement => &mut placement,
            _ => &mut registration,
        };
        gates.retain(|g: &FeatureGate| &g.feature != name);
        gates.push(FeatureGate {
            feature: name.clone(),
            mode: Some(mode),
        });
    }
    let mut cm = ClusterManager::new(
        CLUSTER_MANAGER_NAME,
        ClusterManagerSpec {
            registration_image_pull_spec: Some(opts.image("registration")),
            work_image_pull_spec: Some(opts.image("work")),
            placement_image_pull_spec: Some(opts.image("placement")),
            add_on_manager_image_pull_spec: Some(opts.image("addon-manager")),
            deploy_option: Some(deploy_option(
                opts.hosted.as_ref(),
                opts.single_image.is_none(),
            )),
            registration_configuration: Some(RegistrationHubConfiguration {
                feature_gates: registration,
                registration_drivers: opts.drivers.drivers.clone(),
                ..Default::default()
            }),
            server_configuration: opts.drivers.server.clone(),
            work_configuration: (!work.is_empty()).then(|| HubWorkConfiguration {
                feature_gates: work,
                ..Default::default()
            }),
            add_on_manager_configuration: (!addon.is_empty()).then_some(
                FeatureGatesConfiguration {
                    feature_gates: addon,
                },
            ),
            placement_configuration: (!placement.is_empty()).then_some(FeatureGatesConfiguration {
                feature_gates: placement,
            }),
            resource_requirement: opts.resource_requirement.clone(),
            ..Default::default()
        },
    );
    if opts.admission != Admission::Webhooks {
        cm.metadata.annotations = Some(
            [(
                ADMISSION_ANNOTATION.to_string(),
                opts.admission.as_str().to_string(),
            )]
            .into(),
        );
    }
    let Some(overlay) = &opts.spec_overlay else {
        return cm;
    };
    let mut value = serde_json::to_value(&cm).expect("a ClusterManager serialises");
    crate::merge_patch::merge(&mut value["spec"], overlay);
    serde_json::from_value(value)
        .expect("the overlay was checked against the ClusterManager's type")
}

/// Default mode, or Hosted with the webhook address the user exposes (upstream's fields): for
/// our hub pods, which serve both webhooks, one address and port; for upstream's images, each
/// webhook server at its NodePort of that address.
fn deploy_option(hosted: Option<&Hosted>, upstream_images: bool) -> ClusterManagerDeployOption {
    use crate::api::operator::{
        BindConfiguration, HostedHubConfiguration, HostedWebhookConfiguration,
    };
    let Some(hosted) = hosted else {
        return ClusterManagerDeployOption::default();
    };
    let at = |address: &str, port: u16| HostedWebhookConfiguration {
        address: address.to_owned(),
        port: Some(i32::from(port)),
        // Upstream's default probe and metrics ports, stated: a bindConfiguration replaces all.
        bind_configuration: upstream_images.then(|| BindConfiguration {
            port: Some(i32::from(port)),
            health_probe_port: Some(8000),
            metrics_port: Some(8080),
            host_network: Some(false),
        }),
    };
    let configuration = hosted.webhook.as_ref().map(|(address, port)| {
        let [(_, registration), (_, work)] = UPSTREAM_WEBHOOK_NODE_PORTS;
        let (registration, work) = if upstream_images {
            (registration, work)
        } else {
            (*port, *port)
        };
        HostedHubConfiguration {
            registration_webhook_configuration: Some(at(address, registration)),
            work_webhook_configuration: Some(at(address, work)),
        }
    });
    ClusterManagerDeployOption {
        mode: HubInstallMode::Hosted,
        default: None,
        hosted: configuration,
    }
}

/// Upstream's images in Hosted mode: a NodePort Service per webhook server, in the management
/// cluster's namespace of the hub pods.
fn upstream_webhook_node_ports() -> Vec<DynamicObject> {
    use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    UPSTREAM_WEBHOOK_NODE_PORTS
        .iter()
        .map(|(app, node_port)| {
            to_dynamic(&Service {
                metadata: kube::api::ObjectMeta {
                    name: Some(format!("{app}-node-port")),
                    namespace: Some(crate::api::names::HOSTED_HUB_NAMESPACE.into()),
                    ..Default::default()
                },
                spec: Some(ServiceSpec {
                    type_: Some("NodePort".into()),
                    selector: Some([("app".to_owned(), (*app).to_owned())].into()),
                    ports: Some(vec![ServicePort {
                        name: Some("webhook".into()),
                        port: i32::from(*node_port),
                        target_port: Some(IntOrString::Int(i32::from(*node_port))),
                        node_port: Some(i32::from(*node_port)),
                        protocol: Some("TCP".into()),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
                ..Default::default()
            })
        })
        .collect()
}

/// A hosted hub's plan, as `(hub cluster, management cluster)`: the bootstrap credential and its
/// namespace go to the hub, everything else (the operator, its CRD, the ClusterManager, the
/// hub's kubeconfig in upstream's Secret) to the management cluster.
///
/// # Errors
/// A template failed to render.
pub fn plan_hosted(
    opts: &InitOptions,
) -> Result<(Vec<DynamicObject>, Vec<DynamicObject>), render::Error> {
    use crate::api::names::{EXTERNAL_HUB_SECRET, HOSTED_HUB_NAMESPACE};
    let hosted = opts.hosted.clone().unwrap_or_default();
    let everything = plan(opts)?;
    let bootstrap = bootstrap_objects(opts)?;
    let is_bootstrap = |o: &DynamicObject| {
        bootstrap
            .iter()
            .any(|b| b.metadata.name == o.metadata.name && b.types == o.types)
    };
    let namespace = |name: &str| {
        to_dynamic(&k8s_openapi::api::core::v1::Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        })
    };
    let mut hub = vec![namespace(OPERATOR_NAMESPACE)];
    hub.extend(bootstrap.iter().cloned());
    let mut management: Vec<DynamicObject> = everything
        .into_iter()
        .filter(|o| !is_bootstrap(o))
        .collect();
    management.push(namespace(HOSTED_HUB_NAMESPACE));
    if opts.single_image.is_none() {
        management.extend(upstream_webhook_node_ports());
    }
    management.push(to_dynamic(&k8s_openapi::api::core::v1::Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(EXTERNAL_HUB_SECRET.into()),
            namespace: Some(HOSTED_HUB_NAMESPACE.into()),
            ..Default::default()
        },
        data: Some(
            [(
                "kubeconfig".to_owned(),
                k8s_openapi::ByteString(hosted.hub_kubeconfig),
            )]
            .into(),
        ),
        ..Default::default()
    }));
    Ok((hub, management))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::names::{BOOTSTRAP_CLUSTER_ROLE, BOOTSTRAP_GROUP};

    /// The operator's own ClusterRole (what `init` deploys it with) lets it write every kind it
    /// builds, in each admission mode.
    #[test]
    fn the_operators_role_covers_every_kind_it_applies() {
        use crate::operator::cluster_manager::InProcess;
        use crate::operator::cluster_manager::desired::build;
        use crate::operator::cluster_manager::test_support::{IMAGES, certs, cluster_manager};
        use crate::operator::cluster_manager::validate::validate;
        let opts = InitOptions {
            registry: "r".into(),
            tag: "v1".into(),
            ..InitOptions::default()
        };
        let role = plan(&opts)
            .unwrap()
            .into_iter()
            .find(|o| {
                o.types.as_ref().is_some_and(|t| t.kind == "ClusterRole")
                    && o.metadata.name.as_deref() == Some("cluster-manager")
            })
            .expect("the operator's ClusterRole");
        let rules: Vec<k8s_openapi::api::rbac::v1::PolicyRule> =
            serde_json::from_value(role.data["rules"].clone()).unwrap();
        let v = validate(&cluster_manager(IMAGES)).unwrap();
        for mode in [
            InProcess::NOTHING,
            InProcess::NOTHING.with(crate::operator::cluster_manager::Admission::Policies),
        ] {
            for obj in build(&v, &certs(), mode).objects() {
                let gvk = crate::apply::gvk_of(&obj).unwrap();
                let plural = kube::api::ApiResource::from_gvk(&gvk).plural;
                assert!(
                    rules.iter().any(|r| {
                        let has = |list: &Option<Vec<String>>, v: &str| {
                            list.iter().flatten().any(|x| x == v || x == "*")
                        };
                        has(&r.api_groups, &gvk.group)
                            && has(&r.resources, &plural)
                            && r.verbs.iter().any(|v| v == "patch")
                    }),
                    "the operator may not patch {}/{plural}",
                    gvk.group
                );
            }
        }
    }

    /// Upstream's operator images read nodes and get pods and replica sets (their own roles let
    /// them); our image does neither, and its role holds none of it. Both operators.
    #[test]
    fn only_upstreams_operator_images_may_read_nodes() {
        use crate::install::klusterlet::{OperatorSettings, operator_objects};
        let reads_nodes = |objects: Vec<DynamicObject>| {
            objects
                .into_iter()
                .filter(|o| o.types.as_ref().is_some_and(|t| t.kind == "ClusterRole"))
                .any(|o| o.data["rules"].to_string().contains("\"nodes\""))
        };
        let hub = |single_image: Option<String>| {
            plan(&InitOptions {
                single_image,
                ..InitOptions::default()
            })
            .unwrap()
        };
        assert!(reads_nodes(hub(None)));
        assert!(!reads_nodes(hub(Some("r/clusteradm:v1".into()))));
        let settings = OperatorSettings::default();
        assert!(reads_nodes(
            operator_objects("u/registration-operator:v1", false, &settings).unwrap()
        ));
        assert!(!reads_nodes(
            operator_objects("r/clusteradm:v1", true, &settings).unwrap()
        ));
    }

    /// Each template of the hub's bundles, rendered alone with the values `plan` gives it,
    /// yields named objects (a template that renders to nothing would hide in the bundle).
    #[test]
    fn every_hub_template_renders_objects_with_its_values() {
        let operator = OperatorValues {
            namespace: OPERATOR_NAMESPACE,
            image: "quay.io/open-cluster-management/registration-operator:v1.3.1".into(),
            container: crate::install::OperatorContainer::new("hub", false, &[]),
            replicas: 1,
            docker_config_json_b64: "e30=".into(),
            secrets: UPSTREAM_OPERATOR_SECRETS,
            upstream_image: true,
        };
        let bootstrap = |token: bool| BootstrapValues {
            namespace: OPERATOR_NAMESPACE,
            create_token: token,
            create_service_account: !token,
            token_id: BOOTSTRAP_TOKEN_ID,
            token_secret: "0123456789abcdef".into(),
        };
        let mut rendered = 0;
        for name in render::bundle_templates("cluster-manager-operator") {
            rendered += crate::render::tests::assert_renders_objects(name, &operator);
        }
        for name in render::bundle_templates("hub-bootstrap") {
            for token in [true, false] {
                rendered += crate::render::tests::assert_renders_objects(name, &bootstrap(token));
            }
        }
        assert!(rendered >= 6, "only {rendered} objects");
    }

    fn opts(credential: Credential, deploy_operator: bool) -> InitOptions {
        InitOptions {
            tag: "v1.3.1".into(),
            credential,
            deploy_operator,
            ..InitOptions::default()
        }
    }

    use super::super::names;

    #[test]
    fn default_plan_deploys_the_operator_and_a_service_account_credential() {
        let objects = plan(&opts(Credential::ServiceAccount, true)).unwrap();
        assert_eq!(
            names(&objects),
            [
                "CustomResourceDefinition/clustermanagers.operator.open-cluster-management.io",
                "Namespace/open-cluster-management",
                "ServiceAccount/cluster-manager",
                "ClusterRole/cluster-manager",
                "ClusterRoleBinding/cluster-manager",
                "Secret/open-cluster-management-image-pull-credentials",
                "Deployment/cluster-manager",
                "ClusterRole/open-cluster-management:bootstrap",
                "ServiceAccount/agent-registration-bootstrap",
                "ClusterRoleBinding/open-cluster-management:bootstrap:agent-registration",
                "Role/kubeadm:bootstrap-signer-clusterinfo",
                "RoleBinding/kubeadm:bootstrap-signer-clusterinfo",
                "ClusterManager/cluster-manager",
            ]
        );
        let deployment = objects
            .iter()
            .find(|o| {
                o.metadata.name.as_deref() == Some("cluster-manager")
                    && o.types.as_ref().unwrap().kind == "Deployment"
            })
            .unwrap();
        assert_eq!(
            deployment.data["spec"]["template"]["spec"]["containers"][0]["image"],
            "quay.io/open-cluster-management/registration-operator:v1.3.1"
        );
    }

    #[test]
    fn in_process_plan_has_no_operator_deployment() {
        let n = names(&plan(&opts(Credential::ServiceAccount, false)).unwrap());
        assert!(n.contains(&"Namespace/open-cluster-management".to_string()));
        assert!(
            !n.iter()
                .any(|n| n.starts_with("Deployment/") || n == "ClusterRole/cluster-manager"),
            "{n:?}"
        );
    }

    #[test]
    fn bootstrap_rules_are_exactly_upstreams() {
        let objects = plan(&opts(Credential::ServiceAccount, false)).unwrap();
        let role = objects
            .iter()
            .find(|o| o.metadata.name.as_deref() == Some(BOOTSTRAP_CLUSTER_ROLE))
            .unwrap();
        let rules = serde_json::to_string(&role.data["rules"]).unwrap();
        assert_eq!(
            rules,
            r#"[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]},{"apiGroups":["certificates.k8s.io"],"resources":["certificatesigningrequests"],"verbs":["create","get","list","watch"]},{"apiGroups":["cluster.open-cluster-management.io"],"resources":["managedclusters"],"verbs":["get","create","list","watch"]},{"apiGroups":["cluster.open-cluster-management.io"],"resources":["managedclustersets/join"],"verbs":["create"]}]"#
        );
    }

    #[test]
    fn bootstrap_token_plan_binds_the_group() {
        let objects = plan(&opts(
            Credential::BootstrapToken {
                secret: "0123456789abcdef".into(),
            },
            true,
        ))
        .unwrap();
        let secret = objects
            .iter()
            .find(|o| o.metadata.name.as_deref() == Some("bootstrap-token-ocmhub"))
            .unwrap();
        assert_eq!(secret.metadata.namespace.as_deref(), Some("kube-system"));
        assert_eq!(
            secret.data["stringData"]["auth-extra-groups"],
            BOOTSTRAP_GROUP
        );
        assert_eq!(
            secret.data["stringData"]["token-secret"],
            "0123456789abcdef"
        );
        let binding = objects
            .iter()
            .find(|o| {
                o.metadata.name.as_deref()
                    == Some("open-cluster-management:bootstrap:managedcluster")
            })
            .unwrap();
        assert_eq!(binding.data["subjects"][0]["name"], BOOTSTRAP_GROUP);
    }

    #[test]
    fn feature_gates_go_to_the_component_that_knows_them() {
        let mut o = opts(Credential::ServiceAccount, true);
        o.feature_gates = vec![
            ("ManifestWorkReplicaSet".into(), true),
            ("AddonManagement".into(), false),
            ("ManagedClusterAutoApproval".into(), true),
            ("PlacementDebugServer".into(), false),
        ];
        let spec = cluster_manager(&o).spec;
        let names = |g: &[FeatureGate]| g.iter().map(|g| g.feature.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&spec.work_configuration.unwrap().feature_gates),
            ["ManifestWorkReplicaSet"]
        );
        assert_eq!(
            names(&spec.add_on_manager_configuration.unwrap().feature_gates),
            ["AddonManagement"]
        );
        assert_eq!(
            names(&spec.placement_configuration.unwrap().feature_gates),
            ["PlacementDebugServer"]
        );
        assert_eq!(
            names(&spec.registration_configuration.unwrap().feature_gates),
            ["DefaultClusterSet", "ManagedClusterAutoApproval"]
        );
    }

    #[test]
    fn bundle_versions() {
        assert_eq!(image_tag("default").unwrap(), "v1.3.1");
        assert_eq!(image_tag("1.2.0").unwrap(), "v1.2.0");
        assert_eq!(image_tag("v1.2.0").unwrap(), "v1.2.0");
        assert_eq!(image_tag("latest").unwrap(), "latest");
        assert!(image_tag("1.2").is_err());
        assert!(image_tag("banana").is_err());
    }

    #[test]
    fn feature_gates() {
        assert_eq!(
            parse_feature_gates("A=true, B=false").unwrap(),
            vec![("A".to_string(), true), ("B".to_string(), false)]
        );
        assert!(parse_feature_gates("A").is_err());
        assert!(parse_feature_gates("A=yes").is_err());
    }
}
