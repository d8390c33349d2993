//! `celSelector`: CEL expressions over a ManagedCluster, as upstream's placement
//! (`pkg/placement/helpers/cel.go`): the variable `managedCluster` is the cluster object, each
//! expression must be true (they are ANDed), and an expression that fails to evaluate excludes
//! the cluster. Besides standard CEL and its string extension, upstream's own functions are here:
//! `managedCluster.scores("<AddOnPlacementScore>")` (a list of `{name, value}`), and Kubernetes'
//! `semver(s[, normalize])`, `isSemver(s)`, `quantity(s)`, `isQuantity(s)` with `isGreaterThan`,
//! `isLessThan`, `compareTo`, `major`, `minor`, `patch`, `asInteger`, `asApproximateFloat`, and
//! `parseJSON`. Kubernetes' IP, CIDR, URL and format libraries are not.
//!
//! Every evaluation is metered ([`ocm_runtime::cel_budget`]): one expression on one cluster may cost
//! [`PER_CALL_LIMIT`], and all of a placement's evaluations in one scheduling [`BUDGET`]; past
//! either, scheduling stops and the placement is reported misconfigured, naming the limit.
use std::cmp::Ordering;
use std::sync::{Arc, LazyLock};

use cel::extractors::This;
use cel::objects::Opaque;
use cel::{Context, Env, ExecutionError, Program, Value};

use ocm_runtime::cel_budget::{self, Failure, Meter, PER_CALL_LIMIT};

use ocm_api::cluster::{AddOnPlacementScore, ManagedCluster};
use ocm_api::quantity::parse_milli;

/// Finds the AddOnPlacementScore named (second) in a cluster's namespace (first).
pub type Scores = Arc<dyn Fn(&str, &str) -> Option<Arc<AddOnPlacementScore>> + Send + Sync>;

/// What all of one placement's CEL evaluations may cost in one scheduling, over every cluster
/// (upstream's `RuntimeCELCostBudget`, in iterations here).
pub const BUDGET: u64 = 10_000_000;

static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(cel_budget::env()));

/// Compiled expressions, all of which a cluster must satisfy.
pub struct Selector {
    programs: Vec<(String, Program)>,
}

/// An evaluation stopped at a limit: upstream's `PlacementMisconfigured` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exceeded(pub String);

/// A semantic version (`semver("1.2.3")`).
#[derive(Debug, PartialEq, Eq)]
struct Semver(semver::Version);

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &'static str {
        "kubernetes.Semver"
    }
}

/// A Kubernetes quantity (`quantity("2Gi")`), in thousandths.
#[derive(Debug, PartialEq, Eq)]
struct Quantity(i128);

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &'static str {
        "kubernetes.Quantity"
    }
}

fn parse_semver(text: &str, normalize: bool) -> Option<semver::Version> {
    if !normalize {
        return semver::Version::parse(text).ok();
    }
    let text = text.strip_prefix('v').unwrap_or(text);
    let (core, rest) = text
        .find(['-', '+'])
        .map_or((text, ""), |i| text.split_at(i));
    let mut parts: Vec<String> = core
        .split('.')
        .map(|p| p.trim_start_matches('0').to_owned())
        .map(|p| if p.is_empty() { "0".into() } else { p })
        .collect();
    parts.resize(3, "0".into());
    semver::Version::parse(&format!("{}{rest}", parts.join("."))).ok()
}

