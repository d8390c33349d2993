//! The add-on manager's writes, the only place it changes the hub: the add-on's owners,
//! finalizers and status, its deploy, hook and hosting works, and its hub RoleBindings, each as
//! [`super::decide`] wants them (plain objects: the writer decides nothing but whether a write is
//! needed). Each is skipped when the store, or this process's last write, already shows it.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::rbac::v1::RoleBinding;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use crate::addon::template::work::same_configs;
use ocm_api::addon::{
    ADDON_NAME_LABEL, ADDON_NAMESPACE_LABEL, ManagedClusterAddOn, ManagedClusterAddOnStatus,
};
use ocm_api::work::ManifestWork;

const FIELD_MANAGER: &str = "clusteradm-addon-manager";

/// The manager's client and what it last wrote.
pub struct Writer {
    client: Client,
    /// `client` as upstream's add-on manager, for the hub RoleBindings.
    as_addon_manager: Client,
    /// RoleBindings as this process last applied them: applied again only when they change.
    bindings: Mutex<HashMap<(String, String), RoleBinding>>,
    /// Works as this process last applied them, until the store shows them: a reconcile woken
    /// by its own status write does not apply the same work again.
    works: Mutex<HashMap<(String, String), (ManifestWork, Instant)>>,
}

/// How long a work this process created may be missing from the store before it is taken as
/// deleted (by the garbage collector, a user, or this writer) and written again.
const STORE_CATCH_UP: Duration = Duration::from_secs(10);

