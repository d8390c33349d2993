//! Validate (pure): a Klusterlet's spec turned into the settings the build step needs, with
//! upstream's defaults filled in, or the reason it cannot be acted on.
use kube::ResourceExt as _;

use ocm_agent::addon::token::Auth as AddonAuth;
use ocm_agent::registration::hubs::{self, HubList};
use ocm_agent::registration::settings::{ClaimLimits, Settings as RegistrationSettings};
use ocm_api::cluster::ClientConfig;
use ocm_api::names::{AGENT_NAMESPACE, DEFAULT_BUNDLE_VERSION, DEFAULT_REGISTRY};
use ocm_api::operator::{
    AddOnAuthType, ClusterClaimConfiguration, HubApiServerHostAlias, Klusterlet,
    KlusterletRegistrationConfiguration, MODE_DEFAULT, MODE_HOSTED, MODE_SINGLETON,
    MODE_SINGLETON_HOSTED, NodePlacement, RegistrationAuthType,
};
use ocm_runtime::rate::Rate;

use super::InProcess;
use super::aws_irsa::AwsIrsa;

/// Why a Klusterlet cannot be reconciled; fixing it needs a spec change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `spec.clusterName` is not a DNS-1123 label.
    #[error("{0}")]
    InvalidClusterName(String),
    /// `spec.deployOption.mode` is not one of upstream's modes.
    #[error(
        "unknown spec.deployOption.mode {0:?} (expected Default, Singleton, Hosted or SingletonHosted)"
    )]
    UnknownMode(String),
    /// `spec.resourceRequirement` says ResourceRequirement and gives none.
    #[error(transparent)]
    MissingResourceRequirements(#[from] crate::resources::Missing),
    /// `MultipleHubs` is on without a list of at least two hubs to choose from.
    #[error(
        "the MultipleHubs feature gate needs spec.registrationConfiguration.bootstrapKubeConfigs of type LocalSecrets naming at least two secrets (it names {0})"
    )]
    TooFewHubs(usize),
    /// A field no agent this operator deploys acts on is set.
    #[error("{0}")]
    Unsupported(String),
    /// `addOnKubeClientRegistrationDriver` names no driver agents know, or too short a token.
    #[error("{0}")]
    AddOnDriver(String),
    /// A duration of `spec.workConfiguration` is no duration.
    #[error("spec.workConfiguration.{field} {value:?} is not a duration such as 60m")]
    InvalidDuration {
        /// The field.
        field: &'static str,
        /// What it says.
        value: String,
    },
}

