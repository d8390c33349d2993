//! The add-on's CSRs: approved only when one asks for exactly an identity the add-on registers,
//! from that cluster's agent, while the cluster is accepted and the add-on enabled there (the hub's own check,
//! [`ocm_runtime::identity::addon::check_with_signers`]); and, for the add-on's own signer,
//! signed with its CA after the same check again (whoever approved it). A refused CSR stays
//! pending and is logged, as upstream's framework leaves it.
use std::sync::Arc;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::Client;
use kube::api::{Api, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;

use crate::AgentAddon;
use ocm_api::addon::{ADDON_NAME_LABEL, ManagedClusterAddOn};
use ocm_api::cluster::ManagedCluster;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::identity::{CsrFacts, addon::check_with_signers};

/// Reason written on the CSRs the manager approves.
const REASON: &str = "AutoApprovedByAddonManager";

struct Context<A> {
    client: Client,
    addon: Arc<A>,
}

pub(crate) async fn run<A: AgentAddon>(
    client: Client,
    addon: Arc<A>,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let selector = format!("{ADDON_NAME_LABEL}={}", addon.name());
    let csrs: Api<CertificateSigningRequest> = Api::all(client.clone());
    let ctx = Arc::new(Context { client, addon });
    let controller = Controller::new(csrs, watcher::Config::default().labels(&selector));
    Runner::new("add-on framework: CSRs", controller)
        .run(
            |csr, ctx| async move { reconcile(csr, ctx).await.map_err(crate::Failed) },
            ctx,
            shutdown,
        )
        .await;
    Ok(())
}

async fn reconcile<A: AgentAddon>(
    csr: Arc<CertificateSigningRequest>,
    ctx: Arc<Context<A>>,
) -> anyhow::Result<Action> {
    let facts = CsrFacts::of(&csr);
    let unsigned = csr.status.as_ref().is_none_or(|s| s.certificate.is_none());
    let Some(cluster) = facts.cluster.clone() else {
        return Ok(Action::await_change());
    };
    if !(facts.pending || facts.approved && unsigned) {
        return Ok(Action::await_change());
    }
    let addon = &*ctx.addon;
    let registration = addon.registration();
    let registrations = crate::deploy::registrations(&registration);
    let ours: Vec<String> = registration
        .custom_signer
        .iter()
        .map(|c| c.signer_name.clone())
        .collect();
    let accepted = Api::<ManagedCluster>::all(ctx.client.clone())
        .get_opt(&cluster)
        .await?
        .is_some_and(|mc| mc.spec.hub_accepts_client && mc.metadata.deletion_timestamp.is_none());
    // Only while the add-on is enabled there: a disabled add-on's identity is not re-issued.
    let enabled = Api::<ManagedClusterAddOn>::namespaced(ctx.client.clone(), &cluster)
        .get_opt(addon.name())
        .await?
        .is_some_and(|mca| mca.metadata.deletion_timestamp.is_none());
    let checked = if !accepted {
        Err(format!("cluster {cluster} is not accepted"))
    } else if !enabled {
        Err(format!("the add-on is not enabled on cluster {cluster}"))
    } else {
        check_with_signers(&facts, &cluster, addon.name(), &registrations, &ours)
    };
    if let Err(why) = checked {
        tracing::info!(csr = %facts.name, %cluster, "add-on {}: not approving or signing: {why}", addon.name());
        return Ok(Action::await_change());
    }
    if facts.pending {
        let message = format!("the {} add-on's agent on {cluster}", addon.name());
        ocm_runtime::apply::approve::approve_csr(&ctx.client, &facts.name, REASON, &message)
            .await?;
        tracing::info!(csr = %facts.name, %cluster, "approved an add-on CSR");
    } else if let Some(custom) = registration
        .custom_signer
        .filter(|c| c.signer_name == facts.signer)
    {
        let request = String::from_utf8(csr.spec.request.0.clone())?;
        let now = ocm_runtime::pki::now_seconds();
        let cert = ocm_runtime::pki::webhook::sign_client_request(&request, &custom.ca, now)?;
        let mut issued = (*csr).clone();
        issued
            .status
            .get_or_insert_with(Default::default)
            .certificate = Some(k8s_openapi::ByteString(cert.into_bytes()));
        // An update guarded by the resourceVersion: RBAC grants `update` on the status.
        Api::<CertificateSigningRequest>::all(ctx.client.clone())
            .replace_status(&facts.name, &PostParams::default(), &issued)
            .await?;
        tracing::info!(csr = %facts.name, %cluster, signer = %custom.signer_name, "signed an add-on CSR");
    }
    Ok(Action::await_change())
}
