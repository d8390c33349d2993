//! Light agents, for fleets larger than real agents fit on this machine: a process may hold
//! 20,000 file descriptors (the hard limit here, which root cannot raise in this container), and
//! kube-rs speaks HTTP/1.1, one connection per watch, so 10,000 clusters' agents (two or three
//! hub watches each) need more connections than either this process or the hub API server may
//! open.
//!
//! Each light cluster does on the hub what its agents do there, over a few shared clients
//! instead of connections of its own: with the bootstrap token it creates its ManagedCluster and
//! a CSR for the agent's identity (labelled, subject and signer as the real agent's); once
//! accepted it reports `ManagedClusterJoined` and `ManagedClusterConditionAvailable` and renews
//! its `managed-cluster-lease` once per lease duration; and every ManifestWork sent to it is
//! reported `Applied` and `Available` for its generation. The hub cannot tell them from real
//! agents: it sees the same objects change in the same way. What they leave out is the agents'
//! own cost (their watches, the managed cluster's API server), which `--light` rows do not
//! measure.
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use clusteradm::api::cluster::{
    CLUSTER_LEASE_NAME, MANAGED_CLUSTER_CONDITION_AVAILABLE, MANAGED_CLUSTER_JOINED, ManagedCluster,
};
use clusteradm::api::conditions::{self, APPLIED};
use clusteradm::api::work::ManifestWork;
use clusteradm::runtime::Shutdown;

/// Requests in flight at once.
const CONCURRENCY: usize = 32;
/// How often each lease is renewed: the default lease duration, as the real agent renews it.
const LEASE_PERIOD: Duration = Duration::from_secs(60);
/// The agent name in each CSR's subject.
const AGENT: &str = "light-agent";

