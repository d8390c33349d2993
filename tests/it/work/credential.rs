//! The work agent needs no more than what the hub grants an accepted cluster in its own
//! namespace: it runs with a client certificate (signed through an approved CSR) whose only RBAC
//! is a RoleBinding there, applies a work, and that credential cannot create works or read other
//! clusters' works (real requests, answered 403).
use std::time::Duration;

use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, PostParams};

use super::{Agent, TestCluster, applied_and_available, wait_work};
use crate::common;
use clusteradm::api::work::{ManifestWork, ManifestWorkSpec, ManifestsTemplate};

/// The Role and RoleBinding the hub gives an accepted cluster's work agent, in its namespace.
async fn grant_work_agent_rights(hub: &Client, cluster: &str, group: &str) {
    let allow = |resources: &str, verbs: &[&str]| PolicyRule {
        api_groups: Some(vec!["work.open-cluster-management.io".into()]),
        resources: Some(vec![resources.into()]),
        verbs: verbs.iter().map(|v| (*v).to_string()).collect(),
        ..Default::default()
    };
    let meta = ObjectMeta {
        name: Some("it-work-agent".into()),
        namespace: Some(cluster.into()),
        ..Default::default()
    };
    let role = Role {
        metadata: meta.clone(),
        rules: Some(vec![
            allow(
                "manifestworks",
                &["get", "list", "watch", "update", "patch"],
            ),
            allow("manifestworks/status", &["update", "patch"]),
        ]),
    };
    Api::<Role>::namespaced(hub.clone(), cluster)
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding = RoleBinding {
        metadata: meta,
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Role".into(),
            name: "it-work-agent".into(),
        },
        subjects: Some(vec![Subject {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Group".into(),
            name: group.into(),
            namespace: None,
        }]),
    };
    Api::<RoleBinding>::namespaced(hub.clone(), cluster)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
}

fn forbidden<T: std::fmt::Debug>(result: Result<T, kube::Error>, what: &str) {
    match result {
        Err(kube::Error::Api(s)) if s.code == 403 => {}
        other => panic!("{what}: expected 403 Forbidden, got {other:?}"),
    }
}

// Multi-threaded: the in-process agent must run while the test blocks on the CLI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_works_with_namespace_rights_only_and_they_allow_nothing_else() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-cred").await;
    let group = format!("system:open-cluster-management:{}", c.name);
    grant_work_agent_rights(&c.hub, &c.name, &group).await;
    let agent_hub = common::certificate_client(&c.hub, &format!("{group}:agent"), &group).await;
    let _agent = Agent::start(
        agent_hub.clone(),
        c.managed.clone(),
        &c.name,
        Duration::from_secs(60),
    );

    let ns = c.managed_namespace().await;
    let name = common::unique("w");
    let work = c
        .create_work(
        &name,
        ManifestWorkSpec {
            workload: ManifestsTemplate {
                manifests: vec![
                    serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": ns}}),
                ],
            },
            ..Default::default()
        },
    )
    .await;
    let applied = wait_work(
        &c.works(),
        &name,
        "applied by the restricted agent",
        applied_and_available,
    )
    .await;
    assert!(
        applied
            .metadata
            .finalizers
            .unwrap()
            .iter()
            .any(|f| f.contains("manifest-work-cleanup"))
    );

    let own: Api<ManifestWork> = Api::namespaced(agent_hub.clone(), &c.name);
    own.get(&name).await.expect("the agent reads its own works");
    let mut another = work.clone();
    another.metadata.name = Some(common::unique("w"));
    another.metadata.resource_version = None;
    forbidden(
        own.create(&PostParams::default(), &another).await,
        "creating a work in its own namespace",
    );

    let other = TestCluster::new("it-work-other").await;
    let mut theirs = work.clone();
    theirs.metadata.namespace = Some(other.name.clone());
    other
        .works()
        .create(&PostParams::default(), &theirs)
        .await
        .unwrap();
    let foreign: Api<ManifestWork> = Api::namespaced(agent_hub.clone(), &other.name);
    forbidden(
        foreign.list(&ListParams::default()).await,
        "listing another cluster's works",
    );
    forbidden(foreign.get(&name).await, "reading another cluster's work");
    forbidden(
        Api::<ManifestWork>::all(agent_hub)
            .list(&ListParams::default())
            .await,
        "listing works cluster-wide",
    );
    other
        .works()
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
}
