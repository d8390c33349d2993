//! Pre-delete hooks, as upstream's add-on manager runs them: a Job or Pod of the add-on's
//! manifests marked with [`PRE_DELETE_HOOK_KEY`] (annotation or label) is not deployed with the
//! agent. While an add-on has one, its ManagedClusterAddOn carries [`PRE_DELETE_HOOK_FINALIZER`];
//! when it is deleted, the hook goes to the cluster in the work `addon-<name>-pre-delete`, and the
//! finalizer is released once the work agent feeds back that every hook finished (a Job's
//! `Complete` condition True, a Pod's phase `Succeeded`). The garbage collector then removes the
//! deploy work, so the agent is still there while its hook runs.
//!
//! [`PRE_DELETE_HOOK_FINALIZER`]: ocm_api::addon::PRE_DELETE_HOOK_FINALIZER
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt as _;
use serde_json::Value;

use crate::addon::owner_reference;
use ocm_api::addon::{
    ADDON_NAME_LABEL, HOOK_MANIFEST_COMPLETED, ManagedClusterAddOn, PRE_DELETE_HOOK_KEY,
};
use ocm_api::conditions::{self, AVAILABLE, Condition, FALSE, TRUE};
use ocm_api::work::{
    FeedbackRule, FeedbackType, ManifestConfigOption, ManifestWork, ManifestWorkSpec,
    ManifestsTemplate, ResourceIdentifier,
};

/// The hook work's name, as upstream's.
#[must_use]
pub fn work_name(addon: &str) -> String {
    format!("addon-{addon}-pre-delete")
}

/// The resource of a hook object's kind (`jobs`, `pods`), if it is one.
fn hook_resource(object: &Value) -> Option<(&'static str, &'static str)> {
    let resource = match (object["apiVersion"].as_str()?, object["kind"].as_str()?) {
        ("batch/v1", "Job") => ("batch", "jobs"),
        ("v1", "Pod") => ("", "pods"),
        _ => return None,
    };
    let metadata = &object["metadata"];
    let marked = |field: &str| metadata[field].get(PRE_DELETE_HOOK_KEY).is_some();
    (marked("annotations") || marked("labels")).then_some(resource)
}

/// Splits rendered manifests into those deployed with the agent and the pre-delete hooks.
#[must_use]
pub fn split(manifests: Vec<Value>) -> (Vec<Value>, Vec<Value>) {
    manifests
        .into_iter()
        .partition(|m| hook_resource(m).is_none())
}

/// The hook work for `hooks` (none: no work): each hook's well-known status is fed back.
#[must_use]
pub fn work(mca: &ManagedClusterAddOn, hooks: &[Value]) -> Option<ManifestWork> {
    let configs: Vec<ManifestConfigOption> = hooks
        .iter()
        .filter_map(|h| {
            let (group, resource) = hook_resource(h)?;
            Some(ManifestConfigOption {
                resource_identifier: ResourceIdentifier {
                    group: Some(group.into()),
                    resource: resource.into(),
                    name: h["metadata"]["name"].as_str().unwrap_or_default().into(),
                    namespace: h["metadata"]["namespace"].as_str().map(str::to_owned),
                },
                feedback_rules: vec![FeedbackRule {
                    type_: FeedbackType::WellKnownStatus,
                    json_paths: Vec::new(),
                }],
                ..ManifestConfigOption::default()
            })
        })
        .collect();
    if configs.is_empty() {
        return None;
    }
    let addon = mca.name_any();
    let spec = ManifestWorkSpec {
        workload: ManifestsTemplate {
            manifests: hooks.to_vec(),
        },
        manifest_configs: configs,
        ..ManifestWorkSpec::default()
    };
    let mut work = ManifestWork::new(&work_name(&addon), spec);
    work.metadata.namespace = mca.namespace();
    work.metadata.labels = Some(BTreeMap::from([(ADDON_NAME_LABEL.into(), addon)]));
    work.metadata.owner_references = Some(vec![owner_reference(mca, true)]);
    Some(work)
}

/// Whether every hook of the work finished, by the values the work agent fed back.
#[must_use]
pub fn completed(work: &ManifestWork) -> bool {
    let Some(status) = &work.status else {
        return false;
    };
    if !conditions::is_true(&status.conditions, AVAILABLE) || work.spec.manifest_configs.is_empty()
    {
        return false;
    }
    let reported = status
        .resource_status
        .as_ref()
        .map(|r| r.manifests.as_slice())
        .unwrap_or_default();
    work.spec.manifest_configs.iter().all(|config| {
        let id = &config.resource_identifier;
        let (value, done) = match id.resource.as_str() {
            "jobs" => ("JobComplete", "True"),
            "pods" => ("PodPhase", "Succeeded"),
            _ => return false,
        };
        reported
            .iter()
            .filter(|m| {
                let meta = &m.resource_meta;
                meta.group.as_deref().unwrap_or_default() == id.group.as_deref().unwrap_or_default()
                    && meta.resource.as_deref() == Some(id.resource.as_str())
                    && meta.name.as_deref() == Some(id.name.as_str())
                    && meta.namespace == id.namespace
            })
            .filter_map(|m| m.status_feedback.as_ref())
            .flat_map(|f| &f.values)
            .any(|v| v.name == value && v.field_value.string.as_deref() == Some(done))
    })
}

