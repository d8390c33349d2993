//! The unmanaged AppliedManifestWorks of this agent (upstream's "unmanaged applied work"
//! controller): a record whose ManifestWork is missing on the hub, or that was written for
//! another hub, is evicted — what it applied removed, then the record — once it has been so for
//! the grace period ([`super::eviction`]); the work coming back cancels the eviction. Only this
//! agent id's records are considered, and only once the agent's view of the hub is complete, so
//! a record is never judged against a partial list.
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;
use kube::api::{Api, ListParams};
use kube::runtime::reflector::{ObjectRef, Store};

use super::context::{Context, DELETE_WAIT};
use super::delete::{self, Removal};
use super::eviction::{self, Verdict};
use super::{Error, writer};
use ocm_api::work::{AppliedManifestWork, ManifestWork};

/// Sweeps once the store is ready, then every resync period or at the next eviction deadline,
/// whichever comes first, until aborted.
pub(crate) async fn run(ctx: Arc<Context>, store: Store<ManifestWork>) {
    if ocm_runtime::ready::until_ready(&store).await.is_err() {
        return;
    }
    loop {
        let next = match sweep(&ctx, &store).await {
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

/// One pass over this agent's records; when to look again: after the resync period, or at the
/// nearest eviction deadline if that comes first.
async fn sweep(ctx: &Context, store: &Store<ManifestWork>) -> Result<Duration, Error> {
    let api: Api<AppliedManifestWork> = Api::all(ctx.managed.clone());
    let records = api
        .list(&ListParams::default())
        .await
        .map_err(Error::managed("listing AppliedManifestWorks"))?;
    let mut next = ctx.resync;
    for amw in records {
        if amw.spec.agent_id.as_deref() != Some(ctx.agent_id.as_str())
            || amw.metadata.deletion_timestamp.is_some()
        {
            continue;
        }
        let work = ObjectRef::new(&amw.spec.manifest_work_name).within(&ctx.cluster);
        let managed = amw.spec.hub_hash == ctx.hub_hash && store.get(&work).is_some();
        let started = amw
            .status
            .as_ref()
            .and_then(|s| s.eviction_start_time.as_ref())
            .map(|t| t.0);
        let now = Timestamp::now();
        match eviction::decide(managed, started, now, ctx.settings.eviction_grace) {
            Verdict::Keep if started.is_some() => {
                tracing::info!("{}: managed again, eviction cancelled", amw.name_any());
                writer::eviction_start(&api, &amw.name_any(), None).await?;
            }
            Verdict::Keep => {}
            Verdict::Start => {
                tracing::info!(
                    "{}: ManifestWork {} is not on this hub; evicted in {:?} unless it comes back",
                    amw.name_any(),
                    amw.spec.manifest_work_name,
                    ctx.settings.eviction_grace
                );
                writer::eviction_start(&api, &amw.name_any(), Some(now)).await?;
                next = next.min(ctx.settings.eviction_grace);
            }
            Verdict::Wait(left) => next = next.min(left),
            Verdict::Evict => evict(ctx, &amw).await?,
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
        writer::remove_record(&ctx.managed, &name).await?;
    }
    Ok(())
}
