//! Upstream's second finalizer on a Hosted Klusterlet (`klusterlet-hosted-cleanup`): added once
//! the operator could reach the managed cluster (`ReadyToApply`), so it marks a Klusterlet whose
//! agents' objects may be there. Its removal then waits for the external managed kubeconfig, and
//! a Klusterlet without it is removed from the management cluster only.
use kube::ResourceExt as _;
use kube::api::{Api, Patch, PatchParams};

use ocm_api::operator::{KLUSTERLET_HOSTED_FINALIZER, Klusterlet};

/// Whether `k` may have objects on its managed cluster.
#[must_use]
pub fn present(k: &Klusterlet) -> bool {
    k.finalizers()
        .iter()
        .any(|f| f == KLUSTERLET_HOSTED_FINALIZER)
}

/// Adds the finalizer to `k` unless it is there.
pub async fn add(api: &Api<Klusterlet>, k: &Klusterlet) -> Result<(), kube::Error> {
    if present(k) || k.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let mut finalizers = k.finalizers().to_vec();
    finalizers.push(KLUSTERLET_HOSTED_FINALIZER.to_owned());
    write(api, k, &finalizers).await
}

/// Removes the finalizer from `k` if it is there.
pub async fn remove(api: &Api<Klusterlet>, k: &Klusterlet) -> Result<(), kube::Error> {
    without(api, k, &[KLUSTERLET_HOSTED_FINALIZER]).await
}

/// Removes the finalizers `names` from `k` where it has any (gone already: nothing to do).
pub async fn without(
    api: &Api<Klusterlet>,
    k: &Klusterlet,
    names: &[&str],
) -> Result<(), kube::Error> {
    if !k.finalizers().iter().any(|f| names.contains(&f.as_str())) {
        return Ok(());
    }
    let finalizers: Vec<String> = k
        .finalizers()
        .iter()
        .filter(|f| !names.contains(&f.as_str()))
        .cloned()
        .collect();
    match write(api, k, &finalizers).await {
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        other => other,
    }
}

/// The finalizers as `finalizers`, if `k` was not changed meanwhile (another writer's finalizer
/// is never dropped).
async fn write(
    api: &Api<Klusterlet>,
    k: &Klusterlet,
    finalizers: &[String],
) -> Result<(), kube::Error> {
    let patch = serde_json::json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": k.resource_version(),
    }});
    api.patch(
        &k.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(drop)
}
