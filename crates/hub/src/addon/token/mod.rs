//! Token-based add-on registration, the hub's part (upstream's
//! `addon-token-infrastructure-controller`): for each ManagedClusterAddOn whose cluster's agent
//! declared the token driver for its hub client, the ServiceAccount `<addon>-agent` whose tokens
//! the add-on's agent uses, and the Role and RoleBinding `<addon>-token-role` that let the
//! cluster's agent request them, in the cluster's namespace, labelled as upstream's; then
//! `TokenInfrastructureReady` with the ServiceAccount's UID, which the agent checks its token
//! against. When the add-on goes, or its agent goes back to certificates, they go.
//!
//! **Who runs it.** The ClusterManager operator's process, not the hub's: the Role it makes grants
//! `serviceaccounts/token create`, and RBAC lets only who holds that right (or `escalate` on
//! roles) grant it. Held by the hub pod, that right would let it mint a token of any
//! ServiceAccount, kube-system's too, which is what the hub pod was made unable to do (it holds no
//! Secret). Upstream's add-on manager holds it; the operator, which grants every hub component's
//! RBAC, holds `escalate` already, so running this loop there adds no power anywhere. It runs
//! when the hub's controllers are ours (the ClusterManager names one image, or this process runs
//! them); beside upstream's images their add-on manager does it.
//!
//! `mod.rs` reads the add-on from the shared store, [`decide`] says what to do, and the
//! [`writer`] does it.
pub mod decide;
pub mod writer;

use std::sync::Arc;

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, ResourceExt as _};

use decide::Step;
use ocm_api::addon::ManagedClusterAddOn;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::{Gate, Runner};
use ocm_runtime::informers::Informers;
use writer::Writer;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on token infrastructure";

/// The add-on an infrastructure object belongs to.
fn owner<K: kube::Resource>(object: &K) -> Option<ObjectRef<ManagedClusterAddOn>> {
    let (cluster, addon) = decide::owner_of(object)?;
    Some(ObjectRef::new(&addon).within(&cluster))
}

/// The controller over `informers`' add-ons and their token objects (a change or deletion of
/// one wakes its add-on, so a deleted ServiceAccount is made again), until `shutdown`.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    gate: Gate,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + use<> {
    let (addons, changes) = informers.feed::<ManagedClusterAddOn>();
    let controller = Controller::for_shared_stream(changes, addons.clone())
        .watches_shared_stream(informers.deletions::<ManagedClusterAddOn>(), |mca| {
            Some(ObjectRef::from_obj(&*mca))
        })
        .watches_shared_stream(informers.changes::<ServiceAccount>(), |o| owner(&*o))
        .watches_shared_stream(informers.deletions::<ServiceAccount>(), |o| owner(&*o))
        .watches_shared_stream(informers.changes::<Role>(), |o| owner(&*o))
        .watches_shared_stream(informers.deletions::<Role>(), |o| owner(&*o))
        .watches_shared_stream(informers.changes::<RoleBinding>(), |o| owner(&*o))
        .watches_shared_stream(informers.deletions::<RoleBinding>(), |o| owner(&*o));
    let ctx = Arc::new(Writer::new(hub));
    let gone = ctx.clone();
    let run = Runner::new(CONTROLLER, controller)
        .gated(gate)
        .after(&addons)
        .on_gone(move |mca| {
            let writer = gone.clone();
            async move {
                // A deleted add-on's objects go (`decide::decide(None)`).
                if let Some(cluster) = mca.namespace.as_deref()
                    && let Err(e) = writer.remove(cluster, &mca.name).await
                {
                    // The garbage collector takes them with the add-on they are owned by.
                    tracing::warn!(%cluster, addon = %mca.name, "removing token infrastructure: {e}");
                }
            }
        })
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

async fn reconcile(
    mca: Arc<ManagedClusterAddOn>,
    writer: Arc<Writer>,
) -> Result<Action, kube::Error> {
    let cluster = mca.namespace().unwrap_or_default();
    match decide::decide(Some(&mca)) {
        Step::Ensure => match writer.apply(&mca).await {
            Ok(uid) => writer.report(&mca, Ok(&uid)).await?,
            Err(e) => {
                writer.report(&mca, Err(e.to_string())).await?;
                return Err(e);
            }
        },
        Step::Remove { drop_condition } => {
            writer.remove(&cluster, &mca.name_any()).await?;
            if drop_condition {
                writer.drop_condition(&mca).await?;
            }
        }
        Step::Nothing => {}
    }
    Ok(Action::await_change())
}
