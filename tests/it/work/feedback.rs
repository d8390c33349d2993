//! Status feedback: the agent reads the values a work's `manifestConfigs` ask for from the
//! objects on the managed cluster and reports them, refreshed while the objects change, with a
//! `StatusFeedbackSynced` condition that names a rule it cannot follow.
use std::time::Duration;

use clusteradm::api::conditions;
use clusteradm::api::work::{
    FeedbackRule, FeedbackType, FieldValue, JsonPath, ManifestConfigOption, ManifestWork,
    ManifestWorkSpec, ManifestsTemplate, ResourceIdentifier,
};
use serde_json::json;

use super::{TestCluster, wait_work};
use crate::common;

/// The value `name` the agent reported for manifest `ordinal`.
fn value(work: &ManifestWork, ordinal: usize, name: &str) -> Option<FieldValue> {
    let manifest = work
        .status
        .as_ref()?
        .resource_status
        .as_ref()?
        .manifests
        .get(ordinal)?;
    manifest
        .status_feedback
        .as_ref()?
        .values
        .iter()
        .find(|v| v.name == name)
        .map(|v| v.field_value.clone())
}

fn config(
    group: &str,
    resource: &str,
    ns: &str,
    name: &str,
    rule: FeedbackRule,
) -> ManifestConfigOption {
    ManifestConfigOption {
        resource_identifier: ResourceIdentifier {
            group: Some(group.into()),
            resource: resource.into(),
            name: name.into(),
            namespace: Some(ns.into()),
        },
        feedback_rules: vec![rule],
        ..ManifestConfigOption::default()
    }
}

fn paths(paths: &[(&str, &str)]) -> FeedbackRule {
    FeedbackRule {
        type_: FeedbackType::JsonPaths,
        json_paths: paths
            .iter()
            .map(|(name, path)| JsonPath {
                name: (*name).into(),
                version: None,
                path: (*path).into(),
            })
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feedback_reports_values_keeps_them_fresh_and_names_a_bad_path() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-feedback").await;
    let ns = c.managed_namespace().await;
    let _agent = c.agent(Duration::from_secs(60));
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.invalid/web:1"}]}}}});
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": ns}, "data": {"color": "blue"}});
    let name = common::unique("w");
    c.create_work(
        &name,
        ManifestWorkSpec {
            workload: ManifestsTemplate {
                manifests: vec![deployment, config_map],
            },
            manifest_configs: vec![
                config(
                    "apps",
                    "deployments",
                    &ns,
                    "web",
                    FeedbackRule {
                        type_: FeedbackType::WellKnownStatus,
                        json_paths: Vec::new(),
                    },
                ),
                config(
                    "",
                    "configmaps",
                    &ns,
                    "settings",
                    paths(&[("color", ".data.color"), ("broken", ".data[?(")]),
                ),
            ],
            ..Default::default()
        },
    )
    .await;

    // The Deployment's status is written by kube-controller-manager after the agent applied it:
    // its replica count arrives on a later read, not in the apply's answer.
    let w = wait_work(&c.works(), &name, "Replicas and color fed back", |w| {
        value(w, 0, "Replicas").and_then(|v| v.integer) == Some(1)
            && value(w, 1, "color").and_then(|v| v.string).as_deref() == Some("blue")
    })
    .await;
    let manifests = w.status.clone().unwrap().resource_status.unwrap().manifests;
    let synced = |i: usize| {
        conditions::find(&manifests[i].conditions, "StatusFeedbackSynced")
            .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
            .unwrap()
    };
    assert_eq!(
        synced(0),
        ("True".into(), "StatusFeedbackSynced".into(), String::new())
    );
    let (status, reason, message) = synced(1);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "StatusFeedbackSyncFailed")
    );
    assert!(
        message.contains("failed to parse json path .data[?( of broken"),
        "{message}"
    );
    assert!(
        value(&w, 1, "broken").is_none(),
        "a path that does not parse reports no value"
    );
}

/// Upstream's `RawFeedbackJsonString` gate: an agent with it reports an object as its JSON text;
/// one without refuses it in `StatusFeedbackSynced`, as upstream's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_json_feedback_follows_the_gate() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-rawjson").await;
    let ns = c.managed_namespace().await;
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": ns}, "data": {"color": "blue"}});
    let spec = ManifestWorkSpec {
        workload: ManifestsTemplate {
            manifests: vec![config_map],
        },
        manifest_configs: vec![config(
            "",
            "configmaps",
            &ns,
            "settings",
            paths(&[("data", ".data")]),
        )],
        ..Default::default()
    };
    let name = common::unique("w");
    {
        let _plain = c.agent(Duration::from_secs(60));
        c.create_work(&name, spec).await;
        let w = wait_work(&c.works(), &name, "the object refused", |w| {
            let Some(manifest) = w
                .status
                .as_ref()
                .and_then(|s| s.resource_status.as_ref())
                .and_then(|r| r.manifests.first())
            else {
                return false;
            };
            conditions::find(&manifest.conditions, "StatusFeedbackSynced")
                .is_some_and(|c| c.status == "False")
        })
        .await;
        assert!(value(&w, 0, "data").is_none());
    }
    let _raw = super::Agent::start_with(c.hub.clone(), c.managed.clone(), &c.name, |opts| {
        opts.feedback.raw_json = true;
    });
    let w = wait_work(&c.works(), &name, "the object fed back as JSON", |w| {
        value(w, 0, "data").and_then(|v| v.json_raw).as_deref() == Some(r#"{"color":"blue"}"#)
    })
    .await;
    assert_eq!(
        value(&w, 0, "data").unwrap().type_,
        clusteradm::api::work::ValueType::JsonRaw
    );
}

