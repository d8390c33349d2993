//! Removing an operator-managed object (a ClusterManager, a Klusterlet) whose finalizer an
//! operator may or may not be there to honour: delete it, wait while the operator cleans up, and
//! when no operator runs — or it did not finish in time — do its cleanup here and drop its
//! finalizer, so nothing waits forever on a finalizer nobody removes.
use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use anyhow::Context as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// How the object went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The operator removed it.
    ByOperator,
    /// Its cleanup ran here (no operator, or the operator did not finish within the timeout).
    Here {
        /// An operator was running but did not finish in time.
        operator_timed_out: bool,
    },
}

/// What to remove and how.
pub struct Removal<'a, K> {
    /// The object's API.
    pub api: Api<K>,
    /// Its name.
    pub name: &'a str,
    /// Whether an operator is running (its lease is fresh).
    pub operator_running: bool,
    /// The finalizers the operator owns (dropped after a local cleanup).
    pub finalizers: &'a [&'a str],
    /// Bound on each wait.
    pub timeout: Duration,
}

/// Deletes the object and waits until it is gone, running `cleanup` (with the object as it was,
/// `None` when it does not exist) here when the operator will not.
pub async fn remove<K, C, F>(removal: Removal<'_, K>, cleanup: C) -> anyhow::Result<Outcome>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    C: FnOnce(Option<K>) -> F,
    F: Future<Output = anyhow::Result<()>>,
{
    let Removal {
        api,
        name,
        operator_running,
        finalizers,
        timeout,
    } = removal;
    let existing = match api.get_opt(name).await {
        Ok(obj) => obj,
        Err(kube::Error::Api(s)) if s.code == 404 => None, // no CRD, so no object
        Err(e) => return Err(e).with_context(|| format!("reading {name}")),
    };
    let uid = existing.as_ref().and_then(ResourceExt::uid);
    if existing.is_some() {
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e).with_context(|| format!("deleting {name}")),
        }
    }
    if operator_running && gone(&api, name, uid.as_deref(), timeout).await {
        return Ok(Outcome::ByOperator);
    }
    cleanup(existing.clone()).await?;
    if let Some(uid) = uid.as_deref() {
        drop_finalizers(&api, name, finalizers).await?;
        if !gone(&api, name, Some(uid), timeout).await {
            anyhow::bail!(crate::error::UserError::new(
                format!("{name} is still there after {timeout:?}"),
                "another finalizer holds it: see `kubectl get -o yaml` of the object",
            ));
        }
    }
    Ok(Outcome::Here {
        operator_timed_out: operator_running,
    })
}

/// Waits (bounded) until the object with `uid` is gone; true when it is.
async fn gone<K>(api: &Api<K>, name: &str, uid: Option<&str>, timeout: Duration) -> bool
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + 'static,
{
    let Some(uid) = uid else { return true };
    tokio::time::timeout(
        timeout,
        await_condition(api.clone(), name, conditions::is_deleted(uid)),
    )
    .await
    .is_ok_and(|r| r.is_ok())
}

async fn drop_finalizers<K>(api: &Api<K>, name: &str, ours: &[&str]) -> anyhow::Result<()>
where
    K: Resource + Clone + Debug + DeserializeOwned,
{
    let Some(obj) = api.get_opt(name).await.ok().flatten() else {
        return Ok(());
    };
    let keep: Vec<&String> = obj
        .finalizers()
        .iter()
        .filter(|f| !ours.contains(&f.as_str()))
        .collect();
    if keep.len() == obj.finalizers().len() {
        return Ok(());
    }
    let patch = serde_json::json!({"metadata": {"finalizers": keep, "resourceVersion": obj.resource_version()}});
    match api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("removing the finalizer of {name}")),
    }
}
