//! Rolls an add-on's configs out, as upstream's `addonconfiguration` controller (its
//! configuration graph) and `cmainstallprogression`: for a ClusterManagementAddOn installed by
//! `Placements`, each ManagedClusterAddOn's configs (its AddOnTemplate, its
//! AddOnDeploymentConfig) are pinned in its `status.configReferences[].desiredConfig`, and the
//! manager deploys what is pinned. A change of the add-on's configs (a new template version as
//! the default or in a placement's `configs`) reaches the clusters of each placement at the pace
//! of that placement's `rolloutStrategy`, with the rollout library ManifestWorkReplicaSets use
//! ([`crate::replicaset::rollout`]); clusters of no placement get it at once. The
//! ClusterManagementAddOn's status tells the progress: `defaultconfigReferences` and, per
//! placement, `installProgressions` with upstream's `Progressing` condition. Pure: the install
//! controller ([`super`]) reads the stores and writes the outcome.
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;

use crate::replicaset::rollout::{self as library, Group, Since, Status};
use ocm_api::addon::{
    AddOnConfig, CONFIGURED, ClusterManagementAddOn, ClusterManagementAddOnStatus, ConfigReference,
    ConfigSpecHash, DefaultConfigReference, InstallConfigReference, InstallProgression,
    InstallStrategyType, ManagedClusterAddOn, ManagedClusterAddOnStatus, PROGRESSING,
    PlacementStrategy,
};
use ocm_api::conditions::{self, FALSE, TRUE};
use ocm_api::rollout::RolloutStrategy;

/// The name upstream reserves for "no default config".
const NO_DEFAULT: &str = "__reserved_no_default__";

/// A config kind: (group, resource).
type Kind = (String, String);

/// Wanted configs by kind (several of one kind allowed, as upstream).
type Configs = BTreeMap<Kind, Vec<ConfigSpecHash>>;

/// Finds a config's spec hash: (kind, namespace, name) → the reference with its hash (without
/// one when the config does not exist).
pub type Hasher<'a> = &'a dyn Fn(&Kind, Option<&str>, &str) -> ConfigSpecHash;

/// One placement of the install strategy and its decision groups now.
pub struct PlacementInput<'a> {
    /// The placement, its configs and rollout strategy.
    pub strategy: &'a PlacementStrategy,
    /// Its decision groups.
    pub groups: Vec<Group>,
}

/// What [`decide`] reads.
pub struct Inputs<'a> {
    /// The add-on.
    pub cma: &'a ClusterManagementAddOn,
    /// Its ManagedClusterAddOns (on every cluster).
    pub addons: &'a [Arc<ManagedClusterAddOn>],
    /// The install strategy's placements, in its order.
    pub placements: Vec<PlacementInput<'a>>,
    /// Spec hashes of configs.
    pub hash: Hasher<'a>,
    /// Now.
    pub now: Timestamp,
}

/// What to write.
#[derive(Debug, Default)]
pub struct Outcome {
    /// New statuses of ManagedClusterAddOns (only those that change).
    pub addons: Vec<(Arc<ManagedClusterAddOn>, ManagedClusterAddOnStatus)>,
    /// The add-on's status.
    pub status: ClusterManagementAddOnStatus,
    /// Look again then (a soak or a deadline of a rollout ends).
    pub recheck_after: Option<Duration>,
    /// Rollout strategies that cannot be used, with the placement.
    pub errors: Vec<String>,
}

/// Whether `cma`'s configs are rolled out (pinned per cluster): installed by `Placements` and
/// by the hub's add-on manager. Other add-ons use their configs as they are.
#[must_use]
pub fn pins(cma: &ClusterManagementAddOn) -> bool {
    cma.spec
        .install_strategy
        .as_ref()
        .is_some_and(|s| s.type_ == Some(InstallStrategyType::Placements))
        && super::managed_by_hub(cma)
}

fn kind_of(group: &str, resource: &str) -> Kind {
    (group.to_owned(), resource.to_owned())
}

/// The add-on's default configs.
fn defaults(inputs: &Inputs<'_>) -> Configs {
    let mut out = Configs::new();
    for meta in &inputs.cma.spec.supported_configs {
        let Some(d) = meta
            .default_config
            .as_ref()
            .filter(|d| !d.name.is_empty() && d.name != NO_DEFAULT)
        else {
            continue;
        };
        let kind = kind_of(&meta.group, &meta.resource);
        let hash = (inputs.hash)(&kind, d.namespace.as_deref(), &d.name);
        let list = out.entry(kind).or_default();
        if !list.iter().any(|h| same_referent(h, &hash)) {
            list.push(hash);
        }
    }
    out
}

