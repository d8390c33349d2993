//! `node-proxy`: what kube-proxy and cluster DNS give a real cluster's pods, for a node of the
//! test plane (scripts/control-plane). The plane's nodes share this machine's network namespace,
//! where kube-proxies of several clusters (and of several planes) would fight over the same
//! iptables chains; this one writes only its node's chain, each rule matching its node's pod
//! subnet. It watches the cluster's Services and EndpointSlices and, on every change:
//!
//! - relays each TCP Service port through a loopback listener ([`relay`]), which a NAT rule leads
//!   the Service's address to from the node's pods ([`nat`]) — a userspace proxy, so no packet is
//!   forwarded between interfaces and the machine's `ip_forward` stays as it is;
//! - serves `<service>.<namespace>.svc.cluster.local` on the node's address ([`dns`]).
//!
//! UDP Service ports are not proxied (the plane needs none).
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client};
use tokio::sync::Notify;

mod dns;
mod nat;
mod relay;
mod table;

/// How soon a failed write is tried again.
const RETRY: Duration = Duration::from_secs(1);
/// How often everything is written again anyway (a rule someone removed comes back).
const RESYNC: Duration = Duration::from_secs(30);

/// Service proxy and cluster DNS for one node of the test plane.
#[derive(Parser)]
struct Args {
    /// The cluster's kubeconfig (one that may list and watch Services and EndpointSlices).
    #[arg(long)]
    kubeconfig: PathBuf,
    /// The node's pod subnet: only its pods' connections are led to the relays.
    #[arg(long)]
    source: String,
    /// The node's own NAT chain (created by the plane, which jumps to it).
    #[arg(long)]
    chain: String,
    /// The node's address, where DNS is served (the kubelet's `clusterDNS`) and node ports.
    #[arg(long)]
    dns_address: std::net::IpAddr,
    /// Where the DNS records and dnsmasq's pid file are kept.
    #[arg(long)]
    state_dir: PathBuf,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = Args::parse();
    let kubeconfig = kube::config::Kubeconfig::read_from(&args.kubeconfig)
        .with_context(|| format!("reading {}", args.kubeconfig.display()))?;
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    let client = Client::try_from(config)?;
    let changed = Arc::new(Notify::new());
    let services = watch::<Service>(&client, changed.clone());
    let slices = watch::<EndpointSlice>(&client, changed.clone());
    services.wait_until_ready().await?;
    slices.wait_until_ready().await?;
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut dns = dns::Dns::new(&args.dns_address.to_string(), &args.state_dir);
    let mut relays: BTreeMap<table::Frontend, relay::Relay> = BTreeMap::new();
    let mut written = String::new();
    tracing::info!(source = %args.source, chain = %args.chain, "serving the node's Services");
    loop {
        let table = table::build(&services.state(), &slices.state(), args.dns_address);
        sync_relays(&mut relays, &table).await;
        let listed: Vec<_> = relays.iter().map(|(f, r)| (*f, r.local)).collect();
        let rules = nat::rules(&args.chain, &args.source, args.dns_address, &listed);
        let mut failed = false;
        if rules != written {
            match nat::apply(&rules).await {
                Ok(()) => written = rules,
                Err(e) => {
                    tracing::warn!("writing the NAT chain: {e:#}");
                    failed = true;
                }
            }
        }
        if let Err(e) = dns.serve(table::hosts_file(&table.records)).await {
            tracing::warn!("serving DNS: {e:#}");
            failed = true;
        }
        let again = if failed { RETRY } else { RESYNC };
        tokio::select! {
            () = changed.notified() => {}
            () = tokio::time::sleep(again) => written.clear(),
            // The plane stops the node: dnsmasq goes with this process (dropped, killed).
            _ = terminate.recv() => return Ok(()),
        }
        // Bursts (a Service and its slice) are taken in one pass.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A store of every `K` in the cluster, kept by a background watch that notifies `changed`.
fn watch<K>(client: &Client, changed: Arc<Notify>) -> Store<K>
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let (reader, writer) = reflector::store();
    let stream = reflector::reflector(
        writer,
        watcher(Api::<K>::all(client.clone()), watcher::Config::default()),
    )
    .default_backoff()
    .touched_objects();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            if let Err(e) = event {
                tracing::debug!("watch: {e}");
            }
            changed.notify_one();
        }
    });
    reader
}

/// Starts a relay for each new frontend, retargets the kept ones, drops the gone ones.
async fn sync_relays(relays: &mut BTreeMap<table::Frontend, relay::Relay>, table: &table::Table) {
    relays.retain(|frontend, _| table.ports.contains_key(frontend));
    for (frontend, targets) in &table.ports {
        if let Some(relay) = relays.get(frontend) {
            relay.retarget(targets.clone());
            continue;
        }
        match relay::Relay::start(targets.clone()).await {
            Ok(relay) => {
                relays.insert(*frontend, relay);
            }
            Err(e) => tracing::warn!(?frontend, "starting a relay: {e}"),
        }
    }
}
