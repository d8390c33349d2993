//! The ManagedClusterAddOn status conditions the manager sets for a template add-on, with
//! upstream's reasons and messages: `Configured` and the config references (ocm
//! `addonconfiguration`), `RegistrationApplied` (addon-framework `registration`),
//! `ManifestApplied` (`agentdeploy`), `Available` by the template's prober (the health-check
//! syncer) and `Progressing` (ocm `addonprogressing`). Pure: part of what the manager decides
//! ([`super::plan`]).
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt as _;

use super::plan::Inputs;
use crate::addon::template::probe::{self, Fields, Probe};
use crate::addon::template::work::same_configs;
use crate::addon::template::{self, GROUP};
use ocm_api::addon::{
    ADDON_DEPLOYMENT_CONFIGS, ADDON_TEMPLATES, AddOnDeploymentConfigSpec, AddOnTemplate,
    CONFIGURED, ConfigReference, ConfigSpecHash, HOSTING_MANIFEST_APPLIED, HealthProber,
    MANIFEST_APPLIED, ManagedClusterAddOnStatus, REGISTRATION_APPLIED,
};
use ocm_api::cluster::MANAGED_CLUSTER_CONDITION_AVAILABLE as CLUSTER_AVAILABLE;
use ocm_api::conditions::{self, APPLIED, AVAILABLE, FALSE, PROGRESSING, TRUE, UNKNOWN};
use ocm_api::work::ManifestWork;

/// The configs the add-on is made from (its template, and its AddOnDeploymentConfig if it names
/// one), by resource, recorded in the status with `Configured` (unless the rollout owns it).
pub(super) fn record_configs(
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

/// `RegistrationApplied`, once the registrations are in the status.
pub(super) fn registration_applied(status: &mut ManagedClusterAddOnStatus, now: &Time) {
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

/// `RegistrationApplied` False: a hub permission of the template could not be bound (`why`).
pub(super) fn permission_failed(status: &mut ManagedClusterAddOnStatus, why: &str, now: &Time) {
    conditions::set(
        &mut status.conditions,
        conditions::new(
            REGISTRATION_APPLIED,
            FALSE,
            "SetPermissionFailed",
            format!("Failed to set permission for hub agent: {why}"),
            now,
        ),
    );
}

/// `ManifestApplied` False for a template that cannot be turned into a work, as upstream's
/// deploy controller reports an add-on whose manifests it cannot get.
pub(super) fn cannot_build(status: &mut ManagedClusterAddOnStatus, why: &str, now: &Time) {
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

/// `ManifestApplied` (or `HostingManifestApplied`, `type_`) from the work's `Applied`: nothing
/// until the work agent reports.
pub(super) fn manifest_applied(
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

/// What decides `Available` from the fed-back status.
pub(super) enum Judge<'a> {
    /// Upstream's workload checker over the rendered manifests (with DaemonSets or not).
    Workloads(&'a [serde_json::Value], bool),
    /// The template's probe fields.
    Fields(&'a Fields),
}

/// `Available` by the template's prober, as upstream's health-check syncer sets it. The
/// availability probers read the deploy work and the replica counts the work agent feeds back for
/// each Deployment (and DaemonSet), `WorkField` the values of its fields; `Work` says the work is
/// applied; `Lease` and `None` leave the condition to others.
pub(super) fn available(
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

/// `Progressing` as upstream's progressing controller: waiting for the manifests, progressing
/// until the work runs the desired template, then completed (and the template is recorded as
/// last applied).
pub(super) fn progressing(
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
