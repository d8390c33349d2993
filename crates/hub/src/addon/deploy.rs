//! What the add-on manager wants for one template add-on on one cluster, decided from what the
//! stores show (no I/O): the deploy ManifestWork `addon-<name>-deploy-0`, the hub RoleBindings of
//! its `KubeClient` registration, and the ManagedClusterAddOn's status — config references,
//! registrations, install namespace, health-check mode and the conditions `Configured`,
//! `RegistrationApplied`, `ManifestApplied`, `Available` and `Progressing`, with upstream's
//! reasons and messages (addon-framework `agentdeploy`, `registration`; ocm `addonconfiguration`,
//! `addonprogressing`).
use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef, Subject as RbacSubject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::ResourceExt as _;
use kube::api::ObjectMeta;
use serde_json::json;

use super::template::hosting;
use super::template::probe::{self, Fields, Probe};
use super::template::{self, GROUP, RenderError};
use ocm_api::addon::{
    ADDON_DEPLOYMENT_CONFIGS, ADDON_NAME_LABEL, ADDON_NAMESPACE_LABEL, ADDON_TEMPLATE_LABEL,
    ADDON_TEMPLATES, AddOnDeploymentConfig, AddOnDeploymentConfigSpec, AddOnTemplate, CONFIGURED,
    ConfigReference, ConfigSpecHash, HEALTH_PROBE_FIELDS_ANNOTATION, HOSTING_MANIFEST_APPLIED,
    HealthCheck, HealthCheckMode, HealthProber, HubPermissionType, MANIFEST_APPLIED,
    ManagedClusterAddOn, ManagedClusterAddOnStatus, REGISTRATION_APPLIED, RegistrationConfig,
    RegistrationType,
};
use ocm_api::cluster::{MANAGED_CLUSTER_CONDITION_AVAILABLE as CLUSTER_AVAILABLE, ManagedCluster};
use ocm_api::conditions::{self, APPLIED, AVAILABLE, FALSE, PROGRESSING, TRUE, UNKNOWN};
use ocm_api::names::CLIENT_SIGNER;
use ocm_api::work::{ManifestConfigOption, ManifestWork, ManifestWorkSpec};

/// Work annotation with the spec hashes of the configs the work was made from (upstream's
/// `ManifestConfigSpecHashAnnotationKey`): how a rollout tells a current work from a stale one.
pub const CONFIG_SPEC_HASH_ANNOTATION: &str = "open-cluster-management.io/config-spec-hash";

/// The deploy work's name: upstream's prefix and the index of the only work.
#[must_use]
pub fn work_name(addon: &str) -> String {
    format!("addon-{addon}-deploy-0")
}

/// The name of the RoleBinding for a hub permission, as upstream's template agent names it.
#[must_use]
pub fn binding_name(addon: &str, role_kind: &str) -> String {
    format!(
        "open-cluster-management:{addon}:{}:agent",
        role_kind.to_lowercase()
    )
}

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

/// What [`decide`] reads.
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

/// What [`decide`] reads of the hosting cluster a Hosted add-on names.
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
pub fn decide(inputs: &Inputs<'_>) -> Result<Plan, RenderError> {
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
    status.registrations = template::registrations(template, &cluster, &addon);
    let bindings = bindings(template, mca, &status.registrations);
    registration_applied(&mut status, now);
    let rendering = super::template::config::with_cluster_mirrors(config, inputs.cluster);
    let (manifests, configs) = template::render(template, &cluster, &addon, rendering.as_deref())?;
    let (manifests, hooks) = super::template::hook::split(manifests);
    let hook = super::template::hook::work(mca, &hooks);
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
        work_spec(template, manifests, configs, fields.as_ref())
    };
    let work = work(mca, spec_of(&manifests), &desired);
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

