//! What `join` installs on a managed cluster, as a pure plan ([`plan`]) from typed options to the
//! objects to apply: the Klusterlet CRD, the klusterlet operator, the agent namespace, the
//! bootstrap kubeconfig secret and the Klusterlet.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DynamicObject, ObjectMeta};
use serde::Serialize;

use crate::api::names::{
    AGENT_NAMESPACE, ANNOTATION_PREFIX, BOOTSTRAP_SECRET, EXTERNAL_MANAGED_SECRET,
    KLUSTERLET_OPERATOR, OPERATOR_NAMESPACE,
};
use crate::api::operator::{
    FeatureGate, FeatureGateMode, KLUSTERLET_NAME, Klusterlet, KlusterletDeployOption,
    KlusterletRegistrationConfiguration, KlusterletSpec, KlusterletWorkConfiguration, MODE_DEFAULT,
    MODE_HOSTED, MODE_SINGLETON, MODE_SINGLETON_HOSTED, ServerUrl,
};
use crate::apply::to_dynamic;
use crate::render;

/// Checks a `--ca-cert-hash`: `sha256:` and 64 hex digits.
pub fn validate_pin(pin: &str) -> Result<(), String> {
    let hex = pin.strip_prefix("sha256:").unwrap_or_default();
    if hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(format!(
            "invalid --ca-cert-hash {pin:?}: expected sha256:<64 hex digits>"
        ))
    }
}

/// Checks a `--proxy-url`: an absolute http or https URL.
pub fn validate_proxy_url(url: &str) -> Result<(), String> {
    let ok = url
        .parse::<http::Uri>()
        .is_ok_and(|u| matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some());
    if ok {
        Ok(())
    } else {
        Err(format!("invalid --proxy-url {url:?}: use an http(s) URL"))
    }
}

/// Parses `--klusterlet-annotation k=v` flags; keys get [`ANNOTATION_PREFIX`] unless they have it.
pub fn parse_annotations(flags: &[String]) -> Result<BTreeMap<String, String>, String> {
    flags
        .iter()
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .ok_or_else(|| {
                    format!("invalid --klusterlet-annotation {kv:?}: expected key=value")
                })?;
            let k = k.trim();
            let key = if k.starts_with(ANNOTATION_PREFIX) {
                k.to_string()
            } else {
                format!("{ANNOTATION_PREFIX}{k}")
            };
            Ok((key, v.to_string()))
        })
        .collect()
}

/// A fresh Hosted-mode Klusterlet name: `klusterlet-hosted-<6 of [a-z0-9]>`.
#[must_use]
pub fn hosted_name() -> String {
    format!(
        "{KLUSTERLET_NAME}-hosted-{}",
        crate::pki::random_token_chars(6)
    )
}

