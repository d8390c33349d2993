//! Leader election rides out an API server outage of half a minute: the process that holds the
//! Lease keeps running its loops and renews when the server is back. Found by `scripts/bench/scale`,
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

/// A holder whose clock runs 90 s behind writes `renewTime`s that look expired on this machine's
/// clock while it renews: the lease is judged by when this process saw it change, as client-go's,
/// so nobody takes it while it is renewed; once the renewals stop, it is taken after the lease's
/// duration.
#[tokio::test]
async fn a_holder_with_a_skewed_clock_keeps_its_lease_while_it_renews() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use kube::api::{Patch, PatchParams, PostParams};
    let client = common::hub().await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let name = common::unique("it-lease-skew");
    let skewed = |behind: i64| {
        MicroTime(Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(behind))
    };
    let lease: Lease = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "spec": {"holderIdentity": "the-other-host", "leaseDurationSeconds": 4, "renewTime": skewed(90)},
    }))
    .unwrap();
    leases.create(&PostParams::default(), &lease).await.unwrap();
    let lock = LeaseLock::new(client.clone(), "default", &name);
    assert!(
        !lock.try_acquire_or_renew().await.unwrap(),
        "took a lease that its holder just renewed (with a clock 90 s behind)"
    );
    // The holder renews, still 90 s behind: still its.
    for _ in 0..3 {
        leases
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"spec": {"renewTime": skewed(90)}})),
            )
            .await
            .unwrap();
        assert!(!lock.try_acquire_or_renew().await.unwrap());
    }
    // The holder stops renewing: taken once this process has seen no change for 4 s.
    let seen_last = std::time::Instant::now();
    common::eventually("the abandoned lease taken", Duration::from_secs(30), || {
        let lock = lock.clone();
        async move { lock.try_acquire_or_renew().await.unwrap().then_some(()) }
    })
    .await;
    assert!(
        seen_last.elapsed() >= Duration::from_secs(4),
        "{:?}",
        seen_last.elapsed()
    );
    let _ = leases.delete(&name, &DeleteParams::default()).await;
}
