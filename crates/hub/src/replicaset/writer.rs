//! Carries out a replica set's [`Decision`]: creates, updates and deletes its ManifestWorks and
//! writes its status, each only when the store shows a difference.
use std::collections::BTreeMap;

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use super::decide::{Apply, Decision};
use ocm_api::work::{
    ManifestWork, ManifestWorkReplicaSet, REPLICA_SET_LABEL, REPLICA_SET_PLACEMENT_LABEL,
};

/// `<namespace>.<name>`: the replica-set label value on its works.
#[must_use]
pub fn key(set: &ManifestWorkReplicaSet) -> String {
    format!("{}.{}", set.namespace().unwrap_or_default(), set.name_any())
}

/// The name of a new work of `set`: its name and five characters from its namespace and name,
/// shaped like upstream's `generateName` but the same on every retry, so a create whose answer
/// was lost cannot make a second work.
#[must_use]
pub fn work_name(set: &ManifestWorkReplicaSet) -> String {
    // FNV-1a: stable across builds, unlike std's hasher.
    let hash = key(set).bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let alphabet = b"bcdfghjklmnpqrstvwxz2456789";
    let suffix: String = (0..5)
        .map(|i| char::from(alphabet[usize::try_from((hash >> (i * 8)) % 27).unwrap_or(0)]))
        .collect();
    let mut name = set.name_any();
    name.truncate(253 - 6);
    format!("{name}-{suffix}")
}

fn labels(set: &ManifestWorkReplicaSet, placement: &str) -> BTreeMap<String, String> {
    let mut labels = set.labels().clone();
    labels.insert(REPLICA_SET_LABEL.into(), key(set));
    labels.insert(REPLICA_SET_PLACEMENT_LABEL.into(), placement.into());
    labels
}

/// Makes the works and the status of `set` as `decision` says.
pub async fn write(
    client: &Client,
    set: &ManifestWorkReplicaSet,
    decision: &Decision,
) -> Result<(), kube::Error> {
    for apply in &decision.apply {
        write_work(client, set, apply).await?;
    }
    for (ns, name) in &decision.delete {
        match Api::<ManifestWork>::namespaced(client.clone(), ns)
            .delete(name, &DeleteParams::default())
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    if set.status.as_ref() != Some(&decision.status) {
        let api = Api::<ManifestWorkReplicaSet>::namespaced(
            client.clone(),
            &set.namespace().unwrap_or_default(),
        );
        api.patch_status(
            &set.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": decision.status})),
        )
        .await?;
    }
    Ok(())
}

async fn write_work(
    client: &Client,
    set: &ManifestWorkReplicaSet,
    apply: &Apply,
) -> Result<(), kube::Error> {
    let api = Api::<ManifestWork>::namespaced(client.clone(), &apply.cluster);
    let labels = labels(set, &apply.placement);
    let spec = &set.spec.manifest_work_template;
    if let Some(name) = &apply.existing {
        // Replace the spec whole: a merge patch would keep fields the template dropped.
        let patch = json!({"metadata": {"labels": labels}, "spec": spec});
        let mut work: ManifestWork =
            serde_json::from_value(patch).map_err(kube::Error::SerdeError)?;
        let current = api.get(name).await?;
        work.metadata = current.metadata;
        work.metadata.labels = Some(labels);
        api.replace(name, &PostParams::default(), &work).await?;
        return Ok(());
    }
    let mut work = ManifestWork::new(&work_name(set), spec.clone());
    work.metadata.namespace = Some(apply.cluster.clone());
    work.metadata.labels = Some(labels);
    match api.create(&PostParams::default(), &work).await {
        Ok(_) => Ok(()),
        // Ours, not yet in the store; or someone else's of the same name, reported by the log.
        Err(kube::Error::Api(e)) if e.code == 409 => {
            tracing::debug!(cluster = %apply.cluster, "work {} exists already", work_name(set));
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Adds the cleanup finalizer; `false` when it was there already.
pub async fn add_finalizer(
    client: &Client,
    set: &ManifestWorkReplicaSet,
    finalizer: &str,
) -> Result<bool, kube::Error> {
    if set.finalizers().iter().any(|f| f == finalizer) {
        return Ok(false);
    }
    let mut finalizers = set.finalizers().to_vec();
    finalizers.push(finalizer.into());
    let api = Api::<ManifestWorkReplicaSet>::namespaced(
        client.clone(),
        &set.namespace().unwrap_or_default(),
    );
    api.patch(
        &set.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {
            "finalizers": finalizers, "resourceVersion": set.resource_version()}})),
    )
    .await?;
    Ok(true)
}

/// Removes the cleanup finalizer.
pub async fn remove_finalizer(
    client: &Client,
    set: &ManifestWorkReplicaSet,
    finalizer: &str,
) -> Result<(), kube::Error> {
    let finalizers: Vec<&String> = set
        .finalizers()
        .iter()
        .filter(|f| *f != finalizer)
        .collect();
    let api = Api::<ManifestWorkReplicaSet>::namespaced(
        client.clone(),
        &set.namespace().unwrap_or_default(),
    );
    match api
        .patch(
            &set.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {
                "finalizers": finalizers, "resourceVersion": set.resource_version()}})),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}
