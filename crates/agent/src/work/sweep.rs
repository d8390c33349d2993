//! The unmanaged AppliedManifestWorks of this agent (upstream's "unmanaged applied work"
//! controller): a record whose ManifestWork is missing on the hub, or that was written for
//! another hub, is evicted — what it applied removed, then the record — once it has been so for
//! the grace period ([`super::eviction`]); the work coming back cancels the eviction. Only this
//! agent id's records are considered, and only once the agent's views of the hub and of its
//! records are complete, so a record is never judged against a partial list. Both are read from
//! the stores; [`decide::sweep`] judges each record and the [`writer`] writes.
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;
use kube::runtime::reflector::{ObjectRef, Store};

use super::context::{Context, DELETE_WAIT};
use super::decide::{self, Sweep};
use super::delete::{self, Removal};
use super::{Error, writer};
use ocm_api::work::{AppliedManifestWork, ManifestWork};

/// Sweeps once the stores are ready, then every resync period or at the next eviction deadline,
/// whichever comes first, until aborted.
pub(crate) async fn run(
    ctx: Arc<Context>,
    works: Store<ManifestWork>,
    records: Store<AppliedManifestWork>,
) {
    let ready = futures::future::join(
        ocm_runtime::ready::until_ready(&works),
        ocm_runtime::ready::until_ready(&records),
    );
    if let (Err(_), _) | (_, Err(_)) = ready.await {
        return;
    }
    loop {
        let next = match sweep(&ctx, &works).await {
            Ok(next) => next,
            Err(e) => {
                tracing::warn!(
                    "sweeping unmanaged AppliedManifestWorks: {}",
                    super::chain(&e)
                );
                ctx.resync
            }
        };
        tokio::time::sleep(next).await;
    }
}

/// One pass over this agent's records (from the store); when to look again: after the resync
/// period, or at the nearest eviction deadline if that comes first.
async fn sweep(ctx: &Context, works: &Store<ManifestWork>) -> Result<Duration, Error> {
    let mut next = ctx.resync;
    let grace = ctx.settings.eviction_grace;
    for amw in ctx.records.all() {
        let work = ObjectRef::new(&amw.spec.manifest_work_name).within(&ctx.cluster);
        let exists = works.get(&work).is_some();
        let now = Timestamp::now();
        let name = amw.name_any();
        match decide::sweep(&amw, &ctx.agent_id, &ctx.hub_hash, exists, now, grace) {
            Sweep::Leave => {}
            Sweep::Cancel => {
                tracing::info!("{name}: managed again, eviction cancelled");
                writer::eviction_start(&ctx.managed, &ctx.records, &name, None).await?;
            }
            Sweep::Start => {
                tracing::info!(
                    "{name}: ManifestWork {} is not on this hub; evicted in {grace:?} unless it comes back",
                    amw.spec.manifest_work_name,
                );
                writer::eviction_start(&ctx.managed, &ctx.records, &name, Some(now)).await?;
                next = next.min(grace);
            }
            Sweep::Wait(left) => next = next.min(left),
            Sweep::Evict => evict(ctx, &amw).await?,
        }
    }
    Ok(next)
}

async fn evict(ctx: &Context, amw: &AppliedManifestWork) -> Result<(), Error> {
    let name = amw.name_any();
    tracing::info!(
        "{name}: unmanaged for the whole grace period ({:?}); removing what it applied",
        ctx.settings.eviction_grace
    );
    let resources = amw.status.clone().unwrap_or_default().applied_resources;
    let owner_uid = amw.uid().unwrap_or_default();
    let removals =
        delete::remove_all(&ctx.managed, &resources, &owner_uid, None, DELETE_WAIT).await;
    if removals.iter().all(|r| *r == Removal::Done) {
        writer::remove_record(&ctx.managed, &ctx.records, amw, &decide::released(amw)).await?;
    }
    Ok(())
}
