//! `feedbackScrapeType: Watch`: each object a work asks to be watched gets a watch of its own on
//! the managed cluster (by its name), and any change of it wakes the work, so its feedback and
//! rule conditions are read again at once rather than at the next status sync — as upstream's
//! agent registers an informer for such an object. A work's watches follow its last pass: those
//! no longer asked for stop, and all stop when the work is finalized or the agent stops.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::{Stream, StreamExt as _};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, Event};
use tokio::sync::mpsc;
use tokio_util::task::AbortOnDropHandle;

use super::build;
use super::status::ManifestResult;
use ocm_api::work::{FeedbackScrapeType, ManifestConfigOption, ManifestWork};

/// One watched object: its resource, namespace and name.
#[derive(Debug, Clone)]
pub struct Target {
    resource: ApiResource,
    namespace: Option<String>,
    name: String,
}

impl Target {
    /// What tells targets apart.
    fn key(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.resource.api_version,
            self.resource.plural,
            self.namespace.as_deref().unwrap_or_default(),
            self.name
        )
    }
}

/// The watches of every work, and the sender that wakes a work.
pub struct Watched {
    managed: kube::Client,
    /// The hub namespace of the works (the cluster's), for the references that wake them.
    namespace: String,
    wake: mpsc::UnboundedSender<ObjectRef<ManifestWork>>,
    watches: Mutex<HashMap<String, HashMap<String, AbortOnDropHandle<()>>>>,
}

impl Watched {
    /// Watches on `managed` that wake works of hub namespace `namespace`; the stream yields the
    /// works to reconcile again.
    pub fn new(
        managed: kube::Client,
        namespace: &str,
    ) -> (
        Arc<Self>,
        impl Stream<Item = ObjectRef<ManifestWork>> + Send + 'static,
    ) {
        let (wake, woken) = mpsc::unbounded_channel();
        let watched = Arc::new(Self {
            managed,
            namespace: namespace.to_owned(),
            wake,
            watches: Mutex::default(),
        });
        let woken = futures::stream::unfold(woken, |mut rx| async move {
            rx.recv().await.map(|work| (work, rx))
        });
        (watched, woken)
    }

    /// Watches exactly `targets` for work `work`: new ones start, dropped ones stop.
    pub fn set(&self, work: &str, targets: Vec<Target>) {
        let mut watches = self.watches.lock().expect("not poisoned");
        let mut kept = watches.remove(work).unwrap_or_default();
        let mut next = HashMap::new();
        for target in targets {
            let key = target.key();
            let handle = kept.remove(&key).unwrap_or_else(|| {
                let work_ref = ObjectRef::new(work).within(&self.namespace);
                AbortOnDropHandle::new(tokio::spawn(watch(
                    self.managed.clone(),
                    target,
                    work_ref,
                    self.wake.clone(),
                )))
            });
            next.insert(key, handle);
        }
        // What is left in `kept` is no longer asked for: dropping it stops it.
        if !next.is_empty() {
            watches.insert(work.to_owned(), next);
        }
    }
}

/// The objects of `results` whose config asks for `Watch`, as applied.
#[must_use]
pub fn targets(configs: &[ManifestConfigOption], results: &[ManifestResult]) -> Vec<Target> {
    results
        .iter()
        .filter(|r| r.applied.is_ok())
        .filter(|r| {
            build::config_for(configs, &r.meta)
                .is_some_and(|c| c.feedback_scrape_type == Some(FeedbackScrapeType::Watch))
        })
        .filter_map(|r| {
            let m = &r.meta;
            let gvk = GroupVersionKind::gvk(
                m.group.as_deref().unwrap_or_default(),
                m.version.as_deref()?,
                m.kind.as_deref()?,
            );
            Some(Target {
                resource: ApiResource::from_gvk_with_plural(&gvk, m.resource.as_deref()?),
                namespace: m.namespace.clone().filter(|n| !n.is_empty()),
                name: m.name.clone()?,
            })
        })
        .collect()
}

/// Wakes `work` on every change of `target`, and once when the watch has first listed it: the
/// object may have changed between the apply that started this watch and that listing (a
/// controller writing its status at once), a change no event will report.
async fn watch(
    managed: kube::Client,
    target: Target,
    work: ObjectRef<ManifestWork>,
    wake: mpsc::UnboundedSender<ObjectRef<ManifestWork>>,
) {
    let api: Api<DynamicObject> = match &target.namespace {
        Some(ns) => Api::namespaced_with(managed, ns, &target.resource),
        None => Api::all_with(managed, &target.resource),
    };
    let config = watcher::Config::default().fields(&format!("metadata.name={}", target.name));
    let mut events = watcher::watcher(api, config).default_backoff().boxed();
    let mut listed = false;
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::InitDone) => {
                if !listed && wake.send(work.clone()).is_err() {
                    return;
                }
                listed = true;
            }
            Ok(Event::Apply(_) | Event::Delete(_)) if listed => {
                if wake.send(work.clone()).is_err() {
                    return;
                }
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(object = %target.key(), "watching for feedback: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::{ManifestResourceMeta, ResourceIdentifier};

    fn result(kind: &str, resource: &str, name: &str) -> ManifestResult {
        ManifestResult {
            meta: ManifestResourceMeta {
                ordinal: 0,
                group: Some("apps".into()),
                version: Some("v1".into()),
                kind: Some(kind.into()),
                resource: Some(resource.into()),
                name: Some(name.into()),
                namespace: Some("ns".into()),
            },
            applied: Ok(()),
            available: super::super::status::Availability::Available,
            feedback: None,
        }
    }

    #[test]
    fn only_what_a_config_asks_to_watch_is_watched() {
        let config = |name: &str, scrape| ManifestConfigOption {
            resource_identifier: ResourceIdentifier {
                group: Some("apps".into()),
                resource: "deployments".into(),
                name: name.into(),
                namespace: Some("ns".into()),
            },
            feedback_scrape_type: scrape,
            ..ManifestConfigOption::default()
        };
        let configs = [
            config("watched", Some(FeedbackScrapeType::Watch)),
            config("polled", Some(FeedbackScrapeType::Poll)),
        ];
        let results = [
            result("Deployment", "deployments", "watched"),
            result("Deployment", "deployments", "polled"),
            result("Deployment", "deployments", "other"),
        ];
        let targets = targets(&configs, &results);
        assert_eq!(targets.len(), 1);
        assert_eq!(targets[0].key(), "apps/v1/deployments/ns/watched");
    }
}
