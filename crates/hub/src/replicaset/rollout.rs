//! Which clusters get a ManifestWorkReplicaSet's current template next, by the placement's
//! rollout strategy — upstream's sdk-go rollout handler (`pkg/apis/cluster/v1alpha1/rollout.go`)
//! restated, pure. `All` sends it everywhere at once; `Progressive` keeps at most
//! `maxConcurrency` clusters in flight; `ProgressivePerGroup` starts a decision group only when
//! the one before has settled. Mandatory decision groups go first in both progressive kinds.
//! A cluster counts as in flight while it is to apply, progressing, failed within its
//! `progressDeadline`, or succeeded within its `minSuccessTime`.
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use ocm_api::rollout::{MandatoryDecisionGroup, RolloutConfig, RolloutStrategy, RolloutType};

/// Where a cluster stands with the current template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// It has no work with the current template yet.
    ToApply,
    /// Its work is being applied.
    Progressing,
    /// Its work is applied and settled.
    Succeeded,
    /// Its work failed.
    Failed,
    /// It was in flight longer than `progressDeadline`.
    TimeOut,
}

/// A cluster's status and since when it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Since {
    /// The status.
    pub status: Status,
    /// When it began (`None`: now).
    pub since: Option<Timestamp>,
}

/// A decision group of the placement: its index, name and clusters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// `decision-group-index`.
    pub index: i32,
    /// `decision-group-name`.
    pub name: String,
    /// Its clusters.
    pub clusters: BTreeSet<String>,
}

/// What to do now.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Clusters to give the current template now, by name.
    pub to_apply: Vec<String>,
    /// Every cluster in flight (upstream's `ClustersToRollout`): those to apply, progressing,
    /// failed within their deadline, or succeeded within their soak time.
    pub in_flight: Vec<String>,
    /// Clusters this round found past their `progressDeadline` (upstream's `ClustersTimeOut`).
    pub timed_out: Vec<String>,
    /// Clusters with a work that no decision names any more.
    pub removed: Vec<String>,
    /// Look again then: a soak or a deadline ends.
    pub recheck_after: Option<Duration>,
}

/// A cluster considered this round, and when its status next changes by time alone.
struct Entry {
    cluster: String,
    status: Status,
    recheck: Option<Timestamp>,
}

/// Timing and failure settings, parsed.
struct Config {
    min_success: SignedDuration,
    deadline: Option<SignedDuration>,
    max_failures: Option<IntOrString>,
}

impl Config {
    fn parse(c: Option<&RolloutConfig>) -> Result<Self, String> {
        let c = c.cloned().unwrap_or_default();
        let min_success = match c.min_success_time.as_deref() {
            None | Some("" | "0") => SignedDuration::ZERO,
            Some(d) => go_duration(d).ok_or_else(|| format!("invalid minSuccessTime {d:?}"))?,
        };
        let deadline = match c.progress_deadline.as_deref() {
            None | Some("" | "None") => None,
            Some(d) => {
                Some(go_duration(d).ok_or_else(|| format!("invalid progressDeadline {d:?}"))?)
            }
        };
        Ok(Self {
            min_success,
            deadline,
            max_failures: c.max_failures,
        })
    }
}

/// A Go duration such as `90s`, `5m` or `1h30m` ([`ocm_api::go_duration`]).
fn go_duration(text: &str) -> Option<SignedDuration> {
    SignedDuration::try_from(ocm_api::go_duration(text)?).ok()
}

/// Upstream's `calculateRolloutSize`: a count, or a percentage of `total` rounded up; anything
/// not above 0 or above `total` gives `default`.
fn size(value: Option<&IntOrString>, total: usize, default: usize) -> Result<usize, String> {
    let n = match value {
        None => return Ok(default),
        Some(IntOrString::Int(n)) => i64::from(*n),
        Some(IntOrString::String(s)) => {
            let Some(p) = s.strip_suffix('%').and_then(|p| p.parse::<u32>().ok()) else {
                return Err(format!("{s:?} is neither a count nor a percentage"));
            };
            // ceil(p / 100 * total)
            i64::try_from((u64::from(p) * total as u64).div_ceil(100)).unwrap_or(i64::MAX)
        }
    };
    Ok(match usize::try_from(n) {
        Ok(n) if n > 0 && n <= total => n,
        _ => default,
    })
}

