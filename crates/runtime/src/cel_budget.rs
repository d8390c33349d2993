//! CEL with a cost budget: what a Placement's `celSelector` and a template add-on's
//! `healthyWhen` are evaluated with. The `cel` crate has no cost tracking (cel-go's
//! `cel.CostLimit`, which upstream sets), and a few nested comprehensions over a long list are
//! billions of steps. So this environment expands the comprehension macros (`all`, `exists`,
//! `exists_one`/`existsOne`, `map`, `filter`) itself, with their range wrapped in a call that
//! charges the range's size to the evaluation's [`Meter`] and fails once the limit is passed.
//! Every iteration is charged before it runs, nested ones included; what an expression does
//! without a comprehension is bounded by its own length. A charge made inside `exists` or `||`
//! may have its error absorbed, so [`Meter::exceeded`] is what callers check, not the result.
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, operators,
};
use cel::parser::{Macro, MacroExprHelper, ParseError};
use cel::{Context, Env, ExecutionError, Program, Value};

/// The most one evaluation of one expression may cost (upstream's `PerCallLimit`, in
/// iterations here).
pub const PER_CALL_LIMIT: u64 = 1_000_000;

/// The function that charges a range; `@` cannot be written in CEL source, so only the macros
/// below call it.
const CHARGE: &str = "@charge";
const RESULT: &str = "@result";

/// What one evaluation has spent, against its limit.
#[derive(Debug, Clone)]
pub struct Meter {
    used: Arc<AtomicU64>,
    limit: u64,
}

impl Meter {
    /// A meter that fails an evaluation past `limit`.
    #[must_use]
    pub fn new(limit: u64) -> Self {
        Self {
            used: Arc::default(),
            limit,
        }
    }

    /// What was charged so far.
    #[must_use]
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Whether the limit was passed (then the evaluation's result means nothing).
    #[must_use]
    pub fn exceeded(&self) -> bool {
        self.used() > self.limit
    }

    fn charge(&self, cost: u64) -> Result<(), ExecutionError> {
        let used = self
            .used
            .fetch_add(cost, Ordering::Relaxed)
            .saturating_add(cost);
        if used > self.limit {
            return Err(ExecutionError::function_error(
                "cost",
                format!("the evaluation exceeded its cost limit of {}", self.limit),
            ));
        }
        Ok(())
    }

    /// Declares the charging function in `ctx`; every evaluation needs it.
    pub fn install(&self, ctx: &mut Context<'_, '_>) -> Result<(), cel::DeclarationError> {
        let meter = self.clone();
        ctx.add_function(
            CHARGE,
            move |range: Value| -> Result<Value, ExecutionError> {
                let size = match &range {
                    Value::List(l) => l.len(),
                    Value::Map(m) => m.map.len(),
                    _ => 0,
                };
                meter.charge(1 + u64::try_from(size).unwrap_or(u64::MAX))?;
                Ok(range)
            },
        )
    }
}

/// Why an evaluation gave no value.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Stopped at the limit (the limit).
    Exceeded(u64),
    /// CEL's own error.
    Error(ExecutionError),
}

/// Runs `program` in `ctx` (which has `meter` installed).
pub fn execute(program: &Program, ctx: &Context<'_, '_>, meter: &Meter) -> Result<Value, Failure> {
    let result = program.execute(ctx);
    if meter.exceeded() {
        return Err(Failure::Exceeded(meter.limit));
    }
    result.map_err(Failure::Error)
}

/// The standard environment (functions, the strings extension) with the metered macros.
#[must_use]
pub fn env() -> Env {
    let mut env = Env::default().with_stdlib();
    env.add_extension(cel::extensions::strings)
        .expect("the string extension declares no clashing names");
    for m in macros() {
        env.add_macro(m).expect("each macro is declared once");
    }
    env
}

