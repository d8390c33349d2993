//! Work agents of several clusters on one managed API server (hosted agents of several clusters
//! pointed at one cluster, or `scripts/bench/scale`'s fleet): a work of the same name in each cluster
//! gets its own AppliedManifestWork, so each agent applies, records and removes only its own.
//! Named as upstream (`<hub hash>-<work>`), the two records were one, and deleting one cluster's
//! work removed what the other's had applied.
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams};

use super::{TestCluster, applied_and_available, wait_gone, wait_work};
use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_sharing_a_managed_api_server_keep_their_own_records() {
    let _hub = super::hub_lock().await;
    let (a, b) = (
        TestCluster::new("it-work-share-a").await,
        TestCluster::new("it-work-share-b").await,
    );
    let ns = a.managed_namespace().await;
    let (_agent_a, _agent_b) = (a.sharing_agent(), b.sharing_agent());
    let name = common::unique("same");
    for (c, config_map) in [(&a, "from-a"), (&b, "from-b")] {
        let work = super::config_map_work(&name, &ns, config_map);
        c.works()
            .patch(
                &name,
                &PatchParams::apply("it-shared"),
                &Patch::Apply(&work),
            )
            .await
            .unwrap();
    }
    for c in [&a, &b] {
        wait_work(&c.works(), &name, "applied", applied_and_available).await;
    }
    let (records_a, records_b) = (a.records().await, b.records().await);
    assert_eq!(records_a.len(), 1, "{records_a:?}");
    assert_eq!(records_b.len(), 1, "{records_b:?}");
    assert!(records_a[0].name_any().contains(&a.name));
    assert!(records_b[0].name_any().contains(&b.name));

    // Deleting a's work removes what a applied, and only that.
    let work_a = a.works().get(&name).await.unwrap();
    a.works()
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(a.works(), &name, &work_a.uid().unwrap()).await;
    let config_maps: Api<ConfigMap> = Api::namespaced(a.managed.clone(), &ns);
    assert!(config_maps.get_opt("from-a").await.unwrap().is_none());
    assert!(config_maps.get_opt("from-b").await.unwrap().is_some());
    assert!(a.records().await.is_empty());
    assert_eq!(b.records().await.len(), 1);
    wait_work(&b.works(), &name, "still applied", applied_and_available).await;
}
