//! Status feedback: values read from an applied object by its `manifestConfigs` feedback rules,
//! reported in the manifest's `statusFeedback` and a `StatusFeedbackSynced` condition, as
//! upstream's work agent does. `WellKnownStatus` reads upstream's fixed paths for Deployments,
//! DaemonSets, Jobs and Pods; `JSONPaths` reads the rule's own paths (Kubernetes JSONPath, which
//! is RFC 9535 JSONPath without the leading `$`). Without upstream's `RawFeedbackJsonString` gate
//! only integers, strings and booleans are reported, and of several matches the first; with it
//! ([`Reader::raw_json`]) anything else, and several matches as a list, is reported as its JSON
//! text (`jsonRaw`, at most [`MAX_JSON_RAW`] bytes), as upstream's agent does.
use jsonpath_rust::query::js_path_vals;
use serde_json::Value;

use ocm_api::work::{
    FeedbackRule, FeedbackType, FeedbackValue, FieldValue, ManifestConfigOption, ValueType,
};

/// The manifest condition this module sets.
pub const STATUS_FEEDBACK_SYNCED: &str = "StatusFeedbackSynced";
/// The longest `jsonRaw` value reported (upstream's `--max-json-raw-length` default).
pub const MAX_JSON_RAW: usize = 1024;

/// How values are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reader {
    /// Upstream's `RawFeedbackJsonString` gate: values that are not integers, strings or booleans,
    /// and several matches, are reported as JSON text.
    pub raw_json: bool,
}

/// What reading one object by its rules gave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Feedback {
    /// The values found, in rule order.
    pub values: Vec<FeedbackValue>,
    /// Whether any rule is configured (upstream's `NoStatusFeedbackSynced` when none is).
    pub configured: bool,
    /// What went wrong, if anything (values found by the other paths are still reported).
    pub errors: Vec<String>,
    /// The conditions the config's condition rules set ([`super::condition_rules`]).
    pub conditions: Vec<super::condition_rules::RuleCondition>,
}

/// Upstream's well-known paths per `(group, kind)`, read at any version the agent applied.
fn well_known(group: &str, version: &str, kind: &str) -> &'static [(&'static str, &'static str)] {
    match (group, version, kind) {
        ("apps", "v1", "Deployment") => &[
            ("ReadyReplicas", ".status.readyReplicas"),
            ("Replicas", ".status.replicas"),
            ("AvailableReplicas", ".status.availableReplicas"),
        ],
        ("apps", "v1", "DaemonSet") => &[
            ("NumberReady", ".status.numberReady"),
            ("DesiredNumberScheduled", ".status.desiredNumberScheduled"),
            ("NumberAvailable", ".status.numberAvailable"),
        ],
        ("batch", "v1", "Job") => &[
            (
                "JobComplete",
                r#".status.conditions[?(@.type=="Complete")].status"#,
            ),
            ("JobSucceeded", ".status.succeeded"),
        ],
        ("", "v1", "Pod") => &[
            (
                "PodReady",
                r#".status.conditions[?(@.type=="Ready")].status"#,
            ),
            ("PodPhase", ".status.phase"),
        ],
        _ => &[],
    }
}

/// The value at `path` in `object`: `Ok(None)` when nothing is there.
fn value_at(
    reader: Reader,
    name: &str,
    path: &str,
    object: &Value,
) -> Result<Option<FeedbackValue>, String> {
    let path = path.trim();
    // Kubernetes JSONPath may wrap the expression in braces and starts at `.` or `[`.
    let inner = path
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(path);
    let query = if inner.starts_with('$') {
        inner.to_owned()
    } else {
        format!("${inner}")
    };
    let found = js_path_vals(&query, object)
        .map_err(|_| format!("failed to parse json path {path} of {name}"))?;
    let value = match found.as_slice() {
        [] => return Ok(None),
        // Several matches are one list with the gate; the first without, as upstream's.
        [_, _, ..] if reader.raw_json => Value::Array(found.into_iter().cloned().collect()),
        _ => match found.into_iter().find(|v| !v.is_null()) {
            Some(first) => first.clone(),
            None => return Ok(None),
        },
    };
    let field_value = match value {
        Value::String(s) => FieldValue {
            type_: ValueType::String,
            string: Some(s),
            ..FieldValue::default()
        },
        Value::Bool(b) => FieldValue {
            type_: ValueType::Boolean,
            boolean: Some(b),
            ..FieldValue::default()
        },
        Value::Number(n) if n.is_i64() => FieldValue {
            type_: ValueType::Integer,
            integer: n.as_i64(),
            ..FieldValue::default()
        },
        other if reader.raw_json => {
            let text = other.to_string();
            if text.len() > MAX_JSON_RAW {
                return Err(format!(
                    "the length of returned json raw string for name {name} is larger than the maximum length {MAX_JSON_RAW}"
                ));
            }
            FieldValue {
                type_: ValueType::JsonRaw,
                json_raw: Some(text),
                ..FieldValue::default()
            }
        }
        other => {
            let kind = match other {
                Value::Number(_) => "float",
                Value::Array(_) => "list",
                _ => "object",
            };
            return Err(format!(
                "the type {kind} of the value for {name} is not supported"
            ));
        }
    };
    Ok(Some(FeedbackValue {
        name: name.to_owned(),
        field_value,
    }))
}

