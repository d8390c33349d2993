//! Pure decisions of the work agent: what a manifest is, how it is applied (its
//! `manifestConfigs` entry), the AppliedManifestWork name, which applied resources are stale, and
//! which are orphaned when the work is deleted. No I/O, so all of it is unit-tested.
use kube::api::{DynamicObject, GroupVersionKind};
use ring::digest;
use serde_json::Value;

use crate::api::work::identifier::{identifies, identifies_reported};
use crate::api::work::{
    AppliedManifestResourceMeta, DeleteOption, ManifestConfigOption, ManifestResourceMeta,
    PropagationPolicy, UpdateStrategy,
};

/// Hex SHA-256 of the hub apiserver URL, as upstream names the hub in AppliedManifestWorks.
#[must_use]
pub fn hub_hash(hub_url: &str) -> String {
    use std::fmt::Write as _;
    let hash = digest::digest(&digest::SHA256, hub_url.as_bytes());
    hash.as_ref().iter().fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

/// Name of the AppliedManifestWork of `work`: `<hub hash>-<work name>`.
#[must_use]
pub fn applied_work_name(hub_hash: &str, work: &str) -> String {
    format!("{hub_hash}-{work}")
}

/// Name of the AppliedManifestWork of `work` of `cluster` when several clusters' agents share
/// one managed API server: `<hub hash>-<cluster>-<work name>`.
#[must_use]
pub fn cluster_applied_work_name(hub_hash: &str, cluster: &str, work: &str) -> String {
    format!("{hub_hash}-{cluster}-{work}")
}

/// A manifest that has what it takes to be applied.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The object, ready to send.
    pub object: DynamicObject,
    /// Its group/version/kind.
    pub gvk: GroupVersionKind,
    /// Its name.
    pub name: String,
}

/// Best-effort identity of a manifest for its status, before anything is resolved.
#[must_use]
pub fn raw_meta(ordinal: usize, manifest: &Value) -> ManifestResourceMeta {
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let (group, version) = match manifest["apiVersion"].as_str() {
        Some(av) => match av.rsplit_once('/') {
            Some((g, v)) => (Some(g.to_owned()), Some(v.to_owned())),
            None => (Some(String::new()), Some(av.to_owned())),
        },
        None => (None, None),
    };
    ManifestResourceMeta {
        ordinal: i32::try_from(ordinal).unwrap_or(i32::MAX),
        group,
        version: version.filter(|v| !v.is_empty()),
        kind: text(&manifest["kind"]),
        resource: None,
        name: text(&manifest["metadata"]["name"]),
        namespace: text(&manifest["metadata"]["namespace"]),
    }
}

/// Parses a manifest; the error says what it lacks.
pub fn parse(manifest: &Value) -> Result<Parsed, String> {
    if !manifest.is_object() {
        return Err("the manifest is not an object".into());
    }
    let object: DynamicObject = serde_json::from_value(manifest.clone())
        .map_err(|e| format!("the manifest is not a Kubernetes object: {e}"))?;
    let gvk = crate::apply::gvk_of(&object).ok_or("the manifest has no apiVersion or kind")?;
    let name = object
        .metadata
        .name
        .clone()
        .filter(|n| !n.is_empty())
        .ok_or("the manifest has no metadata.name")?;
    Ok(Parsed { object, gvk, name })
}

/// The first `manifestConfigs` entry that names this manifest's resource.
#[must_use]
pub fn config_for<'a>(
    configs: &'a [ManifestConfigOption],
    meta: &ManifestResourceMeta,
) -> Option<&'a ManifestConfigOption> {
    configs
        .iter()
        .find(|c| identifies_reported(&c.resource_identifier, meta))
}

/// The update strategy for a resource: the first matching `manifestConfigs` entry's, else Update.
#[must_use]
pub fn strategy_for(
    configs: &[ManifestConfigOption],
    meta: &ManifestResourceMeta,
) -> UpdateStrategy {
    config_for(configs, meta)
        .and_then(|c| c.update_strategy.clone())
        .unwrap_or_default()
}

/// The identity of an applied resource, independent of version and UID.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// API group.
    pub group: String,
    /// Resource (plural).
    pub resource: String,
    /// Namespace, empty when cluster-scoped.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl Key {
    /// The key of a recorded resource.
    #[must_use]
    pub fn of(meta: &AppliedManifestResourceMeta) -> Self {
        Self {
            group: meta.group.clone().unwrap_or_default(),
            resource: meta.resource.clone(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone(),
        }
    }
}

/// The resources to record after an apply pass: what was applied now, plus what was recorded
/// before and is still wanted (its apply failed this time; forgetting it would leak it). Sorted,
/// so an unchanged set compares equal.
#[must_use]
pub fn next_applied(
    previous: &[AppliedManifestResourceMeta],
    applied_now: &[AppliedManifestResourceMeta],
    wanted: &[Key],
) -> Vec<AppliedManifestResourceMeta> {
    let now_keys: Vec<Key> = applied_now.iter().map(Key::of).collect();
    let mut out: Vec<AppliedManifestResourceMeta> = applied_now.to_vec();
    out.extend(
        previous
            .iter()
            .filter(|p| {
                let k = Key::of(p);
                wanted.contains(&k) && !now_keys.contains(&k)
            })
            .cloned(),
    );
    out.sort_by_key(Key::of);
    out.dedup_by_key(|m| Key::of(m));
    out
}

/// Recorded resources no manifest of the work names any more: they are to be deleted.
#[must_use]
pub fn stale(
    previous: &[AppliedManifestResourceMeta],
    wanted: &[Key],
) -> Vec<AppliedManifestResourceMeta> {
    previous
        .iter()
        .filter(|p| !wanted.contains(&Key::of(p)))
        .cloned()
        .collect()
}

/// Whether deleting the work leaves this resource behind (policy Orphan, or SelectivelyOrphan
/// with a matching rule).
#[must_use]
pub fn is_orphaned(option: Option<&DeleteOption>, resource: &AppliedManifestResourceMeta) -> bool {
    let Some(option) = option else {
        return false;
    };
    match option.propagation_policy.unwrap_or_default() {
        PropagationPolicy::Foreground => false,
        PropagationPolicy::Orphan => true,
        PropagationPolicy::SelectivelyOrphan => option
            .selectively_orphans
            .iter()
            .flat_map(|s| &s.orphaning_rules)
            .any(|rule| {
                let k = Key::of(resource);
                identifies(rule, &k.group, &k.resource, &k.namespace, &k.name)
            }),
    }
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