/// `base` with the kinds `configs` name replaced by theirs (upstream's override by install
/// config references and by an add-on's own configs).
fn overridden(base: &Configs, configs: &[AddOnConfig], hash: Hasher<'_>) -> Configs {
    let mut out = base.clone();
    let mut replaced = std::collections::BTreeSet::new();
    for c in configs {
        let kind = kind_of(&c.group, &c.resource);
        if replaced.insert(kind.clone()) {
            out.insert(kind.clone(), Vec::new());
        }
        let h = hash(&kind, c.namespace.as_deref(), &c.name);
        let list = out.entry(kind).or_default();
        if !list.iter().any(|x| same_referent(x, &h)) {
            list.push(h);
        }
    }
    out
}

fn same_referent(a: &ConfigSpecHash, b: &ConfigSpecHash) -> bool {
    a.name == b.name
        && a.namespace.as_deref().unwrap_or_default() == b.namespace.as_deref().unwrap_or_default()
}

fn count(configs: &Configs) -> usize {
    configs.values().map(Vec::len).sum()
}

/// Upstream's `setRolloutStatus`: where `mca` stands with `desired`. Its `Progressing`
/// condition tells a failed rollout from one under way, and since when (only for those reasons,
/// and `Completed` for a settled one: a stale time would start a deadline early).
fn rollout_status(mca: &ManagedClusterAddOn, desired: &Configs) -> Since {
    let to_apply = Since {
        status: Status::ToApply,
        since: None,
    };
    let current = mca
        .status
        .as_ref()
        .map(|s| s.config_references.as_slice())
        .unwrap_or_default();
    let progressing = mca
        .status
        .as_ref()
        .and_then(|s| conditions::find(&s.conditions, PROGRESSING));
    let since = |reasons: &[&str]| {
        progressing
            .filter(|c| reasons.contains(&c.reason.as_str()))
            .map(|c| c.last_transition_time.0)
    };
    if current.len() != count(desired) {
        return to_apply;
    }
    for actual in current {
        let Some(actual_desired) = &actual.desired_config else {
            return to_apply;
        };
        let wanted = desired
            .get(&kind_of(&actual.group, &actual.resource))
            .and_then(|list| list.iter().find(|h| same_referent(h, actual_desired)));
        match wanted {
            Some(w) if w == actual_desired => {}
            _ => return to_apply,
        }
        if actual.last_applied_config.as_ref() != Some(actual_desired) {
            let failed = progressing.is_some_and(|c| c.reason == "Failed");
            return Since {
                status: if failed {
                    Status::Failed
                } else {
                    Status::Progressing
                },
                since: since(&["Failed", "Progressing"]),
            };
        }
    }
    Since {
        status: Status::Succeeded,
        since: since(&["Completed"]),
    }
}

/// Upstream's `mergeAddonConfig`: the references `mca` keeps, with `desired` set on them.
fn merged(mca: &ManagedClusterAddOn, desired: &Configs) -> Vec<ConfigReference> {
    let current = mca
        .status
        .as_ref()
        .map(|s| s.config_references.clone())
        .unwrap_or_default();
    let mut out: BTreeMap<Kind, Vec<ConfigReference>> = BTreeMap::new();
    for r in current {
        let kind = kind_of(&r.group, &r.resource);
        let kept = r.desired_config.as_ref().is_some_and(|d| {
            desired
                .get(&kind)
                .is_some_and(|list| list.iter().any(|h| same_referent(h, d)))
        });
        let list = out.entry(kind).or_default();
        if kept {
            list.push(r);
        }
    }
    for (kind, hashes) in desired {
        let list = out.entry(kind.clone()).or_default();
        for h in hashes {
            let existing = list.iter_mut().find(|r| {
                r.desired_config
                    .as_ref()
                    .is_some_and(|d| same_referent(d, h))
            });
            match existing {
                Some(r) => r.desired_config = Some(h.clone()),
                None => list.push(ConfigReference {
                    group: kind.0.clone(),
                    resource: kind.1.clone(),
                    namespace: h.namespace.clone(),
                    name: h.name.clone(),
                    last_observed_generation: None,
                    desired_config: Some(h.clone()),
                    last_applied_config: None,
                }),
            }
        }
    }
    out.into_values().flatten().collect()
}