/// Upstream's `determineRolloutStatus`: whether a cluster with status `s` is in flight (and when
/// that changes), or timed out.
fn settle(cluster: &str, s: Since, config: &Config, now: Timestamp) -> (Option<Entry>, Status) {
    let since = s.since.unwrap_or(now);
    let entry = |status, recheck| {
        Some(Entry {
            cluster: cluster.to_owned(),
            status,
            recheck,
        })
    };
    match s.status {
        Status::ToApply => (entry(Status::ToApply, None), Status::ToApply),
        Status::Succeeded => {
            let until = since
                .checked_add(config.min_success)
                .unwrap_or(Timestamp::MAX);
            if now < until {
                (entry(Status::Succeeded, Some(until)), Status::Succeeded)
            } else {
                (None, Status::Succeeded)
            }
        }
        Status::TimeOut => (None, Status::TimeOut),
        status @ (Status::Progressing | Status::Failed) => {
            let deadline = config
                .deadline
                .map(|d| since.checked_add(d).unwrap_or(Timestamp::MAX));
            match deadline {
                Some(d) if now >= d => (None, Status::TimeOut),
                _ => (entry(status, deadline), status),
            }
        }
    }
}

/// Records `cluster` in `timed_out` when settling found it past its deadline this round (one
/// already marked `TimeOut` is not counted again, as upstream's `determineRolloutStatus`).
fn note_timeout(cluster: &str, before: Since, after: Status, timed_out: &mut Vec<String>) {
    if after == Status::TimeOut && before.status != Status::TimeOut {
        timed_out.push(cluster.to_owned());
    }
}

/// Upstream's `progressivePerCluster`: every in-flight cluster of `statuses` (by name, stopping
/// when more failed than `max_failures`), then new clusters of `groups` by name, up to `limit`.
fn per_cluster(
    groups: &[&Group],
    limit: usize,
    max_failures: usize,
    config: &Config,
    statuses: &BTreeMap<String, Since>,
    now: Timestamp,
    timed_out: &mut Vec<String>,
) -> Vec<Entry> {
    let mut out = Vec::new();
    let (mut failures, mut breach) = (0, false);
    for (cluster, s) in statuses {
        if breach && s.status == Status::ToApply {
            continue;
        }
        let (entry, status) = settle(cluster, *s, config, now);
        out.extend(entry);
        note_timeout(cluster, *s, status, timed_out);
        if matches!(status, Status::TimeOut | Status::Failed) {
            failures += 1;
            breach = failures > max_failures;
        }
        if out.len() >= limit {
            return out;
        }
    }
    if breach {
        return out;
    }
    let fresh: BTreeSet<&String> = groups
        .iter()
        .flat_map(|g| &g.clusters)
        .filter(|c| !statuses.contains_key(*c))
        .collect();
    for cluster in fresh {
        if out.len() >= limit {
            break;
        }
        out.push(Entry {
            cluster: cluster.clone(),
            status: Status::ToApply,
            recheck: None,
        });
    }
    out
}