/// Everything `join` needs to know to describe the managed cluster.
#[derive(Debug, Clone)]
pub struct JoinOptions {
    /// `--cluster-name`.
    pub cluster_name: String,
    /// The Klusterlet's name (`klusterlet`, or [`hosted_name`]).
    pub klusterlet_name: String,
    /// Hosted mode (agents on the management cluster).
    pub hosted: bool,
    /// One combined agent instead of two.
    pub singleton: bool,
    /// Image registry.
    pub registry: String,
    /// Image tag.
    pub tag: String,
    /// Our image, for the operator and the agent (`--image`), instead of upstream's.
    pub single_image: Option<String>,
    /// The bootstrap kubeconfig text (token already redacted for `--dry-run`).
    pub bootstrap_kubeconfig: String,
    /// Hosted mode: the managed cluster's kubeconfig.
    pub external_managed_kubeconfig: Option<Vec<u8>>,
    /// The managed cluster's own API server URLs, reported to the hub.
    pub external_server_urls: Vec<String>,
    /// Agent feature gates.
    pub feature_gates: Vec<(String, bool)>,
    /// ManagedCluster annotations (already prefixed).
    pub annotations: BTreeMap<String, String>,
    /// Lifetime asked for the agent's hub client certificate (`None`: the hub's signer decides).
    pub client_cert_expiration_seconds: Option<i32>,
    /// `addOnKubeClientRegistrationDriver`, when not the default (csr): upstream's join writes it
    /// only then.
    pub addon_driver: Option<crate::api::operator::AddOnKubeClientRegistrationDriver>,
    /// `registrationDriver` (`--registration-auth awsirsa` and its ARNs), when not the default
    /// (csr): upstream's join writes it only then.
    pub registration_driver: Option<crate::api::operator::RegistrationDriver>,
    /// Deploy the operator (false when it runs in this process).
    pub deploy_operator: bool,
    /// `spec.resourceRequirement` (`--resource-*`), also the operator container's; `None`: the
    /// Default class, unset on the CR.
    pub resource_requirement: Option<crate::api::operator::ResourceRequirement>,
    /// Contents of `--image-pull-credential-file` (a docker config JSON), if any.
    pub image_pull_credential: Option<Vec<u8>>,
    /// `--enable-sync-labels`: the operator copies the Klusterlet's labels to what it makes.
    pub sync_labels: bool,
    /// Spec fields of a values file, merged over what the flags give (a JSON merge patch,
    /// already checked against the Klusterlet's type).
    pub spec_overlay: Option<serde_json::Value>,
    /// A values file's settings of the operator's Deployment.
    pub operator_pod: super::operator_pod::OperatorPod,
    /// Make the Klusterlet CR (a values file's `klusterlet.create: false` does not).
    pub create_klusterlet: bool,
    /// A values file's `multiHubBootstrapHubKubeConfigs`: `(secret name, kubeconfig)`, written
    /// instead of `bootstrap-hub-kubeconfig`, as upstream's chart does.
    pub multi_hub_kubeconfigs: Vec<(String, String)>,
}

impl JoinOptions {
    /// `<registry>/<component>:<tag>`.
    #[must_use]
    pub fn image(&self, component: &str) -> String {
        self.single_image
            .clone()
            .unwrap_or_else(|| crate::api::names::image_ref(&self.registry, component, &self.tag))
    }

    /// Where the bootstrap secret and the agents go.
    #[must_use]
    pub fn agent_namespace(&self) -> String {
        crate::api::names::agent_namespace(&self.klusterlet_name, None, self.hosted)
    }
}

#[derive(Serialize)]
struct OperatorValues<'a> {
    namespace: &'a str,
    name: &'a str,
    image: String,
    container: super::OperatorContainer,
    docker_config_json_b64: String,
    /// The Secrets the operator may touch, by name (upstream's operator's names are ours).
    secrets: &'static [&'static str],
    /// The operator's image is upstream's (its role then holds what upstream's reads beyond ours).
    upstream_image: bool,
}

/// How the klusterlet operator is set up, beyond its image.
#[derive(Debug, Clone, Default)]
pub struct OperatorSettings {
    /// The operator container's resources (`--resource-*`).
    pub resources: Option<crate::api::operator::ResourceRequirement>,
    /// `--image-pull-credential-file`'s docker config JSON (`{}` without it).
    pub pull_secret: Option<Vec<u8>>,
    /// `--enable-sync-labels`.
    pub sync_labels: bool,
    /// A values file's settings of the operator's Deployment.
    pub pod: super::operator_pod::OperatorPod,
}

/// The Klusterlet CRD and the klusterlet operator (namespace, identity, RBAC, image pull secret,
/// Deployment running `image`): what `join` installs once per cluster and `unjoin
/// --purge-operator` removes. `ours`: `image` is ours (`clusteradm operator klusterlet`), not
/// upstream's operator image.
pub fn operator_objects(
    image: &str,
    ours: bool,
    settings: &OperatorSettings,
) -> Result<Vec<DynamicObject>, render::Error> {
    use base64::Engine as _;
    let pull = settings.pull_secret.as_deref().unwrap_or(b"{}");
    let mut objects = vec![to_dynamic(&crate::api::operator_crd_klusterlet())];
    objects.extend(render::render_bundle(
        "klusterlet-operator",
        &OperatorValues {
            namespace: OPERATOR_NAMESPACE,
            name: KLUSTERLET_OPERATOR,
            image: image.to_string(),
            container: super::OperatorContainer::new(
                "klusterlet",
                ours,
                &["--disable-leader-election"],
            )
            .sync_labels(settings.sync_labels)
            .resources(settings.resources.as_ref()),
            docker_config_json_b64: base64::engine::general_purpose::STANDARD.encode(pull),
            secrets: crate::operator::klusterlet::SECRETS,
            upstream_image: !ours,
        },
    )?);
    settings.pod.apply(&mut objects);
    Ok(objects)
}

