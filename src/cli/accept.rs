//! `clusteradm accept --clusters a,b`: approve the named clusters' bootstrap CSRs and set
//! `hubAcceptsClient: true`. Every CSR is checked before approval: a bootstrap requester (unless
//! `--skip-approve-check`) asking for exactly that cluster's identity; anything else is refused
//! with a warning. Idempotent: an accepted cluster with nothing pending is reported and left
//! alone (upstream loops forever there, clusteradm#395). `--wait` watches for the CSR.
use kube::CustomResourceExt as _;
use std::collections::BTreeMap;
use std::pin::pin;
use std::process::ExitCode;

use anyhow::Context as _;
use futures::StreamExt as _;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde_json::json;

use super::Ctx;
use crate::api::cluster::{CLUSTER_NAME_LABEL, ManagedCluster};
use crate::error::UserError;
use crate::identity::CsrFacts;
use crate::identity::approval::{self, APPROVE_MESSAGE, APPROVE_REASON, Blocked, Plan};

/// Flags of `accept`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Clusters to accept, comma-separated [default: choose among pending clusters on a terminal]
    #[arg(
        short = 'c',
        long,
        visible_alias = "cluster",
        value_delimiter = ',',
        value_name = "NAMES"
    )]
    pub clusters: Vec<String>,
    /// Wait (up to --timeout) for the clusters' CSRs to appear
    #[arg(long)]
    pub wait: bool,
    /// Approve CSRs from any requester, not only bootstrap identities (subjects are still checked)
    #[arg(long)]
    pub skip_approve_check: bool,
    /// Approve only CSRs of these agents (subject common names), comma-separated
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub requesters: Vec<String>,
}

/// Runs `accept`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx.hub(&[ManagedCluster::crd_name()]).await?;
    let clusters_api: Api<ManagedCluster> = Api::all(kube.client.clone());
    let names = if args.clusters.is_empty() {
        match choose(&clusters_api, ctx).await? {
            Some(names) => names,
            None => return Ok(ExitCode::SUCCESS),
        }
    } else {
        args.clusters.clone()
    };
    // Every cluster must exist, and every plan be made, before anything changes (with --wait:
    // until they do), so one blocked cluster leaves all untouched.
    let clusters = lookup(&clusters_api, &names, &args, ctx).await?;
    // Many clusters: one list of their CSRs rather than one per cluster.
    let mut listed = if names.len() > 1 {
        Some(cluster_csrs(&kube.client).await?)
    } else {
        None
    };
    let mut plans = Vec::new();
    for mc in &clusters {
        let name = mc.metadata.name.clone().unwrap_or_default();
        let prelisted = listed.as_mut().map(|l| l.remove(&name).unwrap_or_default());
        plans.push(plan_for(&kube.client, &name, mc, &args, ctx, prelisted).await?);
    }
    execute_all(&kube.client, &plans, ctx).await?;
    Ok(ExitCode::SUCCESS)
}

/// Clusters approved and accepted at once.
const CONCURRENCY: usize = 16;

/// The ManagedClusters `names` (one list when there are several), waiting for missing ones with
/// `--wait`; without it every missing one is named.
async fn lookup(
    api: &Api<ManagedCluster>,
    names: &[String],
    args: &Args,
    ctx: &Ctx,
) -> anyhow::Result<Vec<ManagedCluster>> {
    let mut found: BTreeMap<String, ManagedCluster> = if names.len() > 1 {
        api.list(&ListParams::default())
            .await
            .map_err(crate::error::ocm_api_missing)
            .context("listing ManagedClusters on the hub")?
            .items
            .into_iter()
            .filter_map(|mc| Some((mc.metadata.name.clone()?, mc)))
            .filter(|(n, _)| names.contains(n))
            .collect()
    } else {
        let mut one = BTreeMap::new();
        for name in names {
            if let Some(mc) = api
                .get_opt(name)
                .await
                .map_err(crate::error::ocm_api_missing)
                .with_context(|| format!("reading ManagedCluster {name} on the hub"))?
            {
                one.insert(name.clone(), mc);
            }
        }
        one
    };
    let mut missing = Vec::new();
    let absent: Vec<&String> = names.iter().filter(|n| !found.contains_key(*n)).collect();
    for name in absent {
        if args.wait
            && let Some(mc) = wait_for_cluster(api, name, ctx).await?
        {
            found.insert(name.clone(), mc);
            continue;
        }
        missing.push(name.clone());
    }
    if !missing.is_empty() {
        let what = match missing.as_slice() {
            [one] => format!("managed cluster {one} not found on the hub"),
            many => format!("managed clusters {} not found on the hub", many.join(", ")),
        };
        return Err(UserError::new(
            what,
            "the agent creates it when the cluster joins (`clusteradm join`); `clusteradm get clusters` lists the known clusters",
        )
        .into());
    }
    Ok(names.iter().filter_map(|n| found.remove(n)).collect())
}