/// Upstream's `progressivePerGroup`: the in-flight clusters, then group after group (by index)
/// while nothing but tolerated failures is in flight.
fn per_group(
    groups: &[&Group],
    max_failures: Option<&IntOrString>,
    config: &Config,
    statuses: &BTreeMap<String, Since>,
    now: Timestamp,
    timed_out: &mut Vec<String>,
) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    let mut known = BTreeMap::new();
    for (cluster, s) in statuses.iter().filter(|(_, s)| s.status != Status::ToApply) {
        let (entry, status) = settle(cluster, *s, config, now);
        out.extend(entry);
        note_timeout(cluster, *s, status, timed_out);
        known.insert(cluster.as_str(), status);
    }
    let mut ordered = groups.to_vec();
    ordered.sort_by_key(|g| g.index);
    let mut total_failures = 0;
    for group in ordered {
        let allowed = size(max_failures, group.clusters.len(), 0)?;
        let (mut failures, mut breach) = (0, false);
        for cluster in &group.clusters {
            match known.get(cluster.as_str()) {
                Some(Status::TimeOut | Status::Failed) => {
                    failures += 1;
                    breach = failures > allowed;
                }
                Some(_) => {}
                None => out.push(Entry {
                    cluster: cluster.clone(),
                    status: Status::ToApply,
                    recheck: None,
                }),
            }
        }
        total_failures += failures;
        if out.len() > total_failures || breach {
            break;
        }
    }
    Ok(out)
}

/// The groups named by `mandatory` (a name stands for every group of that name), and the rest.
fn split_mandatory<'a>(
    groups: &'a [Group],
    mandatory: &[MandatoryDecisionGroup],
) -> (Vec<&'a Group>, Vec<&'a Group>) {
    groups.iter().partition(|g| {
        mandatory.iter().any(|m| match m.group_name.as_deref() {
            Some(name) if !name.is_empty() => name == g.name,
            _ => m.group_index == Some(g.index),
        })
    })
}

/// The rollout of `strategy` over `groups`, given each cluster's status with the current
/// template (`statuses`: clusters that have a current work).
pub fn plan(
    strategy: &RolloutStrategy,
    groups: &[Group],
    statuses: &BTreeMap<String, Since>,
    now: Timestamp,
) -> Result<Plan, String> {
    let decided: BTreeSet<&String> = groups.iter().flat_map(|g| &g.clusters).collect();
    let removed: Vec<String> = statuses
        .keys()
        .filter(|c| !decided.contains(c))
        .cloned()
        .collect();
    let current: BTreeMap<String, Since> = statuses
        .iter()
        .filter(|(c, _)| decided.contains(c))
        .map(|(c, s)| (c.clone(), *s))
        .collect();
    let all: Vec<&Group> = groups.iter().collect();
    let mut timed_out = Vec::new();
    let entries = match strategy.type_.unwrap_or_default() {
        RolloutType::All => {
            let config = Config::parse(strategy.all.as_ref())?;
            let config = Config {
                min_success: SignedDuration::ZERO,
                ..config
            };
            per_cluster(
                &all,
                decided.len(),
                decided.len(),
                &config,
                &current,
                now,
                &mut timed_out,
            )
        }
        RolloutType::Progressive => {
            let p = strategy.progressive.clone().unwrap_or_default();
            let config = Config::parse(Some(&p.config))?;
            let max_failures = size(config.max_failures.as_ref(), decided.len(), 0)?;
            let (mandatory, rest) = split_mandatory(groups, &p.mandatory_decision_groups);
            let first = mandatory_phase(&mandatory, &config, &current, now, &mut timed_out)?;
            if let Some(first) = first {
                first
            } else {
                // Unset, it is every cluster: upstream's code, although its API comment speaks
                // of the placement's clustersPerDecisionGroup.
                let total = rest.iter().map(|g| g.clusters.len()).sum();
                let limit = size(p.max_concurrency.as_ref(), total, total)?;
                per_cluster(
                    &rest,
                    limit,
                    max_failures,
                    &config,
                    &current,
                    now,
                    &mut timed_out,
                )
            }
        }
        RolloutType::ProgressivePerGroup => {
            let p = strategy.progressive_per_group.clone().unwrap_or_default();
            let config = Config::parse(Some(&p.config))?;
            size(config.max_failures.as_ref(), decided.len(), 0)?;
            let (mandatory, rest) = split_mandatory(groups, &p.mandatory_decision_groups);
            match mandatory_phase(&mandatory, &config, &current, now, &mut timed_out)? {
                Some(first) => first,
                None => per_group(
                    &rest,
                    config.max_failures.as_ref(),
                    &config,
                    &current,
                    now,
                    &mut timed_out,
                )?,
            }
        }
    };
    let recheck_after = entries
        .iter()
        .filter_map(|e| e.recheck)
        .filter(|t| *t > now)
        .min()
        .map(|t| t.duration_since(now).unsigned_abs());
    Ok(Plan {
        to_apply: entries
            .iter()
            .filter(|e| e.status == Status::ToApply)
            .map(|e| e.cluster.clone())
            .collect(),
        in_flight: entries.into_iter().map(|e| e.cluster).collect(),
        timed_out,
        removed,
        recheck_after,
    })
}