/// The objects that join a cluster, in apply order: the Klusterlet CRD, the operator (its
/// Deployment only when it does not run in this process), the agent namespace with the bootstrap
/// kubeconfig (and, Hosted, the managed cluster's kubeconfig), and the Klusterlet CR.
pub fn plan(opts: &JoinOptions) -> Result<Vec<DynamicObject>, render::Error> {
    let mut objects = operator_objects(
        &opts.image("registration-operator"),
        opts.single_image.is_some(),
        &OperatorSettings {
            resources: opts.resource_requirement.clone(),
            pull_secret: opts.image_pull_credential.clone(),
            sync_labels: opts.sync_labels,
            pod: opts.operator_pod.clone(),
        },
    )?;
    objects.retain(|o| {
        opts.deploy_operator || o.types.as_ref().is_none_or(|t| t.kind != "Deployment")
    });
    if let Some(class) = &opts.operator_pod.priority_class_name
        && opts.deploy_operator
        && !opts.hosted
    {
        // Upstream's chart makes the class it names, for the operator and the agents.
        objects.push(priority_class(class));
    }
    let namespace = opts.agent_namespace();
    objects.push(to_dynamic(&Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.clone()),
            ..Default::default()
        },
        ..Default::default()
    }));
    if opts.multi_hub_kubeconfigs.is_empty() {
        objects.push(to_dynamic(&secret(
            &namespace,
            BOOTSTRAP_SECRET,
            opts.bootstrap_kubeconfig.as_bytes(),
        )));
    }
    for (name, kubeconfig) in &opts.multi_hub_kubeconfigs {
        objects.push(to_dynamic(&secret(&namespace, name, kubeconfig.as_bytes())));
    }
    if let Some(kubeconfig) = &opts.external_managed_kubeconfig {
        objects.push(to_dynamic(&secret(
            &namespace,
            EXTERNAL_MANAGED_SECRET,
            kubeconfig,
        )));
    }
    if opts.create_klusterlet {
        objects.push(to_dynamic(&klusterlet(opts)));
    }
    Ok(objects)
}

/// The PriorityClass upstream's klusterlet chart makes for its `priorityClassName`.
fn priority_class(name: &str) -> DynamicObject {
    let mut object = DynamicObject::new(
        name,
        &kube::discovery::ApiResource::erase::<k8s_openapi::api::scheduling::v1::PriorityClass>(&()),
    );
    object.data = serde_json::json!({
        "value": 1_000_000,
        "globalDefault": false,
        "description": "For the klusterlet operator and agents (join --klusterlet-values-file's priorityClassName).",
        "preemptionPolicy": "PreemptLowerPriority",
    });
    object
}

fn secret(namespace: &str, name: &str, kubeconfig: &[u8]) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..Default::default()
        },
        type_: Some("Opaque".into()),
        data: Some(BTreeMap::from([(
            "kubeconfig".into(),
            ByteString(kubeconfig.to_vec()),
        )])),
        ..Default::default()
    }
}

/// The Klusterlet CR `join` applies.
#[must_use]
pub fn klusterlet(opts: &JoinOptions) -> Klusterlet {
    let built = from_flags(opts);
    let Some(overlay) = &opts.spec_overlay else {
        return built;
    };
    let mut value = serde_json::to_value(&built).expect("a Klusterlet serialises");
    crate::merge_patch::merge(&mut value["spec"], overlay);
    serde_json::from_value(value).expect("the overlay was checked against the Klusterlet's type")
}

