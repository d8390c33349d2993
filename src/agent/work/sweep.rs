//! Garbage collection of AppliedManifestWorks whose ManifestWork is gone from the hub without the
//! agent's cleanup (its finalizer was stripped, or it was deleted while the agent was away and
//! the namespace went with it). Only records of this hub and this agent id are considered, and
//! only once the agent's view of the hub is complete, so a record is never judged against a
//! partial list.
use std::sync::Arc;

use kube::ResourceExt as _;
use kube::api::{Api, ListParams};
use kube::runtime::reflector::{ObjectRef, Store};

use super::controller::{Context, DELETE_WAIT};
use super::delete::{self, Removal};
use super::{Error, applied_work};
use crate::api::work::{AppliedManifestWork, ManifestWork};

/// Sweeps once the store is ready, then every resync period, until aborted.
pub(crate) async fn run(ctx: Arc<Context>, store: Store<ManifestWork>) {
    if store.wait_until_ready().await.is_err() {
        return;
    }
    let mut every = tokio::time::interval(ctx.resync);
    loop {
        every.tick().await;
        if let Err(e) = sweep(&ctx, &store).await {
            tracing::warn!(
                "sweeping orphaned AppliedManifestWorks: {}",
                super::chain(&e)
            );
        }
    }
}

async fn sweep(ctx: &Context, store: &Store<ManifestWork>) -> Result<(), Error> {
    let api: Api<AppliedManifestWork> = Api::all(ctx.managed.clone());
    let records = api
        .list(&ListParams::default())
        .await
        .map_err(Error::managed("listing AppliedManifestWorks"))?;
    for amw in records {
        let ours = amw.spec.hub_hash == ctx.hub_hash
            && amw.spec.agent_id.as_deref() == Some(ctx.agent_id.as_str());
        let work = ObjectRef::new(&amw.spec.manifest_work_name).within(&ctx.cluster);
        if !ours || store.get(&work).is_some() {
            continue;
        }
        let name = amw.name_any();
        tracing::info!(
            "ManifestWork {} is gone; removing what it applied ({name})",
            amw.spec.manifest_work_name
        );
        let resources = amw.status.clone().unwrap_or_default().applied_resources;
        let owner_uid = amw.uid().unwrap_or_default();
        let removals =
            delete::remove_all(&ctx.managed, &resources, &owner_uid, None, DELETE_WAIT).await;
        if removals.iter().all(|r| *r == Removal::Done) {
            applied_work::remove(&ctx.managed, &name).await?;
        }
    }
    Ok(())
}
