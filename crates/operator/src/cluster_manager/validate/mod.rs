//! Checks a ClusterManager and resolves its spec into the plain values the build step needs
//! (pure). Hard errors make the spec unusable until it changes; unknown feature gates do not:
//! they are dropped and reported through the `ValidFeatureGates` condition, as upstream does.
use k8s_openapi::api::core::v1::ResourceRequirements;

use super::Admission;
use ocm_api::gates::{ADDON_GATES, PLACEMENT_GATES, REGISTRATION_GATES, WORK_GATES};
use ocm_api::names::ADMISSION_ANNOTATION;
pub mod hosted;

pub use hosted::HostedWebhook;

use ocm_api::operator::{
    BindConfiguration, ClusterManager, FeatureGate, HubInstallMode, NodePlacement,
    RegistrationAuthType,
};

/// Image of the registration controller and webhook when the spec names none.
pub const DEFAULT_REGISTRATION_IMAGE: &str = "quay.io/open-cluster-management/registration";
/// Image of the work webhook when the spec names none.
pub const DEFAULT_WORK_IMAGE: &str = "quay.io/open-cluster-management/work";
/// Image of the placement controller when the spec names none.
pub const DEFAULT_PLACEMENT_IMAGE: &str = "quay.io/open-cluster-management/placement";
/// Image of the add-on manager and its webhook when the spec names none.
pub const DEFAULT_ADDON_MANAGER_IMAGE: &str = "quay.io/open-cluster-management/addon-manager";

/// Why a spec cannot be acted on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Hosted mode with upstream's component images: this operator hosts our hub image only.
    #[error(
        "spec.deployOption.mode Hosted is supported with our hub image only: name one image for registrationImagePullSpec, workImagePullSpec and placementImagePullSpec (as `clusteradm init --image` does), or use mode Default"
    )]
    HostedUnsupported,
    /// An image field is set to the empty string.
    #[error("spec.{field} is empty")]
    EmptyImage {
        /// The spec field.
        field: &'static str,
    },
    /// QoS type ResourceRequirement without the requirements.
    #[error(
        "spec.resourceRequirement.type is ResourceRequirement but spec.resourceRequirement.resourceRequirements is missing"
    )]
    MissingResourceRequirements,
    /// The admission annotation names no known mode.
    #[error(
        "annotation {ADMISSION_ANNOTATION} is \"{0}\": it must be \"webhooks\" or \"policies\""
    )]
    InvalidAdmission(String),
    /// A field is set that nothing this operator deploys acts on.
    #[error("{0}")]
    Unsupported(String),
}

impl Error {
    /// The condition reason reporting this error.
    #[must_use]
    pub fn reason(&self) -> &'static str {
        match self {
            Self::HostedUnsupported => "UnsupportedDeployMode",
            Self::Unsupported(_) => "UnsupportedField",
            Self::EmptyImage { .. }
            | Self::MissingResourceRequirements
            | Self::InvalidAdmission(_) => "InvalidSpec",
        }
    }
}

/// Ports a webhook pod binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookPorts {
    /// The HTTPS port the apiserver calls (and the Service exposes).
    pub port: i32,
    /// Health probes.
    pub health_probe_port: i32,
    /// Metrics.
    pub metrics_port: i32,
    /// The pod runs on its node's network (`bindConfiguration.hostNetwork`).
    pub host_network: bool,
}

impl WebhookPorts {
    fn from(bind: Option<&BindConfiguration>) -> Self {
        Self {
            port: bind.and_then(|b| b.port).unwrap_or(9443),
            health_probe_port: bind.and_then(|b| b.health_probe_port).unwrap_or(8000),
            metrics_port: bind.and_then(|b| b.metrics_port).unwrap_or(8080),
            host_network: bind.and_then(|b| b.host_network).unwrap_or(false),
        }
    }
}