/// The Klusterlet the flags describe.
fn from_flags(opts: &JoinOptions) -> Klusterlet {
    let mode = match (opts.hosted, opts.singleton) {
        (false, false) => MODE_DEFAULT,
        (false, true) => MODE_SINGLETON,
        (true, false) => MODE_HOSTED,
        (true, true) => MODE_SINGLETON_HOSTED,
    };
    let gates: Vec<FeatureGate> = opts
        .feature_gates
        .iter()
        .map(|(name, on)| FeatureGate {
            feature: name.clone(),
            mode: Some(if *on {
                FeatureGateMode::Enable
            } else {
                FeatureGateMode::Disable
            }),
        })
        .collect();
    // Hosted: spec.namespace names the agents' namespace on the managed cluster (upstream's
    // `open-cluster-management-<klusterlet>`); the agents themselves run in `<klusterlet>`.
    let namespace = if opts.hosted {
        format!("open-cluster-management-{}", opts.klusterlet_name)
    } else {
        AGENT_NAMESPACE.to_string()
    };
    Klusterlet::new(
        &opts.klusterlet_name,
        KlusterletSpec {
            namespace: Some(namespace),
            cluster_name: Some(opts.cluster_name.clone()),
            registration_image_pull_spec: Some(opts.image("registration")),
            work_image_pull_spec: Some(opts.image("work")),
            image_pull_spec: Some(opts.image("registration-operator")),
            external_server_urls: opts
                .external_server_urls
                .iter()
                .map(|url| ServerUrl {
                    url: url.clone(),
                    ca_bundle: None,
                })
                .collect(),
            deploy_option: Some(KlusterletDeployOption {
                mode: Some(mode.into()),
            }),
            registration_configuration: Some(KlusterletRegistrationConfiguration {
                feature_gates: gates.clone(),
                cluster_annotations: opts.annotations.clone(),
                client_cert_expiration_seconds: opts.client_cert_expiration_seconds,
                add_on_kube_client_registration_driver: opts.addon_driver.clone(),
                registration_driver: opts.registration_driver.clone(),
                ..Default::default()
            }),
            work_configuration: (!gates.is_empty()).then(|| KlusterletWorkConfiguration {
                feature_gates: gates,
                ..Default::default()
            }),
            resource_requirement: opts.resource_requirement.clone(),
            ..Default::default()
        },
    )
}

#[cfg(test)]
mod tests {
    //! Unit tests of the join plan: names, validation, and the objects planned per mode.
    use super::*;
    use crate::api::names::{agent_namespace, validate_cluster_name};

    fn opts(hosted: bool, deploy_operator: bool) -> JoinOptions {
        JoinOptions {
            resource_requirement: None,
            cluster_name: "c1".into(),
            klusterlet_name: if hosted {
                "klusterlet-hosted-abc123".into()
            } else {
                KLUSTERLET_NAME.into()
            },
            hosted,
            singleton: false,
            registry: "quay.io/open-cluster-management".into(),
            tag: "v1.3.1".into(),
            single_image: None,
            bootstrap_kubeconfig: "kubeconfig text".into(),
            external_managed_kubeconfig: hosted.then(|| b"managed".to_vec()),
            external_server_urls: vec!["https://managed:6443".into()],
            feature_gates: vec![("ClusterClaim".into(), true)],
            annotations: BTreeMap::from([(format!("{ANNOTATION_PREFIX}owner"), "me".into())]),
            client_cert_expiration_seconds: None,
            addon_driver: None,
            registration_driver: None,
            deploy_operator,
            image_pull_credential: None,
            sync_labels: false,
            spec_overlay: None,
            operator_pod: crate::install::operator_pod::OperatorPod::default(),
            create_klusterlet: true,
            multi_hub_kubeconfigs: Vec::new(),
        }
    }

    use super::super::names;

