//! Which add-on annotations of a ManagedCluster its add-ons get, as upstream's addon-annotation
//! controller decides it (no I/O): every annotation whose key starts with [`PREFIX`] goes to each
//! add-on of the cluster installed by an install strategy, and one the cluster no longer has
//! leaves them.
use std::collections::BTreeMap;
use std::sync::Arc;

use kube::ResourceExt as _;

use ocm_api::addon::{ClusterManagementAddOn, InstallStrategyType, ManagedClusterAddOn};
use ocm_api::cluster::ManagedCluster;

/// The key prefix of the annotations carried over (upstream's add-on API group name, no slash).
pub const PREFIX: &str = "addon.open-cluster-management.io";

/// The annotations of `annotations` with the add-on [`PREFIX`].
#[must_use]
pub fn addon_annotations(annotations: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    annotations
        .iter()
        .filter(|(k, _)| k.starts_with(PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The add-on annotations of `cluster`, for a ManagedClusterAddOn created on it.
#[must_use]
pub fn cluster_annotations(cluster: &ManagedCluster) -> BTreeMap<String, String> {
    addon_annotations(cluster.annotations())
}

/// Whether the annotations of `cma`'s add-ons follow their cluster's: installed by a strategy,
/// neither unset nor `Manual`.
#[must_use]
pub fn follows_cluster(cma: &ClusterManagementAddOn) -> bool {
    cma.spec
        .install_strategy
        .as_ref()
        .and_then(|s| s.type_.as_ref())
        .is_some_and(|t| *t != InstallStrategyType::Manual)
}

/// What to merge into `addon`'s annotations so its add-on annotations are `wanted` (a key to
/// remove maps to `None`); `None` when they already are.
#[must_use]
pub fn patch(
    addon: &ManagedClusterAddOn,
    wanted: &BTreeMap<String, String>,
) -> Option<BTreeMap<String, Option<String>>> {
    let current = addon.annotations();
    let mut out: BTreeMap<String, Option<String>> = current
        .keys()
        .filter(|k| k.starts_with(PREFIX) && !wanted.contains_key(*k))
        .map(|k| (k.clone(), None))
        .collect();
    out.extend(
        wanted
            .iter()
            .filter(|(k, v)| current.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), Some(v.clone()))),
    );
    (!out.is_empty()).then_some(out)
}

/// For each add-on of `cluster` that follows it (its ClusterManagementAddOn from `cma`), the
/// annotation patch it needs.
#[must_use]
pub fn decide(
    cluster: &ManagedCluster,
    addons: &[Arc<ManagedClusterAddOn>],
    cma: impl Fn(&str) -> Option<Arc<ClusterManagementAddOn>>,
) -> Vec<(String, BTreeMap<String, Option<String>>)> {
    let wanted = cluster_annotations(cluster);
    addons
        .iter()
        .filter(|a| cma(&a.name_any()).is_some_and(|c| follows_cluster(&c)))
        .filter_map(|a| Some((a.name_any(), patch(a, &wanted)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster(annotations: &[(&str, &str)]) -> ManagedCluster {
        serde_json::from_value(json!({
            "metadata": {"name": "c1", "annotations": annotations.iter().copied().collect::<BTreeMap<_, _>>()},
            "spec": {}
        }))
        .unwrap()
    }

    fn addon(name: &str, annotations: &[(&str, &str)]) -> Arc<ManagedClusterAddOn> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "c1",
                    "annotations": annotations.iter().copied().collect::<BTreeMap<_, _>>()},
                "spec": {}
            }))
            .unwrap(),
        )
    }

    fn cma(name: &str, strategy: Option<&str>) -> Arc<ClusterManagementAddOn> {
        let spec = strategy.map_or_else(|| json!({}), |t| json!({"installStrategy": {"type": t}}));
        Arc::new(serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap())
    }

    const HOSTING: &str = "addon.open-cluster-management.io/hosting-cluster-name";

    #[test]
    fn only_prefixed_annotations_are_carried() {
        let c = cluster(&[
            (HOSTING, "hosting"),
            ("addon.open-cluster-management.io/test-annotation", "v"),
            ("foo.example.com/bar", "x"),
            ("open-cluster-management.io/other", "y"),
        ]);
        let got = cluster_annotations(&c);
        assert_eq!(
            got.keys().map(String::as_str).collect::<Vec<_>>(),
            [HOSTING, "addon.open-cluster-management.io/test-annotation"]
        );
    }

    #[test]
    fn strategy_add_ons_get_set_updated_and_removed_annotations_manual_ones_nothing() {
        let c = cluster(&[(HOSTING, "new"), ("foo.example.com/bar", "x")]);
        let addons = [
            addon(
                "placed",
                &[
                    (HOSTING, "old"),
                    ("addon.open-cluster-management.io/gone", "1"),
                    ("mine", "kept"),
                ],
            ),
            addon("manual", &[]),
            addon("unset", &[]),
            addon("unknown", &[]),
            addon("synced", &[(HOSTING, "new")]),
        ];
        let cmas = [
            cma("placed", Some("Placements")),
            cma("manual", Some("Manual")),
            cma("unset", None),
            cma("synced", Some("Placements")),
        ];
        let got = decide(&c, &addons, |n| {
            cmas.iter().find(|c| c.name_any() == n).cloned()
        });
        let want = BTreeMap::from([
            (HOSTING.to_string(), Some("new".to_string())),
            ("addon.open-cluster-management.io/gone".to_string(), None),
        ]);
        assert_eq!(got, [("placed".to_string(), want)]);
    }

    #[test]
    fn only_a_change_of_add_on_annotations_wakes() {
        let mut seen = ocm_runtime::informers::Seen::new(cluster_annotations);
        assert!(!seen.changed(&cluster(&[(HOSTING, "a")])), "first seen");
        assert!(!seen.changed(&cluster(&[(HOSTING, "a"), ("other", "1")])));
        assert!(seen.changed(&cluster(&[(HOSTING, "b")])));
        assert!(seen.changed(&cluster(&[])));
        seen.forget(&cluster(&[]));
        assert!(!seen.changed(&cluster(&[(HOSTING, "c")])), "seen anew");
    }
}