/// A Klusterlet's settings, validated and defaulted.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    /// The Klusterlet's name (prefix of every agent object's name).
    pub name: String,
    /// `metadata.generation`, for conditions' observedGeneration.
    pub generation: Option<i64>,
    /// The cluster name the agents register under.
    pub cluster_name: String,
    /// Agents run on a management cluster; managed-side objects go through its kubeconfig.
    pub hosted: bool,
    /// One combined agent instead of registration + work.
    pub singleton: bool,
    /// Where the agents run (on the management cluster when hosted).
    pub agent_namespace: String,
    /// The agents' namespace on the managed cluster (`spec.namespace`).
    pub managed_namespace: String,
    /// Registration agent image.
    pub registration_image: String,
    /// Work agent image.
    pub work_image: String,
    /// Combined agent image (Singleton modes).
    pub agent_image: String,
    /// The registration and work images are one: our image (`clusteradm controller agent`),
    /// which runs both agents in Singleton modes and one of them in each of upstream's two
    /// Deployments in the others.
    pub ours: bool,
    /// `Name=true|false` feature gates of the registration agent.
    pub registration_gates: Vec<String>,
    /// `Name=true|false` feature gates of the work agent.
    pub work_gates: Vec<String>,
    /// What the registration agent is told: certificate lifetime, cluster annotations, this
    /// cluster's API server URLs reported to the hub, claim limits.
    pub registration: RegistrationSettings,
    /// `spec.nodePlacement`: the agent pods' node selector and tolerations.
    pub node_placement: NodePlacement,
    /// `spec.priorityClassName` of the agent pods.
    pub priority_class_name: Option<String>,
    /// `spec.hubApiServerHostAlias`: a hosts entry in the agent pods.
    pub hub_host_alias: Option<HubApiServerHostAlias>,
    /// `registrationConfiguration.kubeAPIQPS`/`kubeAPIBurst`: the registration agent's rate
    /// towards the managed cluster.
    pub registration_rate: Option<Rate>,
    /// `workConfiguration.kubeAPIQPS`/`kubeAPIBurst`: the work agent's, likewise.
    pub work_rate: Option<Rate>,
    /// `workConfiguration.hubKubeAPIQPS`/`hubKubeAPIBurst`: the work agent's towards the hub.
    pub work_hub_rate: Option<Rate>,
    /// `registrationConfiguration.addOnKubeClientRegistrationDriver`: the auth type and token
    /// lifetime upstream's agent is told (our agent registers add-ons by CSR only).
    pub addon_client_auth: Option<(String, Option<i64>)>,
    /// The agent containers' `resources` (`spec.resourceRequirement`), as JSON.
    pub resources: serde_json::Value,
    /// `MultipleHubs` on: the bootstrap secrets of the hubs to choose from, and the timeout.
    pub hubs: Option<HubList>,
    /// `workConfiguration.appliedManifestWorkEvictionGracePeriod` as written (a Go duration),
    /// passed to the work agent as its flag; unset: the agent's default (60 minutes).
    pub eviction_grace_period: Option<String>,
    /// `workConfiguration.statusSyncInterval` as written, likewise (default 10 s).
    pub status_sync_interval: Option<String>,
    /// `registrationDriver.authType: awsirsa`, for upstream's agents (set by [`validate`]
    /// alone: cleanup needs none of it).
    pub aws_irsa: Option<AwsIrsa>,
}

impl Validated {
    /// What the Klusterlet's `workConfiguration` tells our work agent.
    #[must_use]
    pub fn work_settings(&self) -> ocm_agent::work::Settings {
        let mut settings = ocm_agent::work::Settings::default();
        let given = |d: &Option<String>| d.as_deref().and_then(ocm_api::go_duration);
        if let Some(grace) = given(&self.eviction_grace_period) {
            settings.eviction_grace = grace;
        }
        if let Some(interval) = given(&self.status_sync_interval) {
            settings.status_sync = interval;
        }
        settings.hub_rate = self.work_hub_rate;
        settings
    }

    /// The rate our single agent sends at towards the managed cluster: the larger of the
    /// registration and work agents' (as upstream's Singleton agent takes it).
    #[must_use]
    pub fn agent_rate(&self) -> Option<Rate> {
        Rate::max(self.registration_rate, self.work_rate)
    }

    /// The gates the agents act on, from both components' lists (their names are distinct).
    #[must_use]
    pub fn agent_gates(&self) -> ocm_agent::gates::Gates {
        ocm_agent::gates::Gates::from_flags(
            &[
                self.registration_gates.as_slice(),
                self.work_gates.as_slice(),
            ]
            .concat(),
        )
    }
}

fn default_image(component: &str) -> String {
    format!("{DEFAULT_REGISTRY}/{component}:v{DEFAULT_BUNDLE_VERSION}")
}

fn gates(list: &[ocm_api::operator::FeatureGate]) -> Vec<String> {
    list.iter()
        .map(|g| format!("{}={}", g.feature, g.enabled()))
        .collect()
}

/// `value` of `field`, refused unless it is a duration.
fn duration(field: &'static str, value: Option<String>) -> Result<Option<String>, Error> {
    match value {
        Some(value) if ocm_api::go_duration(&value).is_none() => {
            Err(Error::InvalidDuration { field, value })
        }
        other => Ok(other),
    }
}

/// A rate from a Klusterlet's QPS and burst (unset or zero: the agent's default).
fn rate(qps: Option<i32>, burst: Option<i32>) -> Option<Rate> {
    #[allow(clippy::cast_precision_loss)]
    Rate::from_flags(qps.unwrap_or(0) as f32, burst.unwrap_or(0))
}