/// A node's rollout this round.
#[derive(Default)]
struct Round {
    /// Its clusters in flight (upstream's `ClustersToRollout`): they get the desired configs now.
    rolling: Vec<String>,
    /// How many of its clusters this round found past their `progressDeadline`.
    timed_out: usize,
    /// Look again then.
    recheck: Option<Duration>,
}

/// One group of ManagedClusterAddOns sharing desired configs: a placement's or the defaults'.
struct Node<'a> {
    placement: Option<&'a PlacementInput<'a>>,
    desired: Configs,
    /// Its add-ons (cluster → add-on, its own desired configs and rollout status).
    children: BTreeMap<String, (Arc<ManagedClusterAddOn>, Configs, Since)>,
}

impl Node<'_> {
    fn add(&mut self, mca: &Arc<ManagedClusterAddOn>, hash: Hasher<'_>) {
        let desired = overridden(&self.desired, &mca.spec.configs, hash);
        let status = rollout_status(mca, &desired);
        self.children.insert(
            mca.namespace().unwrap_or_default(),
            (mca.clone(), desired, status),
        );
    }

    /// The clusters to give their desired configs now, and when to look again.
    fn rollout(&self, now: Timestamp) -> Result<Round, String> {
        let Some(placement) = self.placement else {
            let rolling = self
                .children
                .iter()
                .filter(|(_, (_, _, s))| s.status != Status::Succeeded)
                .map(|(c, _)| c.clone())
                .collect();
            return Ok(Round {
                rolling,
                ..Round::default()
            });
        };
        let statuses: BTreeMap<String, Since> = self
            .children
            .iter()
            .map(|(c, (_, _, s))| (c.clone(), *s))
            .collect();
        let strategy = placement
            .strategy
            .rollout_strategy
            .clone()
            .unwrap_or_else(RolloutStrategy::default);
        let plan = library::plan(&strategy, &placement.groups, &statuses, now).map_err(|e| {
            format!(
                "placement {}/{}: {e}",
                placement.strategy.namespace, placement.strategy.name
            )
        })?;
        Ok(Round {
            rolling: plan
                .in_flight
                .into_iter()
                .filter(|c| self.children.contains_key(c))
                .collect(),
            timed_out: plan.timed_out.len(),
            recheck: plan.recheck_after,
        })
    }
}

fn set_configured(status: &mut ManagedClusterAddOnStatus, yes: bool, now: &Time) {
    let (s, reason, message) = if yes {
        (
            TRUE,
            "ConfigurationsConfigured",
            "Configurations configured",
        )
    } else {
        (
            FALSE,
            "ConfigurationsNotConfigured",
            "Configurations updated and not configured yet",
        )
    };
    conditions::set(
        &mut status.conditions,
        conditions::new(CONFIGURED, s, reason, message, now),
    );
}

/// Whether `addon`'s configs are the node's, but for the kinds it sets itself (upstream's
/// `desiredConfigsEqual`).
fn follows_node(addon: &Configs, node: &Configs, own: &[AddOnConfig]) -> bool {
    let own_kinds: std::collections::BTreeSet<Kind> =
        own.iter().map(|c| kind_of(&c.group, &c.resource)).collect();
    let mut expected = node.clone();
    for kind in &own_kinds {
        expected.insert(kind.clone(), addon.get(kind).cloned().unwrap_or_default());
    }
    &expected == addon
}

