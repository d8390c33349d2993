//! The AppliedManifestWork record on the managed cluster: created (with its cleanup finalizer)
//! before anything of a work is applied, so applied objects can name it as their owner; its
//! status lists what was applied, so a manifest dropped from the work, or the whole work, can be
//! cleaned up even after the agent restarts.
use kube::Client;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::json;

use super::Error;
use ocm_api::work::{
    APPLIED_MANIFEST_WORK_FINALIZER, AppliedManifestResourceMeta, AppliedManifestWork,
    AppliedManifestWorkSpec,
};

/// Returns the AppliedManifestWork `name`, creating it (or fixing its spec and finalizer).
pub async fn ensure(
    client: &Client,
    name: &str,
    spec: AppliedManifestWorkSpec,
) -> Result<AppliedManifestWork, Error> {
    let api: Api<AppliedManifestWork> = Api::all(client.clone());
    let what = || format!("reading AppliedManifestWork {name}");
    if let Some(existing) = api.get_opt(name).await.map_err(Error::managed(what()))? {
        let has_finalizer = existing
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == APPLIED_MANIFEST_WORK_FINALIZER);
        if existing.spec == spec && has_finalizer || existing.metadata.deletion_timestamp.is_some()
        {
            return Ok(existing);
        }
        let mut finalizers = existing.metadata.finalizers.clone().unwrap_or_default();
        if !has_finalizer {
            finalizers.push(APPLIED_MANIFEST_WORK_FINALIZER.into());
        }
        let patch = json!({
            "metadata": {"finalizers": finalizers, "resourceVersion": existing.metadata.resource_version},
            "spec": spec,
        });
        return api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(Error::managed(format!(
                "updating AppliedManifestWork {name}"
            )));
    }
    let amw = AppliedManifestWork {
        metadata: ObjectMeta {
            name: Some(name.into()),
            finalizers: Some(vec![APPLIED_MANIFEST_WORK_FINALIZER.into()]),
            ..Default::default()
        },
        spec,
        status: None,
    };
    match api.create(&PostParams::default(), &amw).await {
        Err(kube::Error::Api(s)) if s.is_already_exists() => {
            api.get(name).await.map_err(Error::managed(what()))
        }
        other => other.map_err(Error::managed(format!(
            "creating AppliedManifestWork {name}"
        ))),
    }
}

/// Writes the list of applied resources into the record's status.
pub async fn record(
    client: &Client,
    name: &str,
    resources: &[AppliedManifestResourceMeta],
) -> Result<(), Error> {
    let api: Api<AppliedManifestWork> = Api::all(client.clone());
    // An explicit list (even empty): a merge patch must overwrite what was there.
    let patch = json!({"status": {"appliedResources": resources}});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(Error::managed(format!(
            "recording the resources of AppliedManifestWork {name}"
        )))?;
    Ok(())
}

/// Removes the record: its finalizer first (its resources are dealt with), then the object.
pub async fn remove(client: &Client, name: &str) -> Result<(), Error> {
    let api: Api<AppliedManifestWork> = Api::all(client.clone());
    let Some(existing) = api.get_opt(name).await.map_err(Error::managed(format!(
        "reading AppliedManifestWork {name}"
    )))?
    else {
        return Ok(());
    };
    let finalizers: Vec<String> = existing
        .metadata
        .finalizers
        .iter()
        .flatten()
        .filter(|f| *f != APPLIED_MANIFEST_WORK_FINALIZER)
        .cloned()
        .collect();
    let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": existing.metadata.resource_version}});
    let what = || format!("removing AppliedManifestWork {name}");
    match api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Err(kube::Error::Api(s)) if s.is_not_found() => return Ok(()),
        other => other.map(drop).map_err(Error::managed(what()))?,
    }
    match api.delete(name, &DeleteParams::default()).await {
        Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
        other => other.map(drop).map_err(Error::managed(what())),
    }
}