/// `clusterClaimConfiguration`, upstream's defaults where unset (a maximum of 0 is unset).
fn claim_limits(config: Option<&ClusterClaimConfiguration>) -> ClaimLimits {
    let mut limits = ClaimLimits::default();
    if let Some(config) = config {
        if let Ok(max @ 1..) = usize::try_from(config.max_custom_cluster_claims) {
            limits.max_custom = max;
        }
        limits
            .reserved_suffixes
            .clone_from(&config.reserved_cluster_claim_suffixes);
    }
    limits
}

/// The add-on client registration upstream's agent is told: `csr` or `token`, and the token
/// lifetime.
fn addon_client_auth(reg: &KlusterletRegistrationConfiguration) -> Option<(String, Option<i64>)> {
    let driver = reg.add_on_kube_client_registration_driver.as_ref()?;
    let auth = match driver.auth_type.unwrap_or_default() {
        AddOnAuthType::Csr => "csr",
        AddOnAuthType::Token => "token",
    };
    let expiration = driver
        .token
        .as_ref()
        .and_then(|t| t.expiration_seconds)
        .filter(|s| *s > 0);
    Some((auth.into(), expiration))
}

/// How our agent registers add-ons' hub clients, as upstream's agent is told by its flags.
fn addon_auth(reg: &KlusterletRegistrationConfiguration) -> Result<AddonAuth, Error> {
    let (driver, expiration) = addon_client_auth(reg).unwrap_or(("csr".into(), None));
    AddonAuth::from_flags(&driver, expiration).map_err(|why| {
        Error::AddOnDriver(format!(
            "spec.registrationConfiguration.addOnKubeClientRegistrationDriver: {why}"
        ))
    })
}

/// Refuses what no agent this operator deploys acts on; the AWS IRSA registration upstream's
/// agents are to be told of, when they are the ones deployed.
fn unsupported(k: &Klusterlet, ours: bool) -> Result<Option<AwsIrsa>, Error> {
    let Some(reg) = &k.spec.registration_configuration else {
        return Ok(None);
    };
    if !reg.cluster_labels.is_empty() && !ours {
        return Err(Error::Unsupported(
            "spec.registrationConfiguration.clusterLabels: upstream's agents do not act on it (our image's agent puts them on the ManagedCluster it creates); set the labels on the ManagedCluster on the hub instead".into(),
        ));
    }
    let Some(driver) = &reg.registration_driver else {
        return Ok(None);
    };
    let field = "spec.registrationConfiguration.registrationDriver";
    match driver.auth_type {
        RegistrationAuthType::Csr => Ok(None),
        RegistrationAuthType::Awsirsa if ours => Err(Error::Unsupported(format!(
            "{field}.authType awsirsa: our image's agents register with a CSR only (AWS IRSA needs an EKS hub and AWS credentials, which this project cannot test); name upstream's images to pass it through to their agents, or use csr"
        ))),
        RegistrationAuthType::Awsirsa => {
            let Some(irsa) = &driver.aws_irsa else {
                return Err(Error::Unsupported(format!(
                    "{field}.authType awsirsa needs {field}.awsIrsa (hubClusterArn and managedClusterArn)"
                )));
            };
            AwsIrsa::from_arns(&irsa.hub_cluster_arn, &irsa.managed_cluster_arn)
                .map(Some)
                .map_err(|why| Error::Unsupported(format!("{field}.awsIrsa.{why}")))
        }
        RegistrationAuthType::Grpc => Err(Error::Unsupported(format!(
            "{field}.authType grpc: the gRPC registration driver is not implemented here; use csr"
        ))),
    }
}

/// Refuses what agents running in this process cannot do: they are ours, which register by CSR
/// only, whatever images the Klusterlet names.
///
/// # Errors
/// AWS IRSA registration with the registration agent in this process.
pub fn served_here(v: Validated, in_process: InProcess) -> Result<Validated, Error> {
    if v.aws_irsa.is_some() && in_process.registration {
        return Err(Error::Unsupported(
            "spec.registrationConfiguration.registrationDriver.authType awsirsa: the registration agent runs in this process, and it registers with a CSR only; deploy upstream's images instead of running in process, or use csr".into(),
        ));
    }
    Ok(v)
}

