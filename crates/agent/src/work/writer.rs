//! Every write of the work agent, by where it goes:
//!
//! - on the hub, a ManifestWork's finalizer and status;
//! - on the managed cluster, the AppliedManifestWork records: created (with their cleanup
//!   finalizer) before anything of a work is applied, so applied objects can name them as their
//!   owner; their status lists what was applied, so a manifest dropped from the work, or the whole
//!   work, can be cleaned up even after the agent restarts; and when an unmanaged record's
//!   eviction started;
//! - on the managed cluster, the manifests' objects: applied by their update strategy, given the
//!   record as an owner, deleted or released from it.
//!
//! Everything else of the agent reads and decides; what to write is decided before it comes here.
//! What a write returns of a record is noted in the context's records, so the agent's next read
//! of it does not go by a store that has not caught up yet.
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::ResourceExt as _;
use kube::api::{
    Api, DeleteParams, DynamicObject, ObjectMeta, Patch, PatchParams, PostParams, Preconditions,
    PropagationPolicy,
};
use serde_json::json;

use super::Error;
use super::apply::{Owner, with_owner};
use super::context::Records;
use ocm_api::work::{
    APPLIED_MANIFEST_WORK_FINALIZER, AppliedManifestResourceMeta, AppliedManifestWork,
    AppliedManifestWorkSpec, MANIFEST_WORK_FINALIZER, ManifestWork, ManifestWorkStatus,
    UpdateStrategy, UpdateStrategyType, WORK_AGENT_FIELD_MANAGER,
};

// --- The hub -----------------------------------------------------------------------------------

/// Replaces the status of ManifestWork `name` with `status`.
pub async fn work_status(
    works: &Api<ManifestWork>,
    name: &str,
    status: &ManifestWorkStatus,
) -> Result<(), Error> {
    let patch = json!({"status": status});
    works
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(Error::hub(format!(
            "updating the status of ManifestWork {name}"
        )))?;
    Ok(())
}

/// Adds the agent's finalizer to `work`, as kube's finalizer helper does: a JSON patch that
/// tests the list as read first, so a finalizer someone added meanwhile fails it (and the work is
/// decided again) instead of being added twice.
pub async fn add_finalizer(works: &Api<ManifestWork>, work: &ManifestWork) -> Result<(), Error> {
    let name = work.name_any();
    works
        .patch(&name, &PatchParams::default(), &finalizer_added(work))
        .await
        .map_err(Error::hub(format!(
            "adding the finalizer of ManifestWork {name}"
        )))?;
    Ok(())
}

/// Removes the agent's finalizer, at `index` of the list, from ManifestWork `name`; the patch
/// tests that it is still there, so another finalizer is never removed in its place.
pub async fn remove_finalizer(
    works: &Api<ManifestWork>,
    name: &str,
    index: usize,
) -> Result<(), Error> {
    works
        .patch(name, &PatchParams::default(), &finalizer_removed(index))
        .await
        .map_err(Error::hub(format!(
            "removing the finalizer of ManifestWork {name}"
        )))?;
    Ok(())
}

/// The JSON patch adding the finalizer to `work`'s list as read.
fn finalizer_added(work: &ManifestWork) -> Patch<()> {
    json_patch(if work.finalizers().is_empty() {
        json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": [MANIFEST_WORK_FINALIZER]},
        ])
    } else {
        json!([
            {"op": "test", "path": "/metadata/finalizers", "value": work.finalizers()},
            {"op": "add", "path": "/metadata/finalizers/-", "value": MANIFEST_WORK_FINALIZER},
        ])
    })
}

/// The JSON patch removing the finalizer at `index`.
fn finalizer_removed(index: usize) -> Patch<()> {
    let at = format!("/metadata/finalizers/{index}");
    json_patch(json!([
        {"op": "test", "path": at, "value": MANIFEST_WORK_FINALIZER},
        {"op": "remove", "path": at},
    ]))
}

/// A JSON patch of these operations.
fn json_patch(operations: serde_json::Value) -> Patch<()> {
    Patch::Json(serde_json::from_value(operations).expect("well-formed JSON patch operations"))
}

// --- The AppliedManifestWork records ------------------------------------------------------------
// Each write is noted in the context's records, so the next read sees it before the store does;
// a failed one forgets what was noted, so the next read is the store's.

/// Notes the record a write returned, or forgets the record `name` after a failure.
fn noted(
    records: &Records,
    name: &str,
    written: Result<AppliedManifestWork, kube::Error>,
) -> Result<AppliedManifestWork, kube::Error> {
    match &written {
        Ok(record) => records.note(record.clone()),
        Err(_) => records.forget(name),
    }
    written
}