/// The `installProgressions` entry of a placement node, as upstream's `cmaProgressingReconciler`.
fn progression(
    node: &Node<'_>,
    round: &Round,
    (total, configured): (usize, usize),
    previous: Option<&InstallProgression>,
    now: &Time,
) -> InstallProgression {
    let placement = node.placement.map(|p| p.strategy);
    let mut out = previous.cloned().unwrap_or_else(|| InstallProgression {
        namespace: placement.map(|p| p.namespace.clone()).unwrap_or_default(),
        name: placement.map(|p| p.name.clone()).unwrap_or_default(),
        ..InstallProgression::default()
    });
    out.config_references = node
        .desired
        .iter()
        .flat_map(|(kind, hashes)| hashes.iter().map(move |h| (kind, h)))
        .map(|(kind, h)| {
            let before = previous
                .into_iter()
                .flat_map(|p| &p.config_references)
                .find(|r| r.group == kind.0 && r.resource == kind.1);
            InstallConfigReference {
                group: kind.0.clone(),
                resource: kind.1.clone(),
                desired_config: Some(h.clone()),
                last_applied_config: before.and_then(|b| b.last_applied_config.clone()),
                last_known_good_config: before.and_then(|b| b.last_known_good_config.clone()),
            }
        })
        .collect();
    let settled = |want: Status| {
        node.children
            .iter()
            .filter(|(c, (mca, desired, s))| {
                s.status == want
                    && !round.rolling.contains(c)
                    && follows_node(desired, &node.desired, &mca.spec.configs)
            })
            .count()
    };
    let (done, failed) = (settled(Status::Succeeded), settled(Status::Failed));
    let (progressing, timeout) = (round.rolling.len(), round.timed_out);
    let condition = if (configured == 0 && done == 0) || done != configured {
        conditions::new(
            PROGRESSING,
            TRUE,
            "Progressing",
            format!(
                "selected clusters {total}. configured addons {}/{configured} progressing..., {failed} failed {timeout} timeout.",
                progressing + done
            ),
            now,
        )
    } else {
        for r in &mut out.config_references {
            r.last_applied_config.clone_from(&r.desired_config);
            r.last_known_good_config.clone_from(&r.desired_config);
        }
        conditions::new(
            PROGRESSING,
            FALSE,
            "Completed",
            format!(
                "selected clusters {total}. configured addons {done}/{configured} completed with no errors, {failed} failed {timeout} timeout."
            ),
            now,
        )
    };
    conditions::set(&mut out.conditions, condition);
    out
}

/// Decides the rollout of the add-on's configs.
#[must_use]
pub fn decide(inputs: &Inputs<'_>) -> Outcome {
    let now = Time(inputs.now);
    let defaults = defaults(inputs);
    let mut nodes: Vec<Node<'_>> = inputs
        .placements
        .iter()
        .map(|p| Node {
            placement: Some(p),
            desired: overridden(&defaults, &p.strategy.configs, inputs.hash),
            children: BTreeMap::new(),
        })
        .collect();
    let mut rest = Node {
        placement: None,
        desired: defaults.clone(),
        children: BTreeMap::new(),
    };
    let decided = |p: &PlacementInput<'_>, cluster: &str| {
        p.groups.iter().any(|g| g.clusters.contains(cluster))
    };
    for mca in inputs.addons {
        let cluster = mca.namespace().unwrap_or_default();
        // The last placement that decides the cluster has it, as upstream's graph.
        match nodes
            .iter_mut()
            .rev()
            .find(|n| n.placement.is_some_and(|p| decided(p, &cluster)))
        {
            Some(node) => node.add(mca, inputs.hash),
            None => rest.add(mca, inputs.hash),
        }
    }
    let mut outcome = Outcome {
        status: ClusterManagementAddOnStatus {
            default_config_references: defaults
                .iter()
                .flat_map(|(kind, hashes)| hashes.iter().map(move |h| (kind, h)))
                .map(|(kind, h)| DefaultConfigReference {
                    group: kind.0.clone(),
                    resource: kind.1.clone(),
                    desired_config: Some(h.clone()),
                })
                .collect(),
            install_progressions: Vec::new(),
        },
        ..Outcome::default()
    };
    let previous = inputs.cma.status.as_ref();
    for (i, node) in nodes.iter().chain(std::iter::once(&rest)).enumerate() {
        let round = node.rollout(inputs.now).unwrap_or_else(|e| {
            outcome.errors.push(e);
            Round::default()
        });
        outcome.recheck_after = match (outcome.recheck_after, round.recheck) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for (cluster, (mca, desired, since)) in &node.children {
            let mut status = mca.status.clone().unwrap_or_default();
            if round.rolling.contains(cluster) {
                status.config_references = merged(mca, desired);
                set_configured(&mut status, true, &now);
            } else if since.status == Status::ToApply {
                set_configured(&mut status, false, &now);
            } else if since.status == Status::Succeeded {
                set_configured(&mut status, true, &now);
            }
            if mca.status.as_ref() != Some(&status) {
                outcome.addons.push((mca.clone(), status));
            }
        }
        let Some(placement) = node.placement else {
            continue;
        };
        // Clusters a later placement also decides are that one's.
        let total = placement.groups.iter().flat_map(|g| &g.clusters).count();
        let configured = placement
            .groups
            .iter()
            .flat_map(|g| &g.clusters)
            .filter(|c| {
                !nodes[i + 1..]
                    .iter()
                    .any(|n| n.placement.is_some_and(|p| decided(p, c)))
            })
            .count();
        let before = previous.and_then(|s| {
            s.install_progressions.iter().find(|p| {
                p.namespace == placement.strategy.namespace && p.name == placement.strategy.name
            })
        });
        outcome.status.install_progressions.push(progression(
            node,
            &round,
            (total, configured),
            before,
            &now,
        ));
    }
    outcome
}

