//! Condition rules (`manifestConfigs[].conditionRules`), as upstream's work agent evaluates them:
//! each rule sets a condition of its name on the manifest from CEL expressions over the applied
//! `object` (all must be true), with a message from `messageExpression` (which also sees the
//! `result`), else `message`, else `Manifest is [not] <condition>`. `WellKnownConditions` rules
//! take the agent's own expressions for the kind: `Complete` for Jobs (complete or failed) and Pods
//! (succeeded or failed). Reasons are upstream's, all starting with `ConditionRule`, which is how
//! these conditions are told from the agent's own. Evaluated under the same cost limit as every
//! other CEL here ([`ocm_runtime::cel_budget`]).
use std::sync::{Arc, LazyLock};

use cel::{Context, Env, Program, Value};

use ocm_api::conditions::{FALSE, TRUE};
use ocm_api::work::{ConditionRule, ConditionRuleType};
use ocm_runtime::cel_budget::{self, Failure, Meter, PER_CALL_LIMIT};

/// The reasons rule conditions carry all start with this.
pub const REASON_PREFIX: &str = "ConditionRule";
/// The expressions gave a result.
pub const EVALUATED: &str = "ConditionRuleEvaluated";
/// An expression did not compile, failed or gave no boolean.
pub const EXPRESSION_ERROR: &str = "ConditionRuleExpressionError";
pub use ocm_api::work::COMPLETE;

static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(cel_budget::env()));

/// A condition a rule set on a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleCondition {
    /// The rule's condition name.
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: &'static str,
    /// One of the `ConditionRule…` reasons.
    pub reason: &'static str,
    /// What the rule says.
    pub message: String,
}

/// The agent's own rule for `condition` of a kind, as (expressions, message expression).
fn well_known(gvk: (&str, &str, &str), condition: &str) -> Option<(&'static str, &'static str)> {
    match (gvk, condition) {
        (("batch", "v1", "Job"), COMPLETE) => Some((
            "hasConditions(object.status) && object.status.conditions.exists(c, (c.type == 'Complete' || c.type == 'Failed') && c.status == 'True')",
            r#"result ? "Job is finished" : "Job is not finished""#,
        )),
        (("", "v1", "Pod"), COMPLETE) => Some((
            "object.status.phase in ['Succeeded', 'Failed']",
            r#""Pod is in phase " + object.status.phase"#,
        )),
        _ => None,
    }
}

/// The conditions `rules` set on `object` (of `gvk`); a well-known rule for a kind that has none
/// sets nothing, as upstream's.
#[must_use]
pub fn evaluate(
    rules: &[ConditionRule],
    gvk: (&str, &str, &str),
    object: &serde_json::Value,
) -> Vec<RuleCondition> {
    // Most configs have feedback rules only: the object is not converted for nothing.
    if rules.is_empty() {
        return Vec::new();
    }
    let Ok(object) = cel::to_value(object.clone()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for rule in rules {
        let (expressions, message_expression) = match rule.type_ {
            ConditionRuleType::Cel => (
                rule.cel_expressions.clone(),
                rule.message_expression.clone(),
            ),
            ConditionRuleType::WellKnownConditions => {
                let Some((expression, message)) = well_known(gvk, &rule.condition) else {
                    continue;
                };
                (
                    vec![expression.to_string()],
                    // The kind's own message expression unless the rule brings one, as upstream's
                    // (a rule's plain `message` shows only when no expression gives one).
                    rule.message_expression
                        .clone()
                        .or_else(|| Some(message.to_string())),
                )
            }
        };
        out.push(by_rule(
            rule,
            &expressions,
            message_expression.as_deref(),
            &object,
        ));
    }
    out
}

fn by_rule(
    rule: &ConditionRule,
    expressions: &[String],
    message_expression: Option<&str>,
    object: &Value,
) -> RuleCondition {
    let condition = |status, reason, message| RuleCondition {
        type_: rule.condition.clone(),
        status,
        reason,
        message,
    };
    let mut result = true;
    for expression in expressions {
        match run(expression, object, None) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => {
                result = false;
                break;
            }
            Ok(other) => {
                return condition(
                    FALSE,
                    EXPRESSION_ERROR,
                    format!("expected bool result, got {}", type_name(&other)),
                );
            }
            Err(e) => return condition(FALSE, EXPRESSION_ERROR, e),
        }
    }
    let message = match message_expression.map(|m| run(m, object, Some(result))) {
        Some(Ok(Value::String(s))) if !s.is_empty() => s.to_string(),
        Some(Ok(Value::String(_))) | None => default_message(rule, result),
        Some(Ok(other)) => format!(
            "expected message expression to have a string result, got {}",
            type_name(&other)
        ),
        Some(Err(e)) => e,
    };
    let status = if result { TRUE } else { FALSE };
    condition(status, EVALUATED, message)
}

