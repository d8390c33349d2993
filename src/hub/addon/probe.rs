//! How the hub judges a template add-on's health from the status its deploy work feeds back:
//! upstream's workload checkers ([`workloads`]), and the `WorkField` prober ([`Fields`]): the
//! template names objects, what to feed back from each and, where upstream's code add-ons pass a
//! Go function, a CEL expression over the values that must hold.
use std::sync::{Arc, LazyLock};

use cel::{Context, Env, Program, Value};

use crate::api::addon::{HEALTH_PROBE_FIELDS_ANNOTATION, ProbeField};
use crate::api::work::{
    FeedbackRule, FeedbackType, FeedbackValue, ManifestConfigOption, ManifestWorkStatus,
    ResourceIdentifier, StatusFeedbackResult, ValueType,
};

static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .expect("the string extension declares no clashing names");
    Arc::new(env)
});

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
    /// Parses the fields annotation's `text` (placeholders filled in) and compiles each check.
    pub fn parse(text: &str) -> Result<Self, String> {
        let fields: Vec<ProbeField> = serde_yaml::from_str(text)
            .map_err(|e| format!("annotation {HEALTH_PROBE_FIELDS_ANNOTATION}: {e}"))?;
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

    /// Adds the fields' rules to the work's manifest configs, merged into an object's existing
    /// rules as upstream's `mergeFeedbackRule` merges them (a JSON path already named is kept).
    pub fn ask(&self, configs: &mut Vec<ManifestConfigOption>) {
        for (field, _) in &self.0 {
            let index = configs
                .iter()
                .position(|c| c.resource_identifier == field.resource_identifier);
            let Some(index) = index else {
                configs.push(ManifestConfigOption {
                    resource_identifier: field.resource_identifier.clone(),
                    feedback_rules: field.probe_rules.clone(),
                    ..ManifestConfigOption::default()
                });
                continue;
            };
            for rule in &field.probe_rules {
                merge_rule(&mut configs[index].feedback_rules, rule);
            }
        }
    }

    /// Upstream's probe over fed-back results: fields with nothing fed back yet are skipped, none
    /// fed back at all is [`Probe::NoResults`], and each field fed back must pass its check.
    #[must_use]
    pub fn check(&self, status: &ManifestWorkStatus) -> Probe {
        let mut found = 0;
        for (field, program) in &self.0 {
            let id = &field.resource_identifier;
            let group = id.group.as_deref().unwrap_or_default();
            let namespace = id.namespace.as_deref().unwrap_or_default();
            let Some(feedback) = fed_back(status, group, &id.resource, namespace, &id.name) else {
                continue;
            };
            found += 1;
            if let Err(why) = holds(program, &feedback.values) {
                return Probe::Unhealthy(format!("{}: {} {why}", describe(id), field.healthy_when));
            }
        }
        if found == 0 {
            Probe::NoResults
        } else {
            Probe::Healthy
        }
    }
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
    match program.execute(&ctx) {
        Ok(Value::Bool(true)) => Ok(()),
        Ok(Value::Bool(false)) => Err("is false".into()),
        Ok(other) => Err(format!("is {other:?}, not a boolean")),
        Err(e) => Err(format!("failed: {e}")),
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
#[path = "probe_tests.rs"]
mod tests;
