//! The heartbeat: Lease `managed-cluster-lease` in the cluster namespace on the hub, its
//! `renewTime` moved to now on every beat (one merge patch; created when missing).
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::json;

use super::Error;
use crate::api::cluster::CLUSTER_LEASE_NAME;

/// The merge patch of one renewal.
#[must_use]
pub fn renewal(now: &MicroTime, duration_seconds: i32) -> serde_json::Value {
    json!({"spec": {"renewTime": now, "leaseDurationSeconds": duration_seconds}})
}

/// Renews the lease of `cluster` (creating it when missing).
pub async fn renew(hub: &kube::Client, cluster: &str, duration_seconds: i32) -> Result<(), Error> {
    let api: Api<Lease> = Api::namespaced(hub.clone(), cluster);
    let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
    let what = || format!("renewing lease {cluster}/{CLUSTER_LEASE_NAME} on the hub");
    match api
        .patch(
            CLUSTER_LEASE_NAME,
            &PatchParams::default(),
            &Patch::Merge(renewal(&now, duration_seconds)),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(CLUSTER_LEASE_NAME.into()),
                    namespace: Some(cluster.into()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    renew_time: Some(now),
                    lease_duration_seconds: Some(duration_seconds),
                    ..Default::default()
                }),
            };
            match api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(()),
                // Created meanwhile by someone else: the next beat renews it.
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
                Err(e) => Err(Error::kube(what(), e)),
            }
        }
        Err(e) => Err(Error::kube(what(), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renewal_sets_renew_time_with_microseconds() {
        let t: k8s_openapi::jiff::Timestamp = "2026-01-02T03:04:05.123456Z".parse().unwrap();
        let patch = renewal(&MicroTime(t), 5);
        assert_eq!(
            patch,
            json!({"spec": {"renewTime": "2026-01-02T03:04:05.123456Z", "leaseDurationSeconds": 5}})
        );
    }
}
