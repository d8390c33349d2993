//! Add-on health by lease, as upstream's registration agent reports it: an add-on's agent renews
//! the Lease named after the add-on in its install namespace on the cluster it runs on (the managed
//! cluster, or a Hosted add-on's hosting cluster, where this agent runs too), and the
//! ManagedClusterAddOn's `Available` condition on the hub says whether it did within five lease
//! durations (`ManagedClusterAddOnLeaseUpdated`), stopped (`…LeaseUpdateStopped`) or never made
//! one (`…LeaseNotFound`, Unknown). Add-ons whose health check is `Customized` are left alone.
//! The hub is written only when the condition changes.
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use serde_json::json;

use super::AddonOptions;
use crate::api::addon::{HealthCheckMode, ManagedClusterAddOn};
use crate::api::conditions::{self, Condition};
use crate::runtime::Shutdown;

/// Upstream's add-on lease duration; a lease is stale after five of them.
const LEASE_SECONDS: i64 = 60;
const GRACE_SECONDS: i64 = 5 * LEASE_SECONDS;
/// How often the lease is read (upstream resyncs its lease controller as often).
const CHECK_EVERY: Duration = Duration::from_secs(30);
/// How often the add-on's stored copy is looked at for a change.
const LOOK_EVERY: Duration = Duration::from_secs(1);
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

/// Reports `addon`'s health from its lease in `leases` (its install namespace where its agent
/// runs) until `token` is cancelled, reading the add-on's current status from `addons` (the
/// watch the caller keeps).
pub async fn report(
    opts: AddonOptions,
    addon: String,
    leases: Api<Lease>,
    addons: Store<ManagedClusterAddOn>,
    token: Shutdown,
) {
    let hub: Api<ManagedClusterAddOn> = Api::namespaced(opts.hub.clone(), &opts.cluster);
    let key = ObjectRef::new(&addon).within(&opts.cluster);
    // The store is filled at the end of the first list: before that it knows no add-on.
    tokio::select! {
        () = token.cancelled() => return,
        _ = addons.wait_until_ready() => {}
    }
    // Checked every CHECK_EVERY, and as soon as the add-on changes (its health-check mode may
    // have become Lease): the store is looked at each second, which costs no request.
    let version = || {
        addons
            .get(&key)
            .and_then(|a| a.metadata.resource_version.clone())
    };
    let mut checked: Option<(Option<String>, tokio::time::Instant)> = None;
    while !token.is_cancelled() {
        let seen = version();
        let due = checked
            .as_ref()
            .is_none_or(|(v, at)| *v != seen || at.elapsed() >= CHECK_EVERY);
        if due {
            if let Err(e) = check(&leases, &hub, &addons, &key, &addon).await {
                tracing::debug!(cluster = %opts.cluster, %addon, "add-on health: {e}");
            }
            checked = Some((seen, tokio::time::Instant::now()));
        }
        tokio::select! {
            () = token.cancelled() => return,
            () = tokio::time::sleep(LOOK_EVERY) => {}
        }
    }
}

async fn check(
    leases: &Api<Lease>,
    hub: &Api<ManagedClusterAddOn>,
    addons: &Store<ManagedClusterAddOn>,
    key: &ObjectRef<ManagedClusterAddOn>,
    addon: &str,
) -> Result<(), kube::Error> {
    let Some(mca) = addons.get(key) else {
        return Ok(());
    };
    let status = mca.status.clone().unwrap_or_default();
    if status.health_check.and_then(|h| h.mode) == Some(HealthCheckMode::Customized) {
        return Ok(());
    }
    let lease = leases.get_opt(addon).await?;
    let mut wanted = status.conditions;
    if !conditions::set(
        &mut wanted,
        condition(addon, lease.as_ref(), Timestamp::now()),
    ) {
        return Ok(());
    }
    // Guarded by the resourceVersion read: a condition the hub set meanwhile is not overwritten.
    let patch = json!({
        "metadata": {"resourceVersion": mca.metadata.resource_version},
        "status": {"conditions": wanted},
    });
    hub.patch_status(addon, &PatchParams::default(), &Patch::Merge(patch))
        .await?;
    Ok(())
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