/// A deploy work's spec: the template's, with `manifests`, their status feedback `configs`, and
/// the probe fields asked for.
fn work_spec(
    template: &AddOnTemplate,
    manifests: &[serde_json::Value],
    configs: Vec<ManifestConfigOption>,
    fields: Option<&Fields>,
) -> ManifestWorkSpec {
    let mut spec: ManifestWorkSpec = template.spec.agent_spec.clone();
    spec.workload.manifests = manifests.to_vec();
    // One entry per resource, as upstream's: the feedback rules join the template's own entry
    // for that resource (its update strategy kept) rather than standing beside it.
    for config in configs {
        match spec
            .manifest_configs
            .iter_mut()
            .find(|c| c.resource_identifier == config.resource_identifier)
        {
            Some(existing) => {
                for rule in config.feedback_rules {
                    if !existing.feedback_rules.contains(&rule) {
                        existing.feedback_rules.push(rule);
                    }
                }
            }
            None => spec.manifest_configs.push(config),
        }
    }
    if let Some(fields) = fields {
        fields.ask(&mut spec.manifest_configs);
    }
    spec
}

/// The configs the add-on is made from (its template, and its AddOnDeploymentConfig if it names
/// one), by resource, recorded in the status with `Configured` (unless the rollout owns it).
fn record_configs(
    status: &mut ManagedClusterAddOnStatus,
    template: &AddOnTemplate,
    config: Option<(&String, &String, &AddOnDeploymentConfigSpec)>,
    pinned: bool,
    now: &Time,
) -> Vec<(&'static str, ConfigSpecHash)> {
    let mut desired = vec![(ADDON_TEMPLATES, template::spec_hash(template))];
    if let Some((ns, name, spec)) = config {
        let hash = template::spec_hash_of(Some(ns), name, spec);
        desired.push((ADDON_DEPLOYMENT_CONFIGS, hash));
    }
    status.config_references = references(&status.config_references, &desired);
    if !pinned {
        conditions::set(
            &mut status.conditions,
            conditions::new(
                CONFIGURED,
                TRUE,
                "ConfigurationsConfigured",
                "Configurations configured",
                now,
            ),
        );
    }
    desired
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
    let mut work = work(mca, spec, configs);
    work.metadata.name = Some(hosting::work_name(&mca.name_any(), &cluster));
    work.metadata.namespace = Some(hosting.name.to_string());
    work.metadata.owner_references = None;
    work.labels_mut()
        .insert(ADDON_NAMESPACE_LABEL.into(), cluster);
    Hosting::Deploy(Some(Box::new(work)))
}