/// The mandatory groups, one at a time with no failure allowed: what is in flight there, or
/// `None` once they have settled.
fn mandatory_phase(
    mandatory: &[&Group],
    config: &Config,
    statuses: &BTreeMap<String, Since>,
    now: Timestamp,
    timed_out: &mut Vec<String>,
) -> Result<Option<Vec<Entry>>, String> {
    if mandatory.is_empty() {
        return Ok(None);
    }
    let zero = Some(IntOrString::Int(0));
    let mut late = Vec::new();
    let entries = per_group(mandatory, zero.as_ref(), config, statuses, now, &mut late)?;
    if entries.is_empty() && late.is_empty() {
        return Ok(None);
    }
    timed_out.extend(late);
    Ok(Some(entries))
}

#[cfg(test)]
mod tests {
    //! Rollout plans from statuses; no cluster.
    use std::collections::BTreeMap;
    use std::time::Duration;

    use k8s_openapi::jiff::{SignedDuration, Timestamp};
    use serde_json::json;

    use super::{Group, Since, Status, plan};
    use ocm_api::rollout::RolloutStrategy;

    fn now() -> Timestamp {
        "2026-01-01T00:10:00Z".parse().unwrap()
    }

    fn minutes_ago(m: i64) -> Timestamp {
        now() - SignedDuration::from_mins(m)
    }

    #[allow(clippy::needless_pass_by_value)] // called with json! literals
    fn strategy(v: serde_json::Value) -> RolloutStrategy {
        serde_json::from_value(v).unwrap()
    }

