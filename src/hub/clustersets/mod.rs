//! The hub's cluster-set controllers, as upstream's registration hub runs them: each
//! ManagedClusterSet's `ClusterSetEmpty` condition (from the shared ManagedCluster store, so no
//! extra cluster watch), each ManagedClusterSetBinding's `Bound` condition, the built-in
//! `default` and `global` sets, created when missing and their selectors restored (checked
//! every [`BUILTIN_RESYNC`] from the watch cache: no request unless something is missing), and
//! the sets' `spec.managedNamespaces` in each member's status ([`crate::hub::managed_namespaces`]).
//! All of them read one watch of ManagedClusterSets.
pub mod decide;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::api::cluster::{
    ClusterSetStatus, ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding,
};
use crate::api::conditions::{self, Condition};
use crate::hub::informers::Informers;
use crate::hub::managed_namespaces;
use crate::runtime::{Shutdown, queue_depth, report, shutdown};
use decide::{Builtin, Membership};

/// How often the built-in sets are checked.
pub const BUILTIN_RESYNC: Duration = Duration::from_secs(10);
/// Retry after a failed status write.
const RETRY: Duration = Duration::from_secs(5);
/// The names the two controllers report their metrics under.
const SET_CONTROLLER: &str = "cluster-set controller";
const BINDING_CONTROLLER: &str = "cluster-set binding controller";

#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct Error(#[from] kube::Error);

struct SetContext {
    client: Client,
    clusters: Store<ManagedCluster>,
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
    queue_depth::track(
        SET_CONTROLLER,
        sets.clone(),
        crate::runtime::queue_depth::Wakes::OnAnyChange,
    );
    let set_controller = Controller::for_shared_stream(set_events, sets.clone());
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
    let set_loop = set_controller
        .watches_shared_stream(cluster_events, all_sets)
        .graceful_shutdown_on(shutdown::cancelled(&shutdown))
        .run(
            reconcile_set,
            |_, e: &Error, _| retry(e),
            Arc::new(SetContext {
                client: hub.clone(),
                clusters: clusters.clone(),
            }),
        )
        .for_each(|r| async move { log(SET_CONTROLLER, "ManagedClusterSet", r) });

    queue_depth::track(
        BINDING_CONTROLLER,
        bindings.clone(),
        crate::runtime::queue_depth::Wakes::OnAnyChange,
    );
    let binding_controller = Controller::for_shared_stream(binding_events, bindings.clone());
    let binding_loop = binding_controller
        .watches_shared_stream(binding_set_events, move |set| {
            let name = set.name_any();
            bindings
                .state()
                .iter()
                .filter(|b| b.name_any() == name)
                .map(|b| ObjectRef::from_obj(&**b))
                .collect::<Vec<_>>()
        })
        .graceful_shutdown_on(shutdown::cancelled(&shutdown))
        .run(
            reconcile_binding,
            |_, e: &Error, _| retry(e),
            Arc::new(BindingContext {
                client: hub.clone(),
                sets: sets.clone(),
            }),
        )
        .for_each(|r| async move { log(BINDING_CONTROLLER, "ManagedClusterSetBinding", r) });

    // A binding is judged only once the set cache is filled (else every binding would read
    // `Bound=False` for a moment at start).
    let binding_loop = {
        let sets = sets.clone();
        async move {
            if sets.wait_until_ready().await.is_ok() {
                binding_loop.await;
            }
        }
    };
    let namespaces = managed_namespaces::run_with(hub.clone(), informers, shutdown.clone());
    let builtins = keep_builtin_sets(hub, sets, shutdown);
    async move {
        let _ = clusters.wait_until_ready().await;
        tokio::join!(set_loop, binding_loop, builtins, namespaces);
        Ok(())
    }
}

fn retry(e: &Error) -> Action {
    tracing::warn!(
        "cluster-set status: {}; retrying in {RETRY:?}",
        report::chain(e)
    );
    Action::requeue(RETRY)
}

fn log<K: Resource, E: std::error::Error + 'static>(
    controller: &str,
    kind: &str,
    result: Result<(ObjectRef<K>, Action), controller::Error<E, watcher::Error>>,
) where
    K::DynamicType: Default,
{
    report::record(controller, &result);
    match result {
        Ok(_) | Err(controller::Error::ObjectNotFound(_)) => {}
        Err(e) => tracing::debug!(kind, "{}", report::chain(&e)),
    }
}

async fn reconcile_set(set: Arc<ManagedClusterSet>, ctx: Arc<SetContext>) -> Result<Action, Error> {
    let members = Membership::of(&set).map(|m| {
        ctx.clusters
            .state()
            .iter()
            .filter(|c| m.contains(c.labels()))
            .count()
    });
    let condition = decide::emptiness(members, k8s_openapi::jiff::Timestamp::now());
    write_condition(Api::all(ctx.client.clone()), &*set, condition).await?;
    Ok(Action::await_change())
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
    write_condition(
        Api::namespaced(ctx.client.clone(), &ns),
        &*binding,
        condition,
    )
    .await?;
    Ok(Action::await_change())
}

/// Sets `condition` on `obj`'s status unless it already says so; guarded by the resourceVersion.
async fn write_condition<K>(api: Api<K>, obj: &K, condition: Condition) -> Result<(), Error>
where
    K: Resource<DynamicType = ()> + HasSetStatus + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut list = obj
        .set_status()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    if !conditions::set(&mut list, condition) {
        return Ok(());
    }
    let patch = json!({"metadata": {"resourceVersion": obj.meta().resource_version}, "status": {"conditions": list}});
    api.patch_status(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(patch),
    )
    .await?;
    Ok(())
}

/// The two kinds share one status type.
trait HasSetStatus {
    fn set_status(&self) -> Option<&ClusterSetStatus>;
}

impl HasSetStatus for ManagedClusterSet {
    fn set_status(&self) -> Option<&ClusterSetStatus> {
        self.status.as_ref()
    }
}

impl HasSetStatus for ManagedClusterSetBinding {
    fn set_status(&self) -> Option<&ClusterSetStatus> {
        self.status.as_ref()
    }
}

/// Creates `default` and `global` when missing and restores their selectors, from the watch
/// cache, until `shutdown`.
async fn keep_builtin_sets(hub: Client, sets: Store<ManagedClusterSet>, shutdown: Shutdown) {
    if sets.wait_until_ready().await.is_err() {
        return;
    }
    let api: Api<ManagedClusterSet> = Api::all(hub);
    loop {
        for want in decide::builtin_sets() {
            let name = want.name_any();
            let have = sets.get(&ObjectRef::new(&name));
            let result = match decide::builtin(&want, have.as_deref()) {
                Builtin::Keep => Ok(()),
                Builtin::Create => match api.create(&PostParams::default(), &want).await {
                    Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
                    r => r.map(|_| tracing::info!(set = %name, "created the built-in cluster set")),
                },
                Builtin::Restore => {
                    let patch = json!({"spec": {"clusterSelector": want.spec.cluster_selector}});
                    api.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                        .await
                        .map(|_| tracing::info!(set = %name, "restored the built-in cluster set's selector"))
                }
            };
            if let Err(e) = result {
                tracing::warn!(set = %name, "built-in cluster set: {}", report::chain(&e));
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(BUILTIN_RESYNC) => {}
        }
    }
}
