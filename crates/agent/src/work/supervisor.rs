//! Runs the in-process work agent (and add-on registration) with the credential the registration
//! agent earns: waits for `hub-kubeconfig-secret`, starts the agent with a hub client built from
//! it, and restarts the agent whenever the secret changes (certificate rotation, re-bootstrap),
//! so the work agent never holds a stale certificate.
use std::pin::pin;

use anyhow::Context as _;
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::config::Kubeconfig;
use kube::runtime::{WatchStreamExt as _, watcher};

use crate::registration::rotate::Renewal;
use crate::registration::secret::AGENT_NAME_KEY;
use ocm_api::names::HUB_KUBECONFIG_SECRET;
use ocm_runtime::Shutdown;
use ocm_runtime::client::{self as kubeconfig_client, Origin, Timeouts};

/// What the work agent needs from the hub kubeconfig secret.
#[derive(Clone, PartialEq, Eq)]
struct Credential {
    kubeconfig: String,
    agent_id: String,
}

/// Whose work agent, and where its credential is.
#[derive(Clone)]
pub struct Supervised {
    /// Client of the managed cluster.
    pub managed: kube::Client,
    /// Client of the cluster holding `hub-kubeconfig-secret`: the managed cluster, or in Hosted
    /// mode the management cluster.
    pub management: kube::Client,
    /// The agent namespace holding `hub-kubeconfig-secret`.
    pub namespace: String,
    /// The cluster's name on the hub.
    pub cluster: String,
    /// How the agent names AppliedManifestWorks.
    pub applied_names: super::AppliedNames,
    /// Also register the cluster's add-ons with the same credential ([`crate::addon`]).
    pub addons: bool,
    /// Run the work agent (not when this process is upstream's Default-mode registration agent,
    /// which registers add-ons only).
    pub work_agent: bool,
    /// Run the example add-on's agent in this process once it is registered (the in-process
    /// modes); a pod-run agent leaves it to the add-on's own Deployment.
    pub example_agents: bool,
    /// How long the add-ons' certificates are asked to last, and when they are renewed.
    pub addon_renewal: Renewal,
    /// Whether add-ons' hub clients get certificates or ServiceAccount tokens.
    pub addon_auth: crate::addon::token::Auth,
    /// The Klusterlet's feature gates the work agent acts on.
    pub gates: crate::gates::Gates,
    /// The Klusterlet's work settings.
    pub work: super::Settings,
}

/// Supervises the work agent of `agent.cluster` until `shutdown` is cancelled.
pub async fn run(agent: Supervised, shutdown: Shutdown) {
    let (namespace, cluster) = (&agent.namespace, &agent.cluster);
    let secrets: Api<Secret> = Api::namespaced(agent.management.clone(), namespace);
    let config =
        watcher::Config::default().fields(&format!("metadata.name={HUB_KUBECONFIG_SECRET}"));
    let mut events = pin!(watcher(secrets, config).default_backoff().applied_objects());
    let mut current: Option<(Credential, Shutdown)> = None;
    loop {
        let secret = tokio::select! {
            () = shutdown.cancelled() => break,
            event = events.next() => match event {
                Some(Ok(secret)) => secret,
                Some(Err(err)) => { tracing::debug!(%cluster, "watching {HUB_KUBECONFIG_SECRET}: {err}"); continue }
                None => break,
            },
        };
        let Some(credential) = credential(&secret) else {
            continue;
        };
        if current.as_ref().is_some_and(|(c, _)| *c == credential) {
            continue;
        }
        if let Some((_, token)) = current.take() {
            token.cancel(); // the old certificate is being replaced
        }
        let token = shutdown.child_token();
        let started = start(&agent, &credential, token.clone());
        match started.await {
            Ok(()) => current = Some((credential, token)),
            Err(err) => tracing::error!(%cluster, "cannot start the work agent: {err:#}"),
        }
    }
    if let Some((_, token)) = current {
        token.cancel();
    }
}

fn credential(secret: &Secret) -> Option<Credential> {
    let field = |key: &str| {
        secret
            .data
            .as_ref()?
            .get(key)
            .map(|b| String::from_utf8_lossy(&b.0).into_owned())
    };
    Some(Credential {
        kubeconfig: field("kubeconfig")?,
        agent_id: field(AGENT_NAME_KEY).unwrap_or_default(),
    })
}

async fn start(agent: &Supervised, credential: &Credential, token: Shutdown) -> anyhow::Result<()> {
    let (managed, namespace, cluster) = (&agent.managed, &agent.namespace, &agent.cluster);
    let kubeconfig = Kubeconfig::from_yaml(&credential.kubeconfig)
        .context("the hub kubeconfig secret is not a kubeconfig")?;
    let hub_url = kubeconfig
        .clusters
        .iter()
        .find_map(|c| c.cluster.as_ref().and_then(|c| c.server.clone()))
        .context("the hub kubeconfig names no server")?;
    let source = format!("secret {namespace}/{HUB_KUBECONFIG_SECRET}");
    let hub = kubeconfig_client::from_kubeconfig(
        &credential.kubeconfig,
        Origin::Cluster,
        &source,
        // The work agent's hub rate (add-on registration, run here too, shares it).
        Timeouts::LOOP.limited(agent.work.hub_rate),
    )
    .await?;
    // Upstream's agent registers add-ons only with its `AddonManagement` gate on (the default).
    if agent.addons && agent.gates.addon_management {
        let (server, ca_data) =
            crate::registration::bootstrap::hub_endpoint(&credential.kubeconfig)
                .map_err(|e| anyhow::anyhow!("the hub kubeconfig secret: {e}"))?;
        let opts = crate::addon::AddonOptions {
            hub: hub.clone(),
            managed: managed.clone(),
            management: agent.management.clone(),
            cluster: cluster.clone(),
            server,
            ca_data,
            example_agents: agent.example_agents,
            renewal: agent.addon_renewal,
            auth: agent.addon_auth,
        };
        tokio::spawn(crate::addon::run(opts, token.clone()));
    }
    if !agent.work_agent {
        return Ok(());
    }
    let mut opts = super::WorkAgentOptions::new(
        hub,
        hub_url,
        managed.clone(),
        cluster,
        credential.agent_id.clone(),
    );
    opts.applied_names = agent.applied_names;
    opts.feedback.raw_json = agent.gates.raw_feedback_json_string;
    opts.executor_caches = agent.gates.executor_validating_caches;
    opts.settings = agent.work;
    tracing::info!(%cluster, "work agent started with the hub credential");
    let cluster = cluster.clone();
    tokio::spawn(async move {
        if let Err(err) = super::run(opts, token).await {
            tracing::error!(%cluster, "work agent stopped: {err:#}");
        }
    });
    Ok(())
}