/// The Klusterlet's `workConfiguration.statusSyncInterval` (here 1 s, where the default is 10 s):
/// a value another controller changes on the managed cluster is fed back that often.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feedback_follows_the_status_sync_interval() {
    use clusteradm::api::work::{UpdateStrategy, UpdateStrategyType};
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-sync").await;
    let ns = c.managed_namespace().await;
    let _agent = super::Agent::start_with(c.hub.clone(), c.managed.clone(), &c.name, |opts| {
        opts.resync = Duration::from_secs(60);
        opts.settings.status_sync = Duration::from_secs(1);
    });
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "probe", "namespace": ns}, "data": {"k": "v"}});
    let name = common::unique("w");
    // Server-side apply: the agent leaves the annotation another manager writes alone.
    let mut watched = config(
        "",
        "configmaps",
        &ns,
        "probe",
        paths(&[("seen", ".metadata.annotations.seen")]),
    );
    watched.update_strategy = Some(UpdateStrategy {
        type_: UpdateStrategyType::ServerSideApply,
        ..UpdateStrategy::default()
    });
    c.create_work(
        &name,
        ManifestWorkSpec {
            workload: ManifestsTemplate {
                manifests: vec![config_map],
            },
            manifest_configs: vec![watched],
            ..Default::default()
        },
    )
    .await;
    wait_work(&c.works(), &name, "applied", super::applied_and_available).await;
    let config_maps: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(c.managed.clone(), &ns);
    for round in ["first", "second"] {
        config_maps
            .patch(
                "probe",
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(json!({"metadata": {"annotations": {"seen": round}}})),
            )
            .await
            .unwrap();
        let changed = std::time::Instant::now();
        wait_work(&c.works(), &name, "the annotation fed back", move |w| {
            value(w, 0, "seen").and_then(|v| v.string).as_deref() == Some(round)
        })
        .await;
        assert!(
            changed.elapsed() < Duration::from_secs(5),
            "{round}: fed back after {:?} with a 1 s status sync",
            changed.elapsed()
        );
    }
}

/// `feedbackScrapeType: Watch`, with the resync and the status sync at ten minutes: once both works
/// are applied and steady, a value another manager writes into the watched object is fed back at
/// once (the agent watches the object and reads it again on its change), and the same write into
/// the polled object is not, which waits for the next status sync — as upstream's. The values are
/// written only after both works reported status, so no first pass or retry of a work can read
/// them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watched_feedback_arrives_without_waiting_for_the_status_sync() {
    use clusteradm::api::work::{FeedbackScrapeType, UpdateStrategy, UpdateStrategyType};
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-watch").await;
    let ns = c.managed_namespace().await;
    let _agent = super::Agent::start_with(c.hub.clone(), c.managed.clone(), &c.name, |opts| {
        opts.resync = Duration::from_secs(600);
        opts.settings.status_sync = Duration::from_secs(600);
    });
    // Server-side apply: a wake re-applies, and leaves the annotation another manager owns alone.
    let spec = |object: &str, scrape: FeedbackScrapeType| ManifestWorkSpec {
        workload: ManifestsTemplate {
            manifests: vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": object, "namespace": ns}, "data": {"k": "v"}})],
        },
        manifest_configs: vec![ManifestConfigOption {
            feedback_scrape_type: Some(scrape),
            update_strategy: Some(UpdateStrategy {
                type_: UpdateStrategyType::ServerSideApply,
                ..UpdateStrategy::default()
            }),
            ..config(
                "",
                "configmaps",
                &ns,
                object,
                paths(&[("seen", ".metadata.annotations.seen")]),
            )
        }],
        ..Default::default()
    };
    let (watched, polled) = (common::unique("watched"), common::unique("polled"));
    c.create_work(&polled, spec("polled", FeedbackScrapeType::Poll))
        .await;
    c.create_work(&watched, spec("watched", FeedbackScrapeType::Watch))
        .await;
    for work in [&polled, &watched] {
        wait_work(&c.works(), work, "applied", super::applied_and_available).await;
    }
    let config_maps: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(c.managed.clone(), &ns);
    for object in ["polled", "watched"] {
        config_maps
            .patch(
                object,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(json!({"metadata": {"annotations": {"seen": "yes"}}})),
            )
            .await
            .unwrap();
    }
    let seen = |w: &ManifestWork| value(w, 0, "seen").and_then(|v| v.string);
    let changed = std::time::Instant::now();
    wait_work(
        &c.works(),
        &watched,
        "the watched annotation fed back",
        move |w| seen(w).as_deref() == Some("yes"),
    )
    .await;
    assert!(
        changed.elapsed() < Duration::from_secs(10),
        "fed back after {:?} with a 600 s status sync",
        changed.elapsed()
    );
    let works = c.works();
    common::never(
        "the polled work's annotation",
        Duration::from_secs(10),
        || {
            let works = works.clone();
            let polled = polled.clone();
            async move { works.get(&polled).await.ok().and_then(|w| seen(&w)) }
        },
    )
    .await;
}
