//! Writes a placement's decisions and status: only what differs from the store, so a resync
//! that changes nothing sends nothing. The stores trail the writes by a moment, and a burst of
//! cluster events reconciles a placement many times in that moment: the [`Lag`] memo skips a
//! write whose target the store still shows as it was before this process last wrote it.
use std::collections::BTreeMap;
use std::sync::Arc;

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, Resource as _, ResourceExt};
use serde_json::json;

use super::groups::Decision;
use crate::api::cluster::{
    ClusterDecision, DECISION_GROUP_INDEX_LABEL, DECISION_GROUP_NAME_LABEL, PLACEMENT_LABEL,
    Placement, PlacementDecision, PlacementDecisionSpec, PlacementDecisionStatus, PlacementStatus,
};

/// For each object this process wrote, the resourceVersion it overwrote (`None`: it created
/// it) — until the store shows the write, after which the entry goes.
#[derive(Default)]
pub(super) struct Lag(std::sync::Mutex<std::collections::HashMap<String, Option<String>>>);

impl Lag {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Option<String>>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the store's `seen` version is the one this process already wrote over.
    fn behind(&self, key: &str, seen: Option<&String>) -> bool {
        self.lock().get(key).is_some_and(|v| v.as_ref() == seen)
    }

    fn wrote(&self, key: String, over: Option<String>) {
        self.lock().insert(key, over);
    }

    fn caught_up(&self, key: &str) {
        self.lock().remove(key);
    }
}

/// Echoes remembered at most.
const MAX_ECHOES: usize = 100_000;

/// The resourceVersions of decisions this process wrote: their watch events are echoes of its
/// own writes, which must not schedule the placement again (with `Balance` and no `Steady`,
/// each placement re-deciding on its own echo, seeing the others' new choices, never settles).
#[derive(Default)]
pub(super) struct Echoes(std::sync::Mutex<std::collections::HashSet<String>>);

impl Echoes {
    fn key(d: &PlacementDecision) -> Option<String> {
        Some(format!(
            "{}/{}@{}",
            d.namespace()?,
            d.name_any(),
            d.resource_version()?
        ))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn wrote(&self, d: &PlacementDecision) {
        if let Some(key) = Self::key(d) {
            let mut echoes = self.lock();
            // An echo heard before its write returned, or lost to a relist, is never removed:
            // forget them all now and then (the cost is one extra reconcile each).
            if echoes.len() >= MAX_ECHOES {
                echoes.clear();
            }
            echoes.insert(key);
        }
    }

    /// Whether `d` is what this process wrote (forgotten once heard).
    pub(super) fn is_echo(&self, d: &PlacementDecision) -> bool {
        Self::key(d).is_some_and(|key| self.lock().remove(&key))
    }
}

pub(super) struct Writer<'a> {
    lag: &'a Lag,
    echoes: &'a Echoes,
    ns: String,
    decisions: Api<PlacementDecision>,
    placements: Api<Placement>,
    placement: String,
    owner: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>,
}

fn labels(placement: &str, d: &Decision) -> BTreeMap<String, String> {
    [
        (PLACEMENT_LABEL.to_string(), placement.to_string()),
        (DECISION_GROUP_NAME_LABEL.to_string(), d.group_name.clone()),
        (
            DECISION_GROUP_INDEX_LABEL.to_string(),
            d.group_index.to_string(),
        ),
    ]
    .into()
}

fn status_of(d: &Decision) -> PlacementDecisionStatus {
    PlacementDecisionStatus {
        decisions: d
            .clusters
            .iter()
            .map(|c| ClusterDecision {
                cluster_name: c.clone(),
                reason: String::new(),
                score: None,
            })
            .collect(),
    }
}

/// The decisions `existing` hold, as [`Decision`]s (for a placement whose decisions are kept).
pub(super) fn as_decisions(existing: &[Arc<PlacementDecision>]) -> Vec<Decision> {
    let mut out: Vec<Decision> = existing
        .iter()
        .map(|d| Decision {
            name: d.name_any(),
            group_index: d
                .labels()
                .get(DECISION_GROUP_INDEX_LABEL)
                .and_then(|i| i.parse().ok())
                .unwrap_or(0),
            group_name: d
                .labels()
                .get(DECISION_GROUP_NAME_LABEL)
                .cloned()
                .unwrap_or_default(),
            clusters: d
                .status
                .iter()
                .flat_map(|s| &s.decisions)
                .map(|c| c.cluster_name.clone())
                .collect(),
        })
        .collect();
    out.sort_by_key(|d| (d.group_index, d.name.clone()));
    out
}

