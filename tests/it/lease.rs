//! Leader election rides out an API server outage of half a minute: the process that holds the
//! Lease keeps running its loops and renews when the server is back. Found by `scripts/scale`,
//! where `init --in-process` stopped every hub controller when its API server was restarted.
use std::time::Duration;

use clusteradm::runtime::Shutdown;
use clusteradm::runtime::lease::{self, LeaseLock};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::await_condition;

use crate::common;
use crate::common::proxy::{Proxy, hub_addr};

/// Longer than the 30 s the Lease used to last: what a restart of the API server takes.
const OUTAGE: Duration = Duration::from_secs(35);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_holder_rides_out_an_api_server_outage() {
    let (_, upstream) = hub_addr();
    let mut proxy = Proxy::start(upstream).await;
    let kubeconfig = Kubeconfig::read_from(&common::env().hub).unwrap();
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .unwrap();
    config.cluster_url = format!("https://{}", proxy.addr).parse().unwrap();
    let through_proxy = kube::Client::try_from(config).unwrap();
    let name = common::unique("it-lease");
    let lock = LeaseLock::new(through_proxy, "default", &name);
    let shutdown = Shutdown::new();
    let (started, running) = tokio::sync::oneshot::channel();
    let leader = tokio::spawn(lease::lead(
        lock,
        shutdown.clone(),
        |_| {},
        |token| async move {
            let _ = started.send(());
            token.cancelled().await;
            Ok(())
        },
    ));
    tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the lease was not taken")
        .unwrap();

    proxy.down();
    tokio::time::sleep(OUTAGE).await; // the outage itself is what is simulated
    proxy.up().await;
    let back = Timestamp::now();
    let leases: Api<Lease> = Api::namespaced(common::hub().await, "default");
    tokio::time::timeout(
        lease::RENEW_EVERY * 3,
        await_condition(leases.clone(), &name, move |l: Option<&Lease>| {
            l.and_then(|l| l.spec.as_ref()?.renew_time.clone())
                .is_some_and(|t| t.0 > back)
        }),
    )
    .await
    .expect("the holder did not renew after the outage")
    .unwrap();
    assert!(
        !leader.is_finished(),
        "the holder gave up its loops during the outage"
    );

    shutdown.cancel();
    leader.await.unwrap().expect("the holder stops cleanly");
    let _ = leases.delete(&name, &DeleteParams::default()).await;
}
