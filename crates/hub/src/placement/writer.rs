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
use ocm_api::cluster::{
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

/// What this process last wrote to each decision: a watch event showing it is an echo of its
/// own write, which must not schedule the placement again (with `Balance` and no `Steady`, each
/// placement re-deciding on its own echo, seeing the others' new choices, never settles). Told
/// by content, not resourceVersion: under load the echo often arrives before the write returns.
#[derive(Default)]
pub(super) struct Echoes(std::sync::Mutex<std::collections::HashMap<(String, String), Written>>);

/// The labels and clusters of a decision as written; `created` while its creation (no status
/// yet) may still be heard.
struct Written {
    labels: BTreeMap<String, String>,
    clusters: Vec<String>,
    created: bool,
}

fn clusters_of(d: &PlacementDecision) -> Vec<String> {
    d.status
        .iter()
        .flat_map(|s| &s.decisions)
        .map(|c| c.cluster_name.clone())
        .collect()
}

fn key_of(d: &PlacementDecision) -> (String, String) {
    (d.namespace().unwrap_or_default(), d.name_any())
}

impl Echoes {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<(String, String), Written>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes what is about to be written to decision `name` in `ns` (before the request, so
    /// the echo cannot overtake it).
    fn writing(
        &self,
        ns: &str,
        name: &str,
        labels: &BTreeMap<String, String>,
        d: &Decision,
        created: bool,
    ) {
        let mut echoes = self.lock();
        let key = (ns.to_owned(), name.to_owned());
        // A creation not yet heard stays one: its empty-status echo may still come.
        let created = created || echoes.get(&key).is_some_and(|w| w.created);
        echoes.insert(
            key,
            Written {
                labels: labels.clone(),
                clusters: d.clusters.clone(),
                created,
            },
        );
    }

    /// Whether `d` shows what this process wrote.
    pub(super) fn is_echo(&self, d: &PlacementDecision) -> bool {
        let mut echoes = self.lock();
        let Some(written) = echoes.get_mut(&key_of(d)) else {
            return false;
        };
        if d.labels() != &written.labels {
            return false;
        }
        let clusters = clusters_of(d);
        if clusters == written.clusters {
            // Its status is heard: an empty one from now on is somebody else's.
            written.created = false;
            return true;
        }
        written.created && clusters.is_empty()
    }

    /// Forgets a deleted decision.
    pub(super) fn forget(&self, d: &PlacementDecision) {
        self.lock().remove(&key_of(d));
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
            .enumerate()
            .map(|(i, c)| ClusterDecision {
                cluster_name: c.clone(),
                reason: String::new(),
                score: d.scores.get(i).copied(),
            })
            .collect(),
    }
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
        self.echoes
            .writing(&self.ns, &d.name, &labels, d, existing.is_none());
        if existing.is_none() {
            let mut new = PlacementDecision::new(&d.name, PlacementDecisionSpec::default());
            new.metadata.labels = Some(labels);
            new.metadata.owner_references = self.owner.clone().map(|o| vec![o]);
            match self.decisions.create(&PostParams::default(), &new).await {
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                r => {
                    r?;
                }
            }
        } else if existing.is_some_and(|h| h.metadata.labels.as_ref() != Some(&labels)) {
            let patch = json!({"metadata": {"labels": labels}});
            self.decisions
                .patch(&d.name, &PatchParams::default(), &Patch::Merge(patch))
                .await?;
        }
        if existing.and_then(|h| h.status.as_ref()) != Some(&status) {
            let patch = json!({"status": status});
            self.decisions
                .patch_status(&d.name, &PatchParams::default(), &Patch::Merge(patch))
                .await?;
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
