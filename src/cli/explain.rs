//! `clusteradm get placements NAME --explain`: why each cluster is or is not selected, computed by
//! the hub's own scheduler ([`crate::hub::placement::schedule::explain`]) from what the hub holds
//! now: the cluster left out before scoring and why (not in a bound set, no predicate matched, a
//! taint), and each scored cluster's score per prioritizer, weight and total. What upstream's
//! placement debug server answers, from the command line and with no server (beyond upstream).
use std::collections::BTreeSet;

use kube::{Client, ResourceExt as _};
use serde::Serialize;

use crate::api::cluster::Placement;
use crate::hub::placement::schedule::{Scheduled, Trace};
use crate::ui::output::{self, Format};
use crate::ui::table;

/// One cluster's fate.
#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Fate {
    /// The cluster.
    pub cluster: String,
    /// Selected now.
    pub selected: bool,
    /// Why it was left out before scoring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded: Option<String>,
    /// Its weighted total, when scored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    /// Each prioritizer's score and weight, when scored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prioritizers: Vec<PrioritizerScore>,
}

/// A prioritizer's part of a score.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct PrioritizerScore {
    /// The prioritizer.
    pub name: String,
    /// Its score (-100 to 100).
    pub score: i64,
    /// Its weight.
    pub weight: i64,
}

/// The whole explanation.
#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// `namespace/name`.
    pub placement: String,
    /// Why the spec cannot be used, if it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub misconfigured: Option<String>,
    /// Every cluster of the hub: the selected first, then the other scored, then the rest.
    pub clusters: Vec<Fate>,
}

/// The explanation of a scheduling.
#[must_use]
pub fn explanation(placement: &Placement, scheduled: &Scheduled, trace: Trace) -> Explanation {
    let selected: BTreeSet<&str> = scheduled.clusters.iter().map(String::as_str).collect();
    let mut clusters: Vec<Fate> = trace
        .scored
        .into_iter()
        .map(|s| Fate {
            selected: selected.contains(s.cluster.as_str()),
            cluster: s.cluster,
            excluded: None,
            score: Some(s.total),
            prioritizers: s
                .parts
                .into_iter()
                .map(|(name, score, weight)| PrioritizerScore {
                    name,
                    score,
                    weight,
                })
                .collect(),
        })
        .collect();
    // Selected first (spread policies may pick below a higher score), in the scheduler's order.
    clusters.sort_by_key(|f| !f.selected);
    clusters.extend(trace.excluded.into_iter().map(|(cluster, why)| Fate {
        cluster,
        selected: false,
        excluded: Some(why),
        score: None,
        prioritizers: Vec::new(),
    }));
    Explanation {
        placement: format!(
            "{}/{}",
            placement.namespace().unwrap_or_default(),
            placement.name_any()
        ),
        misconfigured: scheduled.misconfigured.clone(),
        clusters,
    }
}

/// Reads what the hub's scheduler reads and explains `placement`.
///
/// # Errors
/// What the scheduler reads could not be read.
pub async fn explain(client: &Client, placement: &Placement) -> anyhow::Result<Explanation> {
    let (scheduled, trace) = crate::hub::placement::explain::now(client, placement).await?;
    Ok(explanation(placement, &scheduled, trace))
}

/// Prints `e` as a table, or as YAML or JSON.
pub fn print(e: &Explanation, format: Format) -> anyhow::Result<()> {
    if format.is_objects() {
        return output::print_value(e, format);
    }
    let mut t = table::new(&["cluster", "selected", "score", "why"]);
    for f in &e.clusters {
        let why = match (&f.excluded, f.selected) {
            (Some(why), _) => why.clone(),
            (None, true) => parts(f),
            (None, false) => format!("{}; not among the clusters selected", parts(f)),
        };
        t.add_row(vec![
            f.cluster.clone(),
            if f.selected { "yes" } else { "no" }.to_string(),
            f.score.map(|s| s.to_string()).unwrap_or_default(),
            why,
        ]);
    }
    let mut text = table::render(&t);
    if let Some(m) = &e.misconfigured {
        text = format!("{} is misconfigured: {m}\n{text}", e.placement);
    }
    crate::ui::stdout::println(text)?;
    Ok(())
}

/// `Balance 100×1 + Steady 0×1`.
fn parts(f: &Fate) -> String {
    f.prioritizers
        .iter()
        .map(|p| format!("{} {}×{}", p.name, p.score, p.weight))
        .collect::<Vec<_>>()
        .join(" + ")
}
