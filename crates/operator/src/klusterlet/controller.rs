//! The reconcile loop: a kube-runtime Controller over Klusterlets, also woken by changes to the
//! Deployments and Secrets labelled with a Klusterlet's name. Each reconcile runs the pipeline of
//! the module docs under the finalizer; `error_policy` waits for a spec change when the spec is
//! invalid and backs off on anything else.
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Client, ResourceExt as _};

use super::desired::KLUSTERLET_LABEL;
use super::{
    Options, apply, cleanup, desired, hosted_finalizer, managed_kubeconfig, observe, status,
    validate,
};
use ocm_api::names::EXTERNAL_MANAGED_SECRET;
use ocm_api::operator::{KLUSTERLET_FINALIZER, Klusterlet};
use ocm_runtime::Shutdown;
use ocm_runtime::apply::Applier;
use ocm_runtime::controller::{Retry, Runner};

/// How often a healthy Klusterlet is looked at again (hub checks, as upstream's 30 s).
/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "klusterlet operator";
const RESYNC: Duration = Duration::from_secs(30);
/// How soon a Klusterlet whose objects did not all apply is tried again.
const RETRY: Duration = Duration::from_secs(5);
/// How long a CRD may take to become Established.
const CRD_TIMEOUT: Duration = Duration::from_secs(60);

