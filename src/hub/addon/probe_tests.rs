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
    let fields = Fields::parse(FIELDS, str::to_owned).unwrap();
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
        str::to_owned,
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
    let refused = |text: &str| Fields::parse(text, str::to_owned).err().unwrap();
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
fn asking_puts_the_probe_first_and_merges_what_the_work_already_asks() {
    let fields = Fields::parse(FIELDS, str::to_owned).unwrap();
    let path = |name: &str, path: &str| JsonPath {
        name: name.into(),
        version: None,
        path: path.into(),
    };
    let deployment = ResourceIdentifier {
        group: Some("apps".into()),
        resource: "deployments".into(),
        name: "agent".into(),
        namespace: Some("ns".into()),
    };
    let secret = ResourceIdentifier {
        group: Some(String::new()),
        resource: "secrets".into(),
        name: "s".into(),
        namespace: Some("ns".into()),
    };
    let mut configs = vec![
        ManifestConfigOption {
            resource_identifier: secret.clone(),
            ..ManifestConfigOption::default()
        },
        ManifestConfigOption {
            resource_identifier: deployment.clone(),
            feedback_rules: vec![
                FeedbackRule {
                    type_: FeedbackType::WellKnownStatus,
                    json_paths: Vec::new(),
                },
                FeedbackRule {
                    type_: FeedbackType::JsonPaths,
                    json_paths: vec![path("replicas", ".status.otherReplicas")],
                },
            ],
            ..ManifestConfigOption::default()
        },
    ];
    fields.ask(&mut configs);
    let ids: Vec<&ResourceIdentifier> = configs.iter().map(|c| &c.resource_identifier).collect();
    assert_eq!(
        ids,
        [&deployment, &secret],
        "the probe first, one entry per object"
    );
    let rules = &configs[0].feedback_rules;
    assert_eq!(
        rules[0].json_paths,
        [
            path("replicas", ".status.replicas"),
            path(
                "available",
                ".status.conditions[?(@.type==\"Available\")].status"
            )
        ],
        "a path name the probe asks for keeps the probe's path"
    );
    assert_eq!(rules[1].type_, FeedbackType::WellKnownStatus);
    assert_eq!(rules.len(), 2);

    // A core object named with and without its empty group is one object.
    let core = Fields::parse(
        "- resourceIdentifier: {resource: secrets, name: s, namespace: ns}\n  \
         probeRules: [{type: JSONPaths, jsonPaths: [{name: t, path: .type}]}]\n  \
         healthyWhen: t == 'Opaque'\n",
        str::to_owned,
    )
    .unwrap();
    let mut configs = vec![ManifestConfigOption {
        resource_identifier: secret,
        ..ManifestConfigOption::default()
    }];
    core.ask(&mut configs);
    assert_eq!(configs.len(), 1);
}

#[test]
fn a_wildcard_field_checks_every_object_it_names() {
    let fields = Fields::parse(
        "- resourceIdentifier: {group: apps, resource: deployments, name: '*', namespace: ns}\n  \
         probeRules: [{type: WellKnownStatus}]\n  healthyWhen: ReadyReplicas >= 1\n",
        str::to_owned,
    )
    .unwrap();
    let deployment = |name: &str, ready: i64| {
        json!({"resourceMeta": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
            "resource": "deployments", "namespace": "ns", "name": name},
            "statusFeedback": {"values": [
                {"name": "ReadyReplicas", "fieldValue": {"type": "Integer", "integer": ready}}]},
            "conditions": []})
    };
    let status = |manifests: serde_json::Value| -> ManifestWorkStatus {
        serde_json::from_value(json!({"resourceStatus": {"manifests": manifests}})).unwrap()
    };
    let both = status(json!([deployment("a", 1), deployment("b", 1)]));
    assert_eq!(fields.check(&both), Probe::Healthy);
    let one_down = status(json!([deployment("a", 1), deployment("b", 0)]));
    assert_eq!(
        fields.check(&one_down),
        Probe::Unhealthy("deployments ns/b: ReadyReplicas >= 1 is false".into())
    );
}

#[test]
fn placeholders_are_filled_after_parsing() {
    // A value that YAML would misread, were it pasted into the text.
    let fields = Fields::parse(
        "- resourceIdentifier: {resource: configmaps, name: agent, namespace: '{{NS}}'}\n  \
         probeRules: [{type: JSONPaths, jsonPaths: [{name: s, path: '.status.{{FIELD}}'}]}]\n  \
         healthyWhen: s\n",
        |v| {
            v.replace("{{NS}}", "ns: \"x\" #")
                .replace("{{FIELD}}", "ready")
        },
    )
    .unwrap();
    let mut configs = Vec::new();
    fields.ask(&mut configs);
    let id = &configs[0].resource_identifier;
    assert_eq!(id.namespace.as_deref(), Some("ns: \"x\" #"));
    assert_eq!(
        configs[0].feedback_rules[0].json_paths[0].path,
        ".status.ready"
    );
}

#[test]
fn a_check_that_would_not_end_stops_at_its_cost_limit() {
    let list = format!(
        "[{}]",
        (0..100)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let check = format!("{list}.all(a, {list}.all(b, {list}.all(c, {list}.all(d, s > 0))))");
    let fields = Fields::parse(
        &format!(
            "- resourceIdentifier: {{resource: configmaps, name: agent, namespace: ns}}\n  \
             probeRules: [{{type: JSONPaths, jsonPaths: [{{name: s, path: .status}}]}}]\n  \
             healthyWhen: '{check}'\n"
        ),
        str::to_owned,
    )
    .unwrap();
    let status: ManifestWorkStatus =
        serde_json::from_value(json!({"resourceStatus": {"manifests": [{
        "resourceMeta": {"ordinal": 0, "group": "", "version": "v1", "kind": "ConfigMap",
            "resource": "configmaps", "namespace": "ns", "name": "agent"},
        "statusFeedback": {"values": [{"name": "s",
            "fieldValue": {"type": "Integer", "integer": 1}}]},
        "conditions": []}]}}))
        .unwrap();
    let started = std::time::Instant::now();
    let Probe::Unhealthy(why) = fields.check(&status) else {
        panic!("a check past its limit is not healthy");
    };
    assert!(why.ends_with("exceeded the cost limit of 1000000"), "{why}");
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}
