//! Liveness of the operator: while it runs it renews the Lease `cluster-manager-operator` in the
//! operator namespace every 10 s (duration 30 s) and clears its holder on the way out. `clusteradm
//! clean` reads it ([`is_running`]) to decide whether an operator will act on the
//! ClusterManager's finalizer or whether it must clean up itself.
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};

use crate::hub::OPERATOR_NAMESPACE;

/// Name of the liveness Lease.
pub const LEASE_NAME: &str = "cluster-manager-operator";
/// How often the Lease is renewed.
pub const RENEW_EVERY: Duration = Duration::from_secs(10);
/// How long a renewal counts.
pub const DURATION_SECS: i32 = 30;

/// This process, as a Lease holder: `<hostname>_<pid>`.
#[must_use]
pub fn identity() -> String {
    let host =
        hostname::get().map_or_else(|_| "unknown".into(), |h| h.to_string_lossy().into_owned());
    format!("{host}_{}", std::process::id())
}

/// Whether `lease` was renewed by some holder within its duration, at `now`.
#[must_use]
pub fn fresh(lease: &Lease, now: Timestamp) -> bool {
    let Some(spec) = &lease.spec else {
        return false;
    };
    if spec
        .holder_identity
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        return false;
    }
    let Some(MicroTime(renewed)) = spec.renew_time else {
        return false;
    };
    let duration = i64::from(spec.lease_duration_seconds.unwrap_or(DURATION_SECS));
    now.as_second() < renewed.as_second() + duration
}

/// Whether a ClusterManager operator is running against this hub (its Lease is fresh).
pub async fn is_running(client: &Client) -> anyhow::Result<bool> {
    let api: Api<Lease> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    let lease = api.get_opt(LEASE_NAME).await.map_err(|e| {
        anyhow::Error::new(e).context(format!("reading Lease {OPERATOR_NAMESPACE}/{LEASE_NAME}"))
    })?;
    Ok(lease.is_some_and(|l| fresh(&l, Timestamp::now())))
}

/// Renews the Lease as `holder` until `stop` completes, then releases it (if still ours).
/// Failures are logged and retried on the next tick: liveness must not stop the operator.
pub async fn hold(client: Client, holder: String, stop: tokio::sync::oneshot::Receiver<()>) {
    let api: Api<Lease> = Api::namespaced(client, OPERATOR_NAMESPACE);
    let acquired = MicroTime(Timestamp::now());
    let mut ticks = tokio::time::interval(RENEW_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = ticks.tick() => {
                if let Err(e) = renew(&api, &holder, &acquired).await {
                    tracing::warn!("renewing Lease {OPERATOR_NAMESPACE}/{LEASE_NAME}: {e}");
                }
            }
        }
    }
    if let Err(e) = release(&api, &holder).await {
        tracing::warn!("releasing Lease {OPERATOR_NAMESPACE}/{LEASE_NAME}: {e}");
    }
}

async fn renew(api: &Api<Lease>, holder: &str, acquired: &MicroTime) -> Result<(), kube::Error> {
    let body = serde_json::json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": LEASE_NAME, "namespace": OPERATOR_NAMESPACE},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": DURATION_SECS,
            "acquireTime": acquired,
            "renewTime": MicroTime(Timestamp::now()),
        },
    });
    api.patch(
        LEASE_NAME,
        &PatchParams::apply(crate::FIELD_MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
    .map(|_| ())
}

/// Clears the holder (so [`is_running`] is false at once), unless another operator holds it now.
/// A patch rather than a delete: the operator's RBAC needs no `delete` on leases.
async fn release(api: &Api<Lease>, holder: &str) -> Result<(), kube::Error> {
    let Some(lease) = api.get_opt(LEASE_NAME).await? else {
        return Ok(());
    };
    if lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        != Some(holder)
    {
        return Ok(()); // another operator took over: its Lease, not ours
    }
    // The resourceVersion makes this fail (409) if someone renewed in between.
    let patch = serde_json::json!({
        "metadata": {"resourceVersion": lease.metadata.resource_version},
        "spec": {"holderIdentity": null, "renewTime": null},
    });
    match api
        .patch(LEASE_NAME, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::LeaseSpec;

    use super::*;

    fn lease(holder: Option<&str>, renewed: i64) -> Lease {
        Lease {
            spec: Some(LeaseSpec {
                holder_identity: holder.map(Into::into),
                lease_duration_seconds: Some(DURATION_SECS),
                renew_time: Some(MicroTime(Timestamp::from_second(renewed).unwrap())),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_lease_is_fresh_within_its_duration_and_only_with_a_holder() {
        let now = Timestamp::from_second(1_000).unwrap();
        assert!(fresh(&lease(Some("h_1"), 990), now));
        assert!(!fresh(&lease(Some("h_1"), 960), now));
        assert!(!fresh(&lease(None, 999), now));
        assert!(!fresh(&Lease::default(), now));
    }

    #[test]
    fn identity_names_host_and_pid() {
        assert!(identity().ends_with(&format!("_{}", std::process::id())));
    }
}