/// Validates a Klusterlet.
pub fn validate(k: &Klusterlet) -> Result<Validated, Error> {
    let mut v = lenient(k)?;
    v.aws_irsa = unsupported(k, v.ours)?;
    // No name: the registration agent registers under a generated one, as upstream's.
    if !v.cluster_name.is_empty() {
        ocm_api::names::validate_cluster_name(&v.cluster_name)
            .map_err(Error::InvalidClusterName)?;
    }
    if let Some(list) = &v.hubs
        && list.secrets.len() < 2
    {
        return Err(Error::TooFewHubs(list.secrets.len()));
    }
    Ok(v)
}

/// The hubs to choose from when `MultipleHubs` is on, as upstream's operator reads them: the
/// `LocalSecrets` list (none when another type is given) and its timeout.
fn hub_list(reg: &ocm_api::operator::KlusterletRegistrationConfiguration) -> Option<HubList> {
    if ocm_api::operator::FeatureGate::setting(&reg.feature_gates, "MultipleHubs") != Some(true) {
        return None;
    }
    let local = reg
        .bootstrap_kube_configs
        .as_ref()
        .filter(|b| b.type_ == ocm_api::operator::BootstrapKubeConfigType::LocalSecrets)
        .and_then(|b| b.local_secrets_config.as_ref());
    let seconds = local
        .and_then(|l| l.hub_connection_timeout_seconds)
        .and_then(|s| u32::try_from(s).ok())
        .unwrap_or(hubs::DEFAULT_TIMEOUT_SECONDS);
    Some(HubList {
        secrets: local
            .map(|l| {
                l.kube_config_secrets
                    .iter()
                    .map(|s| s.name.clone())
                    .collect()
            })
            .unwrap_or_default(),
        timeout: std::time::Duration::from_secs(seconds.into()),
    })
}

/// Like [`validate`] but accepts a missing or invalid cluster name: enough to find every object
/// a Klusterlet may have produced, for cleanup.
pub fn lenient(k: &Klusterlet) -> Result<Validated, Error> {
    let spec = &k.spec;
    let mode = spec
        .deploy_option
        .as_ref()
        .and_then(|d| d.mode.clone())
        .unwrap_or_else(|| MODE_DEFAULT.into());
    let (hosted, singleton) = match mode.as_str() {
        "" | MODE_DEFAULT => (false, false),
        MODE_SINGLETON => (false, true),
        MODE_HOSTED => (true, false),
        MODE_SINGLETON_HOSTED => (true, true),
        other => return Err(Error::UnknownMode(other.into())),
    };
    let name = k.name_any();
    let managed_namespace = spec
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| AGENT_NAMESPACE.into());
    let reg = spec.registration_configuration.clone().unwrap_or_default();
    let work = spec.work_configuration.clone().unwrap_or_default();
    let image = |given: &Option<String>, component: &str| {
        given
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| default_image(component))
    };
    let registration_image = image(&spec.registration_image_pull_spec, "registration");
    let work_image = image(&spec.work_image_pull_spec, "work");
    let ours = registration_image == work_image;
    let hubs = hub_list(&reg);
    Ok(Validated {
        agent_namespace: ocm_api::names::agent_namespace(&name, Some(&managed_namespace), hosted),
        name,
        generation: k.metadata.generation,
        cluster_name: spec.cluster_name.clone().unwrap_or_default(),
        hosted,
        singleton,
        managed_namespace,
        agent_image: if ours {
            registration_image.clone()
        } else {
            image(&spec.image_pull_spec, "registration-operator")
        },
        registration_image,
        work_image,
        ours,
        registration_gates: gates(&reg.feature_gates),
        work_gates: gates(&work.feature_gates),
        registration: RegistrationSettings {
            cert_expiration_seconds: reg.client_cert_expiration_seconds.filter(|s| *s > 0),
            cluster_annotations: reg.cluster_annotations.clone(),
            cluster_labels: reg.cluster_labels.clone(),
            external_servers: spec
                .external_server_urls
                .iter()
                .map(|u| ClientConfig {
                    url: u.url.clone(),
                    ca_bundle: u.ca_bundle.clone(),
                })
                .collect(),
            claims: claim_limits(reg.cluster_claim_configuration.as_ref()),
            addon_auth: addon_auth(&reg)?,
        },
        node_placement: spec.node_placement.clone().unwrap_or_default(),
        priority_class_name: spec.priority_class_name.clone().filter(|p| !p.is_empty()),
        hub_host_alias: spec.hub_api_server_host_alias.clone(),
        registration_rate: rate(reg.kube_api_qps, reg.kube_api_burst),
        work_rate: rate(work.kube_api_qps, work.kube_api_burst),
        work_hub_rate: rate(work.hub_kube_api_qps, work.hub_kube_api_burst),
        addon_client_auth: addon_client_auth(&reg),
        resources: crate::resources::json(spec.resource_requirement.as_ref())?,
        hubs,
        eviction_grace_period: duration(
            "appliedManifestWorkEvictionGracePeriod",
            work.applied_manifest_work_eviction_grace_period,
        )?,
        status_sync_interval: duration("statusSyncInterval", work.status_sync_interval)?,
        aws_irsa: None,
    })
}