/// The values one rule asks of `object`, whose group, version and kind are given.
fn by_rule(
    reader: Reader,
    rule: &FeedbackRule,
    gvk: (&str, &str, &str),
    object: &Value,
    out: &mut Feedback,
) {
    let paths: Vec<(&str, &str)> = match rule.type_ {
        FeedbackType::WellKnownStatus => {
            let paths = well_known(gvk.0, gvk.1, gvk.2);
            if paths.is_empty() {
                let (group, version, kind) = gvk;
                let gv = if group.is_empty() {
                    version.to_owned()
                } else {
                    format!("{group}/{version}")
                };
                out.errors.push(format!(
                    "cannot find the wellknown statuses for resource with gvk {gv}, Kind={kind}"
                ));
            }
            paths.to_vec()
        }
        FeedbackType::JsonPaths => {
            let mut paths = Vec::new();
            for p in &rule.json_paths {
                if p.version
                    .as_deref()
                    .is_some_and(|v| !v.is_empty() && v != gvk.1)
                {
                    out.errors.push(format!(
                        "version set in the path {} is not matched for the related resource",
                        p.name
                    ));
                } else {
                    paths.push((p.name.as_str(), p.path.as_str()));
                }
            }
            paths
        }
    };
    for (name, path) in paths {
        match value_at(reader, name, path, object) {
            Ok(Some(v)) => out.values.push(v),
            Ok(None) => {}
            Err(e) => out.errors.push(e),
        }
    }
}