/// Creates the AppliedManifestWork `name` with `spec` and its finalizer; `None` when one was
/// there already (made meanwhile, or not in the store yet).
pub(crate) async fn create_record(
    client: &Client,
    records: &Records,
    name: &str,
    spec: AppliedManifestWorkSpec,
) -> Result<Option<Arc<AppliedManifestWork>>, Error> {
    let api: Api<AppliedManifestWork> = Api::all(client.clone());
    let amw = AppliedManifestWork {
        metadata: ObjectMeta {
            name: Some(name.into()),
            finalizers: Some(vec![APPLIED_MANIFEST_WORK_FINALIZER.into()]),
            ..Default::default()
        },
        spec,
        status: None,
    };
    match noted(
        records,
        name,
        api.create(&PostParams::default(), &amw).await,
    ) {
        Err(kube::Error::Api(s)) if s.is_already_exists() => Ok(None),
        other => other
            .map(|created| Some(Arc::new(created)))
            .map_err(Error::managed(format!(
                "creating AppliedManifestWork {name}"
            ))),
    }
}

/// Gives `existing` this agent's `spec` and `finalizers` ([`super::decide::Record::Fix`]),
/// guarded by the resourceVersion it was read at.
pub(crate) async fn fix_record(
    client: &Client,
    records: &Records,
    existing: &AppliedManifestWork,
    finalizers: &[String],
    spec: &AppliedManifestWorkSpec,
) -> Result<Arc<AppliedManifestWork>, Error> {
    let name = existing.name_any();
    let patch = json!({
        "metadata": {"finalizers": finalizers, "resourceVersion": existing.metadata.resource_version},
        "spec": spec,
    });
    let api = Api::<AppliedManifestWork>::all(client.clone());
    let fixed = api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await;
    noted(records, &name, fixed)
        .map(Arc::new)
        .map_err(Error::managed(format!(
            "updating AppliedManifestWork {name}"
        )))
}

/// Writes the list of applied resources into the record's status.
pub(crate) async fn record(
    client: &Client,
    records: &Records,
    name: &str,
    resources: &[AppliedManifestResourceMeta],
) -> Result<(), Error> {
    let api: Api<AppliedManifestWork> = Api::all(client.clone());
    // An explicit list (even empty): a merge patch must overwrite what was there.
    let patch = json!({"status": {"appliedResources": resources}});
    let written = api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await;
    noted(records, name, written).map_err(Error::managed(format!(
        "recording the resources of AppliedManifestWork {name}"
    )))?;
    Ok(())
}

/// Writes (or, with `None`, clears) the record's `status.evictionStartTime`.
pub(crate) async fn eviction_start(
    client: &Client,
    records: &Records,
    name: &str,
    at: Option<Timestamp>,
) -> Result<(), Error> {
    let api: Api<AppliedManifestWork> = Api::all(client.clone());
    let patch = json!({"status": {"evictionStartTime": at.map(Time)}});
    let written = api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await;
    noted(records, name, written).map_err(Error::managed(format!(
        "recording the eviction of AppliedManifestWork {name}"
    )))?;
    Ok(())
}

/// Removes `record`: it keeps only `finalizers` first (its resources are dealt with: the
/// record's own finalizer goes), guarded by the resourceVersion it was read at, then the object.
pub(crate) async fn remove_record(
    client: &Client,
    records: &Records,
    record: &AppliedManifestWork,
    finalizers: &[String],
) -> Result<(), Error> {
    let api: Api<AppliedManifestWork> = Api::all(client.clone());
    let name = record.name_any();
    let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": record.metadata.resource_version}});
    let what = || format!("removing AppliedManifestWork {name}");
    let released = match api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Err(kube::Error::Api(s)) if s.is_not_found() => {
            records.deleted(&name, record);
            return Ok(());
        }
        other => noted(records, &name, other).map_err(Error::managed(what()))?,
    };
    match api.delete(&name, &DeleteParams::default()).await {
        Ok(outcome) => match outcome.left() {
            // Still there: another finalizer holds it.
            Some(deleting) => records.note(deleting),
            None => records.deleted(&name, &released),
        },
        Err(kube::Error::Api(s)) if s.is_not_found() => records.deleted(&name, &released),
        Err(e) => {
            records.forget(&name);
            return Err(Error::managed(what())(e));
        }
    }
    Ok(())
}

// --- The manifests' objects ---------------------------------------------------------------------