/// `HookManifestCompleted`, with upstream's reasons.
#[must_use]
pub fn condition(work: &ManifestWork, now: &Time) -> Condition {
    let name = work.name_any();
    if completed(work) {
        conditions::new(
            HOOK_MANIFEST_COMPLETED,
            TRUE,
            "HookManifestIsCompleted",
            format!("hook manifestWork {name} is completed."),
            now,
        )
    } else {
        conditions::new(
            HOOK_MANIFEST_COMPLETED,
            FALSE,
            "HookManifestIsNotCompleted",
            format!("hook manifestWork {name} is not completed."),
            now,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::addon::ManagedClusterAddOnSpec;
    use ocm_api::work::{
        FeedbackValue, FieldValue, ManifestCondition, ManifestResourceMeta, ManifestResourceStatus,
        ManifestWorkStatus, StatusFeedbackResult, ValueType,
    };
    use serde_json::json;

    fn epoch() -> Time {
        Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
    }

    fn mca() -> ManagedClusterAddOn {
        let mut m = ManagedClusterAddOn::new("hello", ManagedClusterAddOnSpec::default());
        m.metadata.namespace = Some("c1".into());
        m.metadata.uid = Some("u1".into());
        m
    }

    fn job(marked: bool) -> Value {
        let annotations = if marked {
            json!({PRE_DELETE_HOOK_KEY: ""})
        } else {
            json!({})
        };
        json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "cleanup", "namespace": "ns", "annotations": annotations}})
    }

    fn reported(value: &str, done: &str, available: &str) -> ManifestWorkStatus {
        ManifestWorkStatus {
            conditions: vec![conditions::new(AVAILABLE, available, "r", "m", &epoch())],
            resource_status: Some(ManifestResourceStatus {
                manifests: vec![ManifestCondition {
                    resource_meta: ManifestResourceMeta {
                        group: Some("batch".into()),
                        resource: Some("jobs".into()),
                        name: Some("cleanup".into()),
                        namespace: Some("ns".into()),
                        ..ManifestResourceMeta::default()
                    },
                    status_feedback: Some(StatusFeedbackResult {
                        values: vec![FeedbackValue {
                            name: value.into(),
                            field_value: FieldValue {
                                type_: ValueType::String,
                                string: Some(done.into()),
                                ..FieldValue::default()
                            },
                        }],
                    }),
                    conditions: Vec::new(),
                }],
            }),
        }
    }

    #[test]
    fn only_marked_jobs_and_pods_are_hooks() {
        let labelled_pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {PRE_DELETE_HOOK_KEY: "true"}}});
        let marked_configmap = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "annotations": {PRE_DELETE_HOOK_KEY: ""}}});
        let (deploy, hooks) = split(vec![job(true), job(false), labelled_pod, marked_configmap]);
        assert_eq!(deploy.len(), 2);
        assert_eq!(hooks.len(), 2);
        let work = work(&mca(), &hooks).unwrap();
        assert_eq!(
            work.metadata.name.as_deref(),
            Some("addon-hello-pre-delete")
        );
        let resources: Vec<_> = work
            .spec
            .manifest_configs
            .iter()
            .map(|c| c.resource_identifier.resource.as_str())
            .collect();
        assert_eq!(resources, ["jobs", "pods"]);
        assert!(self::work(&mca(), &[]).is_none());
    }

    #[test]
    fn a_hook_is_complete_only_when_fed_back_as_finished() {
        let mut work = work(&mca(), &[job(true)]).unwrap();
        assert!(!completed(&work), "no status yet");
        work.status = Some(reported("JobComplete", "True", TRUE));
        assert!(completed(&work));
        assert_eq!(condition(&work, &epoch()).reason, "HookManifestIsCompleted");
        work.status = Some(reported("JobComplete", "False", TRUE));
        assert!(!completed(&work));
        work.status = Some(reported("JobComplete", "True", FALSE));
        assert!(!completed(&work), "the work itself is not available");
        assert_eq!(
            condition(&work, &epoch()).message,
            "hook manifestWork addon-hello-pre-delete is not completed."
        );
    }
}
