//! The placement controller: a kube-runtime `Controller` over Placements, woken by the shared
//! ManagedCluster watch and by one watch each of sets, bindings and PlacementDecisions — one
//! watch per kind whatever the number of placements. For each placement the reconcile reads the
//! stores, [`schedule`]s clusters, [`decide`] splits them into [`groups`] and PlacementDecisions
//! and computes the [`status`], and the `writer` makes them so.
mod budget;
mod cel;
pub mod debug;
pub mod decide;
pub mod explain;
pub mod groups;
pub mod index;
mod rescore;
pub mod schedule;
mod seen;
mod spread;
pub mod status;
mod writer;

use std::hash::{Hash as _, Hasher as _};
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};

use ocm_api::cluster::{
    AddOnPlacementScore, ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding,
    PLACEMENT_LABEL, Placement, PlacementDecision,
};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use ocm_runtime::queue_depth::Wakes;
use schedule::Inputs;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "placement controller";
/// Placements reconciled at once.
pub const CONCURRENCY: u16 = 16;
/// Look again after a write held back until the store shows this process's previous one.
const CATCH_UP: Duration = Duration::from_millis(200);

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(#[from] kube::Error);

impl ocm_runtime::controller::Failure for Error {}

struct Context {
    client: Client,
    clusters: Store<ManagedCluster>,
    sets: Store<ManagedClusterSet>,
    bindings: Store<ManagedClusterSetBinding>,
    decisions: Store<PlacementDecision>,
    scores: Store<AddOnPlacementScore>,
    lag: writer::Lag,
    echoes: Arc<writer::Echoes>,
    index: Arc<index::Index>,
    over_budget: budget::OverBudget,
    rescored: rescore::Rescored,
}

/// The placements whose spec, labels or annotations (the scheduling-disable one) changed, not
/// their status, which this controller writes.
fn spec_changes(
    placements: impl Stream<Item = Arc<Placement>> + Send + 'static,
) -> impl Stream<Item = Arc<Placement>> + Send + 'static {
    // What each placement last woke the controller with (its uid too: one re-created under the
    // same name starts again at generation 1).
    let mut seen = std::collections::HashMap::new();
    placements.filter(move |p| {
        let mut hasher = std::hash::DefaultHasher::new();
        (
            &p.metadata.uid,
            p.metadata.generation,
            p.labels(),
            p.annotations(),
        )
            .hash(&mut hasher);
        let changed =
            seen.insert(ObjectRef::from_obj(&**p), hasher.finish()) != Some(hasher.finish());
        futures::future::ready(changed)
    })
}

/// The placement controller over `informers`' placements, clusters (their deletions too), sets,
/// bindings, decisions and scores, running until `shutdown` is cancelled once the returned
/// future is polled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let (clusters, cluster_events) = informers.feed::<ManagedCluster>();
    // A deleted cluster leaves the decisions that named it.
    let cluster_events =
        futures::stream::select(cluster_events, informers.deletions::<ManagedCluster>());
    let (sets, set_events) = informers.feed::<ManagedClusterSet>();
    let (bindings, binding_events) = informers.feed::<ManagedClusterSetBinding>();
    let decision_index = Arc::new(index::Index::default());
    let echoes = Arc::new(writer::Echoes::default());
    let (index, forget) = (decision_index.clone(), echoes.clone());
    informers.observe::<PlacementDecision>(move |event| {
        index.observe(event);
        if let watcher::Event::Delete(d) = event {
            forget.forget(d);
        }
    });
    let (decisions, decision_events) = informers.feed::<PlacementDecision>();
    let (scores, score_events) = informers.feed::<AddOnPlacementScore>();
    let (placements, placement_events) = informers.feed::<Placement>();
    let controller =
        Controller::for_shared_stream(spec_changes(placement_events), placements.clone());
    let all = {
        let placements = placements.clone();
        move || those(&placements, |_| true)
    };
    let in_namespace = {
        let placements = placements.clone();
        move |ns: Option<String>| those(&placements, |p| p.namespace() == ns)
    };
    let scoring_with = {
        let placements = placements.clone();
        move |score: Arc<AddOnPlacementScore>| scored_by(&placements, &score.name_any())
    };
    let (all_for_clusters, all_for_sets) = (all.clone(), all);
    let reading = {
        let placements = placements.clone();
        move |changed: seen::Parts| those(&placements, |p| seen::Parts::read_by(p).meets(changed))
    };
    let ctx = Arc::new(Context {
        client: hub,
        clusters: clusters.clone(),
        sets: sets.clone(),
        bindings: bindings.clone(),
        decisions: decisions.clone(),
        scores: scores.clone(),
        over_budget: budget::OverBudget::default(),
        rescored: rescore::Rescored::default(),
        lag: writer::Lag::default(),
        echoes: echoes.clone(),
        index: decision_index,
    });
    let controller = controller
        .watches_shared_stream(cluster_events, {
            let seen = seen::Seen::new(clusters.clone(), sets.clone());
            move |mc| match seen.change(&mc) {
                seen::Change::None => Vec::new(),
                seen::Change::Parts(changed) => reading(changed),
                seen::Change::All => all_for_clusters(),
            }
        })
        .watches_shared_stream(set_events, move |_| all_for_sets())
        .watches_shared_stream(binding_events, move |b| in_namespace(b.namespace()))
        .watches_shared_stream(score_events, scoring_with)
        .watches_shared_stream(decision_events, move |d| {
            if echoes.is_echo(&d) {
                return None;
            }
            let placement = d.labels().get(PLACEMENT_LABEL)?.clone();
            Some(ObjectRef::new(&placement).within(&d.namespace()?))
        });
    // Decide only from complete stores: a binding not yet listed must not look missing. Its
    // queue depth counts spec changes (labels and annotations changes are not in it).
    let run = Runner::new(CONTROLLER, controller)
        .wakes(Wakes::OnSpec)
        .concurrency(CONCURRENCY)
        .after(&clusters)
        .after(&sets)
        .after(&bindings)
        .after(&decisions)
        .after(&scores)
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

