//! A Klusterlet's registration settings as the agent acts on them (the operator turns the
//! Klusterlet's fields into these; its unit tests check that half): annotations and labels on the
//! ManagedCluster it creates, external server URLs reported with the cluster's CA, and the claim
//! limits (how many custom claims, which suffixes are reserved).
use std::collections::BTreeMap;

use kube::api::{Api, DeleteParams, PostParams};

use clusteradm::agent::registration::settings::{ClaimLimits, Settings};
use clusteradm::api::cluster::{ClientConfig, ClusterClaim, ClusterClaimSpec, ManagedCluster};

use super::fixture;
use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_klusterlets_registration_settings_reach_the_managed_cluster_on_the_hub() {
    let managed = common::managed().await;
    let mut opts = fixture::options(managed.clone(), "it-reg-settings");
    let suffix = format!(".{}.example", opts.cluster_name);
    let reserved = format!("reserved{suffix}");
    let custom = format!("custom-{}", opts.cluster_name);
    let claims: Api<ClusterClaim> = Api::all(managed.clone());
    for name in [&reserved, &custom] {
        let claim = ClusterClaim::new(
            name,
            ClusterClaimSpec {
                value: Some("v".into()),
            },
        );
        claims.create(&PostParams::default(), &claim).await.unwrap();
    }
    opts.settings = Settings {
        cluster_annotations: BTreeMap::from([
            (
                "agent.open-cluster-management.io/zone".into(),
                "eu-1".into(),
            ),
            ("not-an-agent-key".into(), "x".into()),
        ]),
        cluster_labels: BTreeMap::from([("env".into(), "it".into())]),
        external_servers: vec![ClientConfig {
            url: "https://external.example.com:6443".into(),
            ca_bundle: None,
        }],
        // No custom claim at all, but the test's suffix is reserved.
        claims: ClaimLimits {
            max_custom: 0,
            reserved_suffixes: vec![suffix.clone()],
        },
        ..Settings::default()
    };
    opts.managed_ca =
        Some(b"-----BEGIN CERTIFICATE-----\nit\n-----END CERTIFICATE-----\n".to_vec());
    let agent = fixture::joined(opts).await;
    let hub = common::hub().await;
    let clusters: Api<ManagedCluster> = Api::all(hub.clone());
    let want = reserved.clone();
    let mc = fixture::wait(
        clusters,
        agent.cluster(),
        "the reserved claim reported",
        move |mc: Option<&ManagedCluster>| {
            mc.and_then(|mc| mc.status.as_ref()).is_some_and(|s| {
                s.cluster_claims
                    .iter()
                    .any(|c| c.name.as_deref() == Some(want.as_str()))
            })
        },
    )
    .await;
    let annotations = mc.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations
            .get("agent.open-cluster-management.io/zone")
            .map(String::as_str),
        Some("eu-1")
    );
    assert!(
        !annotations.contains_key("not-an-agent-key"),
        "{annotations:?}"
    );
    assert_eq!(mc.metadata.labels.as_ref().unwrap()["env"], "it");
    // The fixture's own config first, then the external server with the managed CA.
    let configs = &mc.spec.managed_cluster_client_configs;
    assert_eq!(configs.len(), 2, "{configs:?}");
    assert_eq!(configs[1].url, "https://external.example.com:6443");
    assert!(
        configs[1]
            .ca_bundle
            .as_ref()
            .unwrap()
            .0
            .starts_with(b"-----BEGIN CERTIFICATE")
    );
    // No custom claim: not this test's, nor any other test's.
    let reported: Vec<String> = mc
        .status
        .unwrap()
        .cluster_claims
        .into_iter()
        .filter_map(|c| c.name)
        .collect();
    assert!(!reported.contains(&custom), "{reported:?}");
    assert!(
        reported
            .iter()
            .all(|n| n.ends_with(&suffix) || !n.starts_with("custom-")),
        "{reported:?}"
    );
    for name in [&reserved, &custom] {
        claims.delete(name, &DeleteParams::default()).await.unwrap();
    }
    agent.remove().await;
}
