//! Placements, with upstream's flags and messages:
//! `create placement NAME [-n NS] [--clustersets a,b] [--label-selectors k=v,k2] [--count N]
//! [--prioritizers BuiltIn:Steady:3,...] [--overwrite]` and `get placements [-n NS | -A]`, which
//! lists every selected cluster (from all of a placement's decisions, not only the last).
use kube::CustomResourceExt as _;
use std::process::ExitCode;

use anyhow::Context as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams};

use crate::api::cluster::{
    AddOnScore, ClusterPredicate, ClusterSelector, ManagedClusterSetBinding, PLACEMENT_LABEL,
    PLACEMENT_SATISFIED, Placement, PlacementDecision, PlacementSpec, PrioritizerConfig,
    PrioritizerPolicy, ScoreCoordinate, ScoreCoordinateType,
};
use crate::api::conditions;
use crate::cli::Ctx;
use crate::error::UserError;
use crate::ui::output::{self, Format};
use crate::ui::table;

/// Flags of `create placement`.
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// Name of the placement
    pub name: String,
    /// Namespace of the placement (cluster sets must be bound to it)
    #[arg(short = 'n', long, default_value = "default")]
    pub namespace: String,
    /// Cluster sets to choose from, comma-separated [default: every set bound to the namespace]
    #[arg(long, value_delimiter = ',', value_name = "SETS")]
    pub clustersets: Vec<String>,
    /// Label requirements, comma-separated, each one predicate (ORed, as upstream): `k=v`,
    /// `k!=v`, `k`, `!k`
    #[arg(long, value_delimiter = ',', value_name = "SELECTORS")]
    pub label_selectors: Vec<String>,
    /// How many clusters to select [default: all that match]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub count: Option<i64>,
    /// Prioritizers, comma-separated: `BuiltIn:{Balance|Steady|ResourceAllocatableCPU|ResourceAllocatableMemory}:{weight}`
    #[arg(long, value_delimiter = ',', value_name = "PRIORITIZERS")]
    pub prioritizers: Vec<String>,
    /// Replace the spec of an existing placement of that name
    #[arg(long)]
    pub overwrite: bool,
}

/// Flags of `get placements`.
#[derive(Debug, clap::Args)]
pub struct GetArgs {
    /// Only this placement
    pub name: Option<String>,
    /// Namespace [default: every namespace, as upstream's]
    #[arg(
        short = 'n',
        long,
        value_name = "NAMESPACE",
        conflicts_with = "all_namespaces"
    )]
    pub namespace: Option<String>,
    /// Placements of every namespace (what no --namespace means too)
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
    /// Why each cluster is or is not selected: left out (and why) or scored (each prioritizer's
    /// score and weight), as the hub's scheduler decides it now (needs NAME)
    #[arg(long, requires = "name")]
    pub explain: bool,
}

/// One label requirement of `--label-selectors` as a selector.
pub fn parse_requirement(text: &str) -> Result<LabelSelector, String> {
    let text = text.trim();
    let valid_key = |k: &str| {
        let (prefix, name) = k.rsplit_once('/').unwrap_or(("", k));
        let name_ok = !name.is_empty()
            && name.len() <= 63
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            && name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name.ends_with(|c: char| c.is_ascii_alphanumeric());
        name_ok && (prefix.is_empty() || prefix.len() <= 253)
    };
    let valid_value = |v: &str| {
        v.len() <= 63
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    let requirement = |key: &str, operator: &str, values: Option<Vec<String>>| LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values,
        }]),
        match_labels: None,
    };
    let (key, selector) = if let Some((k, v)) = text.split_once("!=") {
        (
            k.trim(),
            (valid_value(v.trim()))
                .then(|| requirement(k.trim(), "NotIn", Some(vec![v.trim().into()]))),
        )
    } else if let Some((k, v)) = text.split_once("==").or_else(|| text.split_once('=')) {
        let (k, v) = (k.trim(), v.trim());
        (
            k,
            valid_value(v).then(|| LabelSelector {
                match_labels: Some([(k.to_string(), v.to_string())].into()),
                match_expressions: None,
            }),
        )
    } else if let Some(k) = text.strip_prefix('!') {
        (k.trim(), Some(requirement(k.trim(), "DoesNotExist", None)))
    } else {
        (text, Some(requirement(text, "Exists", None)))
    };
    match selector {
        Some(s) if valid_key(key) => Ok(s),
        _ => Err(format!(
            "invalid label selector {text:?}: expected k=v, k!=v, k or !k with a valid label key and value"
        )),
    }
}

