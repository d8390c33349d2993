//! One pass over one ManifestWork: ensure its AppliedManifestWork, apply every manifest (in
//! dependency tiers, concurrently within a tier), delete what left the work, record what was
//! applied, and report status on the hub — and, when the work is deleted, remove what it applied
//! per its delete option.
use std::collections::BTreeMap;
use std::time::Duration;

use futures::future::join_all;
use kube::api::Api;
use kube::{Resource as _, ResourceExt as _};

use super::apply::{self, Outcome, Owner};
use super::build::{self, Key};
use super::context::{Context, DELETE_WAIT, RETRY};
use super::delete::{self, Removal};
use super::{Error, status, writer};
use ocm_api::work::{AppliedManifestWork, AppliedManifestWorkSpec, ManifestWork};

/// Applies a live work; returns when it is due again.
pub(crate) async fn sync(work: &ManifestWork, ctx: &Context) -> Result<Duration, Error> {
    let name = work.name_any();
    let amw_name = ctx.applied_work_name(&name);
    let spec = AppliedManifestWorkSpec {
        hub_hash: ctx.hub_hash.clone(),
        agent_id: Some(ctx.agent_id.clone()),
        manifest_work_name: name.clone(),
    };
    let amw = writer::ensure_record(&ctx.managed, &amw_name, spec).await?;
    let owner = Owner {
        name: amw_name.clone(),
        uid: amw.uid().unwrap_or_default(),
    };
    let previous = amw.status.clone().unwrap_or_default().applied_resources;
    if amw.metadata.deletion_timestamp.is_some() {
        // The record was deleted by hand: clean up as its finalizer promises, then start over.
        tracing::info!(work = %name, "AppliedManifestWork {amw_name} is being deleted; removing its resources");
        let removals =
            delete::remove_all(&ctx.managed, &previous, &owner.uid, None, DELETE_WAIT).await;
        ensure_removed(&name, &removals)?;
        writer::remove_record(&ctx.managed, &amw_name).await?;
        return Ok(Duration::ZERO);
    }

    let outcomes = apply_all(work, ctx, &owner).await;
    let wanted: Vec<Key> = outcomes.iter().filter_map(|o| o.key.clone()).collect();
    let applied_now: Vec<_> = outcomes.iter().filter_map(|o| o.record.clone()).collect();
    let stale = build::stale(&previous, &wanted);
    let removals = delete::remove_all(
        &ctx.managed,
        &stale,
        &owner.uid,
        work.spec.delete_option.as_ref(),
        DELETE_WAIT,
    )
    .await;
    let mut next = build::next_applied(&previous, &applied_now, &wanted);
    let mut pending = false;
    for (res, removal) in stale.iter().zip(&removals) {
        if *removal != Removal::Done {
            tracing::warn!(work = %name, resource = %res.name, "removing a dropped resource: {removal:?}");
            next.push(res.clone());
            pending = true;
        }
    }
    next.sort_by_key(Key::of);
    let mut sorted_previous = previous.clone();
    sorted_previous.sort_by_key(Key::of);
    if next != sorted_previous {
        writer::record(&ctx.managed, &amw_name, &next).await?;
    }

    let results: Vec<_> = outcomes.into_iter().map(|o| o.result).collect();
    ctx.watched.set(
        &name,
        super::watched::targets(&work.spec.manifest_configs, &results),
    );
    let failed = results.iter().any(|r| r.applied.is_err());
    let new_status = status::work_status(
        work.status.as_ref(),
        &results,
        work.meta().generation,
        &status::now(),
    );
    if work.status.as_ref() != Some(&new_status) {
        writer::work_status(&ctx.works(), &name, &new_status).await?;
    }
    tracing::debug!(work = %name, manifests = results.len(), failed, "work synced");
    // Feedback and rule conditions are read from the objects as applying returns them, so a
    // work that asks for either is applied again more often, to keep them as fresh as upstream's
    // (a Job's `Complete` starts a completed work's TTL).
    let wants_feedback = work
        .spec
        .manifest_configs
        .iter()
        .any(|c| !c.feedback_rules.is_empty() || !c.condition_rules.is_empty());
    Ok(if failed || pending {
        ctx.resync.min(RETRY)
    } else if wants_feedback {
        ctx.resync.min(ctx.settings.status_sync)
    } else {
        ctx.resync
    })
}

/// Applies the manifests tier by tier (namespaces and CRDs before what lives in them); returns
/// the outcomes in manifest order.
async fn apply_all(work: &ManifestWork, ctx: &Context, owner: &Owner) -> Vec<Outcome> {
    let manifests = &work.spec.workload.manifests;
    let configs = &work.spec.manifest_configs;
    let mut tiers: BTreeMap<u8, Vec<usize>> = BTreeMap::new();
    for (i, m) in manifests.iter().enumerate() {
        let tier = build::parse(m).map_or(u8::MAX, |p| ocm_runtime::apply::order::tier(&p.gvk));
        tiers.entry(tier).or_default().push(i);
    }
    let subject = super::executor::subject(work.spec.executor.as_ref());
    let executor = subject.as_ref().map(|subject| super::executor::Executor {
        client: &ctx.managed,
        cache: &ctx.executor_cache,
        subject: subject.as_ref().map_err(String::as_str).copied(),
        delete_option: work.spec.delete_option.as_ref(),
    });
    let mut outcomes: Vec<Option<Outcome>> = vec![None; manifests.len()];
    for ordinals in tiers.values() {
        let done = join_all(ordinals.iter().map(|&i| {
            apply::apply_manifest(
                ctx.feedback,
                &ctx.discovery,
                i,
                &manifests[i],
                configs,
                owner,
                executor,
            )
        }))
        .await;
        for (&i, outcome) in ordinals.iter().zip(done) {
            outcomes[i] = Some(outcome);
        }
    }
    outcomes.into_iter().flatten().collect()
}

fn ensure_removed(work: &str, removals: &[Removal]) -> Result<(), Error> {
    let pending = removals.iter().filter(|r| **r != Removal::Done).count();
    for r in removals.iter().filter(|r| matches!(r, Removal::Failed(_))) {
        tracing::warn!(work, "removing an applied resource: {r:?}");
    }
    if pending == 0 {
        Ok(())
    } else {
        Err(Error::Pending {
            work: work.to_owned(),
            pending,
        })
    }
}

/// Removes what a deleted work applied (deleting or orphaning per its delete option), then its
/// AppliedManifestWork. Errs while anything is left, so the work keeps its finalizer.
pub(crate) async fn finalize(work: &ManifestWork, ctx: &Context) -> Result<(), Error> {
    let name = work.name_any();
    ctx.watched.set(&name, Vec::new());
    let amw_name = ctx.applied_work_name(&name);
    let api: Api<AppliedManifestWork> = Api::all(ctx.managed.clone());
    let Some(amw) = api
        .get_opt(&amw_name)
        .await
        .map_err(Error::managed(format!(
            "reading AppliedManifestWork {amw_name}"
        )))?
    else {
        return Ok(());
    };
    let resources = amw.status.clone().unwrap_or_default().applied_resources;
    let owner_uid = amw.uid().unwrap_or_default();
    let removals = delete::remove_all(
        &ctx.managed,
        &resources,
        &owner_uid,
        work.spec.delete_option.as_ref(),
        DELETE_WAIT,
    )
    .await;
    ensure_removed(&name, &removals)?;
    writer::remove_record(&ctx.managed, &amw_name).await?;
    tracing::info!(work = %name, resources = resources.len(), "work deleted, its resources removed");
    Ok(())
}
