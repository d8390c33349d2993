//! The hub's add-on token infrastructure controller ([`ocm_hub::addon::token`]), which runs in
//! this process rather than in the hub's (see that module for why), while the add-on manager is
//! on and the hub's controllers are ours (run by this process, or by our image's hub pods).
//!
//! A hub in Default mode has its add-ons on this cluster. A hosted hub has them on the hub
//! cluster the external hub kubeconfig names, so there the same controller runs with that
//! kubeconfig's client, started again whenever the kubeconfig changes.
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client};

use super::{InProcess, hosted};
use ocm_api::names::EXTERNAL_HUB_SECRET;
use ocm_hub::settings::{Settings, Watched};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Gate;
use ocm_runtime::informers::Informers;

/// How long a hosted hub's unreadable kubeconfig waits before it is read again (the
/// ClusterManager's `Applied` condition says what is wrong with it meanwhile).
const RETRY: Duration = Duration::from_secs(15);

/// Runs both: on this cluster for a hub in Default mode, on the hub cluster for a hosted one.
pub async fn run(client: Client, in_process: InProcess, shutdown: Shutdown) -> anyhow::Result<()> {
    let informers = Informers::new(client.clone());
    let settings = ocm_hub::settings::from_informers(&informers, shutdown.clone());
    let hub_here = in_process.registration;
    let watched = settings.clone();
    let here = Gate {
        on: Arc::new(move || {
            watched.on(|s| s.addon_management && !s.hosted)
                && (hub_here || watched.on(|s| s.one_image))
        }),
        flips: Box::pin(settings.changes()),
    };
    let local = ocm_hub::addon::token::run_with(client.clone(), &informers, here, shutdown.clone());
    let (local, (), hosted) = tokio::join!(
        local,
        informers.run(shutdown.clone()),
        // Boxed: its select loops would otherwise make every caller's future large.
        Box::pin(on_hosted_hub(client, settings, shutdown))
    );
    local.and(hosted)
}

/// Whether a hosted hub's add-ons get token infrastructure from here: upstream's images, which
/// this operator does not host, would have their own add-on manager do it.
fn hosted_and_ours(s: &Settings) -> bool {
    s.addon_management && s.hosted && s.one_image
}

/// The controller on a hosted hub's cluster, while the ClusterManager is hosted; started again
/// with each new external hub kubeconfig.
async fn on_hosted_hub(
    management: Client,
    settings: Watched,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let mut changes = settings.changes().boxed();
    let mut kubeconfigs = kubeconfig_changes(&management);
    let mut seen: Option<ByteString> = None;
    loop {
        while !settings.on(hosted_and_ours) {
            tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                change = changes.next() => if change.is_none() { return Ok(()) },
                kubeconfig = kubeconfigs.next() => seen = kubeconfig.flatten().or(seen),
            }
        }
        let hub = match hosted::hub(&management).await {
            Ok(hub) => hub,
            Err(why) => {
                tracing::warn!("add-on token infrastructure on the hosted hub: {why}");
                tokio::select! {
                    () = shutdown.cancelled() => return Ok(()),
                    () = tokio::time::sleep(RETRY) => continue,
                }
            }
        };
        tracing::info!("add-on token infrastructure: serving the hosted hub's cluster");
        let run = shutdown.child_token();
        let informers = Informers::new(hub.client.clone());
        let controller = ocm_hub::addon::token::run_with(
            hub.client,
            &informers,
            settings.gate(hosted_and_ours),
            run.clone(),
        );
        // Until Hosted mode ends or the user's kubeconfig changes.
        let until_stale = async {
            loop {
                tokio::select! {
                    () = run.cancelled() => break,
                    change = changes.next() => if change.is_none() || !settings.on(hosted_and_ours) { break },
                    kubeconfig = kubeconfigs.next() => match kubeconfig.flatten() {
                        Some(new) if seen.as_ref().is_some_and(|old| *old != new) => {
                            seen = Some(new);
                            tracing::info!("the external hub kubeconfig changed: reconnecting the add-on token infrastructure");
                            break;
                        }
                        new => seen = new.or(seen.take()),
                    },
                }
            }
            run.cancel();
        };
        let (result, (), ()) = tokio::join!(controller, informers.run(run.clone()), until_stale);
        result?;
        if shutdown.is_cancelled() {
            return Ok(());
        }
    }
}

/// The external hub kubeconfig's contents each time its Secret is written (`None` for a Secret
/// without one), watched by name as this operator's role allows.
fn kubeconfig_changes(
    management: &Client,
) -> futures::stream::BoxStream<'static, Option<ByteString>> {
    let secrets: Api<Secret> = Api::namespaced(management.clone(), hosted::NAMESPACE);
    let config = watcher::Config::default().fields(&format!("metadata.name={EXTERNAL_HUB_SECRET}"));
    watcher(secrets, config)
        .default_backoff()
        .applied_objects()
        .filter_map(|secret| async move {
            Some(
                secret
                    .ok()?
                    .data
                    .and_then(|mut data| data.remove("kubeconfig")),
            )
        })
        // Never ends, so a select on it never spins.
        .chain(futures::stream::pending())
        .boxed()
}