/// The placements for which `pick` holds.
fn those(
    placements: &Store<Placement>,
    pick: impl Fn(&Placement) -> bool,
) -> Vec<ObjectRef<Placement>> {
    placements
        .state()
        .iter()
        .filter(|p| pick(p))
        .map(|p| ObjectRef::from_obj(&**p))
        .collect()
}

/// The placements scored by the AddOnPlacementScores named `resource`, and those with CEL
/// selectors (which may read any score).
fn scored_by(placements: &Store<Placement>, resource: &str) -> Vec<ObjectRef<Placement>> {
    those(placements, |p| {
        seen::Parts::read_by(p).rest
            || p.spec
                .prioritizer_policy
                .iter()
                .flat_map(|policy| &policy.configurations)
                .filter_map(|c| c.score_coordinate.add_on.as_ref())
                .any(|a| a.resource_name == resource)
    })
}

/// Schedules `p`. A placement with CEL selectors is scheduled on a blocking thread: its
/// evaluations may take up to their budget, which must not hold up the hub's async workers.
async fn schedule_off_the_workers(
    p: &Arc<Placement>,
    bound_sets: Vec<Arc<ManagedClusterSet>>,
    view: &Arc<index::View>,
    ctx: &Context,
    now: k8s_openapi::jiff::Timestamp,
) -> schedule::Scheduled {
    let clusters = ctx.clusters.state();
    let store = ctx.scores.clone();
    let scores: schedule::Scores = Arc::new(move |cluster: &str, resource: &str| {
        store.get(&ObjectRef::new(resource).within(cluster))
    });
    let run = {
        let (p, view) = (p.clone(), view.clone());
        move || {
            schedule::schedule(&Inputs {
                placement: &p,
                bound_sets: bound_sets.iter().map(AsRef::as_ref).collect(),
                clusters: &clusters,
                current: &view.current,
                others: &view.others,
                scores,
                now,
            })
        }
    };
    if !schedule::evaluates_cel(p) {
        return run();
    }
    tokio::task::spawn_blocking(run)
        .await
        .unwrap_or_else(|e| schedule::Scheduled {
            misconfigured: Some(format!("Predicate:the CEL evaluation failed: {e}")),
            ..schedule::Scheduled::default()
        })
}

async fn reconcile(p: Arc<Placement>, ctx: Arc<Context>) -> Result<Action, Error> {
    if p.metadata.deletion_timestamp.is_some() {
        ctx.over_budget.forget(&p);
        ctx.rescored.forget(&p);
        // Its decisions are owned by it: the garbage collector removes them.
        return Ok(Action::await_change());
    }
    let (ns, name) = (p.namespace().unwrap_or_default(), p.name_any());
    let sets = ctx.sets.state();
    let bound_sets: Vec<Arc<ManagedClusterSet>> = ctx
        .bindings
        .state()
        .iter()
        .filter(|b| b.namespace().as_deref() == Some(ns.as_str()))
        .filter_map(|b| sets.iter().find(|s| s.name_any() == b.name_any()).cloned())
        .collect();
    let view = Arc::new(ctx.index.view(&ns, &name));
    let now = k8s_openapi::jiff::Timestamp::now();
    let scheduled = match ctx.over_budget.get(&p) {
        // Ran out of its CEL budget at this generation: not evaluated again until edited.
        Some(message) => schedule::Scheduled {
            misconfigured: Some(message),
            out_of_budget: true,
            ..schedule::Scheduled::default()
        },
        None => schedule_off_the_workers(&p, bound_sets, &view, &ctx, now).await,
    };
    if let (true, Some(m)) = (scheduled.out_of_budget, &scheduled.misconfigured) {
        ctx.over_budget.remember(&p, m);
    }
    let selected: Vec<Arc<ManagedCluster>> = scheduled
        .clusters
        .iter()
        .filter_map(|n| ctx.clusters.get(&ObjectRef::new(n)))
        .collect();
    let selected: Vec<&ManagedCluster> = selected.iter().map(AsRef::as_ref).collect();
    let mine: Vec<Arc<PlacementDecision>> = view
        .decisions
        .iter()
        .filter_map(|d| ctx.decisions.get(&ObjectRef::new(d).within(&ns)))
        .collect();
    let plan = decide::decide(&p, &scheduled, &selected, &mine, ctx.rescored.last(&p), now);
    let writer = writer::Writer::new(ctx.client.clone(), &p, &ctx.lag, &ctx.echoes);
    let mut deferred = false;
    if let Some(decisions) = &plan.decisions {
        deferred |= writer.decisions(decisions, &mine).await?;
        if plan.writes_scores {
            ctx.rescored.wrote(&p, now);
        }
    }
    deferred |= writer.status(&p, plan.status).await?;
    // Own writes do not wake a placement (see `run_with`): a write held back for the store to
    // catch up is retried here.
    let requeue = [
        deferred.then_some(CATCH_UP),
        scheduled.requeue_in,
        plan.scores_held_for,
    ]
    .into_iter()
    .flatten()
    .min();
    Ok(requeue.map_or_else(Action::await_change, |d| {
        Action::requeue(d.max(Duration::from_millis(100)))
    }))
}
