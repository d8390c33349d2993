//! The hub's cluster-set controllers, as upstream's registration hub runs them: each
//! ManagedClusterSet's `ClusterSetEmpty` condition (from the shared ManagedCluster store, so no
//! extra cluster watch), each ManagedClusterSetBinding's `Bound` condition, the built-in
//! `default` and `global` sets (created when missing at start or when deleted, their selectors
//! restored when changed), and the sets' `spec.managedNamespaces` in each member's status
//! ([`crate::managed_namespaces`]). All of them read one watch of ManagedClusterSets.
//!
//! Each reconcile reads the stores (here), [`decide`] chooses the condition or the built-in
//! set's repair, and the [`writer`] is the only place that writes.
pub mod decide;
pub mod writer;

use std::sync::Arc;

use futures::StreamExt as _;
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};

use crate::managed_namespaces;
use crate::settings::{Settings, Watched};
use decide::{Builtin, Membership};
use ocm_api::cluster::{ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use writer::Error;

/// The names the two controllers report their metrics under.
const SET_CONTROLLER: &str = "cluster-set controller";
const BINDING_CONTROLLER: &str = "cluster-set binding controller";

struct SetContext {
    client: Client,
    clusters: Store<ManagedCluster>,
    /// The ClusterManager's settings: the built-in sets are kept with `DefaultClusterSet` on.
    settings: Watched,
}

/// Upstream's `DefaultClusterSet` gate, which runs its default and global set controllers.
fn builtins_kept(settings: &Settings) -> bool {
    settings.default_cluster_set
}

struct BindingContext {
    client: Client,
    sets: Store<ManagedClusterSet>,
}

/// The cluster-set controllers over `informers`' sets, bindings and clusters, running until
/// `shutdown` is cancelled once the returned future is polled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    settings: Watched,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let (clusters, cluster_events) = informers.feed::<ManagedCluster>();
    let (sets, set_events) = informers.feed::<ManagedClusterSet>();
    // A binding whose set is gone is no longer bound.
    let binding_set_events = futures::stream::select(
        informers.changes::<ManagedClusterSet>(),
        informers.deletions::<ManagedClusterSet>(),
    );
    let (bindings, binding_events) = informers.feed::<ManagedClusterSetBinding>();
    // Any cluster change may change any set's count: sets are few, clusters many.
    let all_sets = {
        let sets = sets.clone();
        move |_: Arc<ManagedCluster>| {
            sets.state()
                .iter()
                .map(|s| ObjectRef::from_obj(&**s))
                .collect::<Vec<_>>()
        }
    };
    // The built-in sets are looked at when they go, once at start and whenever the gate flips (a
    // set that was never made is "gone" too): see `recreate`.
    let builtin_refs = || {
        futures::stream::iter(
            decide::builtin_sets().map(|set| ObjectRef::<ManagedClusterSet>::new(&set.name_any())),
        )
    };
    let builtins = futures::stream::select(
        builtin_refs(),
        settings.changes().flat_map(move |()| builtin_refs()),
    );
    let set_controller = Controller::for_shared_stream(set_events, sets.clone())
        .watches_shared_stream(cluster_events, all_sets)
        .watches_shared_stream(informers.deletions::<ManagedClusterSet>(), |set| {
            Some(ObjectRef::from_obj(&*set))
        })
        .reconcile_on(builtins);
    let set_loop = Runner::new(SET_CONTROLLER, set_controller)
        .after(&clusters)
        .after(&sets)
        .on_gone({
            let (client, settings) = (hub.clone(), settings.clone());
            move |set| recreate(client.clone(), settings.on(builtins_kept), set)
        })
        .run(
            reconcile_set,
            Arc::new(SetContext {
                client: hub.clone(),
                clusters: clusters.clone(),
                settings,
            }),
            shutdown.clone(),
        );

    let binding_controller = Controller::for_shared_stream(binding_events, bindings.clone())
        .watches_shared_stream(binding_set_events, move |set| {
            let name = set.name_any();
            bindings
                .state()
                .iter()
                .filter(|b| b.name_any() == name)
                .map(|b| ObjectRef::from_obj(&**b))
                .collect::<Vec<_>>()
        });
    // A binding is judged only once the set cache is filled (else every binding would read
    // `Bound=False` for a moment at start).
    let binding_loop = Runner::new(BINDING_CONTROLLER, binding_controller)
        .after(&sets)
        .run(
            reconcile_binding,
            Arc::new(BindingContext {
                client: hub.clone(),
                sets,
            }),
            shutdown.clone(),
        );
    let namespaces = managed_namespaces::run_with(hub, informers, shutdown);
    async move {
        tokio::join!(set_loop, binding_loop, namespaces);
        Ok(())
    }
}

async fn reconcile_set(set: Arc<ManagedClusterSet>, ctx: Arc<SetContext>) -> Result<Action, Error> {
    let api: Api<ManagedClusterSet> = Api::all(ctx.client.clone());
    if let Some(want) = decide::builtin_sets()
        .into_iter()
        .find(|b| b.name_any() == set.name_any())
        && decide::builtin(&want, Some(&set)) == Builtin::Restore
        && ctx.settings.on(builtins_kept)
    {
        writer::restore_selector(&api, &want).await?;
        return Ok(Action::await_change());
    }
    let members = Membership::of(&set).map(|m| {
        ctx.clusters
            .state()
            .iter()
            .filter(|c| m.contains(c.labels()))
            .count()
    });
    let condition = decide::emptiness(members, k8s_openapi::jiff::Timestamp::now());
    writer::write_condition(api, &*set, condition).await?;
    Ok(Action::await_change())
}

/// Creates a built-in set that is not there (deleted, or never made) while `kept`; other sets
/// may go.
async fn recreate(hub: Client, kept: bool, set: ObjectRef<ManagedClusterSet>) {
    if !kept {
        return;
    }
    let Some(want) = decide::builtin_sets()
        .into_iter()
        .find(|b| b.name_any() == set.name)
    else {
        return;
    };
    if let Err(e) = writer::create_builtin(&Api::all(hub), &want).await {
        tracing::warn!(set = %set.name, "built-in cluster set: {}", ocm_runtime::report::chain(&e));
    }
}

async fn reconcile_binding(
    binding: Arc<ManagedClusterSetBinding>,
    ctx: Arc<BindingContext>,
) -> Result<Action, Error> {
    let exists = ctx
        .sets
        .get(&ObjectRef::new(&binding.spec.cluster_set))
        .is_some();
    let condition = decide::bound(exists, k8s_openapi::jiff::Timestamp::now());
    let ns = binding.namespace().unwrap_or_default();
    writer::write_condition(
        Api::namespaced(ctx.client.clone(), &ns),
        &*binding,
        condition,
    )
    .await?;
    Ok(Action::await_change())
}
