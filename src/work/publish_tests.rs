//! Unit tests of the `create work` plan.
use serde_json::json;

use super::*;

fn manifests(replicas: i64) -> Vec<Value> {
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"}, "spec": {"replicas": replicas}}),
    ]
}

fn observed(cluster: &str, namespace_exists: bool, existing: Option<Vec<Value>>) -> Observed {
    Observed {
        cluster: cluster.into(),
        namespace_exists,
        existing: existing.map(|m| super::super::manifests::work("w", cluster, m)),
    }
}

#[test]
fn creates_where_absent() {
    let steps = plan(
        "w",
        &manifests(1),
        &[observed("c1", true, None), observed("c2", true, None)],
        false,
    )
    .unwrap();
    assert_eq!(steps.len(), 2);
    assert!(steps.iter().all(|s| s.change == Change::Create));
    assert_eq!(steps[1].work.metadata.namespace.as_deref(), Some("c2"));
    assert_eq!(steps[1].work.spec.workload.manifests, manifests(1));
}

#[test]
fn unknown_clusters_are_refused_first() {
    let err = plan(
        "w",
        &manifests(1),
        &[
            observed("c1", false, None),
            observed("c2", true, Some(manifests(1))),
            observed("c3", false, None),
        ],
        false,
    )
    .unwrap_err();
    assert_eq!(
        err,
        Refusal::UnknownClusters(vec!["c1".into(), "c3".into()])
    );
    assert_eq!(
        err.to_string(),
        "unknown clusters: c1, c3: the hub has no namespace of that name"
    );
}

#[test]
fn existing_needs_overwrite() {
    let obs = [
        observed("c1", true, Some(manifests(1))),
        observed("c2", true, None),
    ];
    let err = plan("w", &manifests(2), &obs, false).unwrap_err();
    assert_eq!(err.to_string(), "work w already exists in cluster c1");
    let steps = plan("w", &manifests(2), &obs, true).unwrap();
    assert_eq!(
        (steps[0].change, steps[1].change),
        (Change::Update, Change::Create)
    );
    assert_eq!(steps[0].work.spec.workload.manifests, manifests(2));
}

#[test]
fn same_manifests_are_unchanged_and_other_spec_is_kept() {
    let mut obs = observed("c1", true, Some(manifests(3)));
    obs.existing.as_mut().unwrap().spec.delete_option =
        Some(crate::api::work::DeleteOption::default());
    let steps = plan("w", &manifests(3), &[obs], true).unwrap();
    assert_eq!(steps[0].change, Change::Unchanged);
    assert!(steps[0].work.spec.delete_option.is_some());
}

#[test]
fn work_names() {
    assert!(validate_name("my-first-work").is_ok());
    assert!(validate_name("a.b-1").is_ok());
    assert!(validate_name("My-Work").is_err());
    assert!(validate_name("-w").is_err());
    assert!(validate_name("").is_err());
    assert!(validate_name(&"w".repeat(MAX_NAME_LEN)).is_ok());
    assert!(
        validate_name(&"w".repeat(MAX_NAME_LEN + 1))
            .unwrap_err()
            .contains("at most 188")
    );
}
