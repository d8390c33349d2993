//! Unit tests of the work agent's pure decisions.
use serde_json::json;

use super::*;
use crate::api::work::identifier::test_id as id;
use crate::api::work::{ResourceIdentifier, SelectivelyOrphan, UpdateStrategyType};

fn applied(group: &str, resource: &str, ns: &str, name: &str) -> AppliedManifestResourceMeta {
    AppliedManifestResourceMeta {
        group: Some(group.into()).filter(|g: &String| !g.is_empty()),
        version: "v1".into(),
        resource: resource.into(),
        namespace: Some(ns.into()).filter(|n: &String| !n.is_empty()),
        name: name.into(),
        uid: Some(format!("uid-{name}")),
    }
}

#[test]
fn applied_work_names_are_per_hub_as_upstream_or_per_cluster_when_shared() {
    let hub = hub_hash("https://hub:6443");
    // One cluster per managed API server: upstream's name, the same for every cluster.
    assert_eq!(applied_work_name(&hub, "web"), format!("{hub}-web"));
    // Several: each cluster's record of a work of the same name is its own.
    let (a, b) = (
        cluster_applied_work_name(&hub, "cluster-a", "web"),
        cluster_applied_work_name(&hub, "cluster-b", "web"),
    );
    assert_ne!(a, b);
    assert_eq!(a, format!("{hub}-cluster-a-web"));
}

#[test]
fn hub_hash_is_hex_sha256_of_the_url() {
    // sha256("https://hub:6443"), as `printf %s https://hub:6443 | sha256sum` prints it.
    assert_eq!(
        hub_hash("https://hub:6443"),
        "9f63aa51ee73742847a1dd584c640c8b579dc14418ab416e3dd716fbe9362d31"
    );
    assert_eq!(
        hub_hash(""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(applied_work_name("abc", "w1"), "abc-w1");
}

#[test]
fn raw_meta_takes_what_is_there() {
    let m = raw_meta(
        2,
        &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}}),
    );
    assert_eq!(
        (
            m.ordinal,
            m.group.as_deref(),
            m.version.as_deref(),
            m.kind.as_deref()
        ),
        (2, Some("apps"), Some("v1"), Some("Deployment"))
    );
    assert_eq!(
        (m.name.as_deref(), m.namespace.as_deref()),
        (Some("d"), Some("ns"))
    );
    let core = raw_meta(0, &json!({"apiVersion": "v1", "kind": "ConfigMap"}));
    assert_eq!((core.group.as_deref(), core.name), (Some(""), None));
    let junk = raw_meta(1, &json!("not an object"));
    assert_eq!((junk.kind, junk.version), (None, None));
}

#[test]
fn parse_names_what_is_missing() {
    let ok = parse(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
        .unwrap();
    assert_eq!((ok.gvk.kind.as_str(), ok.name.as_str()), ("ConfigMap", "c"));
    let no_kind = parse(&json!({"apiVersion": "v1", "metadata": {"name": "c"}})).unwrap_err();
    assert!(no_kind.contains("kind"), "{no_kind}");
    let no_name =
        parse(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})).unwrap_err();
    assert!(no_name.contains("metadata.name"), "{no_name}");
    assert!(parse(&json!([1, 2])).is_err());
}

#[test]
fn strategy_comes_from_the_first_matching_config() {
    let meta = ManifestResourceMeta {
        group: Some("apps".into()),
        resource: Some("deployments".into()),
        name: Some("nginx".into()),
        namespace: Some("default".into()),
        ..Default::default()
    };
    assert_eq!(strategy_for(&[], &meta).type_, UpdateStrategyType::Update);
    let config = |name: &str, type_| ManifestConfigOption {
        resource_identifier: id("apps", "deployments", "default", name),
        update_strategy: Some(UpdateStrategy {
            type_,
            server_side_apply: None,
        }),
        ..Default::default()
    };
    let configs = [
        config("other", UpdateStrategyType::ReadOnly),
        config("nginx", UpdateStrategyType::CreateOnly),
        config("*", UpdateStrategyType::ServerSideApply),
    ];
    assert_eq!(
        strategy_for(&configs, &meta).type_,
        UpdateStrategyType::CreateOnly
    );
    let without_strategy = ManifestConfigOption {
        resource_identifier: id("apps", "deployments", "default", "nginx"),
        ..Default::default()
    };
    assert_eq!(
        strategy_for(&[without_strategy], &meta).type_,
        UpdateStrategyType::Update
    );
}

#[test]
fn applied_set_keeps_failed_but_wanted_and_drops_unwanted() {
    let a = applied("", "configmaps", "ns", "a");
    let b = applied("apps", "deployments", "ns", "b");
    let c = applied("", "serviceaccounts", "ns", "c");
    let wanted = [Key::of(&a), Key::of(&b)];
    // a applied now, b failed this time but is still wanted, c is no longer wanted.
    let next = next_applied(&[b.clone(), c.clone()], std::slice::from_ref(&a), &wanted);
    assert_eq!(next, vec![a.clone(), b.clone()]);
    assert_eq!(stale(&[a.clone(), b.clone(), c.clone()], &wanted), vec![c]);
    // A re-applied resource with a new UID replaces the recorded one.
    let mut a2 = a.clone();
    a2.uid = Some("new".into());
    assert_eq!(next_applied(&[a], &[a2.clone()], &wanted), vec![a2]);
}

#[test]
fn orphaning() {
    let cm = applied("", "configmaps", "ns", "keep");
    let other = applied("", "configmaps", "ns", "drop");
    assert!(!is_orphaned(None, &cm));
    let policy = |p| DeleteOption {
        propagation_policy: Some(p),
        ..Default::default()
    };
    assert!(!is_orphaned(
        Some(&policy(PropagationPolicy::Foreground)),
        &cm
    ));
    assert!(is_orphaned(Some(&policy(PropagationPolicy::Orphan)), &cm));
    let selective = DeleteOption {
        propagation_policy: Some(PropagationPolicy::SelectivelyOrphan),
        selectively_orphans: Some(SelectivelyOrphan {
            orphaning_rules: vec![ResourceIdentifier {
                group: None,
                resource: "configmaps".into(),
                name: "keep".into(),
                namespace: Some("ns".into()),
            }],
        }),
        ..Default::default()
    };
    assert!(is_orphaned(Some(&selective), &cm));
    assert!(!is_orphaned(Some(&selective), &other));
}