#[cfg(test)]
mod tests {
    //! Config rollouts decided from objects; no cluster.
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use ocm_api::addon::ADDON_TEMPLATES;

    const GROUP: &str = "addon.open-cluster-management.io";

    fn now() -> Timestamp {
        "2026-01-01T00:10:00Z".parse().unwrap()
    }

    fn hash(_: &Kind, namespace: Option<&str>, name: &str) -> ConfigSpecHash {
        ConfigSpecHash {
            namespace: namespace.map(Into::into),
            name: name.into(),
            spec_hash: Some(format!("hash-of-{name}")),
        }
    }

    #[allow(clippy::needless_pass_by_value)] // called with json! literals
    fn cma(default_template: &str, rollout: serde_json::Value) -> ClusterManagementAddOn {
        serde_json::from_value(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
        "metadata": {"name": "hello"},
        "spec": {
            "supportedConfigs": [{"group": GROUP, "resource": ADDON_TEMPLATES,
                "defaultConfig": {"name": default_template}}],
            "installStrategy": {"type": "Placements", "placements": [
                {"namespace": "ns", "name": "p", "rolloutStrategy": rollout}]}
        }
    }))
    .unwrap()
    }

    /// An add-on on `cluster` whose pinned template is `pinned` (applied there when `applied`).
    fn mca(cluster: &str, pinned: Option<&str>, applied: bool) -> Arc<ManagedClusterAddOn> {
        let refs: Vec<serde_json::Value> = pinned
            .map(|t| {
                let h = json!({"name": t, "specHash": format!("hash-of-{t}")});
                json!({"group": GROUP, "resource": ADDON_TEMPLATES, "name": t, "desiredConfig": h,
                "lastAppliedConfig": if applied { h.clone() } else { json!(null) }})
            })
            .into_iter()
            .collect();
        let (status, reason) = if applied {
            ("False", "Completed")
        } else {
            ("True", "Progressing")
        };
        Arc::new(
        serde_json::from_value(json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
            "metadata": {"name": "hello", "namespace": cluster},
            "spec": {},
            "status": {"configReferences": refs, "conditions": [{"type": "Progressing", "status": status,
                "reason": reason, "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        }))
        .unwrap(),
    )
    }

    fn decide_for(
        cma: &ClusterManagementAddOn,
        addons: &[Arc<ManagedClusterAddOn>],
        clusters: &[&str],
    ) -> Outcome {
        let groups = vec![Group {
            index: 0,
            name: String::new(),
            clusters: clusters.iter().map(|c| (*c).to_owned()).collect(),
        }];
        let strategy = &cma.spec.install_strategy.as_ref().unwrap().placements[0];
        decide(&Inputs {
            cma,
            addons,
            placements: vec![PlacementInput { strategy, groups }],
            hash: &hash,
            now: now(),
        })
    }

    fn pinned(status: &ManagedClusterAddOnStatus) -> Vec<String> {
        status
            .config_references
            .iter()
            .filter_map(|r| r.desired_config.as_ref().map(|d| d.name.clone()))
            .collect()
    }

    fn configured(status: &ManagedClusterAddOnStatus) -> (String, String) {
        let c = conditions::find(&status.conditions, CONFIGURED).unwrap();
        (c.status.clone(), c.reason.clone())
    }

    fn progressing(outcome: &Outcome) -> (String, String, String) {
        let p = &outcome.status.install_progressions[0];
        let c = conditions::find(&p.conditions, PROGRESSING).unwrap();
        (c.status.clone(), c.reason.clone(), c.message.clone())
    }

    #[test]
    fn all_pins_every_new_addon_at_once() {
        let cma = cma("hello-1", json!({"type": "All"}));
        let addons = [mca("c1", None, false), mca("c2", None, false)];
        let out = decide_for(&cma, &addons, &["c1", "c2"]);
        assert_eq!(out.addons.len(), 2);
        for (_, status) in &out.addons {
            assert_eq!(pinned(status), ["hello-1"]);
            assert_eq!(
                configured(status),
                ("True".into(), "ConfigurationsConfigured".into())
            );
        }
        assert_eq!(
            out.status.default_config_references[0]
                .desired_config
                .as_ref()
                .unwrap()
                .name,
            "hello-1"
        );
        let (status, reason, message) = progressing(&out);
        assert_eq!((status.as_str(), reason.as_str()), ("True", "Progressing"));
        assert_eq!(
            message,
            "selected clusters 2. configured addons 2/2 progressing..., 0 failed 0 timeout."
        );
    }

    #[test]
    fn progressive_moves_one_cluster_at_a_time_to_a_new_version() {
        let cma = cma(
            "hello-2",
            json!({"type": "Progressive", "progressive": {"maxConcurrency": 1}}),
        );
        let addons = [
            mca("c1", Some("hello-1"), true),
            mca("c2", Some("hello-1"), true),
        ];
        let out = decide_for(&cma, &addons, &["c1", "c2"]);
        let by_cluster: BTreeMap<String, &ManagedClusterAddOnStatus> = out
            .addons
            .iter()
            .map(|(m, s)| (m.namespace().unwrap(), s))
            .collect();
        assert_eq!(pinned(by_cluster["c1"]), ["hello-2"], "the first goes");
        assert_eq!(pinned(by_cluster["c2"]), ["hello-1"], "the second waits");
        assert_eq!(
            configured(by_cluster["c2"]),
            ("False".into(), "ConfigurationsNotConfigured".into())
        );
        assert_eq!(
            progressing(&out).2,
            "selected clusters 2. configured addons 1/2 progressing..., 0 failed 0 timeout."
        );

        // c1 applied the new version: c2 follows.
        let addons = [
            mca("c1", Some("hello-2"), true),
            mca("c2", Some("hello-1"), true),
        ];
        let out = decide_for(&cma, &addons, &["c1", "c2"]);
        let c2 = out
            .addons
            .iter()
            .find(|(m, _)| m.namespace().as_deref() == Some("c2"))
            .unwrap();
        assert_eq!(pinned(&c2.1), ["hello-2"]);

        // Both on it: completed, and the progression remembers what was applied.
        let addons = [
            mca("c1", Some("hello-2"), true),
            mca("c2", Some("hello-2"), true),
        ];
        let out = decide_for(&cma, &addons, &["c1", "c2"]);
        let (status, reason, message) = progressing(&out);
        assert_eq!((status.as_str(), reason.as_str()), ("False", "Completed"));
        assert_eq!(
            message,
            "selected clusters 2. configured addons 2/2 completed with no errors, 0 failed 0 timeout."
        );
        let applied = &out.status.install_progressions[0].config_references[0];
        assert_eq!(
            applied.last_applied_config.as_ref().unwrap().name,
            "hello-2"
        );
        assert_eq!(applied.last_known_good_config, applied.last_applied_config);
    }

    #[test]
    fn a_placements_configs_and_an_addons_own_override_the_default() {
        let mut cma = cma("hello-1", json!({"type": "All"}));
        let placement = &mut cma.spec.install_strategy.as_mut().unwrap().placements[0];
        placement.configs = vec![AddOnConfig {
            group: GROUP.into(),
            resource: ADDON_TEMPLATES.into(),
            namespace: None,
            name: "hello-canary".into(),
        }];
        let mut own = (*mca("c2", None, false)).clone();
        own.spec.configs = vec![AddOnConfig {
            group: GROUP.into(),
            resource: ADDON_TEMPLATES.into(),
            namespace: None,
            name: "hello-mine".into(),
        }];
        let addons = [
            mca("c1", None, false),
            Arc::new(own),
            mca("elsewhere", None, false),
        ];
        let out = decide_for(&cma, &addons, &["c1", "c2"]);
        let by_cluster: BTreeMap<String, Vec<String>> = out
            .addons
            .iter()
            .map(|(m, s)| (m.namespace().unwrap(), pinned(s)))
            .collect();
        assert_eq!(by_cluster["c1"], ["hello-canary"]);
        assert_eq!(by_cluster["c2"], ["hello-mine"]);
        assert_eq!(
            by_cluster["elsewhere"],
            ["hello-1"],
            "no placement: the default, at once"
        );
    }

    #[test]
    fn a_settled_addon_is_left_as_it_is() {
        let cma = cma("hello-1", json!({"type": "All"}));
        let mut settled = (*mca("c1", Some("hello-1"), true)).clone();
        let status = settled.status.as_mut().unwrap();
        set_configured(status, true, &Time(now()));
        let out = decide_for(&cma, &[Arc::new(settled)], &["c1"]);
        assert!(out.addons.is_empty(), "{:?}", out.addons);
    }

    #[test]
    fn a_fresh_pin_counts_as_progressing_from_now_not_from_the_last_completion() {
        // Pinned to version 2 a moment ago; the manager has not answered, so `Progressing` still
        // says version 1's `Completed`: that time must not start version 2's deadline.
        let mut pinned = (*mca("c1", Some("hello-1"), true)).clone();
        let r = &mut pinned.status.as_mut().unwrap().config_references[0];
        r.desired_config = Some(hash(&kind_of(GROUP, ADDON_TEMPLATES), None, "hello-2"));
        let desired: Configs = [(
            kind_of(GROUP, ADDON_TEMPLATES),
            vec![hash(&kind_of(GROUP, ADDON_TEMPLATES), None, "hello-2")],
        )]
        .into();
        let since = rollout_status(&pinned, &desired);
        assert_eq!(since.status, Status::Progressing);
        assert_eq!(since.since, None);
        let under_way = mca("c1", Some("hello-2"), false);
        assert_eq!(
            rollout_status(&under_way, &desired).status,
            Status::Progressing
        );
        assert!(
            rollout_status(&under_way, &desired).since.is_some(),
            "under way since its condition"
        );
    }

    #[test]
    fn under_all_a_progress_deadline_times_out_the_late_and_holds_back_no_one() {
        // c1 under way since 00:00 (now 00:10), c2 done with version 1: All gives c2 version 2
        // at once, and past a 5-minute deadline c1 counts as timed out.
        let under_way = [
            mca("c1", Some("hello-2"), false),
            mca("c2", Some("hello-1"), true),
        ];
        let all = cma(
            "hello-2",
            json!({"type": "All", "all": {"progressDeadline": "5m"}}),
        );
        let out = decide_for(&all, &under_way, &["c1", "c2"]);
        assert_eq!(
            progressing(&out).2,
            "selected clusters 2. configured addons 1/2 progressing..., 0 failed 1 timeout."
        );
        let c2 = out
            .addons
            .iter()
            .find(|(m, _)| m.namespace().as_deref() == Some("c2"))
            .unwrap();
        assert_eq!(pinned(&c2.1), ["hello-2"], "no one waits under All");
        let patient = cma("hello-2", json!({"type": "All"}));
        assert!(
            progressing(&decide_for(&patient, &under_way, &["c1", "c2"]))
                .2
                .ends_with("0 failed 0 timeout."),
            "no deadline, no time-out"
        );
    }

    #[test]
    fn an_addon_under_way_counts_as_progressing_and_one_past_its_deadline_as_timed_out() {
        let under_way = [
            mca("c1", Some("hello-2"), false),
            mca("c2", Some("hello-1"), true),
        ];
        let patient = cma(
            "hello-2",
            json!({"type": "Progressive", "progressive": {"maxConcurrency": 1}}),
        );
        let out = decide_for(&patient, &under_way, &["c1", "c2"]);
        assert_eq!(
            progressing(&out).2,
            "selected clusters 2. configured addons 1/2 progressing..., 0 failed 0 timeout.",
            "c1 is in flight"
        );

        // Progressing since 00:00, now 00:10: past a 5-minute deadline. A time-out is a failure, and
        // with none tolerated the rollout stops: c2 keeps version 1.
        let hasty = cma(
            "hello-2",
            json!({"type": "Progressive",
            "progressive": {"maxConcurrency": 1, "progressDeadline": "5m"}}),
        );
        let out = decide_for(&hasty, &under_way, &["c1", "c2"]);
        assert_eq!(
            progressing(&out).2,
            "selected clusters 2. configured addons 0/2 progressing..., 0 failed 1 timeout."
        );
        let c2 = out
            .addons
            .iter()
            .find(|(m, _)| m.namespace().as_deref() == Some("c2"))
            .unwrap();
        assert_eq!(pinned(&c2.1), ["hello-1"]);
    }
}
