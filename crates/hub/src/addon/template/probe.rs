//! How the hub judges a template add-on's health from the status its deploy work feeds back:
//! upstream's workload checkers ([`workloads`]), and the `WorkField` prober ([`Fields`]): the
//! template names objects, what to feed back from each and, where upstream's code add-ons pass a
//! Go function, a CEL expression over the values that must hold.
use std::sync::{Arc, LazyLock};

use cel::{Context, Env, Program, Value};

use ocm_runtime::cel_budget::{self, Failure, Meter, PER_CALL_LIMIT};

use ocm_api::addon::{HEALTH_PROBE_FIELDS_ANNOTATION, ProbeField};
use ocm_api::work::identifier::identifies_reported;
use ocm_api::work::{
    FeedbackRule, FeedbackType, FeedbackValue, ManifestConfigOption, ManifestWorkStatus,
    ResourceIdentifier, StatusFeedbackResult, ValueType,
};

/// Metered as a placement's `celSelector` is: one check may cost [`PER_CALL_LIMIT`].
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(cel_budget::env()));

/// What a prober found.
#[derive(Debug, PartialEq, Eq)]
pub enum Probe {
    /// Nothing to probe: available.
    NoWorkloads,
    /// Nothing fed back yet.
    NoResults,
    /// Every check passed.
    Healthy,
    /// A check failed, saying why.
    Unhealthy(String),
}

/// The `WorkField` prober's fields, parsed and compiled.
pub struct Fields(Vec<(ProbeField, Program)>);

impl Fields {
    /// Parses the fields annotation's `text`, fills placeholders into each object's identifier
    /// and JSON paths with `fill` (after parsing, so a value cannot break the YAML), and compiles
    /// each check.
    pub fn parse(text: &str, fill: impl Fn(&str) -> String) -> Result<Self, String> {
        let mut fields: Vec<ProbeField> = serde_yaml::from_str(text)
            .map_err(|e| format!("annotation {HEALTH_PROBE_FIELDS_ANNOTATION}: {e}"))?;
        for field in &mut fields {
            let id = &mut field.resource_identifier;
            for part in [&mut id.group, &mut id.namespace].into_iter().flatten() {
                *part = fill(part);
            }
            for part in [&mut id.resource, &mut id.name] {
                *part = fill(part);
            }
            for path in field.probe_rules.iter_mut().flat_map(|r| &mut r.json_paths) {
                path.path = fill(&path.path);
            }
        }
        if fields.is_empty() {
            return Err(format!(
                "annotation {HEALTH_PROBE_FIELDS_ANNOTATION} names no field"
            ));
        }
        let mut out = Vec::new();
        for field in fields {
            let what = describe(&field.resource_identifier);
            if field.probe_rules.is_empty() {
                return Err(format!("probe field {what}: no probeRules"));
            }
            let program = ENV
                .compile(&field.healthy_when)
                .map_err(|e| format!("probe field {what}: healthyWhen: {e}"))?;
            out.push((field, program));
        }
        Ok(Self(out))
    }

    /// The work's manifest configs with the fields' rules, as upstream's
    /// `getManifestConfigOption` builds them: the probe fields first, and each config the work
    /// already has merged into the entry for its object (`mergeFeedbackRule`: a JSON path name
    /// the probe already asks for keeps the probe's path; its update strategy wins).
    pub fn ask(&self, configs: &mut Vec<ManifestConfigOption>) {
        let mut out: Vec<ManifestConfigOption> = Vec::new();
        let probes = self.0.iter().map(|(field, _)| ManifestConfigOption {
            resource_identifier: field.resource_identifier.clone(),
            feedback_rules: field.probe_rules.clone(),
            ..ManifestConfigOption::default()
        });
        for config in probes.chain(configs.drain(..)) {
            let same = |c: &&mut ManifestConfigOption| {
                same_object(&c.resource_identifier, &config.resource_identifier)
            };
            let Some(entry) = out.iter_mut().find(same) else {
                out.push(config);
                continue;
            };
            for rule in &config.feedback_rules {
                merge_rule(&mut entry.feedback_rules, rule);
            }
            if config.update_strategy.is_some() {
                entry.update_strategy = config.update_strategy;
            }
            entry.condition_rules.extend(config.condition_rules);
            entry.feedback_scrape_type = entry.feedback_scrape_type.or(config.feedback_scrape_type);
        }
        *configs = out;
    }