/// What `config`'s feedback rules read from `object` (group, version and kind as applied).
#[must_use]
pub fn read(
    reader: Reader,
    config: Option<&ManifestConfigOption>,
    gvk: (&str, &str, &str),
    object: &Value,
) -> Feedback {
    let rules = config
        .map(|c| c.feedback_rules.as_slice())
        .unwrap_or_default();
    let mut out = Feedback {
        configured: !rules.is_empty(),
        ..Feedback::default()
    };
    for rule in rules {
        by_rule(reader, rule, gvk, object, &mut out);
    }
    if let Some(config) = config {
        out.conditions = super::condition_rules::evaluate(&config.condition_rules, gvk, object);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::JsonPath;
    use serde_json::json;

    fn rule(type_: FeedbackType, paths: &[(&str, &str)]) -> ManifestConfigOption {
        ManifestConfigOption {
            feedback_rules: vec![FeedbackRule {
                type_,
                json_paths: paths
                    .iter()
                    .map(|(n, p)| JsonPath {
                        name: (*n).into(),
                        version: None,
                        path: (*p).into(),
                    })
                    .collect(),
            }],
            ..ManifestConfigOption::default()
        }
    }

    fn names(f: &Feedback) -> Vec<(&str, FieldValue)> {
        f.values
            .iter()
            .map(|v| (v.name.as_str(), v.field_value.clone()))
            .collect()
    }

    fn int(i: i64) -> FieldValue {
        FieldValue {
            type_: ValueType::Integer,
            integer: Some(i),
            ..FieldValue::default()
        }
    }

    fn string(s: &str) -> FieldValue {
        FieldValue {
            type_: ValueType::String,
            string: Some(s.into()),
            ..FieldValue::default()
        }
    }

    #[test]
    fn well_known_deployment_reports_what_is_there() {
        let deploy = json!({"status": {"replicas": 2, "readyReplicas": 1}});
        let f = read(
            Reader::default(),
            Some(&rule(FeedbackType::WellKnownStatus, &[])),
            ("apps", "v1", "Deployment"),
            &deploy,
        );
        assert!(f.errors.is_empty(), "{:?}", f.errors);
        assert_eq!(names(&f), [("ReadyReplicas", int(1)), ("Replicas", int(2))]);
    }

    #[test]
    fn well_known_job_and_pod_read_conditions_by_type() {
        let job = json!({"status": {"succeeded": 1, "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True"},
            {"type": "Complete", "status": "True"}]}});
        let f = read(
            Reader::default(),
            Some(&rule(FeedbackType::WellKnownStatus, &[])),
            ("batch", "v1", "Job"),
            &job,
        );
        assert_eq!(
            names(&f),
            [("JobComplete", string("True")), ("JobSucceeded", int(1))]
        );
        let pod = json!({"status": {"phase": "Succeeded"}});
        let f = read(
            Reader::default(),
            Some(&rule(FeedbackType::WellKnownStatus, &[])),
            ("", "v1", "Pod"),
            &pod,
        );
        assert_eq!(names(&f), [("PodPhase", string("Succeeded"))]);
    }

    #[test]
    fn well_known_of_an_unknown_kind_is_an_error() {
        let f = read(
            Reader::default(),
            Some(&rule(FeedbackType::WellKnownStatus, &[])),
            ("", "v1", "ConfigMap"),
            &json!({}),
        );
        assert!(f.values.is_empty());
        assert_eq!(
            f.errors,
            ["cannot find the wellknown statuses for resource with gvk v1, Kind=ConfigMap"]
        );
    }

    #[test]
    fn with_the_raw_json_gate_anything_is_reported_as_json_text_up_to_its_limit() {
        let raw = Reader { raw_json: true };
        let object = json!({"spec": {"ports": [{"port": 80}, {"port": 443}], "ratio": 0.5, "name": "web"},
            "big": "x".repeat(MAX_JSON_RAW), "bigs": ["x".repeat(600), "y".repeat(600)]});
        let config = rule(
            FeedbackType::JsonPaths,
            &[
                ("ports", ".spec.ports"),
                ("numbers", ".spec.ports[*].port"),
                ("ratio", ".spec.ratio"),
                ("name", ".spec.name"),
                ("too-big", ".big"),
                ("both", ".bigs"),
            ],
        );
        let f = read(raw, Some(&config), ("", "v1", "Service"), &object);
        let text = |s: &str| FieldValue {
            type_: ValueType::JsonRaw,
            json_raw: Some(s.into()),
            ..FieldValue::default()
        };
        assert_eq!(
            names(&f)[..4],
            [
                ("ports", text(r#"[{"port":80},{"port":443}]"#)),
                ("numbers", text("[80,443]")),
                ("ratio", text("0.5")),
                ("name", string("web")),
            ]
        );
        // A string is a string, whatever its length; a list past the limit is refused.
        assert_eq!(names(&f)[4].0, "too-big");
        assert_eq!(
            f.errors,
            [
                "the length of returned json raw string for name both is larger than the maximum length 1024"
            ]
        );
        // Without the gate: the first match, and no JSON text.
        let plain = read(
            Reader::default(),
            Some(&config),
            ("", "v1", "Service"),
            &object,
        );
        assert!(
            plain
                .values
                .iter()
                .any(|v| v.name == "numbers" && v.field_value == int(80))
        );
        assert!(
            plain
                .values
                .iter()
                .all(|v| v.field_value.type_ != ValueType::JsonRaw)
        );
    }

    #[test]
    fn json_paths_report_typed_values_and_name_bad_ones() {
        let cm = json!({"data": {"color": "blue"}, "flag": true, "ratio": 0.5,
            "list": [1, 2], "nothing": null});
        let config = rule(
            FeedbackType::JsonPaths,
            &[
                ("color", ".data.color"),
                ("braced", "{.data.color}"),
                ("flag", ".flag"),
                ("missing", ".data.size"),
                ("null", ".nothing"),
                ("ratio", ".ratio"),
                ("list", ".list"),
                ("broken", ".data[?("),
            ],
        );
        let f = read(
            Reader::default(),
            Some(&config),
            ("", "v1", "ConfigMap"),
            &cm,
        );
        let boolean = FieldValue {
            type_: ValueType::Boolean,
            boolean: Some(true),
            ..FieldValue::default()
        };
        assert_eq!(
            names(&f),
            [
                ("color", string("blue")),
                ("braced", string("blue")),
                ("flag", boolean)
            ]
        );
        assert_eq!(
            f.errors,
            [
                "the type float of the value for ratio is not supported",
                "the type list of the value for list is not supported",
                "failed to parse json path .data[?( of broken",
            ]
        );
    }

    #[test]
    fn a_path_for_another_version_is_refused() {
        let mut config = rule(FeedbackType::JsonPaths, &[("r", ".status.replicas")]);
        config.feedback_rules[0].json_paths[0].version = Some("v1beta1".into());
        let f = read(
            Reader::default(),
            Some(&config),
            ("apps", "v1", "Deployment"),
            &json!({"status": {"replicas": 1}}),
        );
        assert!(f.values.is_empty());
        assert_eq!(
            f.errors,
            ["version set in the path r is not matched for the related resource"]
        );
    }

    #[test]
    fn no_rules_means_nothing_configured() {
        let f = read(
            Reader::default(),
            None,
            ("apps", "v1", "Deployment"),
            &json!({"status": {}}),
        );
        assert!(!f.configured && f.values.is_empty() && f.errors.is_empty());
    }
}