/// A usable spec, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// Registration image.
    pub registration_image: String,
    /// Work image.
    pub work_image: String,
    /// Placement image.
    pub placement_image: String,
    /// Add-on manager (and add-on webhook) image: upstream's components only; with our image
    /// the hub pod runs the add-on manager and serves the add-on API's conversion.
    pub addon_manager_image: String,
    /// `--feature-gates=...` flags of the registration controller and webhook.
    pub registration_gates: Vec<String>,
    /// `--feature-gates=...` flags of the work webhook.
    pub work_gates: Vec<String>,
    /// `--feature-gates=...` flags of the placement controller.
    pub placement_gates: Vec<String>,
    /// `--feature-gates=...` flags of the add-on manager.
    pub addon_gates: Vec<String>,
    /// Users whose registrations are approved automatically.
    pub auto_approve_users: Vec<String>,
    /// Enabled registration drivers (`csr`, `awsirsa`, `grpc`).
    pub registration_drivers: Vec<String>,
    /// The `csr` driver's `autoApprovedIdentities`, for upstream's registration controller.
    pub csr_auto_approved: Vec<String>,
    /// The `awsirsa` driver's settings, for upstream's registration controller: the hub's
    /// EKS ARN, the auto-approved ARN patterns, the tags.
    pub awsirsa: Option<ocm_api::operator::AwsIrsaHubConfig>,
    /// Gates named in the spec that their component does not know, as `component: Gate`.
    pub invalid_gates: Vec<String>,
    /// Node selector and tolerations of the hub pods.
    pub node_placement: NodePlacement,
    /// Container resources; `None` for BestEffort.
    pub resources: Option<ResourceRequirements>,
    /// Registration webhook ports.
    pub registration_webhook: WebhookPorts,
    /// Work webhook ports.
    pub work_webhook: WebhookPorts,
    /// Add-on webhook ports (upstream's add-on webhook serves the add-on API's conversion).
    pub addon_webhook: WebhookPorts,
    /// How admission is enforced.
    pub admission: Admission,
    /// Hosted mode (the hub pods on the management cluster, acting on the hub through the
    /// external hub kubeconfig): where the hub's API server reaches their webhooks.
    pub hosted: Option<HostedWebhook>,
}

impl Validated {
    /// The one image every component names, if they all name the same: our image, which runs
    /// every hub controller in one process (upstream ships one image per component).
    #[must_use]
    pub fn single_image(&self) -> Option<&str> {
        (self.registration_image == self.work_image && self.work_image == self.placement_image)
            .then_some(self.registration_image.as_str())
    }

    /// The gates switched in the spec that would not be honoured (`Name=true`, with why), as
    /// `init` would refuse them ([`ocm_api::gates`]): with `ours`, by this project's hub
    /// components, the placement debug endpoint only by our hub pods (`pods`); else by this
    /// operator deploying upstream's, which adds no debug sidecar to their placement pod.
    #[must_use]
    pub fn unhonoured_gates(&self, ours: bool, pods: bool) -> Vec<String> {
        use ocm_api::gates::{Component, PLACEMENT_DEBUG_NOT_SERVED, refusal};
        let flags = [
            (Component::HubRegistration, &self.registration_gates),
            (Component::HubWork, &self.work_gates),
            (Component::HubPlacement, &self.placement_gates),
        ];
        let mut unhonoured: Vec<String> = flags
            .into_iter()
            .filter(|_| ours)
            .flat_map(|(component, list)| list.iter().map(move |flag| (component, flag)))
            .filter_map(|(component, flag)| {
                let (name, value) = flag.strip_prefix("--feature-gates=")?.split_once('=')?;
                refusal(component, name, value == "true")
            })
            .collect();
        if !pods && self.placement_debug_server() {
            unhonoured.push(PLACEMENT_DEBUG_NOT_SERVED.to_owned());
        }
        unhonoured
    }

    /// Whether the `PlacementDebugServer` gate is on (placement; off unless switched on).
    #[must_use]
    pub fn placement_debug_server(&self) -> bool {
        last_setting(&self.placement_gates, "PlacementDebugServer") == Some(true)
    }

    /// Whether the `AddonManagement` gate is on (add-on manager; on unless switched off): with
    /// upstream's images the operator deploys upstream's add-on manager.
    #[must_use]
    pub fn addon_management(&self) -> bool {
        last_setting(&self.addon_gates, "AddonManagement").is_none_or(|on| on)
    }

    /// Whether the `ManifestWorkReplicaSet` gate is on (work; off unless switched on): with
    /// upstream's images the operator deploys upstream's work controller.
    #[must_use]
    pub fn manifest_work_replica_set(&self) -> bool {
        last_setting(&self.work_gates, "ManifestWorkReplicaSet") == Some(true)
    }

    /// Whether the `ClusterProfile` gate is on (registration; off unless switched on).
    #[must_use]
    pub fn cluster_profile(&self) -> bool {
        last_setting(&self.registration_gates, "ClusterProfile") == Some(true)
    }
}

