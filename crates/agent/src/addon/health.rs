//! Add-on health by lease, as upstream's registration agent reports it: an add-on's agent renews
//! the Lease named after the add-on in its install namespace on the cluster it runs on (the managed
//! cluster, or a Hosted add-on's hosting cluster, where this agent runs too), and the
//! ManagedClusterAddOn's `Available` condition on the hub says whether it did within five lease
//! durations (`ManagedClusterAddOnLeaseUpdated`), stopped (`…LeaseUpdateStopped`) or never made
//! one (`…LeaseNotFound`, Unknown). Add-ons whose health check is `Customized` are left alone.
//! The hub is written only when the condition changes.
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use serde_json::json;

use super::AddonOptions;
use ocm_api::addon::{HealthCheckMode, ManagedClusterAddOn};
use ocm_api::conditions::{self, Condition};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;

/// Upstream's add-on lease duration; a lease is stale after five of them.
const LEASE_SECONDS: i64 = 60;
const GRACE_SECONDS: i64 = 5 * LEASE_SECONDS;
/// How often the lease is read (upstream resyncs its lease controller as often).
const CHECK_EVERY: Duration = Duration::from_secs(30);
/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on health agent";
/// The condition this reports.
pub const AVAILABLE: &str = "Available";

/// The `Available` condition for `addon`, given its lease (if any) at `now`.
#[must_use]
pub fn condition(addon: &str, lease: Option<&Lease>, now: Timestamp) -> Condition {
    let at = Time(now);
    let Some(lease) = lease else {
        return conditions::new(
            AVAILABLE,
            "Unknown",
            "ManagedClusterAddOnLeaseNotFound",
            format!("The status of {addon} add-on is unknown."),
            &at,
        );
    };
    let renewed = lease
        .spec
        .as_ref()
        .and_then(|s| s.renew_time.as_ref())
        .map(|t| t.0.as_second());
    if renewed.is_some_and(|r| now.as_second() < r + GRACE_SECONDS) {
        conditions::new(
            AVAILABLE,
            "True",
            "ManagedClusterAddOnLeaseUpdated",
            format!("{addon} add-on is available."),
            &at,
        )
    } else {
        conditions::new(
            AVAILABLE,
            "False",
            "ManagedClusterAddOnLeaseUpdateStopped",
            format!("{addon} add-on is not available."),
            &at,
        )
    }
}

/// The controller reporting every add-on's health from `informers`' add-ons: each add-on is
/// looked at when it changes (its health-check mode may have become Lease) and every
/// `CHECK_EVERY`, until `shutdown` is cancelled.
pub fn run_with(
    opts: &AddonOptions,
    informers: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = ()> + Send + 'static {
    let (addons, changes) = informers.feed::<ManagedClusterAddOn>();
    Runner::new(CONTROLLER, Controller::for_shared_stream(changes, addons)).run(
        reconcile,
        Arc::new(opts.clone()),
        shutdown,
    )
}

async fn reconcile(
    mca: Arc<ManagedClusterAddOn>,
    opts: Arc<AddonOptions>,
) -> Result<Action, kube::Error> {
    let status = mca.status.clone().unwrap_or_default();
    if status.health_check.and_then(|h| h.mode) == Some(HealthCheckMode::Customized) {
        return Ok(Action::await_change());
    }
    let addon = mca.name_any();
    // Where the add-on's agent runs, its Lease is.
    let leases: Api<Lease> = Api::namespaced(
        super::where_agent_runs(&opts, mca.hosting_cluster().is_some()).clone(),
        &mca.install_namespace(),
    );
    let lease = leases.get_opt(&addon).await?;
    let mut wanted = status.conditions;
    if conditions::set(
        &mut wanted,
        condition(&addon, lease.as_ref(), Timestamp::now()),
    ) {
        // Guarded by the resourceVersion read: a condition the hub set meanwhile is not
        // overwritten; the change that made the conflict wakes the add-on again.
        let patch = json!({
            "metadata": {"resourceVersion": mca.metadata.resource_version},
            "status": {"conditions": wanted},
        });
        match Api::<ManagedClusterAddOn>::namespaced(opts.hub.clone(), &opts.cluster)
            .patch_status(&addon, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 || e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Action::requeue(CHECK_EVERY))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

    fn renewed(seconds_ago: i64) -> Lease {
        let at = Timestamp::from_second(Timestamp::now().as_second() - seconds_ago).unwrap();
        Lease {
            spec: Some(LeaseSpec {
                renew_time: Some(MicroTime(at)),
                ..LeaseSpec::default()
            }),
            ..Lease::default()
        }
    }

    #[test]
    fn a_lease_renewed_within_five_durations_is_available() {
        let now = Timestamp::now();
        let c = condition("hello", Some(&renewed(60)), now);
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", "ManagedClusterAddOnLeaseUpdated")
        );
        let c = condition("hello", Some(&renewed(301)), now);
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "ManagedClusterAddOnLeaseUpdateStopped")
        );
        let c = condition("hello", None, now);
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("Unknown", "ManagedClusterAddOnLeaseNotFound")
        );
        assert_eq!(c.message, "The status of hello add-on is unknown.");
    }
}