/// Why one reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is unusable; nothing changes until it does.
    #[error("invalid Klusterlet {name}: {source}")]
    Invalid {
        /// The Klusterlet.
        name: String,
        /// What is wrong.
        #[source]
        source: validate::Error,
    },
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
    /// Adding the hosted finalizer (the managed cluster was reached) failed.
    #[error("marking Klusterlet {name} as applied on its managed cluster failed")]
    HostedFinalizer {
        /// The Klusterlet.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Adding or removing the finalizer failed (or a step under it).
    #[error(transparent)]
    Finalizer(#[from] Box<kube::runtime::finalizer::Error<Error>>),
}

impl Error {
    /// Whether only a spec change can fix this.
    fn is_invalid_spec(&self) -> bool {
        use kube::runtime::finalizer::Error as F;
        match self {
            Self::Invalid { .. } => true,
            Self::Finalizer(f) => {
                matches!(&**f, F::ApplyFailed(e) | F::CleanupFailed(e) if e.is_invalid_spec())
            }
            _ => false,
        }
    }
}

impl ocm_runtime::controller::Failure for Error {
    fn retry(&self) -> Retry {
        if self.is_invalid_spec() {
            Retry::OnChange
        } else {
            Retry::Backoff
        }
    }
}

/// What every reconcile shares.
struct Context {
    client: Client,
    /// The applier of the operator's own cluster, kept so discovery runs once, not per reconcile.
    applier: Applier,
    opts: Options,
}

/// Runs the loop against `client` until `shutdown` is cancelled. The caller holds the Lease
/// ([`super::LEASE_NAME`]) meanwhile, so only one process reconciles the Klusterlets.
pub async fn run(client: Client, opts: Options, shutdown: Shutdown) -> anyhow::Result<()> {
    let klusterlets: Api<Klusterlet> = Api::all(client.clone());
    klusterlets
        .list(&ListParams::default().limit(1))
        .await
        .context("cannot list Klusterlets (is the Klusterlet CRD installed? `clusteradm join` installs it)")?;
    let by_label = |meta: &kube::api::ObjectMeta| {
        meta.labels
            .as_ref()
            .and_then(|l| l.get(KLUSTERLET_LABEL))
            .map(|k| ObjectRef::<Klusterlet>::new(k))
    };
    let labelled = || watcher::Config::default().labels(KLUSTERLET_LABEL);
    let ctx = Arc::new(Context {
        applier: Applier::new(client.clone(), CRD_TIMEOUT),
        client: client.clone(),
        opts,
    });
    let mut controller = Controller::new(klusterlets, watcher::Config::default()).watches(
        Api::<Deployment>::all(client.clone()),
        labelled(),
        move |d| by_label(&d.metadata),
    );
    // Secrets one name at a time, as upstream's operator: its role grants them only by name.
    // Those it made wake their Klusterlet by label; the user's managed-cluster kubeconfig of the
    // Hosted modes, in the agents' namespace named after the Klusterlet, by that namespace
    // (upstream's queue key for it).
    for name in super::SECRETS {
        controller = controller.watches(
            Api::<Secret>::all(client.clone()),
            watcher::Config::default().fields(&format!("metadata.name={name}")),
            move |s| {
                by_label(&s.metadata).or_else(|| {
                    (s.metadata.name.as_deref() == Some(EXTERNAL_MANAGED_SECRET))
                        .then_some(s.metadata.namespace)
                        .flatten()
                        .map(|ns| ObjectRef::<Klusterlet>::new(&ns))
                })
            },
        );
    }
    Runner::new(CONTROLLER, controller)
        .run(reconcile, ctx, shutdown)
        .await;
    Ok(())
}

async fn reconcile(k: Arc<Klusterlet>, ctx: Arc<Context>) -> Result<Action, Error> {
    let api: Api<Klusterlet> = Api::all(ctx.client.clone());
    // An earlier version of this operator gave Hosted Klusterlets the hosted finalizer alone.
    let has = |f: &str| k.finalizers().iter().any(|x| x == f);
    if k.metadata.deletion_timestamp.is_some()
        && !has(KLUSTERLET_FINALIZER)
        && hosted_finalizer::present(&k)
    {
        remove(&k, &ctx).await?;
        return Ok(Action::await_change());
    }
    finalizer(&api, KLUSTERLET_FINALIZER, k, |event| async {
        match event {
            Event::Apply(k) => reconcile_apply(&k, &ctx).await,
            Event::Cleanup(k) => {
                remove(&k, &ctx).await?;
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

/// Stops the Klusterlet's in-process agents and removes what it produced, then its hosted
/// finalizer (the main one is the finalizer helper's).
async fn remove(k: &Klusterlet, ctx: &Context) -> Result<(), Error> {
    let cleanup_err = |message: String| Error::Cleanup {
        name: k.name_any(),
        message,
    };
    if let Some(host) = &ctx.opts.agents {
        host.stop(&k.name_any());
    }
    cleanup::remove_objects(
        &ctx.client,
        &k.name_any(),
        Some(k),
        ctx.opts.cleanup_timeout,
    )
    .await
    .map_err(|e| cleanup_err(format!("{e:#}")))?;
    hosted_finalizer::remove(&Api::all(ctx.client.clone()), k)
        .await
        .map_err(|e| cleanup_err(format!("removing the hosted finalizer: {e}")))
}

/// The agents are applied in the current namespace: a former one (spec.namespace changed) goes.
/// In Hosted modes that is the managed cluster's (the agents' namespace here is named after the
/// Klusterlet, which does not change); both are kept, for a managed cluster that is also the
/// management cluster (upstream's e2e suite runs so).
async fn remove_former_namespace(
    ctx: &Context,
    v: &validate::Validated,
    managed: &Client,
    k: &Klusterlet,
) -> Result<(), Error> {
    let cluster = if v.hosted { managed } else { &ctx.client };
    let kept = [v.managed_namespace.as_str(), v.agent_namespace.as_str()];
    cleanup::remove_stale_namespaces(cluster, v, &kept)
        .await
        .map_err(|e| Error::Cleanup {
            name: k.name_any(),
            message: format!("removing former agent namespaces: {e}"),
        })
}

/// Once the desired objects are applied: a former agent namespace, and a former layout's agent
/// Deployments and ServiceAccounts, go.
async fn remove_former(
    ctx: &Context,
    v: &validate::Validated,
    managed: &Client,
    k: &Klusterlet,
    desired: &desired::Desired,
) -> Result<(), Error> {
    remove_former_namespace(ctx, v, managed, k).await?;
    match super::layout::remove_former_agents(&ctx.client, v, desired).await {
        Ok(0) => Ok(()),
        Ok(n) => {
            tracing::info!(klusterlet = %v.name, n, "removed a former layout's agents");
            Ok(())
        }
        Err(e) => Err(Error::Cleanup {
            name: k.name_any(),
            message: format!("removing a former layout's agents: {e}"),
        }),
    }
}

/// observe → validate → build → apply → status.
/// Hosted modes: each deployed agent's own kubeconfig for the managed cluster, made once its
/// ServiceAccount there exists (applied just before).
async fn hosted_kubeconfigs(
    ctx: &Context,
    managed: &Client,
    v: &validate::Validated,
    cluster: &managed_kubeconfig::ManagedCluster,
) -> Result<(), String> {
    let deployed = desired::service_account::deployed_agents(v, ctx.opts.in_process);
    let written = managed_kubeconfig::sync(&ctx.client, managed, v, &deployed, cluster).await?;
    if written > 0 {
        tracing::info!(klusterlet = %v.name, written, "wrote the hosted agents' kubeconfigs");
    }
    Ok(())
}

async fn reconcile_apply(k: &Klusterlet, ctx: &Context) -> Result<Action, Error> {
    let api: Api<Klusterlet> = Api::all(ctx.client.clone());
    let now = Time(Timestamp::now());
    let status_err = |source| Error::Status {
        name: k.name_any(),
        source,
    };
    let v = match validate::validate(k).and_then(|v| validate::served_here(v, ctx.opts.in_process))
    {
        Ok(v) => v,
        Err(e) => {
            let conds = status::blocked(
                "KlusterletInvalid",
                e.to_string(),
                k.metadata.generation,
                &now,
            );
            status::update(&api, k, conds).await.map_err(status_err)?;
            return Err(Error::Invalid {
                name: k.name_any(),
                source: e,
            });
        }
    };
    let observed = observe::observe(&ctx.client, &v).await;
    // Hosted modes: upstream's ReadyToApply says whether the managed cluster's clients could be
    // built, with the other conditions.
    let ready = v.hosted.then(|| {
        let failure = observed.managed.as_ref().err().map(String::as_str);
        status::ready_to_apply(failure, v.generation, &now)
    });
    let managed = match &observed.managed {
        Ok(c) => c.clone(),
        Err(e) => {
            let mut conds = status::blocked(
                "ExternalManagedKubeConfigMissing",
                e.clone(),
                v.generation,
                &now,
            );
            conds.extend(ready);
            status::update(&api, k, conds).await.map_err(status_err)?;
            return Ok(Action::requeue(RESYNC));
        }
    };
    if v.hosted {
        hosted_finalizer::add(&api, k)
            .await
            .map_err(|source| Error::HostedFinalizer {
                name: k.name_any(),
                source,
            })?;
    }
    let mut desired = desired::build(&v, ctx.opts.in_process);
    if let Some(source) = &observed.pull_secret {
        desired.pull_with(&v, source);
    }
    desired.synced_labels =
        crate::sync_labels::wanted(k.metadata.labels.as_ref(), ctx.opts.sync_labels);
    // Agents that run here have no Deployment: they start with their Klusterlet. Hosted mode's
    // agents act on another cluster, which in-process agents do not.
    if let (Some(host), false, true) =
        (&ctx.opts.agents, v.hosted, ctx.opts.in_process.registration)
    {
        let served = super::Served {
            cluster: v.cluster_name.clone(),
            namespace: v.agent_namespace.clone(),
            gates: v.agent_gates(),
            hubs: v.hubs.clone(),
            work: v.work_settings(),
            registration: v.registration.clone(),
        };
        host.ensure(&v.name, &served);
    }
    // Hosted modes reach another cluster, whose client comes from a Secret that may change: its
    // applier is built for the reconcile. Otherwise the kept one serves.
    let hosted_applier = v.hosted.then(|| Applier::new(managed.clone(), CRD_TIMEOUT));
    let targets = apply::Targets {
        management: &ctx.applier,
        managed: hosted_applier.as_ref(),
    };
    let mut applied = apply::apply(&targets, &desired).await;
    if let (Ok(_), Some(cluster)) = (&applied, &observed.managed_cluster) {
        applied = hosted_kubeconfigs(ctx, &managed, &v, cluster)
            .await
            .and(applied);
    }
    let inputs = status::Inputs {
        validated: &v,
        applied: &applied,
        bootstrap: &observed.bootstrap,
        hub_kubeconfig: &observed.hub_kubeconfig,
        in_process: ctx.opts.in_process,
    };
    let mut conds = status::conditions(&inputs, &now);
    conds.extend(ready);
    status::update(&api, k, conds).await.map_err(status_err)?;
    if applied.is_ok() {
        remove_former(ctx, &v, &managed, k, &desired).await?;
    }
    Ok(Action::requeue(if applied.is_ok() {
        RESYNC
    } else {
        RETRY
    }))
}