/// One `--prioritizers` entry: `BuiltIn:Name:Weight` or `AddOn:Resource:Score:Weight`.
pub fn parse_prioritizer(text: &str) -> Result<PrioritizerConfig, String> {
    let parts: Vec<&str> = text.split(':').collect();
    let weight = |w: &str| {
        w.parse::<i32>()
            .ok()
            .filter(|w| (-10..=10).contains(w))
            .ok_or_else(|| format!("weight in prioritizer {text} is not an integer from -10 to 10"))
    };
    match parts.as_slice() {
        ["BuiltIn", name, w] => {
            if !crate::hub::placement::schedule::BUILTINS.contains(name) {
                return Err(format!(
                    "unknown built-in prioritizer {name} in {text}: use one of {}",
                    crate::hub::placement::schedule::BUILTINS.join(", ")
                ));
            }
            Ok(PrioritizerConfig {
                score_coordinate: ScoreCoordinate {
                    type_: ScoreCoordinateType::BuiltIn,
                    built_in: Some((*name).into()),
                    add_on: None,
                },
                weight: Some(weight(w)?),
            })
        }
        ["AddOn", resource, score, w] => Ok(PrioritizerConfig {
            score_coordinate: ScoreCoordinate {
                type_: ScoreCoordinateType::AddOn,
                built_in: None,
                add_on: Some(AddOnScore {
                    resource_name: (*resource).into(),
                    score_name: (*score).into(),
                }),
            },
            weight: Some(weight(w)?),
        }),
        _ => Err(format!(
            "prioritizer {text} is not BuiltIn:{{Name}}:{{Weight}} or AddOn:{{Resource}}:{{Score}}:{{Weight}}"
        )),
    }
}

