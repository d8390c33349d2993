//! `clusteradm get clusters [NAME...] [--clusterset SET] [-o table|yaml|json]`: the
//! ManagedClusters on the hub (of one cluster set, by its label, as upstream's `--clusterset`),
//! with whether each is accepted, joined and available, and its Kubernetes version.
use kube::CustomResourceExt as _;
use std::process::ExitCode;

use anyhow::Context as _;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use crate::api::cluster::{
    CLUSTER_SET_LABEL, MANAGED_CLUSTER_CONDITION_AVAILABLE, MANAGED_CLUSTER_JOINED, ManagedCluster,
    ManagedClusterSet,
};
use crate::api::conditions;
use crate::cli::Ctx;
use crate::error::UserError;
use crate::ui::output::{self, Format};
use crate::ui::table;

/// Flags of `get clusters`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only these clusters
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Only the clusters of this cluster set (its `cluster.open-cluster-management.io/clusterset` label)
    #[arg(long, value_name = "SET")]
    pub clusterset: Option<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

/// Runs `get clusters`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx.hub(&[ManagedCluster::crd_name()]).await?;
    let mut list = ListParams::default();
    if let Some(set) = &args.clusterset {
        let sets: Api<ManagedClusterSet> = Api::all(kube.client.clone());
        if sets
            .get_opt(set)
            .await
            .map_err(crate::error::ocm_api_missing)?
            .is_none()
        {
            return Err(UserError::new(
                format!("cluster set {set} not found on the hub"),
                "`clusteradm get clustersets` lists the cluster sets",
            )
            .into());
        }
        list = list.labels(&format!("{CLUSTER_SET_LABEL}={set}"));
    }
    let api: Api<ManagedCluster> = Api::all(kube.client.clone());
    let mut clusters = api
        .list(&list)
        .await
        .map_err(crate::error::ocm_api_missing)
        .context("listing ManagedClusters on the hub")?
        .items;
    if !args.names.is_empty() {
        if let Some(missing) = args
            .names
            .iter()
            .find(|n| !clusters.iter().any(|c| c.name_any() == **n))
        {
            return Err(UserError::new(
                format!("managed cluster {missing} not found on the hub"),
                "`clusteradm get clusters` lists the known clusters",
            )
            .into());
        }
        clusters.retain(|c| args.names.contains(&c.name_any()));
    }
    clusters.sort_by_key(ResourceExt::name_any);
    if args.output.is_objects() {
        output::print_objects(&clusters, args.output)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.output == Format::Tree {
        crate::ui::stdout::print(tree(&clusters).render())?;
        return Ok(ExitCode::SUCCESS);
    }
    if clusters.is_empty() {
        ctx.printer
            .info("no managed clusters on this hub (join one with `clusteradm join`)");
        return Ok(ExitCode::SUCCESS);
    }
    crate::ui::stdout::println(render(&clusters))?;
    Ok(ExitCode::SUCCESS)
}

/// Upstream's tree of clusters: per cluster its acceptance, availability, set, capacity and
/// Kubernetes version.
#[must_use]
pub fn tree(clusters: &[ManagedCluster]) -> crate::ui::tree::Node {
    use crate::ui::tree::Node;
    let objects = clusters
        .iter()
        .map(|mc| {
            let status = mc.status.as_ref();
            let conds = status.map(|s| s.conditions.as_slice()).unwrap_or_default();
            let available = conditions::find(conds, MANAGED_CLUSTER_CONDITION_AVAILABLE)
                .map_or_else(String::new, |c| c.status.clone());
            let capacity = |name: &str| {
                status
                    .and_then(|s| s.capacity.get(name))
                    .map_or_else(String::new, |q| q.0.clone())
            };
            let version = status
                .and_then(|s| s.version.as_ref())
                .and_then(|v| v.kubernetes.clone())
                .unwrap_or_default();
            let set = mc
                .labels()
                .get(CLUSTER_SET_LABEL)
                .cloned()
                .unwrap_or_default();
            Node::branch(
                &mc.name_any(),
                vec![
                    Node::field("Accepted", mc.spec.hub_accepts_client),
                    Node::field("Available", available),
                    Node::branch(
                        "Capacity",
                        vec![
                            Node::field("Cpu", capacity("cpu")),
                            Node::field("Memory", capacity("memory")),
                        ],
                    ),
                    Node::field("ClusterSet", set),
                    Node::field("KubernetesVersion", version),
                ],
            )
        })
        .collect();
    Node::branch("ManagedCluster", objects)
}

/// The table of clusters.
#[must_use]
pub fn render(clusters: &[ManagedCluster]) -> String {
    let mut t = table::new(&[
        "name",
        "accepted",
        "joined",
        "available",
        "kubernetes version",
        "age",
    ]);
    for mc in clusters {
        let conds = mc
            .status
            .as_ref()
            .map(|s| s.conditions.as_slice())
            .unwrap_or_default();
        let status = |type_: &str| {
            conditions::find(conds, type_).map_or_else(String::new, |c| c.status.clone())
        };
        let version = mc
            .status
            .as_ref()
            .and_then(|s| s.version.as_ref())
            .and_then(|v| v.kubernetes.clone())
            .unwrap_or_default();
        t.add_row(vec![
            mc.name_any(),
            mc.spec.hub_accepts_client.to_string(),
            status(MANAGED_CLUSTER_JOINED),
            status(MANAGED_CLUSTER_CONDITION_AVAILABLE),
            version,
            table::age(mc.metadata.creation_timestamp.as_ref()),
        ]);
    }
    table::render(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_shows_acceptance_conditions_and_version() {
        let mc: ManagedCluster = serde_json::from_value(serde_json::json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": "c1"}, "spec": {"hubAcceptsClient": true},
            "status": {"version": {"kubernetes": "v1.36.2"}, "conditions": [
                {"type": "ManagedClusterJoined", "status": "True", "reason": "J", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "ManagedClusterConditionAvailable", "status": "Unknown", "reason": "L", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        }))
        .unwrap();
        let pending = ManagedCluster::new("c2", crate::api::cluster::ManagedClusterSpec::default());
        let text = render(&[mc, pending]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("NAME") && lines[0].contains("KUBERNETES VERSION"),
            "{text}"
        );
        let row: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(row[..5], ["c1", "true", "True", "Unknown", "v1.36.2"]);
        assert!(
            lines[2].starts_with("c2") && lines[2].contains("false"),
            "{text}"
        );
    }
}