impl<'a> Writer<'a> {
    pub(super) fn new(client: Client, p: &Placement, lag: &'a Lag, echoes: &'a Echoes) -> Self {
        let ns = p.namespace().unwrap_or_default();
        Self {
            lag,
            echoes,
            ns: ns.clone(),
            decisions: Api::namespaced(client.clone(), &ns),
            placements: Api::namespaced(client, &ns),
            placement: p.name_any(),
            owner: p.controller_owner_ref(&()),
        }
    }

    /// Creates or updates decision `d` (labels, then status: the status subresource).
    async fn write(
        &self,
        d: &Decision,
        existing: Option<&Arc<PlacementDecision>>,
        labels: BTreeMap<String, String>,
        status: PlacementDecisionStatus,
    ) -> Result<(), kube::Error> {
        if existing.is_none() {
            let mut new = PlacementDecision::new(&d.name, PlacementDecisionSpec::default());
            new.metadata.labels = Some(labels);
            new.metadata.owner_references = self.owner.clone().map(|o| vec![o]);
            match self.decisions.create(&PostParams::default(), &new).await {
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                r => self.echoes.wrote(&r?),
            }
        } else if existing.is_some_and(|h| h.metadata.labels.as_ref() != Some(&labels)) {
            let patch = json!({"metadata": {"labels": labels}});
            let written = self
                .decisions
                .patch(&d.name, &PatchParams::default(), &Patch::Merge(patch))
                .await?;
            self.echoes.wrote(&written);
        }
        if existing.and_then(|h| h.status.as_ref()) != Some(&status) {
            let patch = json!({"status": status});
            let written = self
                .decisions
                .patch_status(&d.name, &PatchParams::default(), &Patch::Merge(patch))
                .await?;
            self.echoes.wrote(&written);
        }
        Ok(())
    }

    /// Makes the placement's PlacementDecisions `want`, given those it has; `true` when a write
    /// waits for the store to show this process's last one (look again shortly).
    pub(super) async fn decisions(
        &self,
        want: &[Decision],
        have: &[Arc<PlacementDecision>],
    ) -> Result<bool, kube::Error> {
        let mut deferred = false;
        for d in want {
            let labels = labels(&self.placement, d);
            let status = status_of(d);
            let existing = have.iter().find(|h| h.name_any() == d.name);
            let key = format!("decision/{}/{}", self.ns, d.name);
            let current = existing.is_some_and(|h| {
                h.metadata.labels.as_ref() == Some(&labels) && h.status.as_ref() == Some(&status)
            });
            if current {
                self.lag.caught_up(&key);
                continue;
            }
            let seen = existing.and_then(|h| h.resource_version());
            if self.lag.behind(&key, seen.as_ref()) {
                deferred = true;
                continue;
            }
            self.write(d, existing, labels, status).await?;
            self.lag.wrote(key, seen);
        }
        for h in have {
            let key = format!("delete/{}/{}", self.ns, h.name_any());
            if !want.iter().any(|d| d.name == h.name_any())
                && !self.lag.behind(&key, h.resource_version().as_ref())
            {
                match self
                    .decisions
                    .delete(&h.name_any(), &DeleteParams::default())
                    .await
                {
                    Err(kube::Error::Api(s)) if s.code == 404 => {}
                    r => {
                        r?;
                    }
                }
                self.lag.wrote(key, h.resource_version());
            }
        }
        Ok(deferred)
    }

    /// Writes `status` unless the placement already has it; guarded by the resourceVersion.
    /// `true` when the write waits for the store to show this process's last one.
    pub(super) async fn status(
        &self,
        p: &Placement,
        status: PlacementStatus,
    ) -> Result<bool, kube::Error> {
        let key = format!("status/{}/{}", self.ns, self.placement);
        if p.status.as_ref() == Some(&status) {
            self.lag.caught_up(&key);
            return Ok(false);
        }
        if self.lag.behind(&key, p.resource_version().as_ref()) {
            return Ok(true);
        }
        let patch =
            json!({"metadata": {"resourceVersion": p.meta().resource_version}, "status": status});
        self.placements
            .patch_status(
                &self.placement,
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await?;
        self.lag.wrote(key, p.resource_version());
        Ok(false)
    }
}
