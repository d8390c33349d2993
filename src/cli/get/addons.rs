//! `clusteradm get addon [NAME ...] [-c C] [--clusters a,b] [-o table|yaml|json]`: each enabled add-on
//! per cluster, with its install namespace, its `Available`, `Degraded` and `Progressing`
//! conditions and the hub identity its agent registers as; add-ons the hub knows but that are
//! enabled nowhere are listed too, so a user sees what `addon enable` can enable.
use kube::CustomResourceExt as _;
use std::process::ExitCode;

use anyhow::Context as _;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use crate::api::addon::{ClusterManagementAddOn, ManagedClusterAddOn};
use crate::api::conditions;
use crate::cli::Ctx;
use crate::ui::output::{self, Format};
use crate::ui::table;

/// Flags of `get addon`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only these add-ons (all when none is given)
    pub names: Vec<String>,
    /// Only these managed clusters, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub clusters: Vec<String>,
    /// Only this managed cluster (with `--clusters`: that one too), as upstream's `-c`
    #[arg(short = 'c', long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

/// Runs `get addon`.
pub async fn run(mut args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    args.clusters.extend(args.cluster.take());
    let kube = ctx
        .hub(&[
            ClusterManagementAddOn::crd_name(),
            ManagedClusterAddOn::crd_name(),
        ])
        .await?;
    let lp = ListParams::default();
    let known = Api::<ClusterManagementAddOn>::all(kube.client.clone())
        .list(&lp)
        .await
        .map_err(crate::error::ocm_api_missing)
        .context("listing ClusterManagementAddOns on the hub")?
        .items;
    let mut enabled = Api::<ManagedClusterAddOn>::all(kube.client.clone())
        .list(&lp)
        .await
        .context("listing ManagedClusterAddOns on the hub")?
        .items;
    let wanted = |addon: &str| args.names.is_empty() || args.names.iter().any(|n| n == addon);
    let on = |cluster: &str| args.clusters.is_empty() || args.clusters.iter().any(|c| c == cluster);
    enabled.retain(|m| wanted(&m.name_any()) && on(&m.namespace().unwrap_or_default()));
    enabled.sort_by_key(|m| (m.name_any(), m.namespace()));
    if args.output.is_objects() {
        output::print_objects(&enabled, args.output)?;
        return Ok(ExitCode::SUCCESS);
    }
    let idle: Vec<String> = if args.clusters.is_empty() {
        known
            .iter()
            .map(ResourceExt::name_any)
            .filter(|n| wanted(n) && !enabled.iter().any(|m| &m.name_any() == n))
            .collect()
    } else {
        Vec::new()
    };
    crate::ui::stdout::println(render(&enabled, &idle))?;
    Ok(ExitCode::SUCCESS)
}

/// The table: one row per enabled add-on and cluster, then one per add-on enabled nowhere.
#[must_use]
pub fn render(enabled: &[ManagedClusterAddOn], idle: &[String]) -> String {
    let mut t = table::new(&[
        "addon",
        "cluster",
        "namespace",
        "available",
        "degraded",
        "progressing",
        "identity",
    ]);
    for mca in enabled {
        let status = mca.status.as_ref();
        let condition = |type_: &str| {
            status
                .and_then(|s| conditions::find(&s.conditions, type_))
                .map_or_else(|| "Unknown".to_string(), |c| c.status.clone())
        };
        let identity: Vec<String> = status
            .map(|s| s.registrations.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|r| {
                r.subject
                    .as_ref()
                    .and_then(|s| s.user.clone())
                    .unwrap_or_else(|| format!("({})", r.signer_name))
            })
            .collect();
        t.add_row(vec![
            mca.name_any(),
            mca.namespace().unwrap_or_default(),
            mca.install_namespace(),
            condition("Available"),
            condition("Degraded"),
            condition("Progressing"),
            identity.join(","),
        ]);
    }
    for addon in idle {
        t.add_row(vec![addon.clone(), "(not enabled)".into()]);
    }
    table::render(&t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::addon::{
        ManagedClusterAddOnSpec, ManagedClusterAddOnStatus, RegistrationConfig, Subject,
    };

    #[test]
    fn a_row_shows_conditions_namespace_and_identity() {
        let mut mca = ManagedClusterAddOn::new("hello", ManagedClusterAddOnSpec::default());
        mca.metadata.namespace = Some("c1".into());
        mca.spec.install_namespace = Some("addons".into());
        mca.status = Some(ManagedClusterAddOnStatus {
            conditions: vec![conditions::new(
                "Available",
                "True",
                "AddonAvailable",
                "",
                &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    k8s_openapi::jiff::Timestamp::now(),
                ),
            )],
            registrations: vec![RegistrationConfig {
                signer_name: "kubernetes.io/kube-apiserver-client".into(),
                subject: Some(Subject {
                    user: Some(
                        "system:open-cluster-management:cluster:c1:addon:hello:agent:hello-agent"
                            .into(),
                    ),
                    ..Subject::default()
                }),
            }],
            ..ManagedClusterAddOnStatus::default()
        });
        let text = render(&[mca], &["idle".into()]);
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert!(
            rows.iter().any(|r| r
                == &[
                    "hello",
                    "c1",
                    "addons",
                    "True",
                    "Unknown",
                    "Unknown",
                    "system:open-cluster-management:cluster:c1:addon:hello:agent:hello-agent"
                ]),
            "{text}"
        );
        assert!(
            rows.iter().any(|r| r == &["idle", "(not", "enabled)"]),
            "{text}"
        );
    }
}