fn macros() -> Vec<Macro> {
    vec![
        Macro::global(operators::HAS, 1, |h, _, args| has(h, args).map(Some)),
        Macro::receiver(operators::ALL, 2, |h, t, args| {
            fold(h, t, args, Fold::All).map(Some)
        }),
        Macro::receiver(operators::EXISTS, 2, |h, t, args| {
            fold(h, t, args, Fold::Exists).map(Some)
        }),
        Macro::receiver(operators::EXISTS_ONE, 2, |h, t, args| {
            fold(h, t, args, Fold::ExistsOne).map(Some)
        }),
        Macro::receiver("existsOne", 2, |h, t, args| {
            fold(h, t, args, Fold::ExistsOne).map(Some)
        }),
        Macro::receiver(operators::MAP, 2, |h, t, args| map(h, t, args).map(Some)),
        Macro::receiver(operators::MAP, 3, |h, t, args| map(h, t, args).map(Some)),
        Macro::receiver(operators::FILTER, 2, |h, t, args| {
            filter(h, t, args).map(Some)
        }),
    ]
}

/// `has(a.b)`: a presence test of the field.
fn has(h: &mut MacroExprHelper<'_>, args: &mut Vec<IdedExpr>) -> Result<IdedExpr, ParseError> {
    let arg = args.remove(0);
    match arg.expr {
        Expr::Select(mut select) => {
            select.test = true;
            Ok(h.next_expr(Expr::Select(select)))
        }
        _ => Err(h.new_error(arg.id, "invalid argument to has() macro")),
    }
}

fn call(h: &mut MacroExprHelper<'_>, function: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: function.to_owned(),
        target: None,
        args,
    }))
}

fn ident(h: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_owned()))
}

fn literal(h: &mut MacroExprHelper<'_>, value: LiteralValue) -> IdedExpr {
    h.next_expr(Expr::Literal(value))
}

fn variable(h: &mut MacroExprHelper<'_>, arg: IdedExpr) -> Result<String, ParseError> {
    match arg.expr {
        Expr::Ident(name) => Ok(name),
        _ => Err(h.new_error(arg.id, "argument must be a simple name")),
    }
}

/// The comprehension over the (charged) `target`, with `@result` as its accumulator.
fn comprehension(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    iter_var: String,
    parts: [IdedExpr; 3],
    result: IdedExpr,
) -> IdedExpr {
    let [accu_init, loop_cond, loop_step] = parts;
    let range = target.take().expect("a receiver macro has a target");
    let iter_range = call(h, CHARGE, vec![range]);
    h.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range,
        iter_var,
        iter_var2: None,
        accu_var: RESULT.to_owned(),
        accu_init,
        loop_cond,
        loop_step,
        result,
    })))
}

#[derive(Clone, Copy)]
enum Fold {
    All,
    Exists,
    ExistsOne,
}

/// `all`, `exists` and `exists_one`, shaped as the standard macros (so errors and short cuts
/// behave as CEL's).
fn fold(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
    kind: Fold,
) -> Result<IdedExpr, ParseError> {
    let predicate = args.remove(1);
    let var = variable(h, args.remove(0))?;
    let (init, cond, step, result) = match kind {
        Fold::All | Fold::Exists => {
            let all = matches!(kind, Fold::All);
            let init = literal(h, LiteralValue::Boolean(all.into()));
            let accu = ident(h, RESULT);
            let going = if all {
                accu
            } else {
                call(h, operators::LOGICAL_NOT, vec![accu])
            };
            let cond = call(h, operators::NOT_STRICTLY_FALSE, vec![going]);
            let accu = ident(h, RESULT);
            let op = if all {
                operators::LOGICAL_AND
            } else {
                operators::LOGICAL_OR
            };
            let step = call(h, op, vec![accu, predicate]);
            (init, cond, step, ident(h, RESULT))
        }
        Fold::ExistsOne => {
            let init = literal(h, LiteralValue::Int(0.into()));
            let cond = literal(h, LiteralValue::Boolean(true.into()));
            let accu = ident(h, RESULT);
            let one = literal(h, LiteralValue::Int(1.into()));
            let plus_one = call(h, operators::ADD, vec![accu, one]);
            let unchanged = ident(h, RESULT);
            let step = call(
                h,
                operators::CONDITIONAL,
                vec![predicate, plus_one, unchanged],
            );
            let accu = ident(h, RESULT);
            let one = literal(h, LiteralValue::Int(1.into()));
            let result = call(h, operators::EQUALS, vec![accu, one]);
            (init, cond, step, result)
        }
    };
    Ok(comprehension(h, target, var, [init, cond, step], result))
}