    /// Upstream's probe over fed-back results: objects with nothing fed back yet are skipped,
    /// none fed back at all is [`Probe::NoResults`], and every object a field names (`*` in its
    /// name or namespace names several) that was fed back must pass the field's check.
    #[must_use]
    pub fn check(&self, status: &ManifestWorkStatus) -> Probe {
        let reported = status
            .resource_status
            .as_ref()
            .map(|r| r.manifests.as_slice())
            .unwrap_or_default();
        let mut found = 0;
        for (field, program) in &self.0 {
            let named = reported
                .iter()
                .filter(|m| identifies_reported(&field.resource_identifier, &m.resource_meta));
            for manifest in named {
                let Some(feedback) = manifest.status_feedback.as_ref() else {
                    continue;
                };
                if feedback.values.is_empty() {
                    continue;
                }
                found += 1;
                if let Err(why) = holds(program, &feedback.values) {
                    let meta = &manifest.resource_meta;
                    let object = format!(
                        "{} {}/{}",
                        meta.resource.as_deref().unwrap_or_default(),
                        meta.namespace.as_deref().unwrap_or_default(),
                        meta.name.as_deref().unwrap_or_default()
                    );
                    return Probe::Unhealthy(format!("{object}: {} {why}", field.healthy_when));
                }
            }
        }
        if found == 0 {
            Probe::NoResults
        } else {
            Probe::Healthy
        }
    }
}

/// Whether two identifiers name the same object, an absent group or namespace being empty, as
/// upstream's Go strings compare.
fn same_object(a: &ResourceIdentifier, b: &ResourceIdentifier) -> bool {
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    s(&a.group) == s(&b.group)
        && a.resource == b.resource
        && s(&a.namespace) == s(&b.namespace)
        && a.name == b.name
}

/// `<resource> <namespace>/<name>`, as the messages name an object.
fn describe(id: &ResourceIdentifier) -> String {
    format!(
        "{} {}/{}",
        id.resource,
        id.namespace.as_deref().unwrap_or_default(),
        id.name
    )
}

fn merge_rule(rules: &mut Vec<FeedbackRule>, rule: &FeedbackRule) {
    match rule.type_ {
        FeedbackType::WellKnownStatus => {
            if !rules
                .iter()
                .any(|r| r.type_ == FeedbackType::WellKnownStatus)
            {
                rules.push(rule.clone());
            }
        }
        FeedbackType::JsonPaths => {
            let named = |name: &str| {
                rules
                    .iter()
                    .flat_map(|r| &r.json_paths)
                    .any(|p| p.name == name)
            };
            let paths: Vec<_> = rule
                .json_paths
                .iter()
                .filter(|p| !named(&p.name))
                .cloned()
                .collect();
            if !paths.is_empty() {
                rules.push(FeedbackRule {
                    type_: FeedbackType::JsonPaths,
                    json_paths: paths,
                });
            }
        }
    }
}