/// Checks `cm` and resolves its spec.
pub fn validate(cm: &ClusterManager) -> Result<Validated, Error> {
    let spec = &cm.spec;
    let deploy = spec.deploy_option.clone().unwrap_or_default();
    let hosted = hosted_of(cm, &deploy)?;
    let image = |value: &Option<String>, field: &'static str, default: &str| match value {
        Some(v) if v.trim().is_empty() => Err(Error::EmptyImage { field }),
        Some(v) => Ok(v.clone()),
        None => Ok(default.to_string()),
    };
    let mut invalid_gates = Vec::new();
    let registration = spec.registration_configuration.clone().unwrap_or_default();
    let work_config = spec.work_configuration.clone().unwrap_or_default();
    let placement_config = spec.placement_configuration.clone().unwrap_or_default();
    let addon_config = spec
        .add_on_manager_configuration
        .clone()
        .unwrap_or_default();
    let registration_gates = gate_flags(
        "registration",
        &registration.feature_gates,
        REGISTRATION_GATES,
        &mut invalid_gates,
    );
    let work_gates = gate_flags(
        "work",
        &work_config.feature_gates,
        WORK_GATES,
        &mut invalid_gates,
    );
    let placement_gates = gate_flags(
        "placement",
        &placement_config.feature_gates,
        PLACEMENT_GATES,
        &mut invalid_gates,
    );
    let addon_gates = gate_flags(
        "addOnManager",
        &addon_config.feature_gates,
        ADDON_GATES,
        &mut invalid_gates,
    );
    let default_webhooks = deploy.default.unwrap_or_default();
    let ports = |w: &Option<ocm_api::operator::DefaultWebhookConfiguration>| {
        WebhookPorts::from(w.as_ref().and_then(|w| w.bind_configuration.as_ref()))
    };
    let admission = admission(cm)?;
    unsupported(cm)?;
    Ok(Validated {
        admission,
        generation: cm.metadata.generation,
        registration_image: image(
            &spec.registration_image_pull_spec,
            "registrationImagePullSpec",
            DEFAULT_REGISTRATION_IMAGE,
        )?,
        work_image: image(
            &spec.work_image_pull_spec,
            "workImagePullSpec",
            DEFAULT_WORK_IMAGE,
        )?,
        placement_image: image(
            &spec.placement_image_pull_spec,
            "placementImagePullSpec",
            DEFAULT_PLACEMENT_IMAGE,
        )?,
        registration_gates,
        work_gates,
        placement_gates,
        addon_gates,
        addon_manager_image: image(
            &spec.add_on_manager_image_pull_spec,
            "addOnManagerImagePullSpec",
            DEFAULT_ADDON_MANAGER_IMAGE,
        )?,
        auto_approve_users: registration.auto_approve_users.clone(),
        registration_drivers: driver_names(&registration),
        csr_auto_approved: registration
            .registration_drivers
            .iter()
            .filter_map(|d| d.csr.as_ref())
            .flat_map(|c| c.auto_approved_identities.iter().cloned())
            .collect(),
        awsirsa: registration
            .registration_drivers
            .iter()
            .find_map(|d| d.awsirsa.clone()),
        invalid_gates,
        node_placement: spec.node_placement.clone().unwrap_or_default(),
        resources: crate::resources::of(spec.resource_requirement.as_ref())
            .map_err(|_| Error::MissingResourceRequirements)?,
        registration_webhook: ports(&default_webhooks.registration_webhook_configuration),
        work_webhook: ports(&default_webhooks.work_webhook_configuration),
        addon_webhook: ports(&default_webhooks.addon_webhook_configuration),
        hosted,
    })
}

/// Hosted mode's webhook settings, for our image only.
fn hosted_of(
    cm: &ClusterManager,
    deploy: &ocm_api::operator::ClusterManagerDeployOption,
) -> Result<Option<HostedWebhook>, Error> {
    if deploy.mode != HubInstallMode::Hosted {
        return Ok(None);
    }
    if !names_one_image(cm) {
        return Err(Error::HostedUnsupported);
    }
    hosted::webhook(deploy).map(Some)
}

/// Whether the spec names one image for every component: ours.
fn names_one_image(cm: &ClusterManager) -> bool {
    let spec = &cm.spec;
    let images = [
        &spec.registration_image_pull_spec,
        &spec.work_image_pull_spec,
        &spec.placement_image_pull_spec,
    ];
    images[0].is_some() && images.iter().all(|i| *i == images[0])
}

