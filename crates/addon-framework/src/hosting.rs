//! Hosted add-ons, as upstream's Go framework deploys them when an add-on enables hosted mode
//! ([`crate::AgentAddon::hosted_mode`]) and its ManagedClusterAddOn names a hosting cluster
//! (the `addon.open-cluster-management.io/hosting-cluster-name` annotation): the manifests marked
//! `hosting` go to that cluster, in the work `addon-<name>-deploy-hosting-<cluster>-0` of its
//! namespace (labelled with the add-on's cluster; not owned, the add-on lives elsewhere), the
//! rest to the managed cluster as in Default mode. While a hosting work may exist the add-on holds
//! upstream's hosting-manifest finalizer, and the framework removes the work before it lets the
//! add-on go, or once the add-on is no longer Hosted. Which manifest goes where is
//! [`ocm_api::addon::hosted`], as the hub's template add-ons split theirs.
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt as _};
use serde_json::{Value, json};

use ocm_api::addon::hosted::work_name;
use ocm_api::addon::{
    ADDON_NAME_LABEL, ADDON_NAMESPACE_LABEL, HOSTING_MANIFEST_FINALIZER, ManagedClusterAddOn,
};
use ocm_api::work::ManifestWork;

/// Whether the add-on holds the hosting-manifest finalizer.
pub(crate) fn holds(mca: &ManagedClusterAddOn) -> bool {
    mca.finalizers()
        .iter()
        .any(|f| f == HOSTING_MANIFEST_FINALIZER)
}

/// Adds (`present`) or removes the finalizer, guarded by the version read.
pub(crate) async fn set_finalizer(
    client: &Client,
    mca: &ManagedClusterAddOn,
    present: bool,
) -> Result<(), kube::Error> {
    let finalizers = mca.finalizers_with(HOSTING_MANIFEST_FINALIZER, present);
    let patch =
        json!({"metadata": {"finalizers": finalizers, "resourceVersion": mca.resource_version()}});
    Api::<ManagedClusterAddOn>::namespaced(client.clone(), &mca.namespace().unwrap_or_default())
        .patch(
            &mca.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .map(|_| ())
}

/// Applies the hosting work of add-on `addon` of `cluster` in `hosting`'s namespace.
pub(crate) async fn apply_work(
    client: &Client,
    addon: &str,
    cluster: &str,
    hosting: &str,
    manifests: Vec<Value>,
) -> Result<ManifestWork, kube::Error> {
    let name = work_name(addon, cluster);
    let work = json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": hosting,
            "labels": {ADDON_NAME_LABEL: addon, ADDON_NAMESPACE_LABEL: cluster}},
        "spec": {"workload": {"manifests": manifests}},
    });
    Api::<ManifestWork>::namespaced(client.clone(), hosting)
        .patch(
            &name,
            &PatchParams::apply(&crate::deploy::manager(addon)).force(),
            &Patch::Apply(&work),
        )
        .await
}

/// Deletes the hosting works of add-on `addon` of `cluster`, but the one in `keep`'s namespace;
/// whether none of the others is left (a deleted work stays until its agent removed what it
/// applied).
pub(crate) async fn remove_works(
    client: &Client,
    addon: &str,
    cluster: &str,
    keep: Option<&str>,
) -> Result<bool, kube::Error> {
    let works = Api::<ManifestWork>::all(client.clone())
        .list(&ListParams::default().labels(&format!(
            "{ADDON_NAME_LABEL}={addon},{ADDON_NAMESPACE_LABEL}={cluster}"
        )))
        .await?;
    let mut left = false;
    for work in works
        .items
        .iter()
        .filter(|w| w.namespace().as_deref() != keep)
    {
        left = true;
        if work.metadata.deletion_timestamp.is_none() {
            let namespaced = Api::<ManifestWork>::namespaced(
                client.clone(),
                &work.namespace().unwrap_or_default(),
            );
            match namespaced
                .delete(&work.name_any(), &DeleteParams::default())
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(!left)
}
