//! The test control plane behaves like a kubeadm cluster: bootstrap tokens authenticate, the
//! controller-manager signs approved client CSRs, and deleted namespaces go away.
use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};

use crate::common;

#[tokio::test]
async fn bootstrap_token_authenticates() {
    let hub = common::hub().await;
    let id = common::token_id();
    let secret_part = "0123456789abcdef";
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), "kube-system");
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(format!("bootstrap-token-{id}")),
            ..Default::default()
        },
        type_: Some("bootstrap.kubernetes.io/token".into()),
        string_data: Some(BTreeMap::from([
            ("token-id".to_string(), id.clone()),
            ("token-secret".to_string(), secret_part.to_string()),
            (
                "usage-bootstrap-authentication".to_string(),
                "true".to_string(),
            ),
        ])),
        ..Default::default()
    };
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();

    let client = common::hub_client_with_token(&format!("{id}.{secret_part}")).await;
    // The authenticator reads token secrets through an informer: allow it to catch up.
    let user = common::eventually(
        "the bootstrap token to authenticate",
        Duration::from_secs(20),
        || async { common::whoami(&client).await.ok() },
    )
    .await;
    assert_eq!(user, format!("system:bootstrap:{id}"));

    let wrong = common::hub_client_with_token(&format!("{id}.ffffffffffffffff")).await;
    let err = common::whoami(&wrong).await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 401),
        "{err:?}"
    );
    secrets
        .delete(&format!("bootstrap-token-{id}"), &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn approved_client_csr_is_signed_and_authenticates() {
    // common::certificate_client creates a kube-apiserver-client CSR, approves it, waits for the
    // controller-manager's signature and builds a client from the signed certificate.
    let hub = common::hub().await;
    let user = format!("it-user-{}", common::unique("csr"));
    let client = common::certificate_client(&hub, &user, "it-group").await;
    assert_eq!(common::whoami(&client).await.unwrap(), user);
}

#[tokio::test]
async fn deleted_namespace_disappears() {
    let hub = common::hub().await;
    let name = common::unique("it-ns");
    let namespaces: Api<Namespace> = Api::all(hub.clone());
    let ns = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(name.clone()),
            ..Default::default()
        },
        ..Default::default()
    };
    let created = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let uid = created.metadata.uid.unwrap();
    namespaces
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    tokio::time::timeout(
        Duration::from_secs(60),
        await_condition(namespaces, &name, conditions::is_deleted(&uid)),
    )
    .await
    .expect("the namespace controller finishes within 60 s")
    .unwrap();
}

/// A Klusterlet's `kubeAPIQPS`/`kubeAPIBurst` hold our agents' clients to that rate: a burst
/// goes at once, the rest waits its window. Six reads at 2 a second in bursts of 2 take at
/// least two windows; unlimited, they take a few milliseconds here.
#[tokio::test]
async fn a_rate_limited_client_waits_its_window_and_an_unlimited_one_does_not() {
    use clusteradm::runtime::rate::{self, Rate};
    use kube::config::{KubeConfigOptions, Kubeconfig};
    let kc = Kubeconfig::read_from(common::env().hub).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap();
    let timed = |client: kube::Client| async move {
        let started = std::time::Instant::now();
        for _ in 0..6 {
            client.apiserver_version().await.unwrap();
        }
        started.elapsed()
    };
    let limited = rate::client(config.clone(), Rate::from_flags(2.0, 2)).unwrap();
    let slow = timed(limited).await;
    let fast = timed(rate::client(config, None).unwrap()).await;
    eprintln!("6 requests: {slow:?} at 2/s in bursts of 2, {fast:?} unlimited");
    assert!(slow >= Duration::from_millis(1_900), "{slow:?}");
    assert!(fast < slow, "{fast:?} vs {slow:?}");
}
