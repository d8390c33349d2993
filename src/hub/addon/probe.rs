//! How the hub judges a template add-on's health from the status its deploy work feeds back:
//! upstream's workload checkers ([`workloads`]), and the `WorkField` prober ([`Fields`]): the
//! template names objects, what to feed back from each and, where upstream's code add-ons pass a
//! Go function, a CEL expression over the values that must hold.
use std::sync::{Arc, LazyLock};

use cel::{Context, Env, Program, Value};

use crate::cel_budget::{self, Failure, Meter, PER_CALL_LIMIT};

use crate::api::addon::{HEALTH_PROBE_FIELDS_ANNOTATION, ProbeField};
use crate::api::work::identifier::identifies_reported;
use crate::api::work::{
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
#[path = "probe_tests.rs"]
mod tests;
