//! What the add-on manager wants for one template add-on on one cluster, decided from what the
//! stores show (no I/O): the deploy ManifestWork ([`work`]), the hosting and hook works, the hub
//! RoleBindings of its `KubeClient` registration ([`super::bindings`]), and the
//! ManagedClusterAddOn's status — config references, registrations, install namespace,
//! health-check mode and the conditions ([`super::status`]), with upstream's reasons and
//! messages (addon-framework `agentdeploy`, `registration`; ocm `addonconfiguration`,
//! `addonprogressing`).
use k8s_openapi::api::rbac::v1::RoleBinding;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt as _;

use super::bindings;
use super::status::{
    Judge, available, cannot_build, manifest_applied, progressing, record_configs,
    registration_applied,
};
use crate::addon::template::probe::Fields;
use crate::addon::template::{self, RenderError, config, hook, hosting, work};
use ocm_api::addon::{
    ADDON_NAMESPACE_LABEL, AddOnDeploymentConfig, AddOnDeploymentConfigSpec, AddOnTemplate,
    CONFIGURED, ConfigSpecHash, HEALTH_PROBE_FIELDS_ANNOTATION, HOSTING_MANIFEST_APPLIED,
    HealthCheck, HealthCheckMode, HealthProber, MANIFEST_APPLIED, ManagedClusterAddOn,
    ManagedClusterAddOnStatus,
};
use ocm_api::cluster::ManagedCluster;
use ocm_api::conditions::{self, FALSE};
use ocm_api::work::{ManifestWork, ManifestWorkSpec};

/// What becomes of an add-on's work on a hosting cluster.
#[derive(Debug, Default, PartialEq)]
pub enum Hosting {
    /// Left as it is (the add-on cannot be rendered now).
    #[default]
    Keep,
    /// Removed, and the add-on's hosting finalizer with it: the add-on is not (validly) Hosted.
    Remove,
    /// Hosted: the finalizer held, and the work as it should be (`None`: no manifest goes there).
    Deploy(Option<Box<ManifestWork>>),
}

/// Everything the manager writes for one ManagedClusterAddOn.
#[derive(Debug, Default)]
pub struct Plan {
    /// The deploy work as it should be (`None`: no template, nothing to deploy).
    pub work: Option<ManifestWork>,
    /// The deploy work on the hosting cluster.
    pub hosting: Hosting,
    /// The pre-delete hook work, run when the add-on is deleted (`None`: no hook).
    pub hook: Option<ManifestWork>,
    /// Hub RoleBindings of the `KubeClient` registration.
    pub bindings: Vec<RoleBinding>,
    /// The status as it should be.
    pub status: ManagedClusterAddOnStatus,
}

/// What [`plan`](plan()) reads.
pub struct Inputs<'a> {
    /// The add-on on the cluster.
    pub mca: &'a ManagedClusterAddOn,
    /// The template it uses, by name, and the template if it exists.
    pub template: Option<(String, Option<&'a AddOnTemplate>)>,
    /// The AddOnDeploymentConfig it uses, by (namespace, name), and the config if it exists.
    pub config: Option<((String, String), Option<&'a AddOnDeploymentConfig>)>,
    /// Whether its configs are pinned by the add-on's rollout, which then owns `Configured`.
    pub pinned: bool,
    /// The deploy work as the store shows it.
    pub work: Option<&'a ManifestWork>,
    /// The managed cluster.
    pub cluster: Option<&'a ManagedCluster>,
    /// The hosting cluster the add-on names, if it names one.
    pub hosting: Option<HostingInputs<'a>>,
    /// Now, for condition times.
    pub now: &'a Time,
}

/// What [`plan`](plan()) reads of the hosting cluster a Hosted add-on names.
pub struct HostingInputs<'a> {
    /// Its name.
    pub name: &'a str,
    /// The hub knows it as a managed cluster.
    pub found: bool,
    /// It is being deleted: nothing more goes there.
    pub deleting: bool,
    /// The hosting work as the store shows it.
    pub work: Option<&'a ManifestWork>,
}

