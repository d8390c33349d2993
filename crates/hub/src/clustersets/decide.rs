//! Cluster-set membership and the statuses the hub writes, as upstream's registration hub
//! (`pkg/registration/hub/managedclusterset/`, `.../managedclustersetbinding/`): pure, so every
//! rule is tested without a cluster. Placement and `get clustersets` use the same membership.
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::jiff::Timestamp;
use kube::core::{Selector, SelectorExt as _};

use ocm_api::cluster::{
    CLUSTER_SET_BOUND, CLUSTER_SET_EMPTY, CLUSTER_SET_LABEL, DEFAULT_CLUSTER_SET,
    GLOBAL_CLUSTER_SET, ManagedClusterSelector, ManagedClusterSet, ManagedClusterSetSpec,
    SelectorType,
};
use ocm_api::conditions::{self, Condition};

/// Annotation that stops the hub from restoring a built-in set's selector (upstream's).
pub const AUTO_UPDATE_ANNOTATION: &str = "cluster.open-cluster-management.io/autoupdate";

/// A set's membership rule, compiled once for many clusters.
#[derive(Debug, Clone)]
pub enum Membership {
    /// Clusters whose set label names this set.
    Label(String),
    /// Clusters matching a label selector.
    Selector(Selector),
}

impl Membership {
    /// The rule of `set`; an unparsable label selector is an error naming it.
    pub fn of(set: &ManagedClusterSet) -> Result<Self, String> {
        let name = set.metadata.name.clone().unwrap_or_default();
        let selector = set.spec.cluster_selector.clone().unwrap_or_default();
        match selector.selector_type {
            SelectorType::ExclusiveClusterSetLabel => Ok(Self::Label(name)),
            SelectorType::LabelSelector => {
                let s = selector.label_selector.unwrap_or_default();
                Selector::try_from(s)
                    .map(Self::Selector)
                    .map_err(|e| format!("the label selector of ManagedClusterSet {name}: {e}"))
            }
        }
    }

    /// Whether a cluster with `labels` is a member.
    #[must_use]
    pub fn contains(&self, labels: &BTreeMap<String, String>) -> bool {
        match self {
            Self::Label(set) => labels.get(CLUSTER_SET_LABEL) == Some(set),
            Self::Selector(s) => s.matches(labels),
        }
    }
}

fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> Condition {
    conditions::new(type_, status, reason, message, &Time(now))
}

/// `ClusterSetEmpty` for a set with `members` clusters (or a selector that does not parse).
#[must_use]
pub fn emptiness(members: Result<usize, String>, now: Timestamp) -> Condition {
    match members {
        Ok(0) => condition(
            CLUSTER_SET_EMPTY,
            conditions::TRUE,
            "NoClusterMatched",
            "No ManagedCluster selected".into(),
            now,
        ),
        Ok(n) => condition(
            CLUSTER_SET_EMPTY,
            conditions::FALSE,
            "ClustersSelected",
            format!("{n} ManagedClusters selected"),
            now,
        ),
        Err(why) => condition(
            CLUSTER_SET_EMPTY,
            conditions::UNKNOWN,
            "InvalidClusterSelector",
            why,
            now,
        ),
    }
}

/// `Bound` of a binding whose set exists or not.
#[must_use]
pub fn bound(set_exists: bool, now: Timestamp) -> Condition {
    if set_exists {
        condition(
            CLUSTER_SET_BOUND,
            conditions::TRUE,
            "ClusterSetBound",
            String::new(),
            now,
        )
    } else {
        condition(
            CLUSTER_SET_BOUND,
            conditions::FALSE,
            "ClusterSetNotFound",
            String::new(),
            now,
        )
    }
}