/// `@result + [item]`, or `guard ? @result + [item] : @result`.
fn append(h: &mut MacroExprHelper<'_>, item: IdedExpr, guard: Option<IdedExpr>) -> IdedExpr {
    let accu = ident(h, RESULT);
    let list = h.next_expr(Expr::List(ListExpr::new(vec![item])));
    let step = call(h, operators::ADD, vec![accu, list]);
    match guard {
        Some(guard) => {
            let unchanged = ident(h, RESULT);
            call(h, operators::CONDITIONAL, vec![guard, step, unchanged])
        }
        None => step,
    }
}

/// `map(v, f)` and `map(v, p, f)`.
fn map(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
) -> Result<IdedExpr, ParseError> {
    let func = args.pop().expect("two or three arguments");
    let var = variable(h, args.remove(0))?;
    let guard = args.pop();
    let init = h.next_expr(Expr::List(ListExpr::new(Vec::new())));
    let cond = literal(h, LiteralValue::Boolean(true.into()));
    let step = append(h, func, guard);
    let result = ident(h, RESULT);
    Ok(comprehension(h, target, var, [init, cond, step], result))
}

/// `filter(v, p)`.
fn filter(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
) -> Result<IdedExpr, ParseError> {
    let guard = args.pop().expect("two arguments");
    let var_expr = args.remove(0);
    let item = var_expr.clone();
    let var = variable(h, var_expr)?;
    let init = h.next_expr(Expr::List(ListExpr::new(Vec::new())));
    let cond = literal(h, LiteralValue::Boolean(true.into()));
    let step = append(h, item, Some(guard));
    let result = ident(h, RESULT);
    Ok(comprehension(h, target, var, [init, cond, step], result))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(expression: &str, limit: u64) -> (Result<Value, Failure>, u64) {
        let env = Arc::new(env());
        let program = env.compile(expression).unwrap();
        let meter = Meter::new(limit);
        let mut ctx = Context::with_env(env);
        meter.install(&mut ctx).unwrap();
        ctx.add_variable("l", (0..100).collect::<Vec<i64>>())
            .unwrap();
        (execute(&program, &ctx, &meter), meter.used())
    }

    #[test]
    fn the_macros_mean_what_the_standard_ones_mean() {
        for (expression, want) in [
            ("l.all(x, x >= 0)", true),
            ("l.all(x, x > 0)", false),
            ("l.exists(x, x == 99)", true),
            ("l.exists_one(x, x == 3)", true),
            ("l.existsOne(x, x < 3)", false),
            ("l.map(x, x * 2)[99] == 198", true),
            ("l.map(x, x % 2 == 0, x).size() == 50", true),
            ("l.filter(x, x < 10) == [0,1,2,3,4,5,6,7,8,9]", true),
            ("{'a': 1}.all(k, k == 'a')", true),
            ("has({'a': 1}.a) && !has({'a': 1}.b)", true),
            // An error in one element is absorbed by another's answer, as in CEL.
            ("[0, 1].exists(x, 1 / x == 1)", true),
        ] {
            assert_eq!(
                run(expression, PER_CALL_LIMIT).0,
                Ok(Value::Bool(want)),
                "{expression}"
            );
        }
    }

    #[test]
    fn every_iteration_is_charged_and_nested_loops_stop_at_the_limit() {
        assert_eq!(run("l.all(x, true)", PER_CALL_LIMIT).1, 101);
        // 100 outer iterations, each charging an inner range of 100.
        assert_eq!(
            run("l.all(x, l.all(y, true))", PER_CALL_LIMIT).1,
            101 + 100 * 101
        );
        // 10^8 steps unmetered; stopped soon after the limit, whatever absorbs the error.
        for expression in [
            "l.all(a, l.all(b, l.all(c, l.all(d, true))))",
            "l.exists(a, l.exists(b, l.exists(c, l.exists(d, false))))",
            "true || l.all(a, l.all(b, l.all(c, l.all(d, true))))",
            "l.map(a, l.map(b, l.map(c, l.map(d, d)))).size() > 0",
        ] {
            let started = std::time::Instant::now();
            let (result, used) = run(expression, 50_000);
            if expression.starts_with("true ||") {
                // Short-circuited: never evaluated, so nothing charged.
                assert_eq!((result, used), (Ok(Value::Bool(true)), 0));
                continue;
            }
            assert_eq!(result, Err(Failure::Exceeded(50_000)), "{expression}");
            assert!(used < 200_000, "{expression}: {used}");
            assert!(started.elapsed().as_secs() < 60, "{expression}");
        }
    }
}
