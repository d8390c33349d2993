//! The Klusterlet operator loop: installs and watches over the agents of a managed cluster.
//!
//! A kube-runtime Controller on Klusterlets runs the pipeline observe ([`observe`]) → validate
//! ([`validate`], pure) → build ([`build`], pure, a typed `Desired`) → apply ([`apply`], the
//! shared apply engine) → status ([`status`]: Applied, HubConnectionDegraded,
//! RegistrationDesiredDegraded, WorkDesiredDegraded, Available, each with observedGeneration).
//! A finalizer runs [`cleanup`] on deletion. While it runs, the loop renews a liveness lease
//! ([`lease`]). It runs as `clusteradm operator klusterlet`, or inside `join --in-process`, where
//! the agents themselves are started through the hook in [`agents`].
pub mod agents;
pub mod apply;
pub mod build;
pub mod cleanup;
pub mod lease;
pub mod observe;
pub mod status;
pub mod validate;
mod work_supervisor;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use futures::StreamExt as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::wait::await_condition;
use kube::runtime::watcher;
use kube::{Client, ResourceExt as _};

pub use cleanup::cleanup;
pub use lease::is_running;

use crate::api::conditions::{self, APPLIED};
use crate::api::operator::{KLUSTERLET_FINALIZER, KLUSTERLET_HOSTED_FINALIZER, Klusterlet};
use build::KLUSTERLET_LABEL;

/// Which agents run inside this process rather than as Deployments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InProcess {
    /// The registration agent runs here.
    pub registration: bool,
    /// The work agent runs here.
    pub work: bool,
}

/// How the loop runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Agents that run in this process (no Deployment for them).
    pub in_process: InProcess,
    /// Bound on each deletion during cleanup.
    pub cleanup_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            in_process: InProcess::default(),
            cleanup_timeout: Duration::from_secs(120),
        }
    }
}

/// Why one reconcile failed (retried with a delay).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Writing the status failed.
    #[error("updating the status of Klusterlet {name} failed")]
    Status {
        /// The Klusterlet.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Cleanup after deletion failed.
    #[error("cleaning up after Klusterlet {name} failed: {message}")]
    Cleanup {
        /// The Klusterlet.
        name: String,
        /// What failed.
        message: String,
    },
    /// Adding or removing the finalizer failed.
    #[error(transparent)]
    Finalizer(#[from] Box<kube::runtime::finalizer::Error<Error>>),
}

struct Context {
    client: Client,
    opts: Options,
}

/// How often a healthy Klusterlet is looked at again (hub checks, as upstream's 30 s).
const RESYNC: Duration = Duration::from_secs(30);

/// Runs the loop against `client` until `shutdown` completes.
pub async fn run(
    client: Client,
    opts: Options,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let klusterlets: Api<Klusterlet> = Api::all(client.clone());
    klusterlets
        .list(&ListParams::default().limit(1))
        .await
        .context("cannot list Klusterlets (is the Klusterlet CRD installed? `clusteradm join` installs it)")?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let lease = tokio::spawn(lease::hold(client.clone(), stop_rx.clone()));
    let by_label = |meta: &kube::api::ObjectMeta| {
        meta.labels
            .as_ref()
            .and_then(|l| l.get(KLUSTERLET_LABEL))
            .map(|k| ObjectRef::<Klusterlet>::new(k))
    };
    let labelled = || watcher::Config::default().labels(KLUSTERLET_LABEL);
    let mut stop = stop_rx.clone();
    Controller::new(klusterlets, watcher::Config::default())
        .watches(
            Api::<Deployment>::all(client.clone()),
            labelled(),
            move |d| by_label(&d.metadata),
        )
        .watches(Api::<Secret>::all(client.clone()), labelled(), move |s| {
            by_label(&s.metadata)
        })
        .graceful_shutdown_on(async move {
            let _ = stop.wait_for(|s| *s).await;
        })
        .run(reconcile, error_policy, Arc::new(Context { client, opts }))
        .for_each(|result| async move {
            match result {
                Ok((k, _)) => tracing::debug!("reconciled Klusterlet {}", k.name),
                Err(e) => tracing::warn!("klusterlet operator: {e}"),
            }
        })
        .await;
    let _ = lease.await;
    Ok(())
}

fn finalizer_of(k: &Klusterlet) -> &'static str {
    match validate::lenient(k) {
        Ok(v) if v.hosted => KLUSTERLET_HOSTED_FINALIZER,
        _ => KLUSTERLET_FINALIZER,
    }
}