/// Decides the plan for a template add-on.
pub fn plan(inputs: &Inputs<'_>) -> Result<Plan, RenderError> {
    let mca = inputs.mca;
    let (addon, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    let mut status = mca.status.clone().unwrap_or_default();
    let now = inputs.now;
    let Some((name, found)) = &inputs.template else {
        return Ok(Plan {
            status,
            ..Plan::default()
        });
    };
    let Some(template) = found else {
        let message = format!("AddOnTemplate {name} not found");
        return Ok(not_configured(status, message, inputs.pinned, now));
    };
    let config = match config_of(inputs) {
        Ok(config) => config,
        Err(message) => return Ok(not_configured(status, message, inputs.pinned, now)),
    };
    let desired = record_configs(&mut status, template, config, inputs.pinned, now);
    let config = config.map(|(_, _, spec)| spec);
    status.namespace = Some(template::install_namespace(template, config));
    status.registrations =
        template::registrations(template, &cluster, &addon, status.kube_client_driver);
    let bindings = bindings::bindings(template, mca, &status.registrations);
    registration_applied(&mut status, now);
    let rendering = config::with_cluster_mirrors(config, inputs.cluster);
    let (manifests, configs) = template::render(template, &cluster, &addon, rendering.as_deref())?;
    let (manifests, hooks) = hook::split(manifests);
    let hook = hook::work(mca, &hooks);
    // What is deployed stays, and so do the hooks, until the template is mended.
    let keep = |mut status, why: String| {
        cannot_build(&mut status, &format!("AddOnTemplate {name}: {why}"), now);
        Plan {
            work: None,
            hosting: Hosting::Keep,
            hook: hook.clone(),
            bindings: bindings.clone(),
            status,
        }
    };
    let (manifests, hosting_manifests) =
        match hosting::by_cluster(manifests, inputs.hosting.is_some()) {
            Ok(split) => split,
            Err(why) => return Ok(keep(status, why)),
        };
    let hosted = inputs
        .hosting
        .as_ref()
        .filter(|_| hosting_manifests.is_some());
    let hosting_manifests = hosting_manifests.unwrap_or_default();
    let (prober, fields) = match prober_of(template, &cluster, config) {
        Ok(found) => found,
        Err(why) => return Ok(keep(status, why)),
    };
    status.health_check = Some(health_check(prober));
    let spec_of = |manifests: &[serde_json::Value]| {
        let configs = if hosted.is_some() {
            hosting::configs_for(manifests, &configs)
        } else {
            configs.clone()
        };
        work::work_spec(template, manifests, configs, fields.as_ref())
    };
    let work = work::build(mca, spec_of(&manifests), &desired);
    manifest_applied(&mut status, MANIFEST_APPLIED, inputs.work, now);
    let (hosting, health_manifests, health) = match hosted {
        None => {
            // Not Hosted: a hosting work left from when it was is removed.
            hosting::forget_conditions(&mut status.conditions);
            (Hosting::Remove, &manifests, (MANIFEST_APPLIED, inputs.work))
        }
        Some(h) => {
            let spec = spec_of(&hosting_manifests);
            let plan = hosting_plan(mca, h, spec, &desired, &mut status, now);
            (plan, &hosting_manifests, (HOSTING_MANIFEST_APPLIED, h.work))
        }
    };
    let judge = match &fields {
        Some(fields) => Judge::Fields(fields),
        None => Judge::Workloads(
            health_manifests,
            prober == HealthProber::WorkloadAvailability,
        ),
    };
    available(&mut status, inputs, health, prober, &judge, now);
    let mut works = vec![(inputs.work, &work)];
    if let Hosting::Deploy(Some(wanted)) = &hosting {
        works.push((hosted.and_then(|h| h.work), wanted));
    }
    progressing(&mut status, &works, hosted.is_some(), now);
    Ok(Plan {
        work: Some(work),
        hosting,
        hook,
        bindings,
        status,
    })
}

/// The AddOnDeploymentConfig the add-on uses, if any: (namespace, name, spec), or why it cannot
/// be used.
fn config_of<'a>(
    inputs: &'a Inputs<'_>,
) -> Result<Option<(&'a String, &'a String, &'a AddOnDeploymentConfigSpec)>, String> {
    match &inputs.config {
        None => Ok(None),
        Some(((ns, name), Some(config))) => Ok(Some((ns, name, &config.spec))),
        Some(((ns, name), None)) => Err(format!("AddOnDeploymentConfig {ns}/{name} not found")),
    }
}

