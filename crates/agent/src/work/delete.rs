//! Removing what a work applied: deleting a resource (foreground, with a UID precondition so a
//! look-alike created since is never touched, and waited on, bounded), or orphaning it (dropping
//! the AppliedManifestWork from its ownerReferences, so the garbage collector leaves it alone).
//! A resource another AppliedManifestWork also owns is orphaned rather than deleted: the other
//! work still wants it; one the work does not own (there before it, or released by an admin who
//! removed the owner reference) is left alone. This reads and decides; the delete and the
//! ownerReferences patch are [`super::writer`]'s.
use std::time::Duration;

use futures::future::join_all;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::wait::{await_condition, conditions};

use super::apply::describe;
use super::{build, writer};
use ocm_api::work::{AppliedManifestResourceMeta, DeleteOption};

/// What became of one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// Deleted, orphaned, or already gone.
    Done,
    /// Deletion started but the object is still there (finalizers, dependents).
    Pending,
    /// A request failed.
    Failed(String),
}

fn api_for(client: &Client, res: &AppliedManifestResourceMeta) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(res.group.as_deref().unwrap_or_default(), &res.version, "");
    let ar = ApiResource::from_gvk_with_plural(&gvk, &res.resource);
    match res.namespace.as_deref() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

/// Whether `obj` is the object that was recorded (same UID, when one was recorded).
fn is_recorded(obj: &DynamicObject, res: &AppliedManifestResourceMeta) -> bool {
    res.uid.is_none() || obj.metadata.uid == res.uid
}

/// The API group of RBAC objects, removed last.
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Deletes or orphans each resource per the work's delete option, concurrently; returns what
/// became of each, in order. `owner_uid` is the AppliedManifestWork's UID.
///
/// The work's RBAC objects go last, once everything else is gone (until then they are
/// `Pending`): they may be what lets this agent read and delete the rest, as a ClusterRole the
/// work aggregates into the agent's own role grants it its custom resources. Removed together,
/// the agent could lose that right before it saw the custom resources go, and never finish.
pub async fn remove_all(
    client: &Client,
    resources: &[AppliedManifestResourceMeta],
    owner_uid: &str,
    option: Option<&DeleteOption>,
    wait: Duration,
) -> Vec<Removal> {
    let is_rbac = |res: &AppliedManifestResourceMeta| res.group.as_deref() == Some(RBAC_GROUP);
    let mut removals = join_all(resources.iter().map(|res| async move {
        if is_rbac(res) {
            Removal::Pending
        } else {
            remove(client, res, owner_uid, option, wait).await
        }
    }))
    .await;
    let rest_done = resources
        .iter()
        .zip(&removals)
        .all(|(res, r)| is_rbac(res) || *r == Removal::Done);
    if rest_done {
        let rbac: Vec<usize> = (0..resources.len())
            .filter(|&i| is_rbac(&resources[i]))
            .collect();
        let done = join_all(
            rbac.iter()
                .map(|&i| remove(client, &resources[i], owner_uid, option, wait)),
        )
        .await;
        for (i, removal) in rbac.into_iter().zip(done) {
            removals[i] = removal;
        }
    }
    removals
}

/// Deletes or orphans one resource, per the work's delete option.
async fn remove(
    client: &Client,
    res: &AppliedManifestResourceMeta,
    owner_uid: &str,
    option: Option<&DeleteOption>,
    wait: Duration,
) -> Removal {
    if build::is_orphaned(option, res) {
        orphan(client, res, owner_uid).await
    } else {
        delete(client, res, owner_uid, wait).await
    }
}

/// Deletes a resource the work no longer wants, unless another work owns it too.
pub async fn delete(
    client: &Client,
    res: &AppliedManifestResourceMeta,
    owner_uid: &str,
    wait: Duration,
) -> Removal {
    let api = api_for(client, res);
    let obj = match api.get_opt(&res.name).await {
        Ok(Some(obj)) if is_recorded(&obj, res) => obj,
        Ok(_) => return Removal::Done,
        // Gone, or its kind gone with its CRD (the API server's bare "404 page not found").
        Err(kube::Error::Api(s)) if s.code == 404 => return Removal::Done,
        Err(e) => return Removal::Failed(describe(&e)),
    };
    let owners = obj.metadata.owner_references.iter().flatten();
    if !owners.clone().any(|r| r.uid == owner_uid) {
        // Not (or no longer) the work's: found there before it (CreateOnly), or released by an
        // admin who removed the owner reference. Upstream deletes only what the work owns.
        return Removal::Done;
    }
    let shared = owners
        .clone()
        .any(|r| r.kind == "AppliedManifestWork" && r.uid != owner_uid);
    if shared {
        return orphan(client, res, owner_uid).await;
    }
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    match writer::delete(&api, &res.name, &uid).await {
        Ok(()) => {}
        // Gone already, or replaced by another object with the same name: not ours to delete.
        Err(kube::Error::Api(s)) if s.code == 404 || s.is_conflict() => return Removal::Done,
        Err(e) => return Removal::Failed(describe(&e)),
    }
    match tokio::time::timeout(
        wait,
        await_condition(api, &res.name, conditions::is_deleted(&uid)),
    )
    .await
    {
        Ok(Ok(_)) => Removal::Done,
        Ok(Err(e)) => Removal::Failed(e.to_string()),
        Err(_) => Removal::Pending,
    }
}

/// Drops the AppliedManifestWork `owner_uid` from the resource's ownerReferences.
pub async fn orphan(
    client: &Client,
    res: &AppliedManifestResourceMeta,
    owner_uid: &str,
) -> Removal {
    let api = api_for(client, res);
    let obj = match api.get_opt(&res.name).await {
        Ok(Some(obj)) if is_recorded(&obj, res) => obj,
        Ok(_) => return Removal::Done,
        Err(kube::Error::Api(s)) if s.code == 404 => return Removal::Done,
        Err(e) => return Removal::Failed(describe(&e)),
    };
    let owners = obj.metadata.owner_references.clone().unwrap_or_default();
    let kept: Vec<_> = owners
        .iter()
        .filter(|r| r.uid != owner_uid)
        .cloned()
        .collect();
    if kept.len() == owners.len() {
        return Removal::Done;
    }
    // The resourceVersion makes this a compare-and-swap of the whole list.
    match writer::set_owners(&api, &obj, &kept).await {
        Ok(()) => Removal::Done,
        Err(kube::Error::Api(s)) if s.code == 404 => Removal::Done,
        Err(e) => Removal::Failed(describe(&e)),
    }
}
