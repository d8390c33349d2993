//! The one ManagedCluster watch every hub controller shares: a cluster deleted before a
//! subscriber read its change must not stall the subscription (and with it the watch). With
//! kube-runtime's own shared stream it did, and the hub stopped granting any cluster's RBAC.
use std::time::Duration;

use futures::StreamExt as _;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::reflector::ObjectRef;

use clusteradm::api::cluster::{ManagedCluster, ManagedClusterSpec};
use clusteradm::runtime::Shutdown;
use clusteradm::runtime::informers::Informers;

use crate::common;
use crate::registration::fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_gone_before_a_subscriber_reads_it_does_not_stall_the_watch() {
    fixture::hub().await;
    let hub = common::hub().await;
    let informers = Informers::new(hub.clone());
    // Subscribed, and not read until the cluster below has come and gone.
    let (store, mut changes) = informers.feed::<ManagedCluster>();
    let shutdown = Shutdown::new();
    tokio::spawn(informers.run(shutdown.clone()));
    store.wait_until_ready().await.unwrap();

    let api: Api<ManagedCluster> = Api::all(hub);
    let cluster = |name: &str| ManagedCluster::new(name, ManagedClusterSpec::default());
    let gone = common::unique("it-fanout-gone");
    api.create(&PostParams::default(), &cluster(&gone))
        .await
        .unwrap();
    let in_store = |name: &str| store.get(&ObjectRef::new(name)).is_some();
    common::eventually(
        "the cluster in the store",
        Duration::from_secs(30),
        || async { in_store(&gone).then_some(()) },
    )
    .await;
    api.delete(&gone, &DeleteParams::default()).await.unwrap();
    common::eventually(
        "the cluster gone from the store",
        Duration::from_secs(30),
        || async { (!in_store(&gone)).then_some(()) },
    )
    .await;
    let next = common::unique("it-fanout-next");
    api.create(&PostParams::default(), &cluster(&next))
        .await
        .unwrap();

    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(mc) = changes.next().await {
            seen.push(mc.name_any());
            if seen.last() == Some(&next) {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{next} never reached the subscriber"));
    assert!(
        seen.contains(&gone),
        "the deleted cluster's change was not delivered: {seen:?}"
    );
    shutdown.cancel();
    let _ = api.delete(&next, &DeleteParams::default()).await;
}

/// Every kind the hub's controllers read, by the resource its watch asks for (the ClusterManager
/// for the admission webhooks' settings).
const HUB_KINDS: [&str; 15] = [
    "addondeploymentconfigs",
    "addonplacementscores",
    "addontemplates",
    "certificatesigningrequests",
    "clustermanagementaddons",
    "clustermanagers",
    "leases",
    "managedclusteraddons",
    "managedclusters",
    "managedclustersetbindings",
    "managedclustersets",
    "manifestworkreplicasets",
    "manifestworks",
    "placementdecisions",
    "placements",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hub_controllers_share_one_watch_per_kind() {
    fixture::hub().await;
    let watches = fixture::hub_watches();
    // Every kind watched: the count below then covers every controller that reads it.
    common::eventually(
        "a watch of every kind the hub reads",
        Duration::from_secs(60),
        || async { (watches.open().len() >= HUB_KINDS.len()).then_some(()) },
    )
    .await;
    let open = watches.open();
    assert_eq!(
        open.keys().map(String::as_str).collect::<Vec<_>>(),
        HUB_KINDS,
        "the kinds the hub watches"
    );
    let most = watches.most();
    let doubled: Vec<_> = most.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        doubled.is_empty(),
        "kinds the hub watched more than once at a time: {doubled:?}"
    );
}
