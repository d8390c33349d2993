//! Rolls an add-on's configs out, as upstream's `addonconfiguration` controller (its
//! configuration graph) and `cmainstallprogression`: for a ClusterManagementAddOn installed by
//! `Placements`, each ManagedClusterAddOn's configs (its AddOnTemplate, its
//! AddOnDeploymentConfig) are pinned in its `status.configReferences[].desiredConfig`, and the
//! manager deploys what is pinned. A change of the add-on's configs (a new template version as
//! the default or in a placement's `configs`) reaches the clusters of each placement at the pace
//! of that placement's `rolloutStrategy`, with the rollout library ManifestWorkReplicaSets use
//! ([`crate::hub::replicaset::rollout`]); clusters of no placement get it at once. The
//! ClusterManagementAddOn's status tells the progress: `defaultconfigReferences` and, per
//! placement, `installProgressions` with upstream's `Progressing` condition. Pure: the install
//! controller ([`super::install`]) reads the stores and writes the outcome.
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;

use crate::api::addon::{
    AddOnConfig, CONFIGURED, ClusterManagementAddOn, ClusterManagementAddOnStatus, ConfigReference,
    ConfigSpecHash, DefaultConfigReference, InstallConfigReference, InstallProgression,
    InstallStrategyType, ManagedClusterAddOn, ManagedClusterAddOnStatus, PROGRESSING,
    PlacementStrategy,
};
use crate::api::conditions::{self, FALSE, TRUE};
use crate::api::rollout::RolloutStrategy;
use crate::hub::replicaset::rollout::{self as library, Group, Since, Status};

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
        && super::install::managed_by_hub(cma)
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
#[path = "rollout_tests.rs"]
mod tests;
