//! A placement scheduled now from what the hub holds, read from the API server rather than from
//! the controller's stores, with why each cluster was or was not selected: what
//! `clusteradm get placements NAME --explain` and the placement debug endpoint ([`super::debug`])
//! answer. Nothing is written.
use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Context as _;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt as _};

use super::schedule::{self, Inputs, Scheduled, Trace};
use ocm_api::cluster::{
    AddOnPlacementScore, ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding,
    PLACEMENT_LABEL, Placement, PlacementDecision,
};

/// Reads what the hub's scheduler reads and schedules `placement` with a trace.
///
/// # Errors
/// What the scheduler reads could not be read.
pub async fn now(client: &Client, placement: &Placement) -> anyhow::Result<(Scheduled, Trace)> {
    let ns = placement.namespace().unwrap_or_default();
    let list = ListParams::default();
    let by_placement = ListParams::default().labels(PLACEMENT_LABEL);
    let (bindings, sets, clusters, decisions, scores) = (
        Api::<ManagedClusterSetBinding>::namespaced(client.clone(), &ns),
        Api::<ManagedClusterSet>::all(client.clone()),
        Api::<ManagedCluster>::all(client.clone()),
        Api::<PlacementDecision>::all(client.clone()),
        Api::<AddOnPlacementScore>::all(client.clone()),
    );
    let (bindings, sets, clusters, decisions, scores) = tokio::try_join!(
        bindings.list(&list),
        sets.list(&list),
        clusters.list(&list),
        decisions.list(&by_placement),
        scores.list(&list),
    )
    .context("reading what the placement is scheduled from")?;
    let bound_sets: Vec<&ManagedClusterSet> = bindings
        .items
        .iter()
        .filter_map(|b| sets.items.iter().find(|s| s.name_any() == b.name_any()))
        .collect();
    let clusters: Vec<Arc<ManagedCluster>> = clusters.items.into_iter().map(Arc::new).collect();
    // What the controller's decision index says, from the decisions as they are.
    let view =
        crate::placement::index::Index::of(&decisions.items).view(&ns, &placement.name_any());
    let scores: HashMap<(String, String), Arc<AddOnPlacementScore>> = scores
        .items
        .into_iter()
        .map(|s| {
            (
                (s.namespace().unwrap_or_default(), s.name_any()),
                Arc::new(s),
            )
        })
        .collect();
    let lookup: schedule::Scores = Arc::new(move |cluster: &str, resource: &str| {
        scores
            .get(&(cluster.to_owned(), resource.to_owned()))
            .cloned()
    });
    Ok(schedule::explain(&Inputs {
        placement,
        bound_sets,
        clusters: &clusters,
        current: &view.current,
        others: &view.others,
        scores: lookup,
        now: k8s_openapi::jiff::Timestamp::now(),
    }))
}