/// The placement spec the flags describe; every flag is checked here, before any request.
pub fn spec(args: &CreateArgs) -> Result<PlacementSpec, UserError> {
    let bad = |m: String| UserError::new(m, "see `clusteradm create placement --help`");
    if let Some(n) = args.count
        && !(0..=i64::from(i32::MAX)).contains(&n)
    {
        return Err(bad(format!(
            "--count {n} is out of range: it must be 0 or more"
        )));
    }
    let predicates = args
        .label_selectors
        .iter()
        .map(|s| {
            parse_requirement(s).map(|label_selector| ClusterPredicate {
                required_cluster_selector: Some(ClusterSelector {
                    label_selector: Some(label_selector),
                    claim_selector: None,
                    cel_selector: None,
                }),
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    let configurations = args
        .prioritizers
        .iter()
        .map(|p| parse_prioritizer(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    if let Some(set) = args
        .clustersets
        .iter()
        .find(|s| !crate::api::names::is_dns_label(s))
    {
        return Err(bad(format!("invalid cluster set name {set:?}")));
    }
    Ok(PlacementSpec {
        cluster_sets: args.clustersets.clone(),
        number_of_clusters: args.count.map(|n| i32::try_from(n).unwrap_or(i32::MAX)),
        predicates,
        prioritizer_policy: (!configurations.is_empty()).then(|| PrioritizerPolicy {
            mode: Some("Additive".into()),
            configurations,
        }),
        ..Default::default()
    })
}

/// Runs `create placement`.
pub async fn create(args: CreateArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let spec = spec(&args)?;
    let (name, ns) = (args.name.as_str(), args.namespace.as_str());
    let kube = ctx.hub(&[Placement::crd_name()]).await?;
    let bindings: Api<ManagedClusterSetBinding> = Api::namespaced(kube.client.clone(), ns);
    for set in &args.clustersets {
        if bindings
            .get_opt(set)
            .await
            .map_err(crate::error::ocm_api_missing)?
            .is_none()
        {
            return Err(UserError::new(
                format!("cluster set {set} is not bound to namespace {ns}"),
                format!("bind it first: `clusteradm clusterset bind {set} --namespace {ns}`"),
            )
            .into());
        }
    }
    let api: Api<Placement> = Api::namespaced(kube.client.clone(), ns);
    let Some(mut existing) = api
        .get_opt(name)
        .await
        .map_err(crate::error::ocm_api_missing)?
    else {
        if !ctx.global.dry_run {
            api.create(&PostParams::default(), &Placement::new(name, spec))
                .await
                .with_context(|| format!("creating placement {ns}/{name}"))?;
        }
        crate::ui::stdout::println(format!(
            "Placement '{name}' has been created in '{ns}' namespace"
        ))?;
        return Ok(ExitCode::SUCCESS);
    };
    // Compared as the server would store it (its defaults filled in): a dry-run replace.
    let old = existing.spec.clone();
    existing.spec = spec;
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let defaulted = api
        .replace(name, &dry, &existing)
        .await
        .with_context(|| format!("checking placement {ns}/{name}"))?;
    if defaulted.spec == old {
        crate::ui::stdout::println(format!(
            "Placement '{name}' of '{ns}' namespace is unchanged"
        ))?;
    } else if !args.overwrite {
        return Err(UserError::new(
            format!("placement {name} already exists in namespace {ns} with another spec"),
            "pass --overwrite to replace its spec",
        )
        .into());
    } else {
        if !ctx.global.dry_run {
            api.replace(name, &PostParams::default(), &existing)
                .await
                .with_context(|| format!("updating placement {ns}/{name}"))?;
        }
        crate::ui::stdout::println(format!(
            "Placement '{name}' of '{ns}' namespace has been updated"
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `get placements`.
pub async fn get(args: GetArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx.hub(&[Placement::crd_name()]).await?;
    let (placements, decisions): (Api<Placement>, Api<PlacementDecision>) = match &args.namespace {
        None => (Api::all(kube.client.clone()), Api::all(kube.client.clone())),
        Some(ns) => (
            Api::namespaced(kube.client.clone(), ns),
            Api::namespaced(kube.client.clone(), ns),
        ),
    };
    let every_namespace = args.namespace.is_none();
    let mut list = placements
        .list(&ListParams::default())
        .await
        .map_err(crate::error::ocm_api_missing)
        .context("listing placements")?
        .items;
    if let Some(name) = &args.name {
        list.retain(|p| &p.name_any() == name);
        if list.is_empty() {
            let where_ = args.namespace.as_ref().map_or_else(
                || "any namespace".to_string(),
                |ns| format!("namespace {ns}"),
            );
            return Err(UserError::new(
                format!("placement {name} not found in {where_}"),
                "`clusteradm get placements` lists every placement",
            )
            .into());
        }
    }
    list.sort_by_key(|p| (p.namespace(), p.name_any()));
    if args.explain {
        let [placement] = list.as_slice() else {
            return Err(UserError::new(
                format!(
                    "placements named {} are in several namespaces",
                    args.name.unwrap_or_default()
                ),
                "name the namespace with -n",
            )
            .into());
        };
        let explanation = super::explain::explain(&kube.client, placement).await?;
        super::explain::print(&explanation, args.output)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.output.is_objects() {
        output::print_objects(&list, args.output)?;
        return Ok(ExitCode::SUCCESS);
    }
    let decisions = decisions
        .list(&ListParams::default().labels(PLACEMENT_LABEL))
        .await
        .context("listing placement decisions")?
        .items;
    crate::ui::stdout::println(render(&list, &decisions, every_namespace))?;
    Ok(ExitCode::SUCCESS)
}

/// The table of placements, with every selected cluster.
#[must_use]
pub fn render(
    placements: &[Placement],
    decisions: &[PlacementDecision],
    namespaces: bool,
) -> String {
    let mut header = vec!["name", "status", "reason", "selected clusters"];
    if namespaces {
        header.insert(0, "namespace");
    }
    let mut t = table::new(&header);
    for p in placements {
        let satisfied = p
            .status
            .as_ref()
            .and_then(|s| conditions::find(&s.conditions, PLACEMENT_SATISFIED));
        let mut clusters: Vec<&str> = decisions
            .iter()
            .filter(|d| {
                d.namespace() == p.namespace()
                    && d.labels().get(PLACEMENT_LABEL) == Some(&p.name_any())
            })
            .flat_map(|d| d.status.iter().flat_map(|s| &s.decisions))
            .map(|c| c.cluster_name.as_str())
            .collect();
        clusters.sort_unstable();
        let mut row = vec![
            p.name_any(),
            satisfied.map_or_else(String::new, |c| c.status.clone()),
            satisfied.map_or_else(String::new, |c| c.reason.clone()),
            clusters.join(","),
        ];
        if namespaces {
            row.insert(0, p.namespace().unwrap_or_default());
        }
        t.add_row(row);
    }
    table::render(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_requirements_parse_as_upstream_and_bad_ones_are_refused() {
        let eq = parse_requirement("env=prod").unwrap();
        assert_eq!(eq.match_labels.unwrap()["env"], "prod");
        let ne = parse_requirement("example.com/tier != gold").unwrap();
        let r = &ne.match_expressions.unwrap()[0];
        assert_eq!(
            (r.operator.as_str(), r.values.clone().unwrap()),
            ("NotIn", vec!["gold".to_string()])
        );
        assert_eq!(
            parse_requirement("gpu").unwrap().match_expressions.unwrap()[0].operator,
            "Exists"
        );
        assert_eq!(
            parse_requirement("!gpu")
                .unwrap()
                .match_expressions
                .unwrap()[0]
                .operator,
            "DoesNotExist"
        );
        for bad in ["env=has space", "=x", "-bad=x", "a=b=c"] {
            assert!(parse_requirement(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn prioritizers_need_a_known_name_and_a_weight_in_range() {
        let p = parse_prioritizer("BuiltIn:Steady:3").unwrap();
        assert_eq!(
            (p.score_coordinate.built_in.as_deref(), p.weight),
            (Some("Steady"), Some(3))
        );
        assert!(
            parse_prioritizer("AddOn:demo:cpu:2")
                .unwrap()
                .score_coordinate
                .add_on
                .is_some()
        );
        assert!(
            parse_prioritizer("BuiltIn:Fastest:1")
                .unwrap_err()
                .contains("unknown built-in")
        );
        assert!(
            parse_prioritizer("BuiltIn:Steady:11")
                .unwrap_err()
                .contains("-10 to 10")
        );
        assert!(parse_prioritizer("Steady").is_err());
    }
}