/// `RegistrationApplied`, once the registrations are in the status.
fn registration_applied(status: &mut ManagedClusterAddOnStatus, now: &Time) {
    let reason = if status.registrations.is_empty() {
        "NilRegistration"
    } else {
        "SetPermissionApplied"
    };
    let message = "Registration of the addon agent is configured";
    conditions::set(
        &mut status.conditions,
        conditions::new(REGISTRATION_APPLIED, TRUE, reason, message, now),
    );
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

/// What decides `Available` from the fed-back status.
enum Judge<'a> {
    /// Upstream's workload checker over the rendered manifests (with DaemonSets or not).
    Workloads(&'a [serde_json::Value], bool),
    /// The template's probe fields.
    Fields(&'a Fields),
}

/// `ManifestApplied` False for a template that cannot be turned into a work, as upstream's
/// deploy controller reports an add-on whose manifests it cannot get.
fn cannot_build(status: &mut ManagedClusterAddOnStatus, why: &str, now: &Time) {
    conditions::set(
        &mut status.conditions,
        conditions::new(
            MANIFEST_APPLIED,
            FALSE,
            "ManifestWorkApplyFailed",
            format!("failed to get manifest from agent interface: {why}"),
            now,
        ),
    );
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

/// The config references for the `desired` configs (by resource), each keeping the version it
/// last rolled out from `current`; ordered by resource, as the rollout orders them.
fn references(
    current: &[ConfigReference],
    desired: &[(&str, ConfigSpecHash)],
) -> Vec<ConfigReference> {
    let mut desired = desired.to_vec();
    desired.sort_by_key(|(resource, _)| *resource);
    desired
        .iter()
        .map(|(resource, hash)| ConfigReference {
            group: GROUP.into(),
            resource: (*resource).into(),
            namespace: hash.namespace.clone(),
            name: hash.name.clone(),
            last_observed_generation: None,
            desired_config: Some(hash.clone()),
            last_applied_config: current
                .iter()
                .find(|r| r.group == GROUP && r.resource == *resource)
                .and_then(|r| r.last_applied_config.clone()),
        })
        .collect()
}

/// An owner reference to `owner`; a controlling one (`controller`, as Go's `NewControllerRef`
/// makes it, with `blockOwnerDeletion`) for what only the add-on controllers manage.
#[must_use]
pub fn owner_reference<K: kube::Resource<DynamicType = ()>>(
    owner: &K,
    controller: bool,
) -> OwnerReference {
    OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: owner.name_any(),
        uid: owner.uid().unwrap_or_default(),
        controller: controller.then_some(true),
        block_owner_deletion: controller.then_some(true),
    }
}

fn work(
    mca: &ManagedClusterAddOn,
    spec: ManifestWorkSpec,
    configs: &[(&str, ConfigSpecHash)],
) -> ManifestWork {
    let addon = mca.name_any();
    let mut work = ManifestWork::new(&work_name(&addon), spec);
    work.metadata.namespace = mca.namespace();
    // `<resource>.<group>/<namespace>/<name>`, as upstream keys it.
    let hashes: serde_json::Map<String, serde_json::Value> = configs
        .iter()
        .map(|(resource, c)| {
            let key = format!(
                "{resource}.{GROUP}/{}/{}",
                c.namespace.clone().unwrap_or_default(),
                c.name
            );
            (key, json!(c.spec_hash.clone().unwrap_or_default()))
        })
        .collect();
    let hashes = serde_json::Value::Object(hashes);
    work.metadata.annotations = Some(BTreeMap::from([(
        CONFIG_SPEC_HASH_ANNOTATION.into(),
        hashes.to_string(),
    )]));
    work.metadata.labels = Some(BTreeMap::from([(ADDON_NAME_LABEL.into(), addon)]));
    work.metadata.owner_references = Some(vec![owner_reference(mca, true)]);
    work
}

/// The RoleBindings of the template's `KubeClient` hub permissions for the subject the status
/// registers (its user and groups but `system:authenticated`, as upstream binds them): the
/// ClusterRole in the cluster's namespace (owned by the add-on, so it goes with it), or a role
/// in a named namespace. Upstream binds the group of every cluster's agent of the add-on in the
/// cluster's namespace too, which lets one cluster's agent act in every other's; that group is
/// bound only in a named namespace here, where every cluster's agent shares the binding.
fn bindings(
    template: &AddOnTemplate,
    mca: &ManagedClusterAddOn,
    registrations: &[RegistrationConfig],
) -> Vec<RoleBinding> {
    let (addon, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    let rbac = |kind: &str, name: &str| RbacSubject {
        kind: kind.into(),
        api_group: Some("rbac.authorization.k8s.io".into()),
        name: name.into(),
        namespace: None,
    };
    let Some(subject) = registrations
        .iter()
        .find(|r| r.signer_name == CLIENT_SIGNER)
        .and_then(|r| r.subject.as_ref())
    else {
        return Vec::new();
    };
    let subjects: Vec<RbacSubject> = subject
        .user
        .iter()
        .map(|u| rbac("User", u))
        .chain(
            subject
                .groups
                .iter()
                .filter(|g| *g != "system:authenticated")
                .map(|g| rbac("Group", g)),
        )
        .collect();
    let permissions = template
        .spec
        .registration
        .iter()
        .filter(|r| r.type_ == RegistrationType::KubeClient)
        .filter_map(|r| r.kube_client.as_ref())
        .flat_map(|k| &k.hub_permissions);
    let every_cluster = ocm_runtime::identity::addon::addon_group(&addon);
    let mut out = Vec::new();
    for permission in permissions {
        let (namespace, role_ref, shared) = match permission.type_ {
            HubPermissionType::CurrentCluster => {
                let Some(current) = &permission.current_cluster else {
                    continue;
                };
                let role_ref = RoleRef {
                    api_group: Some("rbac.authorization.k8s.io".into()),
                    kind: "ClusterRole".into(),
                    name: current.cluster_role_name.clone(),
                };
                (cluster.clone(), role_ref, false)
            }
            HubPermissionType::SingleNamespace => {
                let Some(single) = &permission.single_namespace else {
                    continue;
                };
                let role_ref = RoleRef {
                    api_group: Some(single.role_ref.api_group.clone()),
                    kind: single.role_ref.kind.clone(),
                    name: single.role_ref.name.clone(),
                };
                (single.namespace.clone(), role_ref, true)
            }
        };
        let bound = subjects
            .iter()
            .filter(|s| shared || s.name != every_cluster)
            .cloned()
            .collect();
        out.push(RoleBinding {
            metadata: ObjectMeta {
                name: Some(binding_name(&addon, &role_ref.kind)),
                namespace: Some(namespace),
                labels: Some(BTreeMap::from([
                    (ADDON_NAME_LABEL.into(), addon.clone()),
                    (ADDON_TEMPLATE_LABEL.into(), String::new()),
                ])),
                owner_references: (!shared).then(|| vec![owner_reference(mca, false)]),
                ..ObjectMeta::default()
            },
            role_ref,
            subjects: Some(bound),
        });
    }
    out
}

/// `ManifestApplied` (or `HostingManifestApplied`, `type_`) from the work's `Applied`: nothing
/// until the work agent reports.
fn manifest_applied(
    status: &mut ManagedClusterAddOnStatus,
    type_: &str,
    work: Option<&ManifestWork>,
    now: &Time,
) {
    let applied = work
        .and_then(|w| w.status.as_ref())
        .and_then(|s| conditions::find(&s.conditions, APPLIED));
    let condition = match applied {
        None => return,
        Some(c) if c.status == TRUE => conditions::new(
            type_,
            TRUE,
            "AddonManifestApplied",
            "manifests of addon are applied successfully",
            now,
        ),
        Some(_) => conditions::new(
            type_,
            FALSE,
            "AddonManifestAppliedFailed",
            "failed to apply the manifests of addon",
            now,
        ),
    };
    conditions::set(&mut status.conditions, condition);
}

/// `Available` by the template's prober, as upstream's health-check syncer sets it. The
/// availability probers read the deploy work and the replica counts the work agent feeds back for
/// each Deployment (and DaemonSet), `WorkField` the values of its fields; `Work` says the work is
/// applied; `Lease` and `None` leave the condition to others.
fn available(
    status: &mut ManagedClusterAddOnStatus,
    inputs: &Inputs<'_>,
    (applied, work): (&str, Option<&ManifestWork>),
    prober: HealthProber,
    judge: &Judge<'_>,
    now: &Time,
) {
    match prober {
        HealthProber::Lease | HealthProber::None => return,
        HealthProber::Work => {
            let applied = conditions::new(
                AVAILABLE,
                TRUE,
                "WorkApplied",
                "Addon manifestWork is applied",
                now,
            );
            conditions::set(&mut status.conditions, applied);
            return;
        }
        HealthProber::WorkloadAvailability
        | HealthProber::DeploymentAvailability
        | HealthProber::WorkField => {}
    }
    if conditions::find(&status.conditions, applied).is_none() {
        return;
    }
    let cluster_unknown = inputs
        .cluster
        .and_then(|c| c.status.as_ref())
        .and_then(|s| conditions::find(&s.conditions, CLUSTER_AVAILABLE))
        .is_some_and(|c| c.status == UNKNOWN);
    if cluster_unknown {
        return;
    }
    let addon = inputs.mca.name_any();
    let set = |status: &mut ManagedClusterAddOnStatus, s: &str, reason: &str, message: String| {
        conditions::set(
            &mut status.conditions,
            conditions::new(AVAILABLE, s, reason, message, now),
        );
    };
    let Some(work) = work else {
        set(
            status,
            UNKNOWN,
            "WorkNotFound",
            "Addon manifestWork is not found".into(),
        );
        return;
    };
    let work_status = work.status.clone().unwrap_or_default();
    match conditions::find(&work_status.conditions, AVAILABLE) {
        None => {
            set(
                status,
                UNKNOWN,
                "WorkNotApplied",
                "Addon manifestWork is not applied yet".into(),
            );
            return;
        }
        Some(c) if c.status == FALSE => {
            set(status, FALSE, "WorkNotApplied", c.message.clone());
            return;
        }
        Some(_) => {}
    }
    let verdict = match judge {
        Judge::Workloads(manifests, daemon_sets) => {
            probe::workloads(manifests, &work_status, *daemon_sets)
        }
        Judge::Fields(fields) => fields.check(&work_status),
    };
    match verdict {
        Probe::NoWorkloads | Probe::Healthy => set(
            status,
            TRUE,
            "ProbeAvailable",
            format!("{addon} add-on is available."),
        ),
        Probe::NoResults => set(
            status,
            UNKNOWN,
            "NoProbeResult",
            "Probe results are not returned".into(),
        ),
        Probe::Unhealthy(why) => set(
            status,
            FALSE,
            "ProbeUnavailable",
            format!("Probe addon unavailable with err {why}"),
        ),
    }
}

/// Whether two works were made from the same configs (their spec-hash annotations agree).
#[must_use]
pub fn same_configs(a: &ManifestWork, b: &ManifestWork) -> bool {
    let hash = |w: &ManifestWork| w.annotations().get(CONFIG_SPEC_HASH_ANNOTATION).cloned();
    hash(a).is_some() && hash(a) == hash(b)
}

/// `Progressing` as upstream's progressing controller: waiting for the manifests, progressing
/// until the work runs the desired template, then completed (and the template is recorded as
/// last applied).
fn progressing(
    status: &mut ManagedClusterAddOnStatus,
    works: &[(Option<&ManifestWork>, &ManifestWork)],
    hosted: bool,
    now: &Time,
) {
    let hosting_applied = conditions::find(&status.conditions, HOSTING_MANIFEST_APPLIED);
    let (s, reason, message) = match conditions::find(&status.conditions, MANIFEST_APPLIED) {
        None => (
            FALSE,
            "WaitingForManifestApplied",
            "Waiting for ManagedClusterAddOn ManifestApplied condition".to_string(),
        ),
        Some(c) if c.status != TRUE => (FALSE, "Failed", c.message.clone()),
        Some(_) if hosted && hosting_applied.is_none() => (
            FALSE,
            "WaitingForHostingManifestApplied",
            "Waiting for ManagedClusterAddOn HostingManifestApplied condition".to_string(),
        ),
        Some(_) => {
            let up_to_date = works
                .iter()
                .all(|(current, wanted)| current.is_some_and(|w| same_configs(w, wanted)));
            // Applied and Available for this generation of the work, as upstream's
            // `addonprogressing` (an older generation's conditions say nothing of this one).
            let ready = works.iter().all(|(current, _)| {
                current.is_some_and(|w| {
                    let now_true = |type_: &str| {
                        w.status
                            .as_ref()
                            .and_then(|s| conditions::find(&s.conditions, type_))
                            .is_some_and(|c| {
                                c.status == TRUE && c.observed_generation == w.metadata.generation
                            })
                    };
                    now_true(APPLIED) && now_true(AVAILABLE)
                })
            });
            if !up_to_date {
                (
                    TRUE,
                    "Progressing",
                    "progressing... mca and work configs mismatch".to_string(),
                )
            } else if !ready {
                (
                    TRUE,
                    "Progressing",
                    "progressing... work is not ready".to_string(),
                )
            } else {
                for r in &mut status.config_references {
                    r.last_applied_config.clone_from(&r.desired_config);
                }
                (FALSE, "Completed", "completed with no errors.".to_string())
            }
        }
    };
    conditions::set(
        &mut status.conditions,
        conditions::new(PROGRESSING, s, reason, message, now),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_joins_the_templates_own_entry_for_a_resource() {
        let template: AddOnTemplate = serde_json::from_value(json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1",
            "kind": "AddOnTemplate",
            "metadata": {"name": "t"},
            "spec": {"addonName": "a", "agentSpec": {
                "workload": {"manifests": []},
                "manifestConfigs": [{
                    "resourceIdentifier": {"group": "apps", "resource": "deployments", "name": "agent", "namespace": "ns"},
                    "updateStrategy": {"type": "ServerSideApply"},
                }],
            }},
        }))
        .unwrap();
        let deployment = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "agent", "namespace": "ns"},
        });
        let manifests = vec![deployment.clone()];
        let configs = vec![template::feedback(&deployment)];
        let spec = work_spec(&template, &manifests, configs, None);
        assert_eq!(
            spec.manifest_configs.len(),
            1,
            "{:?}",
            spec.manifest_configs
        );
        let entry = &spec.manifest_configs[0];
        assert!(
            entry.update_strategy.is_some(),
            "the template's strategy kept"
        );
        assert_eq!(entry.feedback_rules.len(), 1, "the well-known status asked");
    }
}
