//! A hub restored from a backup, or a hub the agent moved to: the work agent keeps what works
//! applied while no work manages it, for the grace period, as upstream's (issue: a restore
//! deleted every workload at once). Works that come back within it adopt what is there (same
//! UIDs, nothing re-created); a record of another hub is evicted once the grace period is over,
//! not before; a grace period of 100 years or more never evicts.
use std::time::Duration;

use clusteradm::agent::work::eviction::DISABLED_AT;
use clusteradm::api::work::AppliedManifestWork;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams};

use super::{Agent, TestCluster, WAIT, applied_and_available, wait_work};
use crate::common;

async fn put_work(c: &TestCluster, name: &str, ns: &str) {
    c.works()
        .patch(
            name,
            &PatchParams::apply("it-eviction"),
            &Patch::Apply(&super::config_map_work(name, ns, name)),
        )
        .await
        .unwrap();
    wait_work(&c.works(), name, "applied", applied_and_available).await;
}

/// The work vanishes from the hub without the agent's cleanup, as in a restore that brings the
/// cluster namespace back empty: the agent is stopped, the finalizer stripped, the work deleted.
async fn vanish(c: &TestCluster, name: &str) {
    let strip = serde_json::json!({"metadata": {"finalizers": null}});
    c.works()
        .patch(name, &PatchParams::default(), &Patch::Merge(&strip))
        .await
        .unwrap();
    c.works()
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
    common::eventually("the work gone", WAIT, || async {
        c.works()
            .get_opt(name)
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
}

async fn record_of(c: &TestCluster, work: &str) -> Option<AppliedManifestWork> {
    c.records()
        .await
        .into_iter()
        .find(|r| r.spec.manifest_work_name == work)
}

fn eviction_started(r: &AppliedManifestWork) -> bool {
    r.status
        .as_ref()
        .is_some_and(|s| s.eviction_start_time.is_some())
}

fn agent(c: &TestCluster, grace: Duration, hub_url: Option<&str>) -> Agent {
    let url = hub_url.map(str::to_owned);
    Agent::start_with(c.hub.clone(), c.managed.clone(), &c.name, move |opts| {
        opts.resync = Duration::from_secs(1);
        opts.settings.eviction_grace = grace;
        if let Some(url) = url {
            opts.hub_url = url;
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_that_vanish_and_come_back_within_the_grace_period_keep_their_resources() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-evict").await;
    let ns = c.managed_namespace().await;
    let name = common::unique("restored");
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    let first = agent(&c, Duration::from_secs(600), None);
    put_work(&c, &name, &ns).await;
    let uid = config_maps.get(&name).await.unwrap().uid().unwrap();
    drop(first);
    vanish(&c, &name).await;

    // The agent comes back to a hub without the work: eviction starts, nothing is deleted.
    let _agent = agent(&c, Duration::from_secs(600), None);
    common::eventually("the eviction to start", WAIT, || async {
        record_of(&c, &name)
            .await
            .filter(eviction_started)
            .map(|_| ())
    })
    .await;
    common::never(
        "the ConfigMap deleted or re-created",
        Duration::from_secs(5),
        || async {
            let cm = config_maps.get_opt(&name).await.unwrap();
            (cm.and_then(|cm| cm.uid()).as_deref() != Some(uid.as_str())).then_some(())
        },
    )
    .await;

    // The work is re-created with the same name: adopted, the same object, eviction cancelled.
    put_work(&c, &name, &ns).await;
    assert_eq!(config_maps.get(&name).await.unwrap().uid().unwrap(), uid);
    common::eventually("the eviction cancelled", WAIT, || async {
        record_of(&c, &name)
            .await
            .filter(|r| !eviction_started(r))
            .map(|_| ())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_of_another_hub_are_evicted_after_the_grace_period_not_before() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-evict-hub").await;
    let ns = c.managed_namespace().await;
    let name = common::unique("old-hub");
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    let old = agent(&c, Duration::from_secs(600), None);
    put_work(&c, &name, &ns).await;
    let old_record = record_of(&c, &name).await.unwrap();
    drop(old);
    vanish(&c, &name).await;

    // The agent now talks to another hub (another URL: another hub hash).
    let grace = Duration::from_secs(8);
    // Watched for all but the last 2 s of it: the agent's start is not counted exactly here.
    let unwatched_end = Duration::from_secs(6);
    let started = std::time::Instant::now();
    let _agent = agent(&c, grace, Some("https://another-hub.example:6443"));
    common::never("evicted within the grace period", unwatched_end, || async {
        config_maps
            .get_opt(&name)
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    let records: Api<AppliedManifestWork> = Api::all(c.managed.clone());
    super::wait_gone(records, &old_record.name_any(), &old_record.uid().unwrap()).await;
    // The recorded start is in whole seconds (metav1.Time), so up to 1 s earlier than counted.
    assert!(
        started.elapsed() + Duration::from_secs(1) >= grace,
        "evicted after {:?}",
        started.elapsed()
    );
    assert!(config_maps.get_opt(&name).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grace_period_of_a_hundred_years_never_evicts() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-evict-off").await;
    let ns = c.managed_namespace().await;
    let name = common::unique("kept");
    let config_maps: Api<ConfigMap> = Api::namespaced(c.managed.clone(), &ns);
    let first = agent(&c, DISABLED_AT, None);
    put_work(&c, &name, &ns).await;
    drop(first);
    vanish(&c, &name).await;
    let _agent = agent(&c, DISABLED_AT, None);
    common::never(
        "an eviction started or done",
        Duration::from_secs(5),
        || async {
            let record = record_of(&c, &name).await;
            let cm = config_maps.get_opt(&name).await.unwrap();
            (record.as_ref().is_none_or(eviction_started) || cm.is_none()).then_some((record, cm))
        },
    )
    .await;
}