/// Every CSR that names a cluster, by cluster.
async fn cluster_csrs(client: &kube::Client) -> anyhow::Result<BTreeMap<String, Vec<CsrFacts>>> {
    let api: Api<CertificateSigningRequest> = Api::all(client.clone());
    let mut by_cluster: BTreeMap<String, Vec<CsrFacts>> = BTreeMap::new();
    for csr in api
        .list(&ListParams::default().labels(CLUSTER_NAME_LABEL))
        .await
        .context("listing CertificateSigningRequests on the hub")?
        .items
    {
        if let Some(cluster) = csr
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(CLUSTER_NAME_LABEL))
        {
            by_cluster
                .entry(cluster.clone())
                .or_default()
                .push(CsrFacts::of(&csr));
        }
    }
    Ok(by_cluster)
}

/// Executes every plan, [`CONCURRENCY`] at a time; one failure does not stop the others, and
/// all failures are reported.
async fn execute_all(client: &kube::Client, plans: &[Plan], ctx: &Ctx) -> anyhow::Result<()> {
    use futures::StreamExt as _;
    let failures: Vec<anyhow::Error> = futures::stream::iter(plans)
        .map(|plan| execute(client, plan, ctx))
        .buffer_unordered(CONCURRENCY)
        .filter_map(|r| async move { r.err() })
        .collect()
        .await;
    match failures.len() {
        0 => Ok(()),
        1 => Err(failures.into_iter().next().expect("one failure")),
        n => {
            let all: Vec<String> = failures
                .iter()
                .map(|e| format!("  {}", crate::runtime::report::chain(e.as_ref())))
                .collect();
            Err(anyhow::anyhow!(
                "{n} of {} clusters were not accepted:\n{}",
                plans.len(),
                all.join("\n")
            ))
        }
    }
}

/// Watches for the ManagedCluster to appear, up to `--timeout` (`None` when it did not).
async fn wait_for_cluster(
    api: &Api<ManagedCluster>,
    name: &str,
    ctx: &Ctx,
) -> anyhow::Result<Option<ManagedCluster>> {
    let spinner = ctx
        .printer
        .spinner(format!("waiting for managed cluster {name} to register"));
    let found = tokio::time::timeout(
        ctx.global.timeout,
        await_condition(api.clone(), name, conditions::is_created()),
    )
    .await;
    spinner.finish_and_clear();
    match found {
        Ok(result) => Ok(result.with_context(|| format!("watching ManagedCluster {name}"))?),
        Err(_) => Ok(None),
    }
}

/// On a terminal, lets the user pick among the clusters not accepted yet.
async fn choose(api: &Api<ManagedCluster>, ctx: &Ctx) -> anyhow::Result<Option<Vec<String>>> {
    if !ctx.printer.interactive() {
        return Err(UserError::new(
            "no clusters given",
            "pass --clusters <name>[,<name>...]; `clusteradm get clusters` lists them",
        )
        .into());
    }
    let mut pending: Vec<String> = api
        .list(&ListParams::default())
        .await
        .context("listing ManagedClusters on the hub")?
        .items
        .into_iter()
        .filter(|mc| !mc.spec.hub_accepts_client)
        .filter_map(|mc| mc.metadata.name)
        .collect();
    pending.sort();
    if pending.is_empty() {
        ctx.printer
            .info("no managed cluster is waiting to be accepted");
        return Ok(None);
    }
    let picked = dialoguer::MultiSelect::new()
        .with_prompt("Clusters to accept (space to select, enter to confirm)")
        .items(&pending)
        .interact()?;
    if picked.is_empty() {
        ctx.printer.info("nothing selected");
        return Ok(None);
    }
    Ok(Some(
        picked.into_iter().map(|i| pending[i].clone()).collect(),
    ))
}