/// The enabled registration drivers, by upstream's names.
fn driver_names(registration: &ocm_api::operator::RegistrationHubConfiguration) -> Vec<String> {
    registration
        .registration_drivers
        .iter()
        .map(|d| match d.auth_type {
            RegistrationAuthType::Csr => "csr".to_string(),
            RegistrationAuthType::Awsirsa => "awsirsa".to_string(),
            RegistrationAuthType::Grpc => "grpc".to_string(),
        })
        .collect()
}

/// Refuses what nothing this operator deploys acts on, naming the field: another work driver,
/// the gRPC server and its registration driver, the cluster importer, the add-on webhook's
/// settings; and with our image (whose hub registers clusters with CSRs only, and serves its
/// webhooks from the hub pod) the awsirsa driver and host networking.
fn unsupported(cm: &ClusterManager) -> Result<(), Error> {
    let spec = &cm.spec;
    let refuse = |what: &str| Err(Error::Unsupported(what.to_owned()));
    let work_driver = spec.work_configuration.as_ref().and_then(|w| w.work_driver);
    if work_driver.is_some_and(|d| d != ocm_api::operator::WorkDriver::Kube) {
        return refuse(
            "spec.workConfiguration.workDriver: works reach the agents through the hub API server here (kube); mqtt and grpc are not deployed by this operator",
        );
    }
    if spec
        .server_configuration
        .as_ref()
        .is_some_and(|s| *s != ocm_api::operator::ServerConfiguration::default())
    {
        return refuse(
            "spec.serverConfiguration: this operator does not deploy upstream's gRPC server",
        );
    }
    let registration = spec.registration_configuration.clone().unwrap_or_default();
    let drivers = &registration.registration_drivers;
    if drivers
        .iter()
        .any(|d| d.auth_type == RegistrationAuthType::Grpc)
    {
        return refuse(
            "spec.registrationConfiguration.registrationDrivers: the grpc driver needs upstream's gRPC server, which this operator does not deploy",
        );
    }
    if registration
        .importer_configuration
        .is_some_and(|i| !i.renderers.is_empty())
    {
        return refuse(
            "spec.registrationConfiguration.importerConfiguration: this operator does not deploy the cluster importer",
        );
    }
    let default_webhooks = spec
        .deploy_option
        .as_ref()
        .and_then(|d| d.default.clone())
        .unwrap_or_default();
    let ours = names_one_image(cm);
    if ours
        && drivers
            .iter()
            .any(|d| d.auth_type == RegistrationAuthType::Awsirsa)
    {
        return refuse(
            "spec.registrationConfiguration.registrationDrivers: our image's hub registers clusters with CSRs only (awsirsa needs upstream's images)",
        );
    }
    if ours && default_webhooks.addon_webhook_configuration.is_some() {
        return refuse(
            "spec.deployOption.default.addonWebhookConfiguration: our image serves the add-on API's conversion from the hub pod (upstream's images deploy the add-on webhook it configures)",
        );
    }
    let host_network = [
        &default_webhooks.registration_webhook_configuration,
        &default_webhooks.work_webhook_configuration,
        &default_webhooks.addon_webhook_configuration,
    ]
    .iter()
    .any(|w| {
        w.as_ref()
            .and_then(|w| w.bind_configuration.as_ref())
            .and_then(|b| b.host_network)
            == Some(true)
    });
    if ours && host_network {
        return refuse(
            "spec.deployOption.default.*WebhookConfiguration.bindConfiguration.hostNetwork: our image serves the webhooks from the hub pod, on the pod network",
        );
    }
    Ok(())
}

/// The admission mode the ClusterManager's annotation asks for (webhooks when none).
///
/// # Errors
/// The annotation names no mode.
pub fn admission(cm: &ClusterManager) -> Result<Admission, Error> {
    match cm
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ADMISSION_ANNOTATION))
    {
        None => Ok(Admission::Webhooks),
        Some(v) => Admission::parse(v).ok_or_else(|| Error::InvalidAdmission(v.clone())),
    }
}

/// The last setting of gate `name` among `flags` (`--feature-gates=Name=bool`).
fn last_setting(flags: &[String], name: &str) -> Option<bool> {
    let prefix = format!("--feature-gates={name}=");
    flags
        .iter()
        .rev()
        .find_map(|f| f.strip_prefix(&prefix))
        .map(|value| value == "true")
}

