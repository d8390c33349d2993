//! `clusteradm get clustersets [-o table|yaml|json]`: each cluster set, the namespaces it is
//! bound to, its status, and how many clusters it selects (counted here with the hub's own
//! membership rule, so the count is right even before the hub has written its status).
use kube::CustomResourceExt as _;
use std::process::ExitCode;

use anyhow::Context as _;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use crate::api::cluster::{
    CLUSTER_SET_EMPTY, ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding,
};
use crate::api::conditions;
use crate::cli::Ctx;
use crate::hub::clustersets::decide::Membership;
use crate::ui::output::{self, Format};
use crate::ui::table;

/// Flags of `get clustersets`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format
    #[arg(short, long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

/// Runs `get clustersets`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx.hub(&[ManagedClusterSet::crd_name()]).await?;
    let lp = ListParams::default();
    let mut sets = Api::<ManagedClusterSet>::all(kube.client.clone())
        .list(&lp)
        .await
        .map_err(crate::error::ocm_api_missing)
        .context("listing ManagedClusterSets on the hub")?
        .items;
    sets.sort_by_key(ResourceExt::name_any);
    if args.output.is_objects() {
        output::print_objects(&sets, args.output)?;
        return Ok(ExitCode::SUCCESS);
    }
    let bindings = Api::<ManagedClusterSetBinding>::all(kube.client.clone())
        .list(&lp)
        .await
        .context("listing ManagedClusterSetBindings")?
        .items;
    let clusters = Api::<ManagedCluster>::all(kube.client.clone())
        .list(&lp)
        .await
        .context("listing ManagedClusters")?
        .items;
    crate::ui::stdout::println(render(&sets, &bindings, &clusters))?;
    Ok(ExitCode::SUCCESS)
}

/// The table of sets.
#[must_use]
pub fn render(
    sets: &[ManagedClusterSet],
    bindings: &[ManagedClusterSetBinding],
    clusters: &[ManagedCluster],
) -> String {
    let mut t = table::new(&["name", "bound namespaces", "status", "clusters"]);
    for set in sets {
        let name = set.name_any();
        let mut bound: Vec<String> = bindings
            .iter()
            .filter(|b| b.spec.cluster_set == name)
            .filter_map(ResourceExt::namespace)
            .collect();
        bound.sort();
        let status = set
            .status
            .as_ref()
            .and_then(|s| conditions::find(&s.conditions, CLUSTER_SET_EMPTY))
            .map_or_else(String::new, |c| c.message.clone());
        let count = Membership::of(set).map_or_else(
            |_| "invalid selector".into(),
            |m| {
                clusters
                    .iter()
                    .filter(|c| m.contains(c.labels()))
                    .count()
                    .to_string()
            },
        );
        t.add_row(vec![name, bound.join(","), status, count]);
    }
    table::render(&t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::cluster::{
        CLUSTER_SET_LABEL, ManagedClusterSetBindingSpec, ManagedClusterSpec,
    };

    #[test]
    fn each_set_shows_its_namespaces_and_members() {
        let [default, global] = crate::hub::clustersets::decide::builtin_sets();
        let mut c1 = ManagedCluster::new("c1", ManagedClusterSpec::default());
        c1.labels_mut()
            .insert(CLUSTER_SET_LABEL.into(), "default".into());
        let c2 = ManagedCluster::new("c2", ManagedClusterSpec::default());
        let mut b = ManagedClusterSetBinding::new(
            "default",
            ManagedClusterSetBindingSpec {
                cluster_set: "default".into(),
            },
        );
        b.metadata.namespace = Some("apps".into());
        let text = render(&[default, global], &[b], &[c1, c2]);
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert!(
            rows.iter().any(|r| r == &["default", "apps", "1"]),
            "{text}"
        );
        assert!(rows.iter().any(|r| r == &["global", "2"]), "{text}");
    }
}