/// Server-side applies `body` by its (writing, not create-only) strategy: `Update` as
/// `work-agent`, forced; `ServerSideApply` with its field manager and `force`. Returns the object
/// as the server holds it.
pub async fn apply(
    api: &Api<DynamicObject>,
    name: &str,
    body: &DynamicObject,
    strategy: UpdateStrategy,
) -> Result<DynamicObject, kube::Error> {
    let (manager, force) = match strategy.type_ {
        UpdateStrategyType::ServerSideApply => {
            let ssa = strategy.server_side_apply.unwrap_or_default();
            let manager = ssa
                .field_manager
                .unwrap_or_else(|| WORK_AGENT_FIELD_MANAGER.into());
            (manager, ssa.force.unwrap_or(false))
        }
        // A create-only manifest is created by `create`, a read-only one never written.
        UpdateStrategyType::Update
        | UpdateStrategyType::ReadOnly
        | UpdateStrategyType::CreateOnly => (WORK_AGENT_FIELD_MANAGER.into(), true),
    };
    let mut params = PatchParams::apply(&manager);
    params.force = force;
    api.patch(name, &params, &Patch::Apply(body)).await
}

/// Creates the object (create-only); if it was created meanwhile, returns what is there.
pub async fn create(
    api: &Api<DynamicObject>,
    name: &str,
    body: &DynamicObject,
) -> Result<DynamicObject, kube::Error> {
    let params = PostParams {
        field_manager: Some(WORK_AGENT_FIELD_MANAGER.into()),
        ..Default::default()
    };
    match api.create(&params, body).await {
        Err(kube::Error::Api(s)) if s.is_already_exists() => api.get(name).await,
        other => other,
    }
}

/// Adds the AppliedManifestWork's reference to an applied object that lacks it, keeping every
/// other reference (other works', the user's). The patch carries the UID and resourceVersion the
/// list was read at, so a concurrent change fails it (retried on the next sync) instead of losing
/// a reference. Nothing is sent when the reference is there: the steady state costs no request.
pub async fn add_owner(
    api: &Api<DynamicObject>,
    obj: DynamicObject,
    owner: &Owner,
) -> Result<DynamicObject, kube::Error> {
    let refs = obj.metadata.owner_references.clone().unwrap_or_default();
    if refs.iter().any(|r| r.uid == owner.uid) {
        return Ok(obj);
    }
    let patch = json!({"metadata": {
        "uid": obj.metadata.uid,
        "resourceVersion": obj.metadata.resource_version,
        "ownerReferences": with_owner(refs, owner),
    }});
    let params = PatchParams {
        field_manager: Some(WORK_AGENT_FIELD_MANAGER.into()),
        ..PatchParams::default()
    };
    api.patch(&obj.name_any(), &params, &Patch::Merge(&patch))
        .await
}

/// Deletes the object `uid` (foreground: its dependents first): a look-alike created since, of
/// another UID, is never touched.
pub async fn delete(api: &Api<DynamicObject>, name: &str, uid: &str) -> Result<(), kube::Error> {
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Foreground),
        preconditions: Some(Preconditions {
            uid: Some(uid.to_owned()),
            resource_version: None,
        }),
        ..Default::default()
    };
    api.delete(name, &params).await.map(drop)
}

/// Replaces the object's ownerReferences with `kept` (none: the field dropped), as a
/// compare-and-swap of the whole list at `obj`'s resourceVersion.
pub async fn set_owners(
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
    kept: &[OwnerReference],
) -> Result<(), kube::Error> {
    let patch = json!({"metadata": {
        "ownerReferences": if kept.is_empty() { serde_json::Value::Null } else { json!(kept) },
        "resourceVersion": obj.metadata.resource_version,
    }});
    api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(patch: &Patch<()>) -> serde_json::Value {
        match patch {
            Patch::Json(operations) => serde_json::to_value(operations).unwrap(),
            _ => unreachable!("a JSON patch"),
        }
    }

    #[test]
    fn finalizer_patches_are_kubes_helpers() {
        let mut work = ManifestWork::new("w", ocm_api::work::ManifestWorkSpec::default());
        assert_eq!(
            sent(&finalizer_added(&work)),
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": null},
                {"op": "add", "path": "/metadata/finalizers", "value": [MANIFEST_WORK_FINALIZER]},
            ])
        );
        work.metadata.finalizers = Some(vec!["other".into()]);
        assert_eq!(
            sent(&finalizer_added(&work)),
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": ["other"]},
                {"op": "add", "path": "/metadata/finalizers/-", "value": MANIFEST_WORK_FINALIZER},
            ])
        );
        assert_eq!(
            sent(&finalizer_removed(1)),
            json!([
                {"op": "test", "path": "/metadata/finalizers/1", "value": MANIFEST_WORK_FINALIZER},
                {"op": "remove", "path": "/metadata/finalizers/1"},
            ])
        );
    }
}
