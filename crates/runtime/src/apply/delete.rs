//! Deleting a bundle: the reverse of apply. Custom resources and workloads go first, CRDs and
//! namespaces last; objects already gone count as deleted; each deletion is waited on (bounded)
//! so "done" means gone, not "asked to go".
use std::time::Duration;

use futures::future::join_all;
use kube::api::{DeleteParams, DynamicObject, PropagationPolicy};
use kube::runtime::wait::{await_condition, conditions};

use super::{ObjectError, ObjectErrorKind, ObjectRef, Resolver, order};

/// What deleting one object did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// It existed and is gone now.
    Removed,
    /// It did not exist.
    Absent,
}

/// Deletes `objects` in reverse apply order and waits until each is gone, each wait bounded by
/// `timeout`. Returns what happened per object, or every failure.
pub async fn delete_all(
    resolver: &Resolver,
    objects: &[DynamicObject],
    timeout: Duration,
) -> Result<Vec<(ObjectRef, Deleted)>, Vec<ObjectError>> {
    let mut done = Vec::new();
    let mut failures = Vec::new();
    for (_, objs) in order::by_tier(objects).into_iter().rev() {
        let results = join_all(objs.iter().map(|o| delete_one(resolver, o, timeout))).await;
        for (obj, result) in objs.iter().zip(results) {
            match result {
                Ok(d) => done.push((ObjectRef::of(obj), d)),
                Err(source) => failures.push(ObjectError {
                    object: ObjectRef::of(obj),
                    source,
                }),
            }
        }
    }
    if failures.is_empty() {
        Ok(done)
    } else {
        Err(failures)
    }
}

async fn delete_one(
    resolver: &Resolver,
    obj: &DynamicObject,
    timeout: Duration,
) -> Result<Deleted, ObjectErrorKind> {
    let (gvk, name) = super::identify(obj)?;
    let api = match resolver
        .api_for(&gvk, obj.metadata.namespace.as_deref())
        .await
    {
        Ok(api) => api,
        // The kind is not served (its CRD is gone): nothing of it can exist.
        Err(ObjectErrorKind::UnknownKind { .. }) => return Ok(Deleted::Absent),
        Err(e) => return Err(e),
    };
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..Default::default()
    };
    let uid = match api.delete(&name, &params).await {
        Ok(either) => either.left().and_then(|o| o.metadata.uid),
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Deleted::Absent),
        Err(e) => return Err(e.into()),
    };
    let Some(uid) = uid else {
        return Ok(Deleted::Removed);
    }; // deleted at once
    match tokio::time::timeout(
        timeout,
        await_condition(api, &name, conditions::is_deleted(&uid)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(Deleted::Removed),
        Ok(Err(e)) => Err(ObjectErrorKind::Wait(e)),
        Err(_) => Err(ObjectErrorKind::StillPresent(timeout)),
    }
}
