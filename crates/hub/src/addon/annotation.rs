//! Add-on annotations of a ManagedCluster carried over to its add-ons, as upstream's
//! addon-annotation controller (addon-manager) does: every annotation whose key starts with
//! [`PREFIX`] (`addon.open-cluster-management.io`, e.g. `…/hosting-cluster-name`) is set on each
//! ManagedClusterAddOn of the cluster whose add-on is installed by an install strategy
//! (`Placements`, not `Manual`), and one the cluster no longer has is removed from them. Hosted
//! add-ons read where their agent runs from these annotations.
//!
//! As upstream, only a change of the cluster's add-on annotations wakes it: not a cluster first
//! seen (the install controller copies them when it creates an add-on,
//! [`cluster_annotations`]), not an add-on changing.
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use ocm_api::addon::{ClusterManagementAddOn, InstallStrategyType, ManagedClusterAddOn};
use ocm_api::cluster::ManagedCluster;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on annotation controller";
/// The key prefix of the annotations carried over (upstream's add-on API group name, no slash).
pub const PREFIX: &str = "addon.open-cluster-management.io";
/// How soon an add-on that changed while being written is written again.
const RETRY: Duration = Duration::from_secs(1);

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the hub.
    #[error("updating the annotations of add-on {cluster}/{addon}: {source}")]
    Kube {
        /// The add-on's cluster.
        cluster: String,
        /// The add-on.
        addon: String,
        /// What the hub said.
        #[source]
        source: kube::Error,
    },
}

impl ocm_runtime::controller::Failure for Error {}

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

struct Context {
    client: Client,
    addons: Store<ManagedClusterAddOn>,
    cmas: Store<ClusterManagementAddOn>,
}

/// The controller over `informers`' clusters (deleted ones too), add-ons and
/// ClusterManagementAddOns, running until `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    gate: ocm_runtime::controller::Gate,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let clusters = informers.store::<ManagedCluster>();
    // Woken by a change of a cluster's add-on annotations, as upstream's update handler compares
    // the old cluster with the new.
    let events = informers.changes_of(cluster_annotations);
    let (addons, addon_events) = informers.feed::<ManagedClusterAddOn>();
    let cmas = informers.store::<ClusterManagementAddOn>();
    let ctx = Arc::new(Context {
        client: hub,
        addons: addons.clone(),
        cmas: cmas.clone(),
    });
    // Also an add-on's cluster when the add-on is first seen (a deviation from upstream, which
    // wakes on cluster changes only): one created from a cluster store that had not yet seen the
    // cluster's new annotations would otherwise keep the old ones until the next change. Not on
    // every change of an add-on: upstream strips prefixed annotations the cluster lacks only when
    // the cluster changes, and so does this.
    let mut known = std::collections::HashSet::new();
    let created = addon_events.filter(move |a| {
        std::future::ready(a.metadata.uid.clone().is_some_and(|uid| known.insert(uid)))
    });
    let controller = Controller::for_shared_stream(events, clusters.clone())
        .watches_shared_stream(created, |a| a.namespace().map(|ns| ObjectRef::new(&ns)));
    // Decide only from complete stores.
    let run = Runner::new(CONTROLLER, controller)
        .gated(gate)
        .after(&clusters)
        .after(&addons)
        .after(&cmas)
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

async fn reconcile(cluster: Arc<ManagedCluster>, ctx: Arc<Context>) -> Result<Action, Error> {
    let name = cluster.name_any();
    let addons: Vec<Arc<ManagedClusterAddOn>> = ctx
        .addons
        .state()
        .into_iter()
        .filter(|a| a.namespace().as_deref() == Some(name.as_str()))
        .collect();
    let patches = decide(&cluster, &addons, |addon| {
        ctx.cmas.get(&ObjectRef::new(addon))
    });
    let api = Api::<ManagedClusterAddOn>::namespaced(ctx.client.clone(), &name);
    let mut again = false;
    for (addon, annotations) in patches {
        let version = addons
            .iter()
            .find(|a| a.name_any() == addon)
            .and_then(|a| a.metadata.resource_version.clone());
        // Guarded by the version read: the removals were decided from it. An add-on's change
        // does not wake this controller, so a conflict is retried here.
        let body = json!({"metadata": {"resourceVersion": version, "annotations": annotations}});
        match api
            .patch(&addon, &PatchParams::default(), &Patch::Merge(body))
            .await
        {
            Ok(_) => tracing::info!(cluster = %name, %addon, "add-on annotations synced"),
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(kube::Error::Api(e)) if e.code == 409 => again = true,
            Err(source) => {
                return Err(Error::Kube {
                    cluster: name,
                    addon,
                    source,
                });
            }
        }
    }
    Ok(if again {
        Action::requeue(RETRY)
    } else {
        Action::await_change()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
