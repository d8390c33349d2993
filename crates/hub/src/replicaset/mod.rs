//! The ManifestWorkReplicaSet controller, upstream's work hub manager in a loop: a kube-runtime
//! `Controller` over replica sets, woken by the hub's shared watches of ManifestWorks (its own
//! by label), Placements and PlacementDecisions. For each set it [`decide`]s from the stores which works to
//! create, update (by the placement's [`rollout`]) and delete, and the [`writer`] does it.
//! A finalizer holds the set until its works are deleted (upstream puts no owner references on
//! them, so the garbage collector has nothing to follow).
pub mod decide;
pub mod rollout;
pub mod writer;

use std::sync::Arc;
use std::time::Duration;

use crate::settings::Watched;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};

use decide::PlacementInputs;
use ocm_api::cluster::{PLACEMENT_LABEL, Placement, PlacementDecision};
use ocm_api::work::{
    CascadeDeletionPolicy, ManifestWork, ManifestWorkReplicaSet, REPLICA_SET_FINALIZER,
    REPLICA_SET_LABEL,
};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "replica-set controller";
/// Replica sets reconciled at once.
const CONCURRENCY: u16 = 8;
/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(#[from] kube::Error);

impl ocm_runtime::controller::Failure for Error {}

struct Context {
    client: Client,
    works: Store<ManifestWork>,
    placements: Store<Placement>,
    decisions: Store<PlacementDecision>,
}

/// The replica sets in namespace `ns` that name placement `placement`.
fn naming(
    sets: &Store<ManifestWorkReplicaSet>,
    ns: Option<&str>,
    placement: &str,
) -> Vec<ObjectRef<ManifestWorkReplicaSet>> {
    sets.state()
        .iter()
        .filter(|s| {
            s.namespace().as_deref() == ns
                && s.spec.placement_refs.iter().any(|r| r.name == placement)
        })
        .map(|s| ObjectRef::from_obj(&**s))
        .collect()
}

/// The replica set a work belongs to, by its label `<namespace>.<name>` (a namespace has no
/// dots, so the first one splits).
fn owner(w: &ManifestWork) -> Option<ObjectRef<ManifestWorkReplicaSet>> {
    let (ns, name) = w.labels().get(REPLICA_SET_LABEL)?.split_once('.')?;
    Some(ObjectRef::new(name).within(ns))
}

/// The controller over `informers`' replica sets, works (their deletions too), placements and
/// decisions, running until `shutdown` is cancelled once the returned future is polled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    settings: &Watched,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let (sets, set_events) = informers.feed::<ManifestWorkReplicaSet>();
    let (works, work_events) = informers.feed::<ManifestWork>();
    // A deleted work is recreated by its set.
    let work_events = futures::stream::select(work_events, informers.deletions::<ManifestWork>());
    let (placements, placement_events) = informers.feed::<Placement>();
    let (decisions, decision_events) = informers.feed::<PlacementDecision>();
    let (for_placements, for_decisions) = (sets.clone(), sets.clone());
    let ctx = Arc::new(Context {
        client: hub,
        works: works.clone(),
        placements: placements.clone(),
        decisions: decisions.clone(),
    });
    let controller = Controller::for_shared_stream(set_events, sets.clone())
        .watches_shared_stream(work_events, |w| owner(&w))
        .watches_shared_stream(placement_events, move |p| {
            naming(&for_placements, p.namespace().as_deref(), &p.name_any())
        })
        .watches_shared_stream(decision_events, move |d| {
            let placement = d.labels().get(PLACEMENT_LABEL).cloned().unwrap_or_default();
            naming(&for_decisions, d.namespace().as_deref(), &placement)
        });
    // Decide only from complete stores: a work not yet listed must not look missing.
    // Upstream runs its work hub controller only with the gate on.
    let run = Runner::new(CONTROLLER, controller)
        .gated(settings.gate(|s| s.manifest_work_replica_set))
        .concurrency(CONCURRENCY)
        .after(&sets)
        .after(&works)
        .after(&placements)
        .after(&decisions)
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

async fn reconcile(set: Arc<ManifestWorkReplicaSet>, ctx: Arc<Context>) -> Result<Action, Error> {
    let key = writer::key(&set);
    let works: Vec<Arc<ManifestWork>> = ctx
        .works
        .state()
        .into_iter()
        .filter(|w| w.labels().get(REPLICA_SET_LABEL) == Some(&key))
        .collect();
    if set.metadata.deletion_timestamp.is_some() {
        return finalize(&ctx.client, &set, &works).await;
    }
    if writer::add_finalizer(&ctx.client, &set, REPLICA_SET_FINALIZER).await? {
        // The update wakes this set again, with the finalizer in place.
        return Ok(Action::await_change());
    }
    let ns = set.namespace();
    let decisions = ctx.decisions.state();
    let placements: Vec<Option<Arc<Placement>>> = set
        .spec
        .placement_refs
        .iter()
        .map(|r| {
            let mut found = ObjectRef::new(&r.name);
            if let Some(ns) = &ns {
                found = found.within(ns);
            }
            ctx.placements.get(&found)
        })
        .collect();
    let inputs: Vec<PlacementInputs<'_>> = set
        .spec
        .placement_refs
        .iter()
        .zip(&placements)
        .map(|(r, p)| PlacementInputs {
            placement: p.as_deref(),
            decisions: decisions
                .iter()
                .filter(|d| d.namespace() == ns && d.labels().get(PLACEMENT_LABEL) == Some(&r.name))
                .map(AsRef::as_ref)
                .collect(),
        })
        .collect();
    let decision = decide::decide(&set, &inputs, &works, k8s_openapi::jiff::Timestamp::now());
    writer::write(&ctx.client, &set, &decision).await?;
    Ok(decision.requeue.map_or_else(Action::await_change, |d| {
        Action::requeue(d.max(Duration::from_millis(100)))
    }))
}

/// Deletes the set's works; the finalizer goes at once (`Background`) or once they are gone
/// (`Foreground`).
async fn finalize(
    client: &Client,
    set: &ManifestWorkReplicaSet,
    works: &[Arc<ManifestWork>],
) -> Result<Action, Error> {
    if !set.finalizers().iter().any(|f| f == REPLICA_SET_FINALIZER) {
        return Ok(Action::await_change());
    }
    let delete = decide::Decision {
        delete: works
            .iter()
            .filter(|w| w.metadata.deletion_timestamp.is_none())
            .map(|w| (w.namespace().unwrap_or_default(), w.name_any()))
            .collect(),
        status: set.status.clone().unwrap_or_default(),
        ..decide::Decision::default()
    };
    writer::write(client, set, &delete).await?;
    if set.spec.cascade_deletion_policy == CascadeDeletionPolicy::Foreground && !works.is_empty() {
        // Work deletions wake the set again.
        return Ok(Action::await_change());
    }
    writer::remove_finalizer(client, set, REPLICA_SET_FINALIZER).await?;
    Ok(Action::await_change())
}
