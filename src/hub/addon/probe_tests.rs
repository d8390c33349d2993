//! Probers over fed-back statuses; no cluster.
use serde_json::json;

use super::*;
use crate::api::work::JsonPath;

const FIELDS: &str = r#"
- resourceIdentifier: {group: apps, resource: deployments, name: agent, namespace: ns}
  probeRules:
  - type: JSONPaths
    jsonPaths:
    - {name: replicas, path: .status.replicas}
    - {name: available, path: '.status.conditions[?(@.type=="Available")].status'}
  healthyWhen: replicas >= 1 && available == "True"
"#;

/// A work status feeding back `values` for the Deployment `ns/agent`.
fn fed(values: &serde_json::Value) -> ManifestWorkStatus {
    serde_json::from_value(json!({"resourceStatus": {"manifests": [{
        "resourceMeta": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
            "resource": "deployments", "namespace": "ns", "name": "agent"},
        "statusFeedback": {"values": values},
        "conditions": []}]}}))
    .unwrap()
}

#[test]
fn a_field_is_healthy_while_its_check_holds() {
    let fields = Fields::parse(FIELDS).unwrap();
    assert_eq!(
        fields.check(&ManifestWorkStatus::default()),
        Probe::NoResults
    );
    assert_eq!(fields.check(&fed(&json!([]))), Probe::NoResults);
    let healthy = fed(&json!([
        {"name": "replicas", "fieldValue": {"type": "Integer", "integer": 1}},
        {"name": "available", "fieldValue": {"type": "String", "string": "True"}}]));
    assert_eq!(fields.check(&healthy), Probe::Healthy);
    let down = fed(&json!([
        {"name": "replicas", "fieldValue": {"type": "Integer", "integer": 1}},
        {"name": "available", "fieldValue": {"type": "String", "string": "False"}}]));
    assert_eq!(
        fields.check(&down),
        Probe::Unhealthy(
            "deployments ns/agent: replicas >= 1 && available == \"True\" is false".into()
        )
    );
    // A value not fed back (yet) is named.
    let partial =
        fed(&json!([{"name": "replicas", "fieldValue": {"type": "Integer", "integer": 1}}]));
    let Probe::Unhealthy(why) = fields.check(&partial) else {
        panic!("a missing value is not healthy");
    };
    assert!(why.contains("available"), "{why}");
}

#[test]
fn raw_json_values_are_objects_to_the_check() {
    let fields = Fields::parse(
        "- resourceIdentifier: {resource: configmaps, name: agent, namespace: ns}\n  \
         probeRules: [{type: JSONPaths, jsonPaths: [{name: s, path: .status}]}]\n  \
         healthyWhen: s.ready && s.count > 2\n",
    )
    .unwrap();
    let status: ManifestWorkStatus =
        serde_json::from_value(json!({"resourceStatus": {"manifests": [{
        "resourceMeta": {"ordinal": 0, "group": "", "version": "v1", "kind": "ConfigMap",
            "resource": "configmaps", "namespace": "ns", "name": "agent"},
        "statusFeedback": {"values": [{"name": "s",
            "fieldValue": {"type": "JsonRaw", "jsonRaw": "{\"ready\": true, \"count\": 3}"}}]},
        "conditions": []}]}}))
        .unwrap();
    assert_eq!(fields.check(&status), Probe::Healthy);
}

#[test]
fn bad_fields_are_refused_saying_what() {
    let refused = |text: &str| Fields::parse(text).err().unwrap();
    assert!(refused("[").contains(HEALTH_PROBE_FIELDS_ANNOTATION));
    assert!(refused("[]").contains("names no field"));
    assert!(
        refused("- resourceIdentifier: {resource: r, name: n}\n  probeRules: []\n  healthyWhen: 'true'\n")
            .contains("r /n: no probeRules")
    );
    let bad_cel = refused(
        "- resourceIdentifier: {resource: r, name: n}\n  probeRules: [{type: WellKnownStatus}]\n  healthyWhen: 'a >'\n",
    );
    assert!(bad_cel.contains("healthyWhen"), "{bad_cel}");
    assert!(
        refused("- resourceIdentifier: {resource: r, name: n}\n  probeRules: [{type: WellKnownStatus}]\n  healthyWhen: x\n  extra: 1\n")
            .contains("extra")
    );
}

#[test]
fn asking_merges_into_the_rules_an_object_already_has() {
    let fields = Fields::parse(FIELDS).unwrap();
    let deployment = ResourceIdentifier {
        group: Some("apps".into()),
        resource: "deployments".into(),
        name: "agent".into(),
        namespace: Some("ns".into()),
    };
    let mut configs = vec![ManifestConfigOption {
        resource_identifier: deployment.clone(),
        feedback_rules: vec![
            FeedbackRule {
                type_: FeedbackType::WellKnownStatus,
                json_paths: Vec::new(),
            },
            FeedbackRule {
                type_: FeedbackType::JsonPaths,
                json_paths: vec![JsonPath {
                    name: "replicas".into(),
                    version: None,
                    path: ".status.replicas".into(),
                }],
            },
        ],
        ..ManifestConfigOption::default()
    }];
    fields.ask(&mut configs);
    assert_eq!(configs.len(), 1, "one config per object");
    let added = &configs[0].feedback_rules[2];
    let names: Vec<&str> = added.json_paths.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["available"],
        "a path already named is not asked twice"
    );

    let mut none = Vec::new();
    fields.ask(&mut none);
    assert_eq!(none[0].resource_identifier, deployment);
    assert_eq!(none[0].feedback_rules[0].json_paths.len(), 2);
}