    #[test]
    fn cluster_names_are_dns_labels() {
        for ok in ["c1", "a", "cluster-1", &"a".repeat(63)] {
            assert!(validate_cluster_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "C1", "-c", "c-", "c_1", "c.1", &"a".repeat(64)] {
            assert!(validate_cluster_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn annotations_get_the_agent_prefix() {
        let parsed = parse_annotations(&[
            "owner=me".into(),
            format!("{ANNOTATION_PREFIX}x=y"),
            "e=".into(),
        ])
        .unwrap();
        assert_eq!(parsed[&format!("{ANNOTATION_PREFIX}owner")], "me");
        assert_eq!(parsed[&format!("{ANNOTATION_PREFIX}x")], "y");
        assert_eq!(parsed[&format!("{ANNOTATION_PREFIX}e")], "");
        assert!(parse_annotations(&["novalue".into()]).is_err());
        assert!(parse_annotations(&["=v".into()]).is_err());
    }

    #[test]
    fn the_pull_credential_and_sync_labels_reach_the_operator() {
        let mut o = opts(false, true);
        let plain = plan(&o).unwrap();
        let pull = |objects: &[DynamicObject]| {
            objects
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(crate::api::names::IMAGE_PULL_SECRET))
                .unwrap()
                .data["data"][".dockerconfigjson"]
                .clone()
        };
        let args = |objects: &[DynamicObject]| {
            objects
                .iter()
                .find(|x| x.types.as_ref().unwrap().kind == "Deployment")
                .unwrap()
                .data["spec"]["template"]["spec"]["containers"][0]["args"]
                .clone()
        };
        assert_eq!(pull(&plain), "e30=", "an empty {{}} without a file");
        assert!(!args(&plain).to_string().contains("sync-labels"));
        o.image_pull_credential = Some(br#"{"auths":{}}"#.to_vec());
        o.sync_labels = true;
        let set = plan(&o).unwrap();
        assert_eq!(pull(&set), "eyJhdXRocyI6e319");
        assert_eq!(
            args(&set),
            serde_json::json!([
                "/registration-operator",
                "klusterlet",
                "--disable-leader-election",
                "--enable-sync-labels"
            ])
        );
    }

    #[test]
    fn hosted_names_are_random_and_valid() {
        let a = hosted_name();
        assert!(a.starts_with("klusterlet-hosted-") && a.len() == 24, "{a}");
        assert!(validate_cluster_name(&a).is_ok());
        assert_ne!(a, hosted_name());
    }

    #[test]
    fn default_plan_is_upstreams_object_set() {
        let objects = plan(&opts(false, true)).unwrap();
        assert_eq!(
            names(&objects),
            [
                "CustomResourceDefinition/klusterlets.operator.open-cluster-management.io",
                "Namespace/open-cluster-management",
                "ServiceAccount/klusterlet",
                "ClusterRole/klusterlet",
                "ClusterRoleBinding/klusterlet",
                "Secret/open-cluster-management-image-pull-credentials",
                "Deployment/klusterlet",
                "Namespace/open-cluster-management-agent",
                "Secret/bootstrap-hub-kubeconfig",
                "Klusterlet/klusterlet",
            ]
        );
        let deployment = &objects[6];
        assert_eq!(
            deployment.data["spec"]["template"]["spec"]["imagePullSecrets"][0]["name"],
            "open-cluster-management-image-pull-credentials"
        );
        let container = &deployment.data["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            container["image"],
            "quay.io/open-cluster-management/registration-operator:v1.3.1"
        );
        assert_eq!(container["args"][0], "/registration-operator");
        assert_eq!(container["args"][1], "klusterlet");
        let secret = &objects[8];
        assert_eq!(
            secret.metadata.namespace.as_deref(),
            Some("open-cluster-management-agent")
        );
        assert_eq!(secret.data["data"]["kubeconfig"], "a3ViZWNvbmZpZyB0ZXh0");
        let spec = &objects[9].data["spec"];
        assert_eq!(spec["clusterName"], "c1");
        assert_eq!(spec["namespace"], "open-cluster-management-agent");
        assert_eq!(spec["deployOption"]["mode"], "Default");
        assert_eq!(spec["externalServerURLs"][0]["url"], "https://managed:6443");
        assert_eq!(
            spec["registrationImagePullSpec"],
            "quay.io/open-cluster-management/registration:v1.3.1"
        );
        assert_eq!(
            spec["workImagePullSpec"],
            "quay.io/open-cluster-management/work:v1.3.1"
        );
        assert_eq!(
            spec["registrationConfiguration"]["featureGates"][0]["feature"],
            "ClusterClaim"
        );
        assert_eq!(
            spec["registrationConfiguration"]["clusterAnnotations"]["agent.open-cluster-management.io/owner"],
            "me"
        );
    }

    #[test]
    fn in_process_plan_has_no_operator_deployment() {
        let n = names(&plan(&opts(false, false)).unwrap());
        assert!(!n.iter().any(|n| n.starts_with("Deployment/")), "{n:?}");
        assert!(n.contains(&"Klusterlet/klusterlet".to_string()));
    }

    #[test]
    fn hosted_plan_puts_secrets_in_the_klusterlet_namespace() {
        let objects = plan(&opts(true, true)).unwrap();
        let n = names(&objects);
        assert!(
            n.contains(&"Namespace/klusterlet-hosted-abc123".to_string()),
            "{n:?}"
        );
        for secret in [BOOTSTRAP_SECRET, EXTERNAL_MANAGED_SECRET] {
            let s = objects
                .iter()
                .find(|o| o.metadata.name.as_deref() == Some(secret))
                .unwrap();
            assert_eq!(
                s.metadata.namespace.as_deref(),
                Some("klusterlet-hosted-abc123")
            );
        }
        let k = objects.last().unwrap();
        assert_eq!(k.metadata.name.as_deref(), Some("klusterlet-hosted-abc123"));
        assert_eq!(k.data["spec"]["deployOption"]["mode"], "Hosted");
        assert_eq!(
            k.data["spec"]["namespace"],
            "open-cluster-management-klusterlet-hosted-abc123"
        );
    }

    #[test]
    fn singleton_modes() {
        let mut o = opts(false, true);
        o.singleton = true;
        assert_eq!(
            klusterlet(&o).spec.deploy_option.unwrap().mode.as_deref(),
            Some(MODE_SINGLETON)
        );
        o.hosted = true;
        assert_eq!(
            klusterlet(&o).spec.deploy_option.unwrap().mode.as_deref(),
            Some(MODE_SINGLETON_HOSTED)
        );
    }

    #[test]
    fn agent_namespaces() {
        assert_eq!(
            agent_namespace("klusterlet", None, false),
            "open-cluster-management-agent"
        );
        assert_eq!(
            agent_namespace("klusterlet", Some("open-cluster-management-x"), false),
            "open-cluster-management-x"
        );
        assert_eq!(
            agent_namespace(
                "klusterlet-hosted-a",
                Some("open-cluster-management-x"),
                true
            ),
            "klusterlet-hosted-a"
        );
    }

    #[test]
    fn pins_and_proxy_urls() {
        assert!(validate_pin(&format!("sha256:{}", "aB".repeat(32))).is_ok());
        assert!(validate_pin("sha256:abc").is_err());
        assert!(validate_pin(&"a".repeat(64)).is_err());
        assert!(validate_proxy_url("http://proxy:3128").is_ok());
        assert!(validate_proxy_url("socks5://proxy:1080").is_err());
        assert!(validate_proxy_url("proxy").is_err());
    }

    /// Each template of the klusterlet operator's bundle, rendered alone with the values
    /// `operator_objects` gives it, yields named objects.
    #[test]
    fn every_klusterlet_template_renders_objects_with_its_values() {
        let values = OperatorValues {
            namespace: OPERATOR_NAMESPACE,
            name: KLUSTERLET_OPERATOR,
            image: "quay.io/open-cluster-management/registration-operator:v1.3.1".into(),
            container: crate::install::OperatorContainer::new("klusterlet", false, &[]),
            docker_config_json_b64: "e30=".into(),
            secrets: crate::operator::klusterlet::SECRETS,
            upstream_image: true,
        };
        let names = render::bundle_templates("klusterlet-operator");
        assert!(!names.is_empty());
        for name in names {
            crate::render::tests::assert_renders_objects(name, &values);
        }
    }
}
