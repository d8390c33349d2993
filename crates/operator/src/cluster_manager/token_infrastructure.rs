//! The hub's add-on token infrastructure controller ([`ocm_hub::addon::token`]), which runs in
//! this process rather than in the hub's (see that module for why), while the add-on manager is
//! on and the hub's controllers are ours (run by this process, or by our image's hub pods).
//!
//! A hub in Default mode has its add-ons on this cluster. A hosted hub has them on the hub
//! cluster the external hub kubeconfig names, so there the same controller runs with the client
//! the ClusterManager controller last made from that kubeconfig ([`HostedHub`]), started again
//! whenever the kubeconfig changes.
use std::sync::Arc;

use futures::StreamExt as _;
use kube::Client;
use tokio::sync::watch;

use super::{InProcess, hosted};
use ocm_hub::settings::{Settings, Watched};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Gate;
use ocm_runtime::informers::Informers;

/// A hosted hub's cluster as the ClusterManager controller last read it, shared with the
/// controller here so that the external hub kubeconfig is watched and read once.
#[derive(Clone, Default)]
pub struct HostedHub(watch::Sender<Option<Connection>>);

/// A client of the hosted hub's cluster, and the kubeconfig text it was made with.
#[derive(Clone)]
struct Connection {
    text: String,
    client: Client,
}

impl HostedHub {
    /// Records the hub the controller read; wakes the controller here only when its kubeconfig
    /// is new.
    pub fn read(&self, hub: &hosted::Hub) {
        self.0.send_if_modified(|current| {
            if current.as_ref().is_some_and(|c| c.text == hub.text) {
                return false;
            }
            *current = Some(Connection {
                text: hub.text.clone(),
                client: hub.client.clone(),
            });
            true
        });
    }
}

/// Runs both: on this cluster for a hub in Default mode, on the hub cluster for a hosted one.
pub async fn run(
    client: Client,
    in_process: InProcess,
    hosted_hub: &HostedHub,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
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
        Box::pin(on_hosted_hub(hosted_hub.0.subscribe(), settings, shutdown))
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
    mut hubs: watch::Receiver<Option<Connection>>,
    settings: Watched,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let mut changes = settings.changes().boxed();
    loop {
        // Until the hub is hosted and the ClusterManager controller has reached it.
        let hub = loop {
            let current = hubs.borrow_and_update().clone();
            match current {
                Some(hub) if settings.on(hosted_and_ours) => break hub,
                _ => tokio::select! {
                    () = shutdown.cancelled() => return Ok(()),
                    change = changes.next() => if change.is_none() { return Ok(()) },
                    read = hubs.changed() => if read.is_err() { return Ok(()) },
                },
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
            tokio::select! {
                () = run.cancelled() => {},
                Ok(()) = hubs.changed() => tracing::info!("the external hub kubeconfig changed: reconnecting the add-on token infrastructure"),
                () = async {
                    while changes.next().await.is_some() && settings.on(hosted_and_ours) {}
                } => {},
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
