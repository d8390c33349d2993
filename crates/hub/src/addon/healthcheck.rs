//! Add-on health from the cluster's, as upstream's ManagedClusterAddonHealthCheckController
//! (registration-controller) judges it: the cluster's agent reports its add-ons' health, so when
//! the cluster's `ManagedClusterConditionAvailable` is Unknown (its agent stopped renewing the
//! cluster lease) every ManagedClusterAddOn of the cluster gets `Available` Unknown, with the
//! cluster condition's reason and message. True or False says the agent works: it is left to the
//! agent then. Woken by the cluster only, as upstream.
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::Store;
use kube::{Client, ResourceExt as _};
use serde_json::json;

use ocm_api::addon::ManagedClusterAddOn;
use ocm_api::cluster::{MANAGED_CLUSTER_CONDITION_AVAILABLE, ManagedCluster};
use ocm_api::conditions::{self, Condition, UNKNOWN};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on health check";
/// How soon an add-on that changed while being written is written again.
const RETRY: Duration = Duration::from_secs(1);

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the hub.
    #[error("marking add-on {cluster}/{addon} unknown: {source}")]
    Kube {
        /// The add-on's cluster.
        cluster: String,
        /// The add-on.
        addon: String,
        /// What the hub said.
        #[source]
        source: kube::Error,
    },
}

impl ocm_runtime::controller::Failure for Error {}

/// The `Available` condition every add-on of `cluster` gets, at `now`: `None` unless the
/// cluster's availability is Unknown.
#[must_use]
pub fn unknown(cluster: &ManagedCluster, now: &Time) -> Option<Condition> {
    let status = cluster.status.as_ref()?;
    let available = conditions::find(&status.conditions, MANAGED_CLUSTER_CONDITION_AVAILABLE)?;
    (available.status == UNKNOWN).then(|| {
        conditions::new(
            conditions::AVAILABLE,
            UNKNOWN,
            &available.reason,
            available.message.clone(),
            now,
        )
    })
}

/// `addon`'s conditions with `wanted` set; `None` when it already says so.
#[must_use]
pub fn updated(addon: &ManagedClusterAddOn, wanted: Condition) -> Option<Vec<Condition>> {
    let mut conditions = addon
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    conditions::set(&mut conditions, wanted).then_some(conditions)
}

struct Context {
    client: Client,
    addons: Store<ManagedClusterAddOn>,
}

/// The controller over `informers`' clusters and add-ons, running until `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let (clusters, cluster_events) = informers.feed::<ManagedCluster>();
    let addons = informers.store::<ManagedClusterAddOn>();
    let ctx = Arc::new(Context {
        client: hub,
        addons: addons.clone(),
    });
    let controller = Controller::for_shared_stream(cluster_events, clusters.clone());
    // Decide only from complete stores.
    let run = Runner::new(CONTROLLER, controller)
        .after(&clusters)
        .after(&addons)
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

async fn reconcile(cluster: Arc<ManagedCluster>, ctx: Arc<Context>) -> Result<Action, Error> {
    let Some(wanted) = unknown(&cluster, &Time(Timestamp::now())) else {
        return Ok(Action::await_change());
    };
    let name = cluster.name_any();
    let api = Api::<ManagedClusterAddOn>::namespaced(ctx.client.clone(), &name);
    let mut again = false;
    for addon in ctx.addons.state() {
        if addon.namespace().as_deref() != Some(name.as_str()) {
            continue;
        }
        let Some(conditions) = updated(&addon, wanted.clone()) else {
            continue;
        };
        // Guarded by the version read, so a condition set meanwhile is not lost; an add-on's
        // change does not wake this controller, so a conflict is retried here.
        let body = json!({
            "metadata": {"resourceVersion": addon.metadata.resource_version},
            "status": {"conditions": conditions},
        });
        match api
            .patch_status(
                &addon.name_any(),
                &PatchParams::default(),
                &Patch::Merge(body),
            )
            .await
        {
            Ok(_) => tracing::info!(cluster = %name, addon = %addon.name_any(),
                "cluster availability unknown: add-on availability unknown"),
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(kube::Error::Api(e)) if e.code == 409 => again = true,
            Err(source) => {
                return Err(Error::Kube {
                    cluster: name,
                    addon: addon.name_any(),
                    source,
                });
            }
        }
    }
    Ok(if again {
        Action::requeue(RETRY)
    } else {
        Action::await_change()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Time {
        serde_json::from_value(json!(s)).unwrap()
    }

    fn cluster(status: &str) -> ManagedCluster {
        serde_json::from_value(json!({
            "metadata": {"name": "c1"},
            "spec": {},
            "status": {"conditions": [{"type": MANAGED_CLUSTER_CONDITION_AVAILABLE,
                "status": status, "reason": "ManagedClusterLeaseUpdateStopped",
                "message": "Registration agent stopped updating its lease.",
                "lastTransitionTime": "2025-01-01T00:00:00Z"}]},
        }))
        .unwrap()
    }

    fn addon(available: &str) -> ManagedClusterAddOn {
        serde_json::from_value(json!({
            "metadata": {"name": "a", "namespace": "c1"},
            "spec": {},
            "status": {"conditions": [
                {"type": "Available", "status": available, "reason": "ManagedClusterAddOnLeaseUpdated",
                 "message": "a add-on is available.", "lastTransitionTime": "2025-01-01T00:00:00Z"},
                {"type": "Other", "status": "True", "reason": "r", "message": "",
                 "lastTransitionTime": "2025-01-01T00:00:00Z"}]},
        }))
        .unwrap()
    }

    #[test]
    fn an_unknown_cluster_makes_its_add_ons_unknown_with_its_reason() {
        let now = at("2025-06-01T00:00:00Z");
        let wanted = unknown(&cluster("Unknown"), &now).unwrap();
        let got = updated(&addon("True"), wanted.clone()).unwrap();
        let available = conditions::find(&got, "Available").unwrap();
        assert_eq!(
            (
                available.status.as_str(),
                available.reason.as_str(),
                available.message.as_str()
            ),
            (
                "Unknown",
                "ManagedClusterLeaseUpdateStopped",
                "Registration agent stopped updating its lease."
            )
        );
        assert_eq!(available.last_transition_time, now);
        assert!(conditions::find(&got, "Other").is_some(), "others kept");
        let mut already = addon("True");
        already.status.as_mut().unwrap().conditions = got;
        assert_eq!(updated(&already, wanted), None, "written once");
    }

    #[test]
    fn a_true_or_false_or_silent_cluster_leaves_add_ons_to_its_agent() {
        let now = at("2025-06-01T00:00:00Z");
        assert!(unknown(&cluster("True"), &now).is_none());
        assert!(unknown(&cluster("False"), &now).is_none());
        let mut silent = cluster("True");
        silent.status = None;
        assert!(unknown(&silent, &now).is_none());
    }
}