    fn group(index: i32, name: &str, clusters: &[&str]) -> Group {
        Group {
            index,
            name: name.into(),
            clusters: clusters.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    fn statuses(of: &[(&str, Status, Option<Timestamp>)]) -> BTreeMap<String, Since> {
        of.iter()
            .map(|(c, status, since)| {
                (
                    (*c).to_owned(),
                    Since {
                        status: *status,
                        since: *since,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn all_applies_everywhere_and_removes_what_left() {
        let groups = [group(0, "", &["a", "b", "c"])];
        let s = statuses(&[
            ("a", Status::Succeeded, Some(minutes_ago(1))),
            ("gone", Status::Succeeded, None),
        ]);
        let p = plan(&strategy(json!({"type": "All"})), &groups, &s, now()).unwrap();
        assert_eq!(p.to_apply, ["b", "c"]);
        assert_eq!(p.removed, ["gone"]);
    }

    #[test]
    fn progressive_keeps_max_concurrency_in_flight() {
        let groups = [group(0, "", &["a", "b", "c", "d"])];
        let one = strategy(json!({"type": "Progressive", "progressive": {"maxConcurrency": 1}}));
        assert_eq!(
            plan(&one, &groups, &statuses(&[]), now()).unwrap().to_apply,
            ["a"]
        );
        let a_busy = statuses(&[("a", Status::Progressing, Some(minutes_ago(1)))]);
        assert!(
            plan(&one, &groups, &a_busy, now())
                .unwrap()
                .to_apply
                .is_empty()
        );
        let a_done = statuses(&[("a", Status::Succeeded, Some(minutes_ago(1)))]);
        assert_eq!(plan(&one, &groups, &a_done, now()).unwrap().to_apply, ["b"]);
        // 50% of 4 is 2 in flight.
        let half =
            strategy(json!({"type": "Progressive", "progressive": {"maxConcurrency": "50%"}}));
        assert_eq!(
            plan(&half, &groups, &a_done, now()).unwrap().to_apply,
            ["b", "c"]
        );
        // A soak keeps a succeeded cluster in flight, and says when to look again.
        let soak = strategy(
            json!({"type": "Progressive", "progressive": {"maxConcurrency": 1, "minSuccessTime": "5m"}}),
        );
        let p = plan(&soak, &groups, &a_done, now()).unwrap();
        assert!(p.to_apply.is_empty());
        assert_eq!(p.recheck_after, Some(Duration::from_secs(240)));
        let bad =
            strategy(json!({"type": "Progressive", "progressive": {"maxConcurrency": "lots"}}));
        assert!(plan(&bad, &groups, &a_done, now()).is_err());
    }

    #[test]
    fn a_failure_past_the_deadline_stops_the_rollout() {
        let groups = [group(0, "", &["a", "b", "c"])];
        let strict = strategy(
            json!({"type": "Progressive", "progressive": {"maxConcurrency": 1, "progressDeadline": "5m"}}),
        );
        let stuck = statuses(&[("a", Status::Progressing, Some(minutes_ago(10)))]);
        let stopped = plan(&strict, &groups, &stuck, now()).unwrap();
        assert!(stopped.to_apply.is_empty());
        assert_eq!(stopped.timed_out, ["a"]);
        assert!(stopped.in_flight.is_empty());
        let tolerant = strategy(
            json!({"type": "Progressive", "progressive": {"maxConcurrency": 1, "progressDeadline": "5m", "maxFailures": 1}}),
        );
        assert_eq!(
            plan(&tolerant, &groups, &stuck, now()).unwrap().to_apply,
            ["b"]
        );
    }

    #[test]
    fn per_group_waits_for_each_group_and_mandatory_groups_go_first() {
        let groups = [
            group(0, "canary", &["a", "b"]),
            group(1, "rest", &["c", "d"]),
        ];
        let per_group = strategy(json!({"type": "ProgressivePerGroup"}));
        assert_eq!(
            plan(&per_group, &groups, &statuses(&[]), now())
                .unwrap()
                .to_apply,
            ["a", "b"]
        );
        let half = statuses(&[
            ("a", Status::Succeeded, None),
            ("b", Status::Progressing, None),
        ]);
        assert!(
            plan(&per_group, &groups, &half, now())
                .unwrap()
                .to_apply
                .is_empty()
        );
        let first_done = statuses(&[
            ("a", Status::Succeeded, None),
            ("b", Status::Succeeded, None),
        ]);
        assert_eq!(
            plan(&per_group, &groups, &first_done, now())
                .unwrap()
                .to_apply,
            ["c", "d"]
        );

        let mandatory = strategy(
            json!({"type": "Progressive", "progressive": {"mandatoryDecisionGroups": [{"groupName": "rest"}], "maxConcurrency": 1}}),
        );
        assert_eq!(
            plan(&mandatory, &groups, &statuses(&[]), now())
                .unwrap()
                .to_apply,
            ["c", "d"]
        );
        let rest_done = statuses(&[
            ("c", Status::Succeeded, None),
            ("d", Status::Succeeded, None),
        ]);
        assert_eq!(
            plan(&mandatory, &groups, &rest_done, now())
                .unwrap()
                .to_apply,
            ["a"]
        );
        // A mandatory group named by its index, as upstream's `groupIndex`.
        let by_index = strategy(
            json!({"type": "Progressive", "progressive": {"mandatoryDecisionGroups": [{"groupIndex": 1}], "maxConcurrency": 1}}),
        );
        assert_eq!(
            plan(&by_index, &groups, &statuses(&[]), now())
                .unwrap()
                .to_apply,
            ["c", "d"]
        );
    }
}
