//! The reconcile loop: a kube-runtime Controller over the ClusterManager `cluster-manager`, also
//! woken by changes to the hub Deployments and Secrets it manages. Each reconcile runs the
//! pipeline of the module docs under the finalizer; `error_policy` waits for a spec change when
//! the spec is invalid and backs off exponentially on anything else.
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client};

use super::status::{self, Outcome};
use super::token_infrastructure::HostedHub;
use super::{
    InProcess, Options, apply, certs, cleanup, desired, hosted, observe, token_infrastructure,
    validate,
};
use crate::sync_labels;
use ocm_api::names::HUB_NAMESPACE;
use ocm_api::operator::{
    CLUSTER_MANAGER_FINALIZER, CLUSTER_MANAGER_NAME, ClusterManager, RelatedResourceMeta,
};
use ocm_runtime::apply::{Applier, MANAGED_BY_LABEL};
use ocm_runtime::controller::{Retry, Runner};
use ocm_runtime::error::UserError;
use ocm_runtime::{Shutdown, report};

/// Longest time between two reconciles (drift is repaired at least this often).
/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "cluster-manager operator";
const RESYNC: Duration = Duration::from_secs(300);
/// How long a shutdown waits for running reconciles before cutting them short.
const GRACE: Duration = Duration::from_secs(20);
/// Longest wait for a CRD to be Established.
const APPLY_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest wait for one object during cleanup.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the cluster failed.
    #[error(transparent)]
    Observe(#[from] observe::Error),
    /// The spec is unusable; nothing changes until it does.
    #[error("invalid ClusterManager: {0}")]
    Validate(#[from] validate::Error),
    /// Issuing certificates failed.
    #[error(transparent)]
    Certs(#[from] certs::Error),
    /// Applying the hub failed.
    #[error("applying the hub failed")]
    Apply(#[from] apply::Error),
    /// Writing the status failed.
    #[error(transparent)]
    Status(#[from] status::Error),
    /// Removing the hub failed.
    #[error(transparent)]
    Cleanup(#[from] cleanup::Error),
    /// A hosted hub's cluster could not be reached, or its side not removed.
    #[error("{0:#}")]
    Hosted(anyhow::Error),
    /// Adding or removing the finalizer failed (or a step under it).
    #[error(transparent)]
    Finalizer(Box<kube::runtime::finalizer::Error<Error>>),
}

impl Error {
    /// Whether only a spec change can fix this.
    fn is_invalid_spec(&self) -> bool {
        use kube::runtime::finalizer::Error as F;
        match self {
            Self::Validate(_) => true,
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
    applier: Applier,
    in_process: InProcess,
    sync_labels: bool,
    /// The hosted hub's cluster as last read, for the add-on token infrastructure there.
    hosted_hub: HostedHub,
}

/// Runs the controller until `shutdown` is cancelled. The caller holds the Lease
/// ([`super::LEASE_NAME`]) meanwhile, so only one process reconciles the hub.
pub async fn run(client: Client, opts: Options, shutdown: Shutdown) -> anyhow::Result<()> {
    require_crd(&client).await?;
    tracing::info!(?opts, "ClusterManager operator starting");
    let ctx = Arc::new(Context {
        applier: Applier::new(client.clone(), APPLY_TIMEOUT),
        client: client.clone(),
        in_process: opts.in_process,
        sync_labels: opts.sync_labels,
        hosted_hub: HostedHub::default(),
    });
    let managed = watcher::Config::default().labels(&format!(
        "{MANAGED_BY_LABEL}={}",
        ocm_runtime::FIELD_MANAGER
    ));
    let controller = Controller::new(
        Api::<ClusterManager>::all(client.clone()),
        watcher::Config::default().fields(&format!("metadata.name={CLUSTER_MANAGER_NAME}")),
    );
    // The hub pods' namespace: the hub namespace, or a hosted hub's on this (management)
    // cluster, whose pods' readiness changes the hub's Endpoints.
    let mut controller = controller;
    for namespace in [HUB_NAMESPACE, hosted::NAMESPACE] {
        controller = controller.watches(
            Api::<Deployment>::namespaced(client.clone(), namespace),
            managed.clone(),
            the_cm,
        );
    }
    // Secrets one name at a time, as upstream's operator: its role grants them only by name.
    for name in super::SECRETS {
        controller = controller.watches(
            Api::<Secret>::all(client.clone()),
            watcher::Config::default().fields(&format!("metadata.name={name}")),
            the_cm,
        );
    }
    let hub_pods = watcher::Config::default().labels(&format!("app={}", desired::hub::NAME));
    let controller = controller.watches(
        Api::<Pod>::namespaced(client.clone(), hosted::NAMESPACE),
        hub_pods,
        the_cm,
    );
    let hosted_hub = ctx.hosted_hub.clone();
    let operator = Runner::new(CONTROLLER, controller)
        .debounce(Duration::from_millis(200))
        .backoff(Duration::from_secs(1), Duration::from_secs(64))
        .grace(GRACE)
        .run(reconcile, ctx, shutdown.clone());
    let (tokens, ()) = tokio::join!(
        token_infrastructure::run(client, opts.in_process, &hosted_hub, shutdown),
        operator
    );
    tokens
}

/// Fails (rather than watching a kind nobody serves) when the ClusterManager CRD is missing.
async fn require_crd(client: &Client) -> anyhow::Result<()> {
    let name = ocm_api::operator_crd_cluster_manager()
        .metadata
        .name
        .unwrap_or_default();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    if crds.get_opt(&name).await?.is_none() {
        return Err(UserError::new(
            format!("the CRD {name} is not installed on this cluster"),
            "run `clusteradm init` first: it installs the CRD and the ClusterManager",
        )
        .into());
    }
    Ok(())
}

/// Every watched object maps to the one ClusterManager.
fn the_cm<T>(_: T) -> std::iter::Once<ObjectRef<ClusterManager>> {
    std::iter::once(ObjectRef::new(CLUSTER_MANAGER_NAME))
}

async fn reconcile(cm: Arc<ClusterManager>, ctx: Arc<Context>) -> Result<Action, Error> {
    let api: Api<ClusterManager> = Api::all(ctx.client.clone());
    let action = finalizer(&api, CLUSTER_MANAGER_FINALIZER, cm, |event| async {
        match event {
            Event::Apply(cm) => reconcile_hub(&cm, &ctx).await,
            Event::Cleanup(cm) => {
                tracing::info!("ClusterManager deleted: removing the hub");
                if is_hosted(&cm) {
                    hosted::remove(&ctx.client, CLEANUP_TIMEOUT)
                        .await
                        .map_err(Error::Hosted)?;
                } else {
                    cleanup::run(&ctx.client, CLEANUP_TIMEOUT).await?;
                }
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))?;
    Ok(action)
}

/// observe → validate → certs → build → apply → status.
async fn reconcile_hub(cm: &ClusterManager, ctx: &Context) -> Result<Action, Error> {
    let now = Timestamp::now();
    let validated = match validate::validate(cm).and_then(|v| hosted_here(v, ctx.in_process)) {
        Ok(v) => v,
        Err(e) => {
            let st = status::compute(cm, &Outcome::Invalid(&e), ctx.in_process, now);
            status::write(&ctx.client, CLUSTER_MANAGER_NAME, &st).await?;
            return Err(e.into());
        }
    };
    let pods_namespace = if validated.hosted.is_some() {
        hosted::NAMESPACE
    } else {
        HUB_NAMESPACE
    };
    let observed = observe::observe(&ctx.client, pods_namespace).await?;
    // One image for every component is ours: our hub Deployment runs them all, unless this
    // process runs the hub controllers itself.
    let in_process = if validated.single_image().is_some() && !ctx.in_process.registration {
        InProcess::HUB_DEPLOYMENT
    } else {
        ctx.in_process.with(validated.admission)
    };
    let certs = certs::plan(
        &observed.certs,
        &desired::serving_specs(in_process.hub_deployment),
        now.as_second(),
    )?;
    if !certs.issued.is_empty() {
        tracing::info!(issued = ?certs.issued, "issued webhook certificates");
    }
    let mut desired = desired::build(&validated, &certs, in_process);
    if let Some(source) = &observed.pull_secret {
        desired.pull_with(source);
    }
    desired.synced_labels = sync_labels::wanted(cm.metadata.labels.as_ref(), ctx.sync_labels);
    let (applied, related) = match apply_desired(ctx, &validated, desired).await {
        Ok(a) => a,
        Err((message, e)) => {
            let outcome = Outcome::ApplyFailed(&validated, message);
            status::write(
                &ctx.client,
                CLUSTER_MANAGER_NAME,
                &status::compute(cm, &outcome, in_process, now),
            )
            .await?;
            return Err(e);
        }
    };
    if applied.changed > 0 {
        tracing::info!(changed = applied.changed, "hub applied");
    }
    let outcome = Outcome::Applied(&validated, &applied, related);
    let st = status::compute(cm, &outcome, in_process, now);
    if cm.status.as_ref() != Some(&st) {
        status::write(&ctx.client, CLUSTER_MANAGER_NAME, &st).await?;
    }
    // Come back when the first certificate enters its renewal window, or to resync.
    let until_renewal = u64::try_from(certs.next_renewal - now.as_second()).unwrap_or(0);
    Ok(Action::requeue(
        Duration::from_secs(until_renewal.max(1)).min(RESYNC),
    ))
}

/// Hosted mode deploys the hub pods on this (management) cluster: a process that runs the hub
/// controllers itself (`init --in-process`) cannot host a hub.
fn hosted_here(
    v: validate::Validated,
    in_process: InProcess,
) -> Result<validate::Validated, validate::Error> {
    if v.hosted.is_some() && in_process.registration {
        return Err(validate::Error::Unsupported(
            "spec.deployOption.mode Hosted: this operator runs in-process with the hub controllers, and a hosted hub's controllers run as pods on the management cluster (run `clusteradm init --mode hosted` without --in-process, or use mode Default)".into(),
        ));
    }
    Ok(v)
}

/// Applies `desired`: to this cluster, or split between a hosted hub's cluster and this one.
/// Returns what was applied and the related resources, or the message for the Applied
/// condition with the error.
async fn apply_desired(
    ctx: &Context,
    v: &validate::Validated,
    desired: desired::Desired,
) -> Result<(apply::Applied, Vec<RelatedResourceMeta>), (String, Error)> {
    let Some(webhook) = &v.hosted else {
        return match apply::apply(&ctx.applier, &desired).await {
            Ok(applied) => Ok((applied, desired.related())),
            Err(e) => Err((report::chain(&e), e.into())),
        };
    };
    let failed = |message: String| (message.clone(), Error::Hosted(anyhow::Error::msg(message)));
    let hub = hosted::hub(&ctx.client).await.map_err(failed)?;
    ctx.hosted_hub.read(&hub);
    let ips = hosted::ready_pod_ips(&ctx.client)
        .await
        .map_err(|e| failed(format!("listing the hub pods: {e}")))?;
    let layout = desired::hosted::split(desired, webhook, &ips);
    let mut related = layout.hub.related();
    related.extend(layout.management.related());
    let applied = hosted::apply(&hub, (&ctx.client, &ctx.applier), &layout, APPLY_TIMEOUT)
        .await
        .map_err(failed)?;
    Ok((applied, related))
}

/// Whether `cm` is a hosted hub (read without validating: a deleted one is removed as it was).
fn is_hosted(cm: &ClusterManager) -> bool {
    cm.spec
        .deploy_option
        .as_ref()
        .is_some_and(|d| d.mode == ocm_api::operator::HubInstallMode::Hosted)
}
