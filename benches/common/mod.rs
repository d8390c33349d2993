//! What the benchmarks share: request counting by verb and resource, and process memory.
#![allow(dead_code)] // each bench uses its own part

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kube::Client;

/// Requests by verb and resource, for the breakdown printed with each shape.
pub type Kinds = Arc<std::sync::Mutex<std::collections::BTreeMap<String, u64>>>;

/// `GET placements`, `PATCH placementdecisions/status`, `WATCH managedclusters`, ...
pub fn kind_of(req: &http::Request<kube::client::Body>) -> String {
    let path = req.uri().path();
    let query = req.uri().query().unwrap_or_default();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    // /apis/<group>/<version>/[namespaces/<ns>/]<resource>[/<name>[/<sub>]]
    let rest = if parts.first() == Some(&"api") {
        &parts[2.min(parts.len())..]
    } else {
        &parts[3.min(parts.len())..]
    };
    let rest = if rest.first() == Some(&"namespaces") && rest.len() > 2 {
        &rest[2..]
    } else {
        rest
    };
    let resource = match rest {
        [r, _, sub, ..] => format!("{r}/{sub}"),
        [r, ..] => (*r).to_string(),
        [] => "?".into(),
    };
    let verb = if query.contains("watch=true") {
        "WATCH".to_string()
    } else {
        req.method().to_string()
    };
    format!("{verb} {resource}")
}

pub fn counted(
    config: &kube::Config,
    counter: Arc<AtomicU64>,
    kinds: Kinds,
) -> anyhow::Result<Client> {
    let layer = tower::util::MapRequestLayer::new(move |req: http::Request<kube::client::Body>| {
        counter.fetch_add(1, Ordering::Relaxed);
        *kinds.lock().unwrap().entry(kind_of(&req)).or_default() += 1;
        req
    });
    Ok(kube::client::ClientBuilder::try_from(config.clone())?
        .with_layer(&layer)
        .build())
}

/// Resident memory of this process, MiB.
pub fn rss_mib() -> f64 {
    rss_mib_of("self")
}

/// Resident memory of process `pid` (or `self`), MiB; 0 when it cannot be read.
pub fn rss_mib_of(pid: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// CPU seconds used so far by process `pid` (or `self`); 0 when it cannot be read.
pub fn cpu_seconds_of(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command name (which may hold spaces): fields 14 and 15 are utime and stime.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<f64>().ok())
        .sum();
    // USER_HZ is 100 on every Linux this runs on.
    ticks / 100.0
}

/// CPU seconds used so far by each local process named `kube-apiserver` or `etcd` (the
/// control plane, when it runs on this machine; empty otherwise).
pub fn plane_cpu_seconds() -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let pid = e.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let comm = comm.trim();
        if comm == "kube-apiserver" || comm == "etcd" {
            *out.entry(comm.to_owned()).or_default() += cpu_seconds_of(&pid);
        }
    }
    out
}

/// What each of `after`'s processes used since `before`, as `name 1.2 s`.
pub fn cpu_used(
    before: &std::collections::BTreeMap<String, f64>,
    after: &std::collections::BTreeMap<String, f64>,
) -> String {
    after
        .iter()
        .map(|(k, v)| format!("{k} {:.1} s", v - before.get(k).copied().unwrap_or(0.0)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The hub of `HUB_KUBECONFIG` (set by `script`'s control plane) with the hub CRDs applied: its
/// config, for counted clients, and an admin client.
pub async fn hub_with_crds(script: &str) -> anyhow::Result<(kube::Config, Client)> {
    use anyhow::Context as _;
    let path = std::env::var("HUB_KUBECONFIG")
        .with_context(|| format!("HUB_KUBECONFIG is not set (see {script})"))?;
    let kc =
        kube::config::Kubeconfig::read_from(&path).with_context(|| format!("reading {path}"))?;
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await?;
    let admin = Client::try_from(config.clone())?;
    clusteradm::apply::Applier::new(admin.clone(), std::time::Duration::from_secs(600))
        .apply(
            clusteradm::api::hub_crds()
                .iter()
                .map(clusteradm::apply::to_dynamic)
                .collect(),
        )
        .await?;
    Ok((config, admin))
}