async fn reconcile(k: Arc<Klusterlet>, ctx: Arc<Context>) -> Result<Action, Error> {
    let api: Api<Klusterlet> = Api::all(ctx.client.clone());
    let name = finalizer_of(&k);
    finalizer(&api, name, k, |event| async {
        match event {
            Event::Apply(k) => reconcile_apply(&k, &ctx).await,
            Event::Cleanup(k) => {
                cleanup::remove_objects(
                    &ctx.client,
                    &k.name_any(),
                    Some(&k),
                    ctx.opts.cleanup_timeout,
                )
                .await
                .map_err(|e| Error::Cleanup {
                    name: k.name_any(),
                    message: format!("{e:#}"),
                })?;
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

async fn reconcile_apply(k: &Klusterlet, ctx: &Context) -> Result<Action, Error> {
    let api: Api<Klusterlet> = Api::all(ctx.client.clone());
    let now = Time(Timestamp::now());
    let status_err = |source| Error::Status {
        name: k.name_any(),
        source,
    };
    let v = match validate::validate(k) {
        Ok(v) => v,
        Err(e) => {
            let conds = status::blocked(
                "KlusterletInvalid",
                e.to_string(),
                k.metadata.generation,
                &now,
            );
            status::update(&api, k, conds).await.map_err(status_err)?;
            return Ok(Action::await_change());
        }
    };
    let observed = observe::observe(&ctx.client, &v).await;
    let managed = match &observed.managed {
        Ok(c) => c.clone(),
        Err(e) => {
            let conds = status::blocked(
                "ExternalManagedKubeConfigMissing",
                e.clone(),
                v.generation,
                &now,
            );
            status::update(&api, k, conds).await.map_err(status_err)?;
            return Ok(Action::requeue(RESYNC));
        }
    };
    let desired = build::build(&v, ctx.opts.in_process);
    let applied = apply::apply(&ctx.client, &managed, v.hosted, &desired).await;
    let inputs = status::Inputs {
        validated: &v,
        applied: &applied,
        bootstrap: &observed.bootstrap,
        hub_kubeconfig: &observed.hub_kubeconfig,
        in_process: ctx.opts.in_process,
    };
    status::update(&api, k, status::conditions(&inputs, &now))
        .await
        .map_err(status_err)?;
    Ok(Action::requeue(if applied.is_ok() {
        RESYNC
    } else {
        Duration::from_secs(5)
    }))
}

#[allow(clippy::needless_pass_by_value)] // the signature kube-runtime asks for
fn error_policy(k: Arc<Klusterlet>, err: &Error, _ctx: Arc<Context>) -> Action {
    tracing::warn!("Klusterlet {}: {err}", k.name_any());
    Action::requeue(Duration::from_secs(5))
}

/// Whether a Klusterlet reports Applied for its current generation.
#[must_use]
pub fn is_applied(k: &Klusterlet) -> bool {
    k.status.as_ref().is_some_and(|s| {
        conditions::find(&s.conditions, APPLIED).is_some_and(|c| {
            c.status == conditions::TRUE && c.observed_generation == k.metadata.generation
        })
    })
}

/// Waits until the Klusterlet `name` reports Applied, bounded by `timeout`.
pub async fn wait_applied(client: Client, name: &str, timeout: Duration) -> anyhow::Result<()> {
    let api: Api<Klusterlet> = Api::all(client);
    tokio::time::timeout(timeout, await_condition(api, name, |k: Option<&Klusterlet>| k.is_some_and(is_applied)))
        .await
        .map_err(|_| {
            crate::error::UserError::new(
                format!("the Klusterlet {name} did not report Applied within {timeout:?}"),
                "is the klusterlet operator running? check `kubectl get klusterlet -o yaml` and the open-cluster-management namespace",
            )
        })?
        .with_context(|| format!("watching Klusterlet {name}"))?;
    Ok(())
}
