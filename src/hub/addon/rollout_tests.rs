//! Config rollouts decided from objects; no cluster.
use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::api::addon::ADDON_TEMPLATES;

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
