//! `clusteradm get works [NAME] [--clusters a,b] [-o table|yaml|json]`: the ManifestWorks on the
//! hub and what their agents report. With a NAME the table also lists each work's resources
//! and why any of them failed.
use kube::CustomResourceExt as _;
use std::process::ExitCode;

use anyhow::Context as _;
use kube::ResourceExt as _;
use kube::api::{Api, ListParams};

use crate::api::conditions::{self, APPLIED, AVAILABLE, Condition};
use crate::api::work::{ManifestCondition, ManifestWork};
use crate::cli::Ctx;
use crate::error::UserError;
use crate::ui::output::{self, Format};
use crate::ui::table;

/// Flags of `get works`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only the work of this name (with its per-resource status)
    pub name: Option<String>,
    /// Only these clusters, comma-separated [default: all]
    #[arg(
        short = 'c',
        long,
        visible_alias = "cluster",
        value_delimiter = ',',
        value_name = "NAMES"
    )]
    pub clusters: Vec<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

/// Runs `get works`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx.hub(&[ManifestWork::crd_name()]).await?;
    let mut params = ListParams::default();
    if let Some(name) = &args.name {
        params = params.fields(&format!("metadata.name={name}"));
    }
    let mut works: Vec<ManifestWork> = if args.clusters.is_empty() {
        let api: Api<ManifestWork> = Api::all(kube.client.clone());
        api.list(&params)
            .await
            .map(|l| l.items)
            .map_err(crate::error::ocm_api_missing)
            .context("listing ManifestWorks on the hub")?
    } else {
        let lists = crate::runtime::fan_out::try_all(args.clusters.iter().map(|c| {
            let api: Api<ManifestWork> = Api::namespaced(kube.client.clone(), c);
            let params = params.clone();
            async move { api.list(&params).await.map(|l| l.items) }
        }))
        .await
        .context("listing ManifestWorks on the hub")?;
        lists.into_iter().flatten().collect()
    };
    works.sort_by_key(|w| (w.namespace().unwrap_or_default(), w.name_any()));

    if works.is_empty() {
        let place = if args.clusters.is_empty() {
            "any cluster".to_owned()
        } else {
            format!("cluster {}", args.clusters.join(", "))
        };
        if let Some(name) = &args.name {
            return Err(UserError::new(
                format!("work {name} not found in {place}"),
                "list the works with `clusteradm get works`",
            )
            .into());
        }
        ctx.printer.info(format!("No works found in {place}."));
        return Ok(ExitCode::SUCCESS);
    }
    if args.output.is_objects() {
        output::print_objects(&works, args.output)?;
        return Ok(ExitCode::SUCCESS);
    }
    crate::ui::stdout::println(summary(&works))?;
    if args.name.is_some() {
        for work in &works {
            crate::ui::stdout::println(format_args!("\n{}", resources(work)))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn status_of(conds: &[Condition], type_: &str) -> String {
    conditions::find(conds, type_).map_or_else(String::new, |c| c.status.clone())
}

/// One row per work.
#[must_use]
pub fn summary(works: &[ManifestWork]) -> String {
    let mut t = table::new(&[
        "cluster",
        "name",
        "manifests",
        "applied",
        "available",
        "age",
    ]);
    for w in works {
        let conds = w
            .status
            .as_ref()
            .map(|s| s.conditions.as_slice())
            .unwrap_or_default();
        t.add_row(vec![
            w.namespace().unwrap_or_default(),
            w.name_any(),
            w.spec.workload.manifests.len().to_string(),
            status_of(conds, APPLIED),
            status_of(conds, AVAILABLE),
            table::age(w.metadata.creation_timestamp.as_ref()),
        ]);
    }
    table::render(&t)
}

/// The resources of one work: a row each, then the message of every failure.
#[must_use]
pub fn resources(work: &ManifestWork) -> String {
    let reported: &[ManifestCondition] = work
        .status
        .as_ref()
        .and_then(|s| s.resource_status.as_ref())
        .map(|r| r.manifests.as_slice())
        .unwrap_or_default();
    let title = format!(
        "{}/{}:",
        work.namespace().unwrap_or_default(),
        work.name_any()
    );
    if reported.is_empty() {
        return format!(
            "{title} no resource status reported yet (is the cluster's work agent running?)"
        );
    }
    let mut t = table::new(&["#", "kind", "resource", "applied", "available", "reason"]);
    let mut problems = Vec::new();
    for m in reported {
        let meta = &m.resource_meta;
        let name = meta.name.clone().unwrap_or_default();
        let resource = match meta.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
            _ => name,
        };
        let failing: Vec<&Condition> = m
            .conditions
            .iter()
            .filter(|c| c.status != conditions::TRUE)
            .collect();
        let reason = failing
            .iter()
            .map(|c| c.reason.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        for c in &failing {
            problems.push(format!("  #{} {}: {}", meta.ordinal, c.type_, c.message));
        }
        t.add_row(vec![
            meta.ordinal.to_string(),
            meta.kind.clone().unwrap_or_default(),
            resource,
            status_of(&m.conditions, APPLIED),
            status_of(&m.conditions, AVAILABLE),
            reason,
        ]);
    }
    let mut out = format!("{title}\n{}", table::render(&t));
    if !problems.is_empty() {
        out.push_str("\n\n");
        out.push_str(&problems.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work() -> ManifestWork {
        crate::yaml::from_str(
            r"
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: w1, namespace: c1}
spec:
  workload:
    manifests:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}
    - {apiVersion: it.example.com/v1, kind: Gizmo, metadata: {name: g}}
status:
  conditions:
  - {type: Applied, status: 'False', reason: AppliedManifestWorkFailed, message: m, lastTransitionTime: '2026-01-01T00:00:00Z'}
  resourceStatus:
    manifests:
    - resourceMeta: {ordinal: 0, version: v1, kind: ConfigMap, resource: configmaps, name: a, namespace: default}
      conditions:
      - {type: Applied, status: 'True', reason: AppliedManifestComplete, message: ok, lastTransitionTime: '2026-01-01T00:00:00Z'}
    - resourceMeta: {ordinal: 1, group: it.example.com, version: v1, kind: Gizmo, name: g}
      conditions:
      - {type: Applied, status: 'False', reason: AppliedManifestFailed, message: no such kind, lastTransitionTime: '2026-01-01T00:00:00Z'}
",
        )
        .unwrap()
    }

    #[test]
    fn summary_has_a_row_per_work() {
        let text = summary(&[work()]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("CLUSTER   NAME   MANIFESTS   APPLIED   AVAILABLE   AGE"),
            "{text}"
        );
        assert!(
            lines[1].starts_with("c1        w1     2           False"),
            "{text}"
        );
    }

    #[test]
    fn resources_show_each_manifest_and_why_it_failed() {
        let text = resources(&work());
        assert!(text.starts_with("c1/w1:\n"), "{text}");
        assert!(text.contains("default/a"), "{text}");
        assert!(text.contains("AppliedManifestFailed"), "{text}");
        assert!(text.ends_with("  #1 Applied: no such kind"), "{text}");
        let mut fresh = work();
        fresh.status = None;
        assert!(resources(&fresh).contains("no resource status reported yet"));
    }
}