/// The sets the hub keeps: `default` (clusters labelled `default`, which the hub gives every
/// cluster without a set) and `global` (every cluster).
#[must_use]
pub fn builtin_sets() -> [ManagedClusterSet; 2] {
    [
        ManagedClusterSet::new(
            DEFAULT_CLUSTER_SET,
            ManagedClusterSetSpec {
                cluster_selector: Some(ManagedClusterSelector {
                    selector_type: SelectorType::ExclusiveClusterSetLabel,
                    label_selector: None,
                }),
                ..Default::default()
            },
        ),
        ManagedClusterSet::new(
            GLOBAL_CLUSTER_SET,
            ManagedClusterSetSpec {
                cluster_selector: Some(ManagedClusterSelector {
                    selector_type: SelectorType::LabelSelector,
                    label_selector: Some(LabelSelector::default()),
                }),
                ..Default::default()
            },
        ),
    ]
}

/// What the hub does about built-in set `want` given the set it has (if any).
#[derive(Debug, PartialEq, Eq)]
pub enum Builtin {
    /// Nothing: it is there as it should be, or its owner asked for it to be left alone.
    Keep,
    /// Create it.
    Create,
    /// Put its selector back.
    Restore,
}

/// Upstream's rule: a missing built-in set is created; a changed selector is restored unless the
/// set is annotated `autoupdate: "false"`.
#[must_use]
pub fn builtin(want: &ManagedClusterSet, have: Option<&ManagedClusterSet>) -> Builtin {
    let Some(have) = have else {
        return Builtin::Create;
    };
    let pinned = have
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(AUTO_UPDATE_ANNOTATION))
        .is_some_and(|v| v == "false");
    if pinned || have.spec.cluster_selector == want.spec.cluster_selector {
        Builtin::Keep
    } else {
        Builtin::Restore
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn exclusive_sets_hold_their_labelled_clusters_and_selector_sets_their_matches() {
        let [default, global] = builtin_sets();
        let default = Membership::of(&default).unwrap();
        assert!(default.contains(&labels(&[(CLUSTER_SET_LABEL, "default")])));
        assert!(!default.contains(&labels(&[(CLUSTER_SET_LABEL, "prod")])));
        assert!(!default.contains(&labels(&[])));
        let global = Membership::of(&global).unwrap();
        assert!(global.contains(&labels(&[])));
        let mut prod = ManagedClusterSet::new("prod", ManagedClusterSetSpec::default());
        prod.spec.cluster_selector = Some(ManagedClusterSelector {
            selector_type: SelectorType::LabelSelector,
            label_selector: Some(
                serde_json::from_value(serde_json::json!({"matchLabels": {"env": "prod"}}))
                    .unwrap(),
            ),
        });
        let prod = Membership::of(&prod).unwrap();
        assert!(prod.contains(&labels(&[("env", "prod")])));
        assert!(!prod.contains(&labels(&[("env", "dev")])));
    }

    #[test]
    fn statuses_use_upstreams_reasons() {
        let now = Timestamp::UNIX_EPOCH;
        let empty = emptiness(Ok(0), now);
        assert_eq!(
            (empty.status.as_str(), empty.reason.as_str()),
            ("True", "NoClusterMatched")
        );
        let two = emptiness(Ok(2), now);
        assert_eq!(
            (two.status.as_str(), two.message.as_str()),
            ("False", "2 ManagedClusters selected")
        );
        assert_eq!(bound(true, now).reason, "ClusterSetBound");
        assert_eq!(bound(false, now).status, "False");
    }

    #[test]
    fn builtin_sets_are_created_and_restored_unless_pinned() {
        let [default, _] = builtin_sets();
        assert_eq!(builtin(&default, None), Builtin::Create);
        assert_eq!(builtin(&default, Some(&default)), Builtin::Keep);
        let mut changed = default.clone();
        changed.spec.cluster_selector = None;
        assert_eq!(builtin(&default, Some(&changed)), Builtin::Restore);
        changed.metadata.annotations =
            Some([(AUTO_UPDATE_ANNOTATION.into(), "false".into())].into());
        assert_eq!(builtin(&default, Some(&changed)), Builtin::Keep);
    }
}
