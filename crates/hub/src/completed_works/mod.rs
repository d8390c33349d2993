//! Upstream's `CleanUpCompletedManifestWork` gate (hub work; its `ManifestWorkGarbageCollection`
//! controller): a ManifestWork whose `deleteOption.ttlSecondsAfterFinished` is set is deleted that
//! many seconds after its `Complete` condition turned True (the condition its agent aggregates
//! from the manifests' condition rules, the work agent's `condition_rules`). Works a
//! ManifestWorkReplicaSet made are its controller's and left alone.
//!
//! One controller over the hub's shared ManifestWork watch; a work is looked at when it changes,
//! at its deadline, and all of them when the ClusterManager switches the gate on.
pub mod decide;

use std::sync::Arc;

use kube::api::{Api, DeleteParams};
use kube::runtime::controller::{Action, Controller};
use kube::{Client, ResourceExt as _};

use crate::settings::Watched;
use decide::Verdict;
use ocm_api::work::ManifestWork;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "completed-work controller";

struct Context {
    client: Client,
    settings: Watched,
}

/// The controller over `informers`' ManifestWorks, following the gate in `settings`, until
/// `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    settings: Watched,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let (works, events) = informers.feed::<ManifestWork>();
    // Every work again when the gate changes (a work completed while it was off has its deadline
    // behind it, and is deleted at once, as upstream's controller would on start).
    let switched = futures::stream::unfold(settings.clone(), |mut settings| async move {
        settings.changed().await.map(|_| ((), settings))
    });
    let controller =
        Controller::for_shared_stream(events, works.clone()).reconcile_all_on(switched);
    let run = Runner::new(CONTROLLER, controller).after(&works).run(
        reconcile,
        Arc::new(Context {
            client: hub,
            settings,
        }),
        shutdown,
    );
    async move {
        run.await;
        Ok(())
    }
}

async fn reconcile(work: Arc<ManifestWork>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
    let on = ctx
        .settings
        .peek()
        .is_some_and(|s| s.clean_up_completed_works);
    if !on {
        return Ok(Action::await_change());
    }
    match decide::verdict(&work, k8s_openapi::jiff::Timestamp::now()) {
        Verdict::Keep => Ok(Action::await_change()),
        Verdict::Wait(left) => Ok(Action::requeue(left)),
        Verdict::Delete => {
            let (namespace, name) = (work.namespace().unwrap_or_default(), work.name_any());
            let api: Api<ManifestWork> = Api::namespaced(ctx.client.clone(), &namespace);
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {
                    tracing::info!(%namespace, %name, "deleted the completed ManifestWork after its TTL");
                    Ok(Action::await_change())
                }
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(Action::await_change()),
                Err(e) => Err(e),
            }
        }
    }
}