/// `--feature-gates=Name=true|false` for each known gate; unknown ones go to `invalid`.
fn gate_flags(
    component: &str,
    gates: &[FeatureGate],
    known: &[&str],
    invalid: &mut Vec<String>,
) -> Vec<String> {
    let mut flags = Vec::new();
    for gate in gates {
        if known.contains(&gate.feature.as_str()) {
            flags.push(format!(
                "--feature-gates={}={}",
                gate.feature,
                gate.enabled()
            ));
        } else {
            invalid.push(format!("{component}: {}", gate.feature));
        }
    }
    flags
}

#[cfg(test)]
mod tests {
    //! Unit tests of the validate step.
    use super::*;
    use crate::cluster_manager::test_support::cluster_manager;

    #[test]
    fn an_empty_spec_gets_upstream_defaults() {
        let v = validate(&cluster_manager("spec: {}")).unwrap();
        assert_eq!(v.registration_image, DEFAULT_REGISTRATION_IMAGE);
        assert_eq!(v.placement_image, DEFAULT_PLACEMENT_IMAGE);
        assert_eq!(v.registration_webhook.port, 9443);
        assert!(v.invalid_gates.is_empty());
        assert_eq!(
            v.resources.unwrap().requests.unwrap()["memory"],
            k8s_openapi::apimachinery::pkg::api::resource::Quantity("16Mi".into())
        );
    }

    #[test]
    fn known_gates_become_flags_and_unknown_ones_are_reported() {
        let v = validate(&cluster_manager(
        "spec:
  registrationConfiguration:
    featureGates: [{feature: DefaultClusterSet, mode: Enable}, {feature: ManifestWorkReplicaSet, mode: Enable}]
  workConfiguration:
    featureGates: [{feature: ManifestWorkReplicaSet, mode: Enable}, {feature: NilExecutorValidating}]",
    ))
    .unwrap();
        assert_eq!(
            v.registration_gates,
            ["--feature-gates=DefaultClusterSet=true"]
        );
        assert_eq!(
            v.work_gates,
            [
                "--feature-gates=ManifestWorkReplicaSet=true",
                "--feature-gates=NilExecutorValidating=false"
            ]
        );
        assert_eq!(v.invalid_gates, ["registration: ManifestWorkReplicaSet"]);
    }

    #[test]
    fn hosted_mode_and_empty_images_are_rejected() {
        // Upstream's images are not hosted by this operator; ours are.
        let err = validate(&cluster_manager("spec: {deployOption: {mode: Hosted}}")).unwrap_err();
        assert_eq!(err.reason(), "UnsupportedDeployMode");
        let ours = "spec: {registrationImagePullSpec: i, workImagePullSpec: i, placementImagePullSpec: i, deployOption: {mode: Hosted}}";
        let v = validate(&cluster_manager(ours)).unwrap();
        assert_eq!(v.hosted, Some(HostedWebhook::PodAddresses));
        let err = validate(&cluster_manager("spec: {placementImagePullSpec: ''}")).unwrap_err();
        assert!(err.to_string().contains("placementImagePullSpec"), "{err}");
    }

    #[test]
    fn best_effort_has_no_resources() {
        let v = validate(&cluster_manager(
            "spec: {resourceRequirement: {type: BestEffort}}",
        ))
        .unwrap();
        assert_eq!(v.resources, None);
        assert!(
            validate(&cluster_manager(
                "spec: {resourceRequirement: {type: ResourceRequirement}}"
            ))
            .is_err()
        );
    }

    #[test]
    fn the_admission_annotation_picks_webhooks_or_policies() {
        let with = |value: &str| {
            let mut cm = cluster_manager("spec: {}");
            cm.metadata.annotations = Some([(ADMISSION_ANNOTATION.into(), value.into())].into());
            validate(&cm)
        };
        assert_eq!(
            validate(&cluster_manager("spec: {}")).unwrap().admission,
            Admission::Webhooks
        );
        assert_eq!(with("policies").unwrap().admission, Admission::Policies);
        assert_eq!(with("webhooks").unwrap().admission, Admission::Webhooks);
        let err = with("both").unwrap_err();
        assert_eq!(err.reason(), "InvalidSpec");
        assert!(err.to_string().contains("\"both\""), "{err}");
    }
}