/// Who decides `Available`: for `Lease` the registration agent, from the add-on's lease;
/// otherwise this manager.
fn health_check(prober: HealthProber) -> HealthCheck {
    HealthCheck {
        mode: Some(if prober == HealthProber::Lease {
            HealthCheckMode::Lease
        } else {
            HealthCheckMode::Customized
        }),
    }
}

/// The hosting side of a Hosted add-on: `HostingClusterValidity`, `HostingManifestApplied`, and
/// the hosting work (none once the hosting cluster is gone or going).
fn hosting_plan(
    mca: &ManagedClusterAddOn,
    hosting: &HostingInputs<'_>,
    spec: ManifestWorkSpec,
    configs: &[(&str, ConfigSpecHash)],
    status: &mut ManagedClusterAddOnStatus,
    now: &Time,
) -> Hosting {
    if !hosting.found {
        conditions::set(
            &mut status.conditions,
            hosting::validity(hosting.name, false, now),
        );
        return Hosting::Remove;
    }
    if hosting.deleting {
        return Hosting::Remove;
    }
    conditions::set(
        &mut status.conditions,
        hosting::validity(hosting.name, true, now),
    );
    manifest_applied(status, HOSTING_MANIFEST_APPLIED, hosting.work, now);
    if spec.workload.manifests.is_empty() {
        return Hosting::Deploy(None);
    }
    let cluster = mca.namespace().unwrap_or_default();
    let mut work = work::build(mca, spec, configs);
    work.metadata.name = Some(hosting::work_name(&mca.name_any(), &cluster));
    work.metadata.namespace = Some(hosting.name.to_string());
    work.metadata.owner_references = None;
    work.labels_mut()
        .insert(ADDON_NAMESPACE_LABEL.into(), cluster);
    Hosting::Deploy(Some(Box::new(work)))
}

/// The prober `template` names and, for `WorkField`, its fields on `cluster`.
fn prober_of(
    template: &AddOnTemplate,
    cluster: &str,
    config: Option<&AddOnDeploymentConfigSpec>,
) -> Result<(HealthProber, Option<Fields>), String> {
    let prober = HealthProber::of(template)?;
    if prober != HealthProber::WorkField {
        return Ok((prober, None));
    }
    let text = template
        .annotations()
        .get(HEALTH_PROBE_FIELDS_ANNOTATION)
        .cloned()
        .unwrap_or_default();
    let fields = Fields::parse(&text, |v| template::fill(template, cluster, config, v))?;
    Ok((prober, Some(fields)))
}

/// The status of an add-on whose configs are missing: `Configured` False, saying which; or, when
/// the rollout owns `Configured` (`pinned`), `ManifestApplied` False.
fn not_configured(
    mut status: ManagedClusterAddOnStatus,
    message: String,
    pinned: bool,
    now: &Time,
) -> Plan {
    if pinned {
        cannot_build(&mut status, &message, now);
        return Plan {
            status,
            ..Plan::default()
        };
    }
    conditions::set(
        &mut status.conditions,
        conditions::new(
            CONFIGURED,
            FALSE,
            "ConfigurationsNotConfigured",
            message,
            now,
        ),
    );
    Plan {
        status,
        ..Plan::default()
    }
}
