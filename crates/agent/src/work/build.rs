//! Pure decisions of the work agent about one manifest: what it is, how it is applied (its
//! `manifestConfigs` entry), the AppliedManifestWork name, and which applied resources are
//! orphaned when the work is deleted. No I/O, so all of it is unit-tested.
use kube::api::{DynamicObject, GroupVersionKind};
use ring::digest;
use serde_json::Value;

use ocm_api::work::identifier::{identifies, identifies_reported};
use ocm_api::work::{
    AppliedManifestResourceMeta, DeleteOption, ManifestConfigOption, ManifestResourceMeta,
    PropagationPolicy, UpdateStrategy,
};

/// Hex SHA-256 of the hub apiserver URL, as upstream names the hub in AppliedManifestWorks.
#[must_use]
pub fn hub_hash(hub_url: &str) -> String {
    sha256_hex(hub_url.as_bytes())
}

/// Lower-case hex SHA-256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    ocm_runtime::pki::hex(digest::digest(&digest::SHA256, bytes).as_ref())
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
    let gvk =
        ocm_runtime::apply::gvk_of(&object).ok_or("the manifest has no apiVersion or kind")?;
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
pub(super) mod tests {
    //! Unit tests of the work agent's pure decisions.
    use serde_json::json;

    use super::*;
    use ocm_api::work::identifier::named as id;
    use ocm_api::work::{ResourceIdentifier, SelectivelyOrphan, UpdateStrategyType};

    /// An applied resource's record, for tests here and in `decide`.
    pub(in crate::work) fn applied(
        group: &str,
        resource: &str,
        ns: &str,
        name: &str,
    ) -> AppliedManifestResourceMeta {
        AppliedManifestResourceMeta {
            group: Some(group.into()).filter(|g: &String| !g.is_empty()),
            version: "v1".into(),
            resource: resource.into(),
            namespace: Some(ns.into()).filter(|n: &String| !n.is_empty()),
            name: name.into(),
            uid: Some(format!("uid-{name}")),
        }
    }

    #[test]
    fn applied_work_names_are_per_hub_as_upstream_or_per_cluster_when_shared() {
        let hub = hub_hash("https://hub:6443");
        // One cluster per managed API server: upstream's name, the same for every cluster.
        assert_eq!(applied_work_name(&hub, "web"), format!("{hub}-web"));
        // Several: each cluster's record of a work of the same name is its own.
        let (a, b) = (
            cluster_applied_work_name(&hub, "cluster-a", "web"),
            cluster_applied_work_name(&hub, "cluster-b", "web"),
        );
        assert_ne!(a, b);
        assert_eq!(a, format!("{hub}-cluster-a-web"));
    }

    #[test]
    fn hub_hash_is_hex_sha256_of_the_url() {
        // sha256("https://hub:6443"), as `printf %s https://hub:6443 | sha256sum` prints it.
        assert_eq!(
            hub_hash("https://hub:6443"),
            "9f63aa51ee73742847a1dd584c640c8b579dc14418ab416e3dd716fbe9362d31"
        );
        assert_eq!(
            hub_hash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(applied_work_name("abc", "w1"), "abc-w1");
    }

    #[test]
    fn raw_meta_takes_what_is_there() {
        let m = raw_meta(
            2,
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}}),
        );
        assert_eq!(
            (
                m.ordinal,
                m.group.as_deref(),
                m.version.as_deref(),
                m.kind.as_deref()
            ),
            (2, Some("apps"), Some("v1"), Some("Deployment"))
        );
        assert_eq!(
            (m.name.as_deref(), m.namespace.as_deref()),
            (Some("d"), Some("ns"))
        );
        let core = raw_meta(0, &json!({"apiVersion": "v1", "kind": "ConfigMap"}));
        assert_eq!((core.group.as_deref(), core.name), (Some(""), None));
        let junk = raw_meta(1, &json!("not an object"));
        assert_eq!((junk.kind, junk.version), (None, None));
    }

    #[test]
    fn parse_names_what_is_missing() {
        let ok =
            parse(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
                .unwrap();
        assert_eq!((ok.gvk.kind.as_str(), ok.name.as_str()), ("ConfigMap", "c"));
        let no_kind = parse(&json!({"apiVersion": "v1", "metadata": {"name": "c"}})).unwrap_err();
        assert!(no_kind.contains("kind"), "{no_kind}");
        let no_name =
            parse(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})).unwrap_err();
        assert!(no_name.contains("metadata.name"), "{no_name}");
        assert!(parse(&json!([1, 2])).is_err());
    }

    #[test]
    fn strategy_comes_from_the_first_matching_config() {
        let meta = ManifestResourceMeta {
            group: Some("apps".into()),
            resource: Some("deployments".into()),
            name: Some("nginx".into()),
            namespace: Some("default".into()),
            ..Default::default()
        };
        assert_eq!(strategy_for(&[], &meta).type_, UpdateStrategyType::Update);
        let config = |name: &str, type_| ManifestConfigOption {
            resource_identifier: id("apps", "deployments", "default", name),
            update_strategy: Some(UpdateStrategy {
                type_,
                server_side_apply: None,
            }),
            ..Default::default()
        };
        let configs = [
            config("other", UpdateStrategyType::ReadOnly),
            config("nginx", UpdateStrategyType::CreateOnly),
            config("*", UpdateStrategyType::ServerSideApply),
        ];
        assert_eq!(
            strategy_for(&configs, &meta).type_,
            UpdateStrategyType::CreateOnly
        );
        let without_strategy = ManifestConfigOption {
            resource_identifier: id("apps", "deployments", "default", "nginx"),
            ..Default::default()
        };
        assert_eq!(
            strategy_for(&[without_strategy], &meta).type_,
            UpdateStrategyType::Update
        );
    }

    #[test]
    fn orphaning() {
        let cm = applied("", "configmaps", "ns", "keep");
        let other = applied("", "configmaps", "ns", "drop");
        assert!(!is_orphaned(None, &cm));
        let policy = |p| DeleteOption {
            propagation_policy: Some(p),
            ..Default::default()
        };
        assert!(!is_orphaned(
            Some(&policy(PropagationPolicy::Foreground)),
            &cm
        ));
        assert!(is_orphaned(Some(&policy(PropagationPolicy::Orphan)), &cm));
        let selective = DeleteOption {
            propagation_policy: Some(PropagationPolicy::SelectivelyOrphan),
            selectively_orphans: Some(SelectivelyOrphan {
                orphaning_rules: vec![ResourceIdentifier {
                    group: None,
                    resource: "configmaps".into(),
                    name: "keep".into(),
                    namespace: Some("ns".into()),
                }],
            }),
            ..Default::default()
        };
        assert!(is_orphaned(Some(&selective), &cm));
        assert!(!is_orphaned(Some(&selective), &other));
    }
}