/// Whether `program` is true with each value a variable by its name; else why not.
fn holds(program: &Program, values: &[FeedbackValue]) -> Result<(), String> {
    let mut ctx = Context::with_env(ENV.clone());
    for v in values {
        let f = &v.field_value;
        let value = match f.type_ {
            ValueType::Integer => f.integer.map(Value::Int),
            ValueType::String => f.string.clone().map(|s| Value::String(Arc::new(s))),
            ValueType::Boolean => f.boolean.map(Value::Bool),
            ValueType::JsonRaw => f
                .json_raw
                .as_deref()
                .and_then(|raw| serde_json::from_str::<serde_json::Value>(raw).ok())
                .and_then(|json| cel::to_value(json).ok()),
        };
        if let Some(value) = value {
            ctx.add_variable_from_value(v.name.clone(), value);
        }
    }
    let meter = Meter::new(PER_CALL_LIMIT);
    meter
        .install(&mut ctx)
        .map_err(|e| format!("failed: {e}"))?;
    match cel_budget::execute(program, &ctx, &meter) {
        Ok(Value::Bool(true)) => Ok(()),
        Ok(Value::Bool(false)) => Err("is false".into()),
        Ok(other) => Err(format!("is {other:?}, not a boolean")),
        Err(Failure::Exceeded(limit)) => Err(format!("exceeded the cost limit of {limit}")),
        Err(Failure::Error(e)) => Err(format!("failed: {e}")),
    }
}

/// The values fed back for one object of the work, if any.
fn fed_back<'a>(
    status: &'a ManifestWorkStatus,
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Option<&'a StatusFeedbackResult> {
    let reported = status.resource_status.as_ref()?;
    reported.manifests.iter().find_map(|m| {
        let meta = &m.resource_meta;
        (meta.group.as_deref().unwrap_or_default() == group
            && meta.resource.as_deref() == Some(resource)
            && meta.namespace.as_deref().unwrap_or_default() == namespace
            && meta.name.as_deref() == Some(name))
        .then_some(m.status_feedback.as_ref()?)
        .filter(|f| !f.values.is_empty())
    })
}

/// Upstream's `WorkloadAvailabilityHealthChecker` over the fed-back values: a Deployment is
/// healthy with one ready replica (or none wanted), a DaemonSet with all of them ready.
#[must_use]
pub fn workloads(
    manifests: &[serde_json::Value],
    status: &ManifestWorkStatus,
    daemon_sets: bool,
) -> Probe {
    let workloads: Vec<(&str, &str, &str)> = manifests
        .iter()
        .filter_map(|m| {
            let resource = match m["kind"].as_str()? {
                "Deployment" if m["spec"]["replicas"].as_i64() != Some(0) => "deployments",
                "DaemonSet" if daemon_sets => "daemonsets",
                _ => return None,
            };
            Some((
                resource,
                m["metadata"]["namespace"].as_str().unwrap_or_default(),
                m["metadata"]["name"].as_str()?,
            ))
        })
        .collect();
    if workloads.is_empty() {
        return Probe::NoWorkloads;
    }
    let mut found = 0;
    for (resource, namespace, name) in workloads {
        let values = fed_back(status, "apps", resource, namespace, name);
        let Some(feedback) = values else {
            continue;
        };
        found += 1;
        let value = |names: &[&str]| {
            feedback
                .values
                .iter()
                .find(|v| names.contains(&v.name.as_str()))
                .and_then(|v| v.field_value.integer)
        };
        let Some(ready) = value(&["ReadyReplicas", "NumberReady"]) else {
            return Probe::Unhealthy("readyReplica is not probed".into());
        };
        let Some(wanted) = value(&["Replicas", "DesiredNumberScheduled"]) else {
            return Probe::Unhealthy("desiredNumberReplicas is not probed".into());
        };
        let healthy = match resource {
            "deployments" => wanted == 0 || ready >= 1,
            _ => ready == wanted,
        };
        if !healthy {
            return Probe::Unhealthy(format!(
                "desiredNumberReplicas is {wanted} but readyReplica is {ready} for {resource} {namespace}/{name}"
            ));
        }
    }
    if found == 0 {
        Probe::NoResults
    } else {
        Probe::Healthy
    }
}

#[cfg(test)]
mod tests {
    //! Probers over fed-back statuses; no cluster.
    use serde_json::json;

    use super::*;
    use ocm_api::work::JsonPath;

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
        let ids: Vec<&ResourceIdentifier> =
            configs.iter().map(|c| &c.resource_identifier).collect();
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
}