/// How long `--wait` waits for a new agent's CSR when the only CSR of the cluster was approved
/// before its ManagedCluster was created.
const EARLIER_CSR_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// The plan for one cluster (from `prelisted` CSRs, or its own list), waiting for its CSR with
/// `--wait`.
async fn plan_for(
    client: &kube::Client,
    name: &str,
    mc: &ManagedCluster,
    args: &Args,
    ctx: &Ctx,
    prelisted: Option<Vec<CsrFacts>>,
) -> anyhow::Result<Plan> {
    let api: Api<CertificateSigningRequest> = Api::all(client.clone());
    let selector = format!("{CLUSTER_NAME_LABEL}={name}");
    let csrs: Vec<CsrFacts> = match prelisted {
        Some(csrs) => csrs,
        None => api
            .list(&ListParams::default().labels(&selector))
            .await
            .context("listing CertificateSigningRequests on the hub")?
            .items
            .iter()
            .map(CsrFacts::of)
            .collect(),
    };
    let decide = |csrs: &[CsrFacts]| {
        approval::plan(name, mc, csrs, args.skip_approve_check, &args.requesters)
    };
    match decide(&csrs) {
        Ok(plan) if plan.on_an_earlier_csr && args.wait && !ctx.global.dry_run => {
            // The CSR of a cluster joined again under this name may be moments away: wait a
            // little for it rather than accept with nothing approved and leave that agent
            // waiting. An agent that kept its certificate sends none: then the earlier CSR
            // stands, as upstream's accept takes it.
            let fresh = |csrs: &[CsrFacts]| match decide(csrs) {
                Ok(p) if p.on_an_earlier_csr => Err(Blocked::NoCsr { refused: vec![] }),
                other => other,
            };
            let waiting = format!("waiting for a new CSR from cluster {name}'s agent");
            let grace = EARLIER_CSR_GRACE.min(ctx.global.timeout);
            match wait_for_plan(api, &selector, fresh, grace, &waiting, ctx).await {
                Some(result) => result.map_err(|b| blocked(name, b, ctx)),
                None => Ok(plan),
            }
        }
        Ok(plan) => Ok(plan),
        Err(Blocked::NoCsr { refused }) if args.wait && !ctx.global.dry_run => {
            warn_refused(name, &refused, ctx);
            let waiting = format!("waiting for a CSR from cluster {name}'s agent");
            match wait_for_plan(api, &selector, decide, ctx.global.timeout, &waiting, ctx).await {
                Some(result) => result.map_err(|b| blocked(name, b, ctx)),
                None => Err(UserError::new(
                    format!("no CSR from cluster {name}'s agent appeared within {:?}", ctx.global.timeout),
                    format!("is the agent running (`clusteradm join`)? see `kubectl get csr -l {selector}`"),
                )
                .into()),
            }
        }
        Err(b) => Err(blocked(name, b, ctx)),
    }
}

/// Watches the cluster's CSRs (saying `waiting` on a terminal) until the plan is no longer
/// blocked on a missing CSR; `None` when `limit` passes first.
async fn wait_for_plan(
    api: Api<CertificateSigningRequest>,
    selector: &str,
    decide: impl Fn(&[CsrFacts]) -> Result<Plan, Blocked>,
    limit: std::time::Duration,
    waiting: &str,
    ctx: &Ctx,
) -> Option<Result<Plan, Blocked>> {
    let spinner = ctx.printer.spinner(waiting.to_string());
    let waited = tokio::time::timeout(limit, watch_for_plan(api, selector, decide)).await;
    spinner.finish_and_clear();
    waited.ok()
}