impl Writer {
    /// Writes with `client`, nothing written yet.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self {
            as_addon_manager: crate::addon::as_addon_manager(&client).0,
            client,
            bindings: Mutex::default(),
            works: Mutex::default(),
        }
    }

    /// The add-on's status, as [`write_status`] writes it.
    pub async fn status(
        &self,
        mca: &ManagedClusterAddOn,
        status: &ManagedClusterAddOnStatus,
    ) -> Result<(), kube::Error> {
        write_status(&self.client, mca, status).await
    }

    /// Applies the hook work unless it is there as this process last wrote it.
    pub async fn apply_hook_work(
        &self,
        exists: bool,
        wanted: &ManifestWork,
    ) -> Result<(), kube::Error> {
        let key = (wanted.namespace().unwrap_or_default(), wanted.name_any());
        let written = self
            .works
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .is_some_and(|(w, _)| w == wanted);
        if exists && written {
            return Ok(());
        }
        self.write_work(key, wanted).await
    }

    /// Applies a work and remembers it as written.
    async fn write_work(
        &self,
        key: (String, String),
        wanted: &ManifestWork,
    ) -> Result<(), kube::Error> {
        Api::<ManifestWork>::namespaced(self.client.clone(), &key.0)
            .patch(
                &key.1,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(wanted),
            )
            .await?;
        self.works
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, (wanted.clone(), Instant::now()));
        Ok(())
    }

    /// Makes the add-on's finalizers `finalizers`, guarded by the version read (a conflict's
    /// change wakes the add-on again).
    pub async fn set_finalizers(
        &self,
        mca: &ManagedClusterAddOn,
        finalizers: &[String],
    ) -> Result<(), kube::Error> {
        self.update_metadata(mca, json!({"finalizers": finalizers}))
            .await
            .map(|_| ())
    }

    /// Applies the deploy work unless the store, or this process's last write, shows it as wanted.
    pub async fn apply_work(
        &self,
        current: Option<&ManifestWork>,
        wanted: &ManifestWork,
    ) -> Result<(), kube::Error> {
        let key = (wanted.namespace().unwrap_or_default(), wanted.name_any());
        let written = {
            let mut memo = self.works.lock().unwrap_or_else(PoisonError::into_inner);
            if current.is_some_and(|w| same_work(w, wanted)) {
                memo.remove(&key);
                true
            } else {
                // A store that shows no work at all has either not caught up with the write
                // or seen the work deleted since: only the former for long.
                memo.get(&key).is_some_and(|(w, at)| {
                    same_work(w, wanted) && (current.is_some() || at.elapsed() < STORE_CATCH_UP)
                })
            }
        };
        if written {
            return Ok(());
        }
        self.write_work(key, wanted).await
    }

    /// Writes a hub RoleBinding of the add-on unless this process last wrote it as it is. It is
    /// written as upstream's add-on manager ([`crate::addon::as_addon_manager`]) and with
    /// upstream's verbs (read, create, update, delete: a changed `roleRef`, which RBAC keeps
    /// immutable, is a delete and a create), so the API server grants through it only what that
    /// account holds.
    pub async fn apply_binding(&self, binding: &RoleBinding) -> Result<(), kube::Error> {
        let key = (binding.namespace().unwrap_or_default(), binding.name_any());
        if self
            .bindings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            == Some(binding)
        {
            return Ok(());
        }
        let api = Api::<RoleBinding>::namespaced(self.as_addon_manager.clone(), &key.0);
        match api.get_opt(&key.1).await? {
            None => {
                api.create(&PostParams::default(), binding).await?;
            }
            Some(current) if current.role_ref != binding.role_ref => {
                api.delete(&key.1, &DeleteParams::default()).await?;
                api.create(&PostParams::default(), binding).await?;
            }
            Some(current) if same_binding(&current, binding) => {}
            Some(current) => {
                let mut replaced = binding.clone();
                replaced.metadata.resource_version = current.metadata.resource_version;
                api.replace(&key.1, &PostParams::default(), &replaced)
                    .await?;
            }
        }
        self.bindings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, binding.clone());
        Ok(())
    }

    /// Makes the add-on's owner references `owners`, guarded by the version read.
    pub async fn own(
        &self,
        mca: &ManagedClusterAddOn,
        owners: &[OwnerReference],
    ) -> Result<Updated, kube::Error> {
        self.update_metadata(mca, json!({"ownerReferences": owners}))
            .await
    }

    /// Merges `metadata` into the add-on's, guarded by the version read.
    async fn update_metadata(
        &self,
        mca: &ManagedClusterAddOn,
        mut metadata: serde_json::Value,
    ) -> Result<Updated, kube::Error> {
        metadata["resourceVersion"] = json!(mca.metadata.resource_version);
        match Api::<ManagedClusterAddOn>::namespaced(
            self.client.clone(),
            &mca.namespace().unwrap_or_default(),
        )
        .patch(
            &mca.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": metadata})),
        )
        .await
        {
            Ok(updated) => Ok(Updated::Now(Box::new(updated))),
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(Updated::Conflict),
            Err(e) => Err(e),
        }
    }

    /// Deletes the add-on's works on hosting clusters (the work agent there then removes what they
    /// made).
    pub async fn delete_hosting_works(
        &self,
        mca: &ManagedClusterAddOn,
        works: &[Arc<ManifestWork>],
    ) -> Result<(), kube::Error> {
        for work in works {
            let namespace = work.namespace().unwrap_or_default();
            match Api::<ManifestWork>::namespaced(self.client.clone(), &namespace)
                .delete(&work.name_any(), &DeleteParams::default())
                .await
            {
                Ok(_) => {
                    tracing::info!(addon = %mca.name_any(), "deleted hosting work {namespace}/{}", work.name_any());
                    self.works
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&(namespace.clone(), work.name_any()));
                }
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// What a metadata update did.
pub enum Updated {
    /// Updated: the object as written.
    Now(Box<ManagedClusterAddOn>),
    /// It changed since it was read.
    Conflict,
}

/// Writes the add-on's status if it differs, guarded by the version read: the agent's own status
/// writes are not overwritten (a conflict's change wakes the add-on again).
pub async fn write_status(
    client: &Client,
    mca: &ManagedClusterAddOn,
    status: &ManagedClusterAddOnStatus,
) -> Result<(), kube::Error> {
    if mca.status.as_ref() == Some(status) {
        return Ok(());
    }
    // Against the status read (the version guards it): a list that emptied, which the type
    // leaves out, is removed rather than kept.
    let (before, after) = (
        serde_json::to_value(&mca.status).unwrap_or_default(),
        serde_json::to_value(status).unwrap_or_default(),
    );
    let patch = json!({
        "metadata": {"resourceVersion": mca.metadata.resource_version},
        "status": ocm_runtime::merge_patch::between(&before, &after),
    });
    match Api::<ManagedClusterAddOn>::namespaced(
        client.clone(),
        &mca.namespace().unwrap_or_default(),
    )
    .patch_status(
        &mca.name_any(),
        &PatchParams::default(),
        &Patch::Merge(patch),
    )
    .await
    {
        // A conflict: the add-on changed meanwhile, and that change wakes its controllers again;
        // gone: nothing to write.
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 || e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Whether the stored work already is what `wanted` says: made from the same template, asking
/// for the same status feedback (which the template's prober annotation, outside its spec,
/// changes), with the label and owner.
fn same_work(current: &ManifestWork, wanted: &ManifestWork) -> bool {
    // Only identifiers and rules: the API server fills in the options' other defaults.
    let feedback = |w: &ManifestWork| {
        w.spec
            .manifest_configs
            .iter()
            .map(|c| (c.resource_identifier.clone(), c.feedback_rules.clone()))
            .collect::<Vec<_>>()
    };
    // The manifests too: the cluster's image mirrors change them with no config changing.
    same_configs(current, wanted)
        && current.spec.workload.manifests == wanted.spec.workload.manifests
        && feedback(current) == feedback(wanted)
        && current.labels().get(ADDON_NAME_LABEL) == wanted.labels().get(ADDON_NAME_LABEL)
        && current.labels().get(ADDON_NAMESPACE_LABEL) == wanted.labels().get(ADDON_NAMESPACE_LABEL)
        && current.owner_references() == wanted.owner_references()
}

/// Whether `current` is `wanted` in what the manager sets: subjects, labels and owners.
fn same_binding(current: &RoleBinding, wanted: &RoleBinding) -> bool {
    let labels_kept = wanted
        .labels()
        .iter()
        .all(|(k, v)| current.labels().get(k) == Some(v));
    current.subjects == wanted.subjects
        && labels_kept
        && current.metadata.owner_references == wanted.metadata.owner_references
}