fn error(function: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

/// The order of two semvers or two quantities.
fn compare(function: &str, a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    if let (Value::Opaque(a), Value::Opaque(b)) = (a, b) {
        if let (Some(a), Some(b)) = (a.downcast_ref::<Semver>(), b.downcast_ref::<Semver>()) {
            return Ok(a.0.cmp(&b.0));
        }
        if let (Some(a), Some(b)) = (a.downcast_ref::<Quantity>(), b.downcast_ref::<Quantity>()) {
            return Ok(a.0.cmp(&b.0));
        }
    }
    Err(error(function, "compares two semvers or two quantities"))
}

fn semver_part(
    function: &str,
    v: &Value,
    part: fn(&semver::Version) -> u64,
) -> Result<i64, ExecutionError> {
    match v {
        Value::Opaque(o) => o
            .downcast_ref::<Semver>()
            .map(|s| i64::try_from(part(&s.0)).unwrap_or(i64::MAX))
            .ok_or_else(|| error(function, "needs a semver")),
        _ => Err(error(function, "needs a semver")),
    }
}

fn quantity_of(function: &str, v: &Value) -> Result<i128, ExecutionError> {
    match v {
        Value::Opaque(o) => o
            .downcast_ref::<Quantity>()
            .map(|q| q.0)
            .ok_or_else(|| error(function, "needs a quantity")),
        _ => Err(error(function, "needs a quantity")),
    }
}

/// Declares the functions that need no cluster.
fn add_library(ctx: &mut Context<'_, '_>) -> Result<(), cel::DeclarationError> {
    ctx.add_function(
        "semver",
        |args: cel::extractors::Arguments| -> Result<Value, ExecutionError> {
            let (text, normalize) = match args.0.as_slice() {
                [Value::String(s)] => (s.clone(), false),
                [Value::String(s), Value::Bool(n)] => (s.clone(), *n),
                _ => return Err(error("semver", "takes a string and an optional bool")),
            };
            parse_semver(&text, normalize)
                .map(|v| Value::Opaque(Arc::new(Semver(v))))
                .ok_or_else(|| error("semver", format!("{text:?} is not a semantic version")))
        },
    )?;
    ctx.add_function("isSemver", |args: cel::extractors::Arguments| -> bool {
        match args.0.as_slice() {
            [Value::String(s)] => parse_semver(s, false).is_some(),
            [Value::String(s), Value::Bool(n)] => parse_semver(s, *n).is_some(),
            _ => false,
        }
    })?;
    ctx.add_function(
        "quantity",
        |s: Arc<String>| -> Result<Value, ExecutionError> {
            parse_milli(&s)
                .map(|q| Value::Opaque(Arc::new(Quantity(q))))
                .ok_or_else(|| error("quantity", format!("{s:?} is not a quantity")))
        },
    )?;
    ctx.add_function("isQuantity", |s: Arc<String>| parse_milli(&s).is_some())?;
    ctx.add_function("isGreaterThan", |This(a): This<Value>, b: Value| {
        compare("isGreaterThan", &a, &b).map(Ordering::is_gt)
    })?;
    ctx.add_function("isLessThan", |This(a): This<Value>, b: Value| {
        compare("isLessThan", &a, &b).map(Ordering::is_lt)
    })?;
    ctx.add_function("compareTo", |This(a): This<Value>, b: Value| {
        compare("compareTo", &a, &b).map(|o| o as i64)
    })?;
    ctx.add_function("major", |This(v): This<Value>| {
        semver_part("major", &v, |s| s.major)
    })?;
    ctx.add_function("minor", |This(v): This<Value>| {
        semver_part("minor", &v, |s| s.minor)
    })?;
    ctx.add_function("patch", |This(v): This<Value>| {
        semver_part("patch", &v, |s| s.patch)
    })?;
    ctx.add_function(
        "asInteger",
        |This(v): This<Value>| -> Result<i64, ExecutionError> {
            let milli = quantity_of("asInteger", &v)?;
            if milli % 1000 != 0 {
                return Err(error("asInteger", "the quantity is not a whole number"));
            }
            i64::try_from(milli / 1000).map_err(|_| error("asInteger", "the quantity is too large"))
        },
    )?;
    ctx.add_function("asApproximateFloat", |This(v): This<Value>| {
        #[allow(clippy::cast_precision_loss)]
        quantity_of("asApproximateFloat", &v).map(|m| m as f64 / 1000.0)
    })?;
    ctx.add_function(
        "parseJSON",
        |This(s): This<Arc<String>>| -> Result<Value, ExecutionError> {
            let json: serde_json::Value =
                serde_json::from_str(&s).map_err(|e| error("parseJSON", e))?;
            cel::to_value(json).map_err(|e| error("parseJSON", e))
        },
    )?;
    Ok(())
}

impl Selector {
    /// Compiles `expressions`; the error is upstream's `PlacementMisconfigured` message.
    pub fn compile(expressions: &[String]) -> Result<Self, String> {
        let mut programs = Vec::new();
        for expression in expressions {
            let program = ENV
                .compile(expression)
                .map_err(|e| format!("Predicate:compilation failed: {e}"))?;
            // Parsing does not resolve names; a (metered) dry run against an empty cluster finds
            // a function or variable that no cluster could make exist.
            let meter = Meter::new(PER_CALL_LIMIT);
            let mut probe = Context::with_env(ENV.clone());
            add_library(&mut probe).map_err(|e| format!("Predicate:{e}"))?;
            meter
                .install(&mut probe)
                .map_err(|e| format!("Predicate:{e}"))?;
            probe
                .add_variable(
                    "managedCluster",
                    serde_json::json!({"metadata": {"name": ""}}),
                )
                .map_err(|e| format!("Predicate:{e}"))?;
            probe
                .add_function("scores", |_: This<Value>, _: Arc<String>| {
                    Value::List(Arc::new(vec![]))
                })
                .map_err(|e| format!("Predicate:{e}"))?;
            match cel_budget::execute(&program, &probe, &meter) {
                Err(Failure::Error(ExecutionError::UndeclaredReference(name))) => {
                    return Err(format!(
                        "Predicate:compilation failed: undeclared reference to '{name}' in {expression:?}"
                    ));
                }
                Err(Failure::Exceeded(limit)) => {
                    return Err(over_limit(expression, limit, "an empty cluster"));
                }
                _ => {}
            }
            programs.push((expression.clone(), program));
        }
        Ok(Self { programs })
    }

    /// Whether `cluster` satisfies every expression; `scores` finds its AddOnPlacementScores.
    /// What the evaluations cost is taken from `budget`; `Err` when an evaluation or the budget
    /// ran out (the cluster's answer then means nothing).
    pub fn matches(
        &self,
        cluster: &ManagedCluster,
        scores: &Scores,
        budget: &mut u64,
    ) -> Result<bool, Exceeded> {
        if self.programs.is_empty() {
            return Ok(true);
        }
        let Ok(json) = serde_json::to_value(cluster) else {
            return Ok(false);
        };
        let name = cluster.metadata.name.clone().unwrap_or_default();
        let scores = scores.clone();
        let mut ctx = Context::with_env(ENV.clone());
        if add_library(&mut ctx).is_err() || ctx.add_variable("managedCluster", json).is_err() {
            return Ok(false);
        }
        let cluster_name = name.clone();
        let added = ctx.add_function(
            "scores",
            move |_: This<Value>, resource: Arc<String>| -> Result<Value, ExecutionError> {
                let found = scores(&cluster_name, &resource)
                    .ok_or_else(|| error("scores", format!("no AddOnPlacementScore {resource}")))?;
                let list = found
                    .status
                    .iter()
                    .flat_map(|s| &s.scores)
                    .map(|i| cel::to_value(serde_json::json!({"name": i.name, "value": i.value})))
                    .collect::<Result<Vec<Value>, _>>()
                    .map_err(|e| error("scores", e))?;
                Ok(Value::List(Arc::new(list)))
            },
        );
        if added.is_err() {
            return Ok(false);
        }
        for (expression, program) in &self.programs {
            let limit = PER_CALL_LIMIT.min(*budget);
            let meter = Meter::new(limit);
            // Each evaluation charges its own meter (declaring it again replaces the last).
            if meter.install(&mut ctx).is_err() {
                return Ok(false);
            }
            let result = cel_budget::execute(program, &ctx, &meter);
            *budget = budget.saturating_sub(meter.used());
            match result {
                Ok(Value::Bool(true)) => {}
                Err(Failure::Exceeded(_)) if limit < PER_CALL_LIMIT => {
                    return Err(Exceeded(format!(
                        "Predicate:the CEL expressions exceeded the placement's cost budget of \
                         {BUDGET} in one scheduling (at cluster {name})"
                    )));
                }
                Err(Failure::Exceeded(limit)) => {
                    return Err(Exceeded(over_limit(
                        expression,
                        limit,
                        &format!("cluster {name}"),
                    )));
                }
                // An expression that is false or fails to evaluate excludes the cluster.
                _ => return Ok(false),
            }
        }
        Ok(true)
    }
}

/// The misconfiguration of an expression that ran out of its per-call limit.
fn over_limit(expression: &str, limit: u64, on: &str) -> String {
    format!("Predicate:CEL expression {expression:?} exceeded the cost limit of {limit} on {on}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> ManagedCluster {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": "c1", "labels": {"env": "prod", "version": "1.14.2"}},
            "spec": {}, "status": {"version": {"kubernetes": "v1.31.0"}, "allocatable": {"memory": "16Gi"}}
        }))
        .unwrap()
    }

    fn score(_: &str, _: &str) -> Option<Arc<AddOnPlacementScore>> {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScore",
            "metadata": {"name": "usage", "namespace": "c1"},
            "status": {"scores": [{"name": "cpu", "value": 5}]}
        }))
        .ok()
        .map(Arc::new)
    }

    fn matches(expression: &str) -> bool {
        Selector::compile(&[expression.to_owned()])
            .unwrap()
            .matches(
                &cluster(),
                &(Arc::new(score) as Scores),
                &mut BUDGET.clone(),
            )
            .unwrap()
    }

    #[test]
    fn upstreams_examples_evaluate_over_the_cluster() {
        assert!(matches(
            r#"managedCluster.metadata.labels["env"] == "prod""#
        ));
        assert!(matches(
            r#"managedCluster.metadata.labels["version"].matches('^1\\.(14|15)\\.\\d+$')"#
        ));
        assert!(matches(
            r#"semver(managedCluster.metadata.labels["version"]).isGreaterThan(semver("1.14.0"))"#
        ));
        assert!(matches(
            r"semver(managedCluster.status.version.kubernetes, true).minor() == 31"
        ));
        assert!(matches(
            r#"quantity(managedCluster.status.allocatable.memory).isGreaterThan(quantity("8Gi"))"#
        ));
        assert!(matches(
            r#"managedCluster.scores("usage").filter(s, s.name == 'cpu').all(e, e.value > 3)"#
        ));
        assert!(!matches(
            r#"managedCluster.scores("usage").exists(e, e.value > 10)"#
        ));
        assert!(matches(r#"'{"a": [1]}'.parseJSON().a[0] == 1"#));
        // An evaluation error (a label the cluster lacks) excludes the cluster.
        assert!(!matches(r#"managedCluster.metadata.labels["zone"] == "a""#));
    }

    #[test]
    fn what_does_not_compile_is_refused_with_the_reason() {
        let err = |e: &str| Selector::compile(&[e.to_owned()]).err().unwrap();
        assert!(
            err("1 +").starts_with("Predicate:compilation failed: ERROR: <input>:1:4"),
            "{}",
            err("1 +")
        );
        assert!(err("nope(managedCluster)").contains("undeclared reference to 'nope'"));
        assert!(err("cluster.metadata.name == 'a'").contains("undeclared reference to 'cluster'"));
        // A dry run that would not end is stopped, and named.
        let runaway = "[0,1,2,3,4,5,6,7,8,9].all(a, [0,1,2,3,4,5,6,7,8,9].all(b, [0,1,2,3,4,5,6,7,8,9].all(c, \
            [0,1,2,3,4,5,6,7,8,9].all(d, [0,1,2,3,4,5,6,7,8,9].all(e, [0,1,2,3,4,5,6,7,8,9].all(f, \
            [0,1,2,3,4,5,6,7,8,9].all(g, true)))))))";
        assert!(
            err(runaway).contains("exceeded the cost limit of 1000000 on an empty cluster"),
            "{}",
            err(runaway)
        );
    }

    #[test]
    fn an_evaluation_past_its_limit_or_the_placements_budget_is_named() {
        let long: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let list = format!("[{}]", long.join(","));
        let four = format!(
            "managedCluster.metadata.name == 'c1' && {list}.all(a, {list}.all(b, {list}.all(c, {list}.all(d, true))))"
        );
        // The dry run stops at the name check; the cluster's evaluation does not.
        let selector = Selector::compile(std::slice::from_ref(&four)).unwrap();
        let scores = Arc::new(score) as Scores;
        let mut budget = BUDGET;
        let started = std::time::Instant::now();
        let err = selector
            .matches(&cluster(), &scores, &mut budget)
            .unwrap_err();
        assert!(
            err.0
                .contains("exceeded the cost limit of 1000000 on cluster c1"),
            "{err:?}"
        );
        assert!(
            budget < BUDGET - PER_CALL_LIMIT + PER_CALL_LIMIT / 10,
            "{budget}"
        );
        assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
        // What is left of the placement's budget bounds the next evaluation.
        let mut budget = 1000;
        let err = selector
            .matches(&cluster(), &scores, &mut budget)
            .unwrap_err();
        assert!(err.0.contains("cost budget of 10000000"), "{err:?}");
        assert_eq!(budget, 0);
    }
}
