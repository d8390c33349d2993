//! Which clusters get a placement-installed add-on and which lose it: pure, from the stores.
use std::collections::BTreeSet;
use std::sync::Arc;

use kube::ResourceExt as _;
use kube::api::ObjectMeta;

use ocm_api::addon::{
    ClusterManagementAddOn, LIFECYCLE_ADDON_MANAGER, LIFECYCLE_ANNOTATION, ManagedClusterAddOn,
    ManagedClusterAddOnSpec, PlacementStrategy,
};
use ocm_api::cluster::{ManagedCluster, PLACEMENT_LABEL, PlacementDecision};

/// Whether the hub's add-on manager installs `cma` (not an add-on with its own manager).
#[must_use]
pub fn managed_by_hub(cma: &ClusterManagementAddOn) -> bool {
    cma.annotations()
        .get(LIFECYCLE_ANNOTATION)
        .is_none_or(|v| v.is_empty() || v == LIFECYCLE_ADDON_MANAGER)
}

/// Whether decision `d` is one of placement `p`'s.
#[must_use]
pub fn made_for(d: &PlacementDecision, p: &PlacementStrategy) -> bool {
    d.namespace().as_deref() == Some(p.namespace.as_str())
        && d.labels().get(PLACEMENT_LABEL) == Some(&p.name)
}

/// The clusters `cma`'s placements decide, from the decisions in `decisions`.
#[must_use]
pub fn decided(
    cma: &ClusterManagementAddOn,
    decisions: &[Arc<PlacementDecision>],
) -> BTreeSet<String> {
    let Some(strategy) = &cma.spec.install_strategy else {
        return BTreeSet::new();
    };
    strategy
        .placements
        .iter()
        .flat_map(|p| decisions.iter().filter(move |d| made_for(d, p)))
        .filter_map(|d| d.status.as_ref())
        .flat_map(|s| s.decisions.iter().map(|c| c.cluster_name.clone()))
        .filter(|c| !c.is_empty())
        .collect()
}

/// What an install reconcile changes.
#[derive(Debug, Default)]
pub struct Plan {
    /// Add-ons to create, one per newly decided cluster the hub knows.
    pub create: Vec<ManagedClusterAddOn>,
    /// Clusters whose add-on goes: no longer decided.
    pub remove: Vec<String>,
    /// A decided cluster is not in the store yet: look again soon.
    pub unseen: bool,
}

/// The add-ons `cma` should gain and lose, given the clusters its placements decide (`wanted`),
/// the add-ons there are, and the clusters the hub knows (by `cluster`). A new add-on is owned
/// by `cma` and starts with its cluster's add-on annotations.
pub fn plan(
    cma: &ClusterManagementAddOn,
    wanted: &BTreeSet<String>,
    addons: &[Arc<ManagedClusterAddOn>],
    cluster: impl Fn(&str) -> Option<Arc<ManagedCluster>>,
) -> Plan {
    let name = cma.name_any();
    let existing: BTreeSet<String> = addons
        .iter()
        .filter(|a| a.name_any() == name)
        .filter_map(|a| a.namespace())
        .collect();
    let mut plan = Plan {
        remove: existing.difference(wanted).cloned().collect(),
        ..Plan::default()
    };
    for name_of_cluster in wanted.difference(&existing) {
        let Some(managed_cluster) = cluster(name_of_cluster) else {
            plan.unseen = true;
            continue;
        };
        let annotations = crate::addon::annotation::decide::cluster_annotations(&managed_cluster);
        plan.create.push(ManagedClusterAddOn {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(name_of_cluster.clone()),
                owner_references: Some(vec![crate::addon::owner_reference(cma, true)]),
                annotations: (!annotations.is_empty()).then_some(annotations),
                ..ObjectMeta::default()
            },
            spec: ManagedClusterAddOnSpec::default(),
            status: None,
        });
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::cluster::ManagedClusterSpec;

    fn addon_on(cluster: &str) -> Arc<ManagedClusterAddOn> {
        let mut mca = ManagedClusterAddOn::new("hello", ManagedClusterAddOnSpec::default());
        mca.metadata.namespace = Some(cluster.into());
        Arc::new(mca)
    }

    #[test]
    fn decided_clusters_gain_the_addon_and_undecided_ones_lose_it() {
        let mut cma = ClusterManagementAddOn::new(
            "hello",
            ocm_api::addon::ClusterManagementAddOnSpec::default(),
        );
        cma.metadata.uid = Some("u1".into());
        let wanted = BTreeSet::from(["a".to_string(), "b".to_string(), "new".to_string()]);
        let addons = [addon_on("b"), addon_on("gone")];
        let plan = plan(&cma, &wanted, &addons, |c| {
            (c != "new").then(|| {
                let mut mc = ManagedCluster::new(c, ManagedClusterSpec::default());
                mc.metadata.annotations = Some(
                    [(
                        "addon.open-cluster-management.io/values".to_string(),
                        "{}".to_string(),
                    )]
                    .into(),
                );
                Arc::new(mc)
            })
        });
        let created: Vec<_> = plan.create.iter().map(|a| a.namespace().unwrap()).collect();
        assert_eq!(created, ["a"]);
        assert_eq!(plan.remove, ["gone"]);
        assert!(plan.unseen, "cluster `new` is not in the store yet");
        let owner = &plan.create[0].owner_references()[0];
        assert_eq!((owner.uid.as_str(), owner.controller), ("u1", Some(true)));
    }
}