fn default_message(rule: &ConditionRule, result: bool) -> String {
    match (&rule.message, result) {
        (Some(m), _) if !m.is_empty() => m.clone(),
        (_, true) => format!("Manifest is {}", rule.condition),
        (_, false) => format!("Manifest is not {}", rule.condition),
    }
}

/// Compiles and runs `expression` with `object` (and `result`, for messages), metered.
fn run(expression: &str, object: &Value, result: Option<bool>) -> Result<Value, String> {
    let program: Program = ENV
        .compile(expression)
        .map_err(|e| format!("compiling {expression:?}: {e}"))?;
    let mut ctx = Context::with_env(ENV.clone());
    ctx.add_variable_from_value("object", object.clone());
    if let Some(result) = result {
        ctx.add_variable_from_value("result", Value::Bool(result));
    }
    // OCM's conditions library: whether a status has a non-empty `conditions` list.
    ctx.add_function("hasConditions", |status: Value| -> bool {
        let Value::Map(map) = status else {
            return false;
        };
        map.map
            .get(&cel::objects::Key::String(Arc::new("conditions".into())))
            .is_some_and(|c| matches!(c, Value::List(l) if !l.is_empty()))
    })
    .map_err(|e| e.to_string())?;
    let meter = Meter::new(PER_CALL_LIMIT);
    meter.install(&mut ctx).map_err(|e| e.to_string())?;
    match cel_budget::execute(&program, &ctx, &meter) {
        Ok(value) => Ok(value),
        Err(Failure::Exceeded(limit)) => {
            Err(format!("CEL evaluation exceeded the cost limit of {limit}"))
        }
        Err(Failure::Error(e)) => Err(e.to_string()),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Int(_) | Value::UInt(_) => "int",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Null => "null",
        _ => "another type",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(condition: &str, type_: ConditionRuleType, expressions: &[&str]) -> ConditionRule {
        ConditionRule {
            condition: condition.into(),
            type_,
            cel_expressions: expressions.iter().map(|e| (*e).to_string()).collect(),
            message: None,
            message_expression: None,
        }
    }

    #[test]
    fn well_known_completion_of_jobs_and_pods() {
        let complete = rule(COMPLETE, ConditionRuleType::WellKnownConditions, &[]);
        let job = json!({"status": {"conditions": [{"type": "Complete", "status": "True"}]}});
        let done = evaluate(
            std::slice::from_ref(&complete),
            ("batch", "v1", "Job"),
            &job,
        );
        assert_eq!(
            done,
            [RuleCondition {
                type_: COMPLETE.into(),
                status: TRUE,
                reason: EVALUATED,
                message: "Job is finished".into()
            }]
        );
        let running = evaluate(
            std::slice::from_ref(&complete),
            ("batch", "v1", "Job"),
            &json!({"status": {}}),
        );
        assert_eq!(
            (running[0].status, running[0].message.as_str()),
            (FALSE, "Job is not finished")
        );
        let pod = json!({"status": {"phase": "Succeeded"}});
        let pod_done = evaluate(std::slice::from_ref(&complete), ("", "v1", "Pod"), &pod);
        assert_eq!(pod_done[0].message, "Pod is in phase Succeeded");
        // A kind without a well-known rule: nothing.
        assert!(evaluate(&[complete], ("apps", "v1", "Deployment"), &json!({})).is_empty());
    }

    #[test]
    fn cel_rules_and_their_messages() {
        let cm = json!({"data": {"ready": "yes"}});
        let mut ready = rule(
            "Ready",
            ConditionRuleType::Cel,
            &["object.data.ready == 'yes'", "true"],
        );
        assert_eq!(
            evaluate(std::slice::from_ref(&ready), ("", "v1", "ConfigMap"), &cm)[0].message,
            "Manifest is Ready"
        );
        ready.message_expression = Some(r#"result ? "ok: " + object.data.ready : "no""#.into());
        let out = evaluate(std::slice::from_ref(&ready), ("", "v1", "ConfigMap"), &cm);
        assert_eq!((out[0].status, out[0].message.as_str()), (TRUE, "ok: yes"));
        let not = rule(
            "Ready",
            ConditionRuleType::Cel,
            &["object.data.ready == 'no'"],
        );
        assert_eq!(
            evaluate(&[not], ("", "v1", "ConfigMap"), &cm)[0].message,
            "Manifest is not Ready"
        );
        // Errors are the rule's, as False with the reason that says so.
        for bad in ["object.data.missing == 'x'", "1 + 1", "object.("] {
            let out = evaluate(
                &[rule("Ready", ConditionRuleType::Cel, &[bad])],
                ("", "v1", "ConfigMap"),
                &cm,
            );
            assert_eq!(
                (out[0].status, out[0].reason),
                (FALSE, EXPRESSION_ERROR),
                "{bad}"
            );
        }
    }
}
