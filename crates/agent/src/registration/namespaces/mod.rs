//! The agent's managed namespaces, as upstream's registration agent keeps them (its status
//! controller's `managedNamespaceReconcile`): the hub lists in the ManagedCluster's
//! `status.managedNamespaces` the namespaces its cluster sets ask for
//! (the hub's `managed_namespaces`); the agent creates each on the managed cluster labelled
//! `clusterset.open-cluster-management.io/<hub hash>: "true"`, reports a `NamespaceAvailable`
//! condition on each entry, and relabels `"false"` (never deletes) a namespace no longer listed.
//!
//! A controller of the agent's own ManagedCluster on the hub (a watch of that one object, which
//! the agent may read) woken also by a watch of the namespaces labelled managed, so a namespace
//! deleted or relabelled by hand is put back at once. It runs beside the heartbeats of the
//! joined phase, with the hub client of the current certificate.
pub mod decide;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use ocm_api::cluster::ManagedCluster;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::{Retry, Runner};

/// The name this controller reports its metrics under.
const CONTROLLER: &str = "managed namespaces";
/// How often the namespaces are checked without a change (upstream's status controller resyncs).
const RESYNC: Duration = Duration::from_secs(600);
/// Retry after a failed write.
const RETRY: Duration = Duration::from_secs(5);

/// Why a pass over the managed namespaces failed (retried).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A namespace could not be created or labelled on the managed cluster.
    #[error("failed to apply namespace {namespace:?}")]
    Apply {
        /// The namespace.
        namespace: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// The conditions could not be written to the hub.
    #[error("updating status.managedNamespaces of ManagedCluster {cluster}")]
    Write {
        /// The cluster.
        cluster: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

impl ocm_runtime::controller::Failure for Error {
    fn retry(&self) -> Retry {
        Retry::After(RETRY)
    }

    /// A status write that lost a race (heartbeat, hub) is no news: it is decided again.
    fn expected(&self) -> bool {
        matches!(self, Error::Write { source: kube::Error::Api(s), .. } if s.code == 409)
    }
}

struct Context {
    hub: Client,
    managed: Client,
    /// `clusterset.open-cluster-management.io/<hub hash>`.
    label: String,
    /// The namespaces labelled [`decide::MANAGED`].
    labelled: Store<Namespace>,
}

/// Keeps cluster `cluster`'s managed namespaces for the hub at `hub_server` (as the bootstrap
/// kubeconfig names it) until dropped or `shutdown` is cancelled.
pub fn run(
    managed: Client,
    hub: Client,
    cluster: &str,
    hub_server: &str,
    shutdown: Shutdown,
) -> impl Future<Output = ()> + Send + 'static {
    let label = decide::label_for_hub(hub_server);
    let (labelled, writer) = reflector::store();
    let namespaces = watcher(
        Api::<Namespace>::all(managed.clone()),
        watcher::Config::default().labels(&format!("{label}={}", decide::MANAGED)),
    )
    .default_backoff()
    .reflect(writer)
    .touched_objects();
    let own = {
        let cluster = cluster.to_string();
        move |_| Some(ObjectRef::<ManagedCluster>::new(&cluster))
    };
    let controller = Controller::new(
        Api::<ManagedCluster>::all(hub.clone()),
        watcher::Config::default().fields(&format!("metadata.name={cluster}")),
    );
    Runner::new(CONTROLLER, controller.watches_stream(namespaces, own)).run(
        reconcile,
        Arc::new(Context {
            hub,
            managed,
            label,
            labelled,
        }),
        shutdown,
    )
}

async fn reconcile(cluster: Arc<ManagedCluster>, ctx: Arc<Context>) -> Result<Action, Error> {
    if ocm_runtime::ready::until_ready(&ctx.labelled)
        .await
        .is_err()
    {
        return Ok(Action::await_change());
    }
    let labelled: BTreeSet<String> = ctx
        .labelled
        .state()
        .iter()
        .filter(|ns| ns.labels().get(&ctx.label).map(String::as_str) == Some(decide::MANAGED))
        .map(|ns| ns.name_any())
        .collect();
    let plan = decide::plan(&cluster, &labelled);
    let api: Api<Namespace> = Api::all(ctx.managed.clone());
    let mut failed = BTreeMap::new();
    let mut first: Option<Error> = None;
    for name in &plan.apply {
        if let Err(source) = label_namespace(&api, name, &ctx.label, decide::MANAGED).await {
            failed.insert(name.clone(), source.to_string());
            first.get_or_insert(Error::Apply {
                namespace: name.clone(),
                source,
            });
        } else {
            tracing::info!(namespace = %name, "applied managed namespace");
        }
    }
    for name in &plan.release {
        match label_namespace(&api, name, &ctx.label, decide::UNMANAGED).await {
            Ok(()) => tracing::info!(namespace = %name, "set namespace as no longer managed"),
            Err(source) => {
                first.get_or_insert(Error::Apply {
                    namespace: name.clone(),
                    source,
                });
            }
        }
    }
    let current = decide::entries(&cluster);
    if cluster.metadata.deletion_timestamp.is_none() && !current.is_empty() {
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let wanted = decide::report(current, &failed, &now);
        if wanted != current {
            write(&ctx.hub, &cluster, &wanted).await?;
        }
    }
    match first {
        Some(e) => Err(e),
        None => Ok(Action::requeue(RESYNC)),
    }
}

/// Creates namespace `name` labelled `label: value`, or sets the label on the one there (its
/// other labels kept), as upstream's `ApplyNamespace`.
async fn label_namespace(
    api: &Api<Namespace>,
    name: &str,
    label: &str,
    value: &str,
) -> Result<(), kube::Error> {
    match api.get_opt(name).await? {
        Some(ns) if ns.labels().get(label).map(String::as_str) == Some(value) => return Ok(()),
        Some(_) => {}
        None if value == decide::MANAGED => {
            let ns = Namespace {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    labels: Some([(label.to_string(), value.to_string())].into()),
                    ..Default::default()
                },
                ..Default::default()
            };
            // Created meanwhile: label it.
            match api.create(&PostParams::default(), &ns).await {
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                other => return other.map(drop),
            }
        }
        // A namespace no longer managed that is gone: nothing to mark.
        None => return Ok(()),
    }
    let patch = json!({"metadata": {"labels": {label: value}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map(drop)
}

/// Writes the entries with their conditions, guarded by the resourceVersion: a list the hub
/// changed meanwhile is decided again from the newer cluster.
async fn write(
    hub: &Client,
    cluster: &ManagedCluster,
    wanted: &[ocm_api::cluster::ClusterSetManagedNamespace],
) -> Result<(), Error> {
    let patch = json!({
        "metadata": {"resourceVersion": cluster.metadata.resource_version},
        "status": {"managedNamespaces": wanted},
    });
    Api::<ManagedCluster>::all(hub.clone())
        .patch_status(
            &cluster.name_any(),
            &PatchParams::default(),
            &Patch::Merge(patch),
        )
        .await
        .map(drop)
        .map_err(|source| Error::Write {
            cluster: cluster.name_any(),
            source,
        })
}