/// Creates every cluster's ManagedCluster and bootstrap CSR through `bootstrap` (the join
/// token's client), as each registration agent does on its first start.
pub async fn register(bootstrap: &Client, names: &[String]) -> anyhow::Result<()> {
    let clusters: Api<ManagedCluster> = Api::all(bootstrap.clone());
    let csrs: Api<CertificateSigningRequest> = Api::all(bootstrap.clone());
    futures::stream::iter(names)
        .map(|name| {
            let (clusters, csrs) = (clusters.clone(), csrs.clone());
            async move {
                let mc: ManagedCluster = serde_json::from_value(json!({
                    "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                    "metadata": {"name": name}, "spec": {"hubAcceptsClient": false, "leaseDurationSeconds": 60}
                }))?;
                match clusters.create(&PostParams::default(), &mc).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(s)) if s.is_already_exists() => {}
                    Err(e) => return Err(e.into()),
                }
                let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
                let request =
                    clusteradm::agent::registration::csr::request_pem(name, AGENT, &key)?;
                let csr = clusteradm::agent::registration::csr::object(name, &request, None);
                csrs.create(&PostParams::default(), &csr).await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// Runs every cluster's agents, light, through `admin` until `shutdown` is cancelled.
pub async fn run(admin: Client, names: Vec<String>, shutdown: Shutdown) {
    let ours: Arc<HashSet<String>> = Arc::new(names.into_iter().collect());
    let accepted = Arc::new(Mutex::new(HashSet::new()));
    tokio::select! {
        () = report_joined(&admin, &ours, &accepted) => {}
        () = renew_leases(&admin, &accepted) => {}
        () = report_works(&admin, &ours) => {}
        () = shutdown.cancelled() => {}
    }
}

/// Each accepted cluster's `Joined` and `Available`, written once (again if the hub marks it
/// `Unknown`, as the real agent's next status sync would).
async fn report_joined(admin: &Client, ours: &HashSet<String>, accepted: &Mutex<HashSet<String>>) {
    let api: Api<ManagedCluster> = Api::all(admin.clone());
    watcher(api.clone(), watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .filter_map(|mc| async move { mc.ok() })
        .filter(|mc| {
            let name = mc.name_any();
            let wanted = ours.contains(&name)
                && mc.spec.hub_accepts_client
                && conditions_of(mc)
                    .is_some_and(|c| conditions::is_true(c, "HubAcceptedManagedCluster"))
                && !conditions_of(mc)
                    .is_some_and(|c| conditions::is_true(c, MANAGED_CLUSTER_CONDITION_AVAILABLE));
            std::future::ready(wanted)
        })
        .for_each_concurrent(CONCURRENCY, |mc| {
            let api = api.clone();
            async move {
                let now = Time(Timestamp::now());
                let mut list = conditions_of(&mc).cloned().unwrap_or_default();
                for (type_, reason) in [
                    (MANAGED_CLUSTER_JOINED, "ManagedClusterJoined"),
                    (
                        MANAGED_CLUSTER_CONDITION_AVAILABLE,
                        "ManagedClusterAvailable",
                    ),
                ] {
                    conditions::set(
                        &mut list,
                        conditions::new(type_, conditions::TRUE, reason, reason, &now),
                    );
                }
                // Optimistic: a conflict with the hub's write comes back as the next event.
                let patch = json!({"metadata": {"resourceVersion": mc.resource_version()},
                                   "status": {"conditions": list}});
                let name = mc.name_any();
                if api
                    .patch_status(&name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .is_ok()
                {
                    accepted.lock().unwrap().insert(name);
                }
            }
        })
        .await;
}

fn conditions_of(mc: &ManagedCluster) -> Option<&Vec<conditions::Condition>> {
    mc.status.as_ref().map(|s| &s.conditions)
}

/// Every accepted cluster's lease, renewed once per [`LEASE_PERIOD`], spread over it.
async fn renew_leases(admin: &Client, accepted: &Mutex<HashSet<String>>) {
    let mut next = tokio::time::Instant::now();
    loop {
        let clusters: Vec<String> = accepted.lock().unwrap().iter().cloned().collect();
        let round = tokio::time::Instant::now();
        let gap = LEASE_PERIOD / u32::try_from(clusters.len().max(1)).unwrap_or(u32::MAX);
        futures::stream::iter(clusters.into_iter().enumerate())
            .for_each_concurrent(CONCURRENCY, |(i, cluster)| {
                let leases: Api<Lease> = Api::namespaced(admin.clone(), &cluster);
                async move {
                    tokio::time::sleep_until(round + gap * u32::try_from(i).unwrap_or(0)).await;
                    let renew = json!({"spec": {"renewTime": MicroTime(Timestamp::now())}});
                    let _ = leases
                        .patch(
                            CLUSTER_LEASE_NAME,
                            &PatchParams::default(),
                            &Patch::Merge(renew),
                        )
                        .await;
                }
            })
            .await;
        next += LEASE_PERIOD;
        // A round that took longer than its period starts the next at once.
        tokio::time::sleep_until(next.max(tokio::time::Instant::now())).await;
    }
}

/// Every work of a light cluster, `Applied` and `Available` for its generation.
async fn report_works(admin: &Client, ours: &HashSet<String>) {
    let api: Api<ManifestWork> = Api::all(admin.clone());
    let reported: Mutex<HashMap<(String, String), i64>> = Mutex::default();
    let reported = &reported;
    watcher(api, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .filter_map(|w| async move { w.ok() })
        .filter(|w| {
            let key = (w.namespace().unwrap_or_default(), w.name_any());
            let generation = w.metadata.generation.unwrap_or_default();
            let wanted =
                ours.contains(&key.0) && reported.lock().unwrap().get(&key) != Some(&generation);
            std::future::ready(wanted)
        })
        .for_each_concurrent(CONCURRENCY, |w| {
            let api: Api<ManifestWork> =
                Api::namespaced(admin.clone(), &w.namespace().unwrap_or_default());
            async move {
                let now = Time(Timestamp::now());
                let generation = w.metadata.generation.unwrap_or_default();
                let done = |type_: &str| {
                    let mut c = conditions::new(
                        type_,
                        conditions::TRUE,
                        "AppliedManifestWorkComplete",
                        "Apply manifest work complete",
                        &now,
                    );
                    c.observed_generation = Some(generation);
                    c
                };
                let status = json!({"status": {"conditions": [done(APPLIED), done("Available")]}});
                if api
                    .patch_status(
                        &w.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(status),
                    )
                    .await
                    .is_ok()
                {
                    reported.lock().unwrap().insert(
                        (w.namespace().unwrap_or_default(), w.name_any()),
                        generation,
                    );
                }
            }
        })
        .await;
}