/// Watches the cluster's CSRs until the plan is no longer blocked on a missing CSR.
async fn watch_for_plan(
    api: Api<CertificateSigningRequest>,
    selector: &str,
    decide: impl Fn(&[CsrFacts]) -> Result<Plan, Blocked>,
) -> Result<Plan, Blocked> {
    let mut seen: BTreeMap<String, CsrFacts> = BTreeMap::new();
    let mut events =
        pin!(watcher(api, watcher::Config::default().labels(selector)).default_backoff());
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Apply(csr) | watcher::Event::InitApply(csr)) => {
                let facts = CsrFacts::of(&csr);
                seen.insert(facts.name.clone(), facts);
            }
            Ok(watcher::Event::Delete(csr)) => {
                seen.remove(&csr.metadata.name.unwrap_or_default());
            }
            Ok(watcher::Event::Init) => seen.clear(),
            Ok(watcher::Event::InitDone) | Err(_) => {}
        }
        let all: Vec<CsrFacts> = seen.values().cloned().collect();
        match decide(&all) {
            Err(Blocked::NoCsr { .. }) => {}
            other => return other,
        }
    }
    Err(Blocked::NoCsr { refused: vec![] })
}

fn blocked(name: &str, b: Blocked, ctx: &Ctx) -> anyhow::Error {
    match b {
        Blocked::NoCsr { refused } => {
            warn_refused(name, &refused, ctx);
            UserError::new(
                format!("no CSR to approve for cluster {name}"),
                "is the agent running (`clusteradm join`)? re-run with --wait to wait for its CSR",
            )
            .into()
        }
        Blocked::SeveralAgents(agents) => UserError::new(
            format!(
                "cluster {name} has CSRs from several agents: {}",
                agents.join(", ")
            ),
            "pass --requesters <agent common name> to approve only the one you expect",
        )
        .into(),
        Blocked::Competing(csrs) => UserError::new(
            format!(
                "cluster {name} has several pending CSRs for the same agent: {}; approving none, since only one can be its agent's",
                csrs.join(", ")
            ),
            "delete the CSRs you do not recognise (`kubectl delete csr <name>`), or restart the agent, then run accept again",
        )
        .into(),
    }
}

fn warn_refused(name: &str, refused: &[(String, String)], ctx: &Ctx) {
    for (csr, why) in refused {
        ctx.printer
            .warn(format!("not approving CSR {csr} for cluster {name}: {why}"));
    }
}

/// Approves, then accepts; `--dry-run` only says what it would do.
async fn execute(client: &kube::Client, plan: &Plan, ctx: &Ctx) -> anyhow::Result<()> {
    let name = &plan.cluster;
    warn_refused(name, &plan.refused, ctx);
    if plan.is_noop() {
        ctx.printer.done(format!(
            "cluster {name} is already accepted; nothing to approve"
        ));
        return Ok(());
    }
    let dry = ctx.global.dry_run;
    for csr in &plan.approve {
        if dry {
            ctx.printer.info(format!(
                "would approve CSR {csr} for cluster {name} (dry run)"
            ));
            continue;
        }
        crate::apply::approve::approve_csr(client, csr, APPROVE_REASON, APPROVE_MESSAGE)
            .await
            .with_context(|| format!("approving CSR {csr} for cluster {name}"))?;
        ctx.printer
            .done(format!("approved CSR {csr} for cluster {name}"));
    }
    if !plan.set_accepted {
        ctx.printer
            .done(format!("cluster {name} is already accepted"));
        return Ok(());
    }
    if dry {
        ctx.printer.info(format!(
            "would set hubAcceptsClient to true on cluster {name} (dry run)"
        ));
        return Ok(());
    }
    let api: Api<ManagedCluster> = Api::all(client.clone());
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"hubAcceptsClient": true}})),
    )
    .await
    .with_context(|| format!("setting hubAcceptsClient on ManagedCluster {name}"))?;
    ctx.printer
        .done(format!("cluster {name} accepted (hubAcceptsClient: true)"));
    Ok(())
}
