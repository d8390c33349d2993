//! The operator's liveness Lease `open-cluster-management/klusterlet-operator`, renewed while the
//! loop runs (in this process or any other) and deleted when it stops, so `unjoin` can tell
//! whether anyone will remove the Klusterlet's finalizer ([`is_running`]).
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams};
use tokio::sync::watch;

use crate::klusterlet::{OPERATOR_NAME, OPERATOR_NAMESPACE};

/// Name of the lease.
pub const LEASE_NAME: &str = "klusterlet-operator";
/// How long a renewal counts.
const DURATION_SECONDS: i32 = 30;
/// How often it is renewed.
const RENEW_EVERY: Duration = Duration::from_secs(10);

fn holder() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!("{}-{}", host.trim(), std::process::id())
}

async fn renew(client: &Client, holder: &str) -> kube::Result<()> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some(LEASE_NAME.into()),
            namespace: Some(OPERATOR_NAMESPACE.into()),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(DURATION_SECONDS),
            renew_time: Some(MicroTime(Timestamp::now())),
            ..Default::default()
        }),
    };
    // A missing operator namespace (404) is not created here: `unjoin` may be removing it.
    let params = PatchParams::apply(crate::FIELD_MANAGER).force();
    leases
        .patch(LEASE_NAME, &params, &Patch::Apply(&lease))
        .await
        .map(|_| ())
}

/// Renews the lease until `stop` turns true, then deletes it.
pub async fn hold(client: Client, mut stop: watch::Receiver<bool>) {
    let holder = holder();
    loop {
        if let Err(e) = renew(&client, &holder).await {
            tracing::warn!("renewing lease {OPERATOR_NAMESPACE}/{LEASE_NAME}: {e}");
        }
        tokio::select! {
            () = tokio::time::sleep(RENEW_EVERY) => {}
            _ = stop.wait_for(|s| *s) => break,
        }
    }
    let leases: Api<Lease> = Api::namespaced(client, OPERATOR_NAMESPACE);
    if let Err(e) = leases.delete(LEASE_NAME, &DeleteParams::default()).await {
        tracing::debug!("deleting lease {LEASE_NAME}: {e}");
    }
}

/// Whether a klusterlet operator is running against this cluster: our lease is fresh, or the
/// operator Deployment has an available pod (an upstream image does not renew our lease).
pub async fn is_running(client: &Client) -> kube::Result<bool> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    if let Some(spec) = leases.get_opt(LEASE_NAME).await?.and_then(|l| l.spec)
        && let (Some(MicroTime(renewed)), Some(secs)) =
            (spec.renew_time, spec.lease_duration_seconds)
        && renewed
            .saturating_add(SignedDuration::from_secs(i64::from(secs)))
            .is_ok_and(|until| until > Timestamp::now())
    {
        return Ok(true);
    }
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    Ok(deployments
        .get_opt(OPERATOR_NAME)
        .await?
        .and_then(|d| d.status)
        .and_then(|s| s.available_replicas)
        .is_some_and(|n| n > 0))
}
