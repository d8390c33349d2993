//! `clusteradm restore -f FILE`: a `clusteradm backup` created again on a hub (after `clusteradm
//! init` made it one), kind by kind in the order the hub needs them: the ClusterManager, sets and
//! clusters (accepted as they were), the namespaces and ClusterRoles they need, then bindings,
//! add-ons, placements and works. Objects are created, never changed: one already there is left as
//! it is and counted, so a restore run twice, or again after a failure, finishes the first.
//!
//! The agents need nothing: their certificates still authenticate (the hub keeps its CA), the
//! hub grants their clusters' RBAC again once the clusters are back, and a work agent keeps what it
//! applied while no work manages it, for its grace period (an hour by default), and adopts it when
//! the work comes back under its name.
use std::path::PathBuf;
use std::process::ExitCode;

use futures::future::join_all;
use kube::api::{DynamicObject, PostParams};

use super::Ctx;
use super::backup::KINDS;
use crate::apply::{ObjectRef, Resolver};
use crate::error::UserError;

/// Flags of `restore`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The backup to restore, as `clusteradm backup` wrote it
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filename: PathBuf,
}

/// What happened to the objects of a restore.
#[derive(Debug, Default)]
struct Outcome {
    created: Vec<ObjectRef>,
    present: Vec<ObjectRef>,
    failed: Vec<(ObjectRef, String)>,
}

/// Runs `restore`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let text = crate::input::read_text(&args.filename, "--filename")
        .map_err(|e| UserError::new(e.to_string(), "pass the file `clusteradm backup` wrote"))?;
    let source = args.filename.display().to_string();
    let mut objects = crate::apply::parse_objects(&text, &source)?;
    for o in &objects {
        if rank(o).is_none() {
            let r = ObjectRef::of(o);
            return Err(UserError::new(
                format!(
                    "{source} holds {} {}, which a backup never does",
                    r.kind, r.name
                ),
                "restore only what `clusteradm backup` wrote",
            )
            .into());
        }
    }
    objects.sort_by_key(|o| rank(o).unwrap_or(usize::MAX));
    let kube = ctx
        .hub(&[<crate::api::cluster::ManagedCluster as kube::CustomResourceExt>::crd_name()])
        .await?;
    if ctx.global.dry_run {
        for o in &objects {
            ctx.printer
                .info(format!("would create {}", ObjectRef::of(o)));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let outcome = create_in_order(&kube.client, &objects).await;
    report(ctx, &outcome, &kube.url())
}

/// The position of `o`'s kind in the order of a restore; `None` for a kind no backup holds.
fn rank(o: &DynamicObject) -> Option<usize> {
    let kind = o.types.as_ref()?.kind.as_str();
    match kind {
        "Namespace" => Some(3),
        "ClusterRole" => Some(4),
        _ => KINDS
            .iter()
            .position(|(_, _, k)| *k == kind)
            .map(|i| if i < 3 { i } else { i + 2 }),
    }
}

/// Creates `objects`, one rank at a time (a rank's objects at once).
async fn create_in_order(client: &kube::Client, objects: &[DynamicObject]) -> Outcome {
    let resolver = Resolver::new(client.clone());
    let mut outcome = Outcome::default();
    let mut rest = objects;
    while let Some(first) = rest.first() {
        let same = rest.iter().take_while(|o| rank(o) == rank(first)).count();
        let (group, next) = rest.split_at(same);
        rest = next;
        let results = join_all(group.iter().map(|o| create(&resolver, o))).await;
        for (o, result) in group.iter().zip(results) {
            let r = ObjectRef::of(o);
            match result {
                Ok(true) => outcome.created.push(r),
                Ok(false) => outcome.present.push(r),
                Err(e) => outcome.failed.push((r, e)),
            }
        }
    }
    outcome
}

/// Creates `o`: `true` when created, `false` when one of its name was there already.
async fn create(resolver: &Resolver, o: &DynamicObject) -> Result<bool, String> {
    let gvk = crate::apply::gvk_of(o).ok_or("no apiVersion or kind")?;
    let api = resolver
        .api_for(&gvk, o.metadata.namespace.as_deref())
        .await
        .map_err(|e| e.to_string())?;
    match api.create(&PostParams::default(), o).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(e.to_string()),
    }
}

fn report(ctx: &Ctx, outcome: &Outcome, url: &str) -> anyhow::Result<ExitCode> {
    if !outcome.failed.is_empty() {
        let list: Vec<String> = outcome
            .failed
            .iter()
            .map(|(r, e)| format!("  {r}: {e}"))
            .collect();
        return Err(UserError::new(
            format!(
                "restored {} objects to {url}, {} were there already, {} failed:\n{}",
                outcome.created.len(),
                outcome.present.len(),
                outcome.failed.len(),
                list.join("\n")
            ),
            "fix what failed and run the same restore again: what is there is left as it is",
        )
        .into());
    }
    if outcome.created.is_empty() {
        ctx.printer.done(format!(
            "nothing to restore: all {} objects are on {url} already",
            outcome.present.len()
        ));
    } else {
        ctx.printer.done(format!(
            "restored {} objects to {url} ({} were there already)",
            outcome.created.len(),
            outcome.present.len()
        ));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(kind: &str) -> DynamicObject {
        serde_json::from_value(
            serde_json::json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}}),
        )
        .unwrap()
    }

    #[test]
    fn clusters_come_before_their_namespaces_and_works_last() {
        let order = [
            "ClusterManager",
            "ManagedClusterSet",
            "ManagedCluster",
            "Namespace",
            "ClusterRole",
            "ManagedClusterSetBinding",
            "AddOnTemplate",
            "ManagedClusterAddOn",
            "Placement",
            "ManifestWork",
        ];
        let ranks: Vec<usize> = order.iter().map(|k| rank(&of(k)).unwrap()).collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
        assert_eq!(rank(&of("Secret")), None);
    }
}