#[cfg(any(test, feature = "testing"))]
pub mod test_support {
    //! Minimal Klusterlets from YAML, as the build and status tests need them.
    use ocm_api::operator::Klusterlet;

    /// A Klusterlet setting every field that reaches the agents' pods and flags.
    pub const EVERY_AGENT_FIELD: &str = "clusterName: c1
nodePlacement: {nodeSelector: {zone: a}, tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]}
priorityClassName: agents-high
hubApiServerHostAlias: {ip: 10.0.0.7, hostname: hub.example.com}
externalServerURLs: [{url: 'https://c1.example.com:6443'}]
registrationConfiguration:
  kubeAPIQPS: 10
  kubeAPIBurst: 40
  clientCertExpirationSeconds: 3600
  clusterAnnotations: {agent.open-cluster-management.io/zone: a}
  clusterClaimConfiguration: {maxCustomClusterClaims: 5, reservedClusterClaimSuffixes: [.example.com]}
  addOnKubeClientRegistrationDriver: {authType: csr}
workConfiguration: {kubeAPIQPS: 30, kubeAPIBurst: 20, hubKubeAPIQPS: 7, hubKubeAPIBurst: 9}
";

    /// A Klusterlet from a YAML fixture (name `klusterlet`, generation 2, unless the YAML says otherwise).
    #[must_use]
    pub fn klusterlet(spec_yaml: &str) -> Klusterlet {
        let spec: serde_json::Value = ocm_api::yaml::from_str(spec_yaml).unwrap();
        serde_json::from_value(serde_json::json!({
            "apiVersion": "operator.open-cluster-management.io/v1", "kind": "Klusterlet",
            "metadata": {"name": "klusterlet", "generation": 2},
            "spec": spec,
        }))
        .unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::klusterlet;
    use super::*;

    #[test]
    fn the_eviction_grace_period_is_read_or_refused() {
        let v = validate(&klusterlet(
            "{clusterName: c1, workConfiguration: {appliedManifestWorkEvictionGracePeriod: 1h30m, statusSyncInterval: 30s}}",
        ))
        .unwrap();
        assert_eq!(
            v.work_settings().eviction_grace,
            std::time::Duration::from_secs(5400)
        );
        assert_eq!(
            v.work_settings().status_sync,
            std::time::Duration::from_secs(30)
        );
        let unset = validate(&klusterlet("clusterName: c1")).unwrap();
        assert_eq!(
            unset.work_settings().eviction_grace,
            ocm_agent::work::eviction::DEFAULT_GRACE
        );
        assert!(matches!(
            validate(&klusterlet(
                "{clusterName: c1, workConfiguration: {appliedManifestWorkEvictionGracePeriod: soon}}"
            )),
            Err(Error::InvalidDuration { .. })
        ));
    }

    #[test]
    fn defaults_are_upstreams() {
        let v = validate(&klusterlet("clusterName: c1")).unwrap();
        assert_eq!(v.agent_namespace, "open-cluster-management-agent");
        assert_eq!(v.managed_namespace, "open-cluster-management-agent");
        assert!(!v.hosted && !v.singleton);
        assert_eq!(
            v.registration_image,
            "quay.io/open-cluster-management/registration:v1.3.1"
        );
        assert_eq!(v.generation, Some(2));
    }

    #[test]
    fn hosted_agents_run_in_the_klusterlet_namespace() {
        let v = validate(&klusterlet(
            "{clusterName: c1, namespace: open-cluster-management-x, deployOption: {mode: SingletonHosted}}",
        ))
        .unwrap();
        assert!(v.hosted && v.singleton);
        assert_eq!(v.agent_namespace, "klusterlet");
        assert_eq!(v.managed_namespace, "open-cluster-management-x");
    }

    #[test]
    fn invalid_specs_are_named() {
        // No name: the agent generates one.
        assert_eq!(validate(&klusterlet("{}")).unwrap().cluster_name, "");
        assert!(matches!(
            validate(&klusterlet("clusterName: Bad_Name")),
            Err(Error::InvalidClusterName(_))
        ));
        assert_eq!(
            validate(&klusterlet(
                "{clusterName: c1, deployOption: {mode: Weird}}"
            )),
            Err(Error::UnknownMode("Weird".into()))
        );
        assert!(lenient(&klusterlet("{}")).is_ok());
    }

    #[test]
    fn feature_gates_become_flags() {
        let v = validate(&klusterlet(
            "{clusterName: c1, registrationConfiguration: {featureGates: [{feature: A, mode: Enable}, {feature: B}]}}",
        ))
        .unwrap();
        assert_eq!(v.registration_gates, ["A=true", "B=false"]);
        assert!(v.work_gates.is_empty());
    }

    #[test]
    fn multiple_hubs_reads_the_local_secrets_only_with_its_gate() {
        let spec = |gate: &str, list: &str| {
            format!(
                "{{clusterName: c1, registrationConfiguration: {{featureGates: [{{feature: MultipleHubs, mode: {gate}}}], bootstrapKubeConfigs: {list}}}}}"
            )
        };
        let two = "{type: LocalSecrets, localSecretsConfig: {kubeConfigSecrets: [{name: a}, {name: b}], hubConnectionTimeoutSeconds: 300}}";
        let v = validate(&klusterlet(&spec("Enable", two))).unwrap();
        assert_eq!(
            v.hubs,
            Some(HubList {
                secrets: vec!["a".into(), "b".into()],
                timeout: std::time::Duration::from_secs(300)
            })
        );
        // Off: the list is ignored, as upstream's operator ignores it.
        assert_eq!(
            validate(&klusterlet(&spec("Disable", two))).unwrap().hubs,
            None
        );
        // On with fewer than two hubs, or another type: refused with the reason.
        let one = "{type: LocalSecrets, localSecretsConfig: {kubeConfigSecrets: [{name: a}]}}";
        assert_eq!(
            validate(&klusterlet(&spec("Enable", one))),
            Err(Error::TooFewHubs(1))
        );
        assert_eq!(
            validate(&klusterlet(&spec("Enable", "{type: None}"))),
            Err(Error::TooFewHubs(0))
        );
        let untimed =
            "{type: LocalSecrets, localSecretsConfig: {kubeConfigSecrets: [{name: a}, {name: b}]}}";
        let v = validate(&klusterlet(&spec("Enable", untimed))).unwrap();
        assert_eq!(v.hubs.unwrap().timeout.as_secs(), 600);
    }

    #[test]
    fn fields_no_deployed_agent_acts_on_are_refused_with_the_field_named() {
        let ours = "registrationImagePullSpec: 'r.example/clusteradm:v1', workImagePullSpec: 'r.example/clusteradm:v1'";
        let refused = |spec: &str| match validate(&klusterlet(spec)) {
            Err(Error::Unsupported(message)) => message,
            other => panic!("{spec}: {other:?}"),
        };
        let hub = "arn:aws:eks:us-west-2:123456789012:cluster/hub-cluster1";
        let managed = "arn:aws:eks:us-west-2:123456789012:cluster/managed-cluster1";
        let irsa = |hub: &str, images: &str| {
            format!(
                "{{clusterName: c1, {images} registrationConfiguration: {{registrationDriver: {{authType: awsirsa, awsIrsa: {{hubClusterArn: '{hub}', managedClusterArn: '{managed}'}}}}}}}}"
            )
        };
        // Our agents register by CSR: refused, with what to do.
        assert!(refused(&irsa(hub, &format!("{ours},"))).contains("name upstream's images"));
        // Upstream's agents are told of it; a malformed ARN is named, not left to their panic.
        let v = validate(&klusterlet(&irsa(hub, ""))).unwrap();
        assert_eq!(
            v.aws_irsa.as_ref().unwrap().role_suffix,
            "7f8141296c75f2871e3d030f85c35692"
        );
        assert!(refused(&irsa("arn:aws:bks:x:1:cluster/h", "")).contains("awsIrsa.hubClusterArn"));
        assert!(
            refused("{clusterName: c1, registrationConfiguration: {registrationDriver: {authType: awsirsa}}}")
                .contains("needs spec.registrationConfiguration.registrationDriver.awsIrsa")
        );
        assert!(
            refused("{clusterName: c1, registrationConfiguration: {registrationDriver: {authType: grpc}}}")
                .contains("authType grpc")
        );
        // Agents in this process are ours, whatever the images say.
        let in_process = InProcess {
            registration: true,
            work: true,
        };
        assert!(matches!(
            served_here(v.clone(), in_process),
            Err(Error::Unsupported(m)) if m.contains("runs in this process")
        ));
        assert!(served_here(v, InProcess::default()).is_ok());
        assert!(
            refused("{clusterName: c1, registrationConfiguration: {clusterLabels: {a: b}}}")
                .contains("clusterLabels")
        );
        // Ours puts the labels on.
        validate(&klusterlet(&format!(
            "{{clusterName: c1, {ours}, registrationConfiguration: {{clusterLabels: {{a: b}}}}}}"
        )))
        .unwrap();
        let v = validate(&klusterlet(
            "{clusterName: c1, registrationConfiguration: {addOnKubeClientRegistrationDriver: {authType: token, token: {expirationSeconds: 7200}}}}",
        ))
        .unwrap();
        assert_eq!(v.addon_client_auth, Some(("token".into(), Some(7200))));
        // A lenient read (cleanup) is never refused for them.
        assert!(
            lenient(&klusterlet(
                "{clusterName: c1, registrationConfiguration: {clusterLabels: {a: b}}}"
            ))
            .is_ok()
        );
    }

    #[test]
    fn the_addon_driver_reaches_our_agent_and_a_short_token_is_refused() {
        use ocm_api::operator::AddOnAuthType;
        let ours = "registrationImagePullSpec: 'r.example/clusteradm:v1', workImagePullSpec: 'r.example/clusteradm:v1'";
        let v = validate(&klusterlet(&format!(
            "{{clusterName: c1, {ours}, registrationConfiguration: {{addOnKubeClientRegistrationDriver: {{authType: token, token: {{expirationSeconds: 7200}}}}}}}}"
        )))
        .unwrap();
        let auth = v.registration.addon_auth;
        assert_eq!(
            (auth.driver, auth.expiration_seconds),
            (AddOnAuthType::Token, 7200)
        );
        let plain = validate(&klusterlet(&format!("{{clusterName: c1, {ours}}}"))).unwrap();
        assert_eq!(plain.registration.addon_auth, AddonAuth::default());
        let short = validate(&klusterlet(
            "{clusterName: c1, registrationConfiguration: {addOnKubeClientRegistrationDriver: {authType: token, token: {expirationSeconds: 300}}}}",
        ));
        assert!(
            matches!(&short, Err(Error::AddOnDriver(m)) if m.contains("at least 600")),
            "{short:?}"
        );
    }
}
