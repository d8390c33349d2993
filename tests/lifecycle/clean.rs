//! `clusteradm clean`: confirmation, and a hub left with no OCM object.
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use predicates::prelude::*;

use crate::common;

#[test]
fn clean_without_a_terminal_proceeds_as_upstreams_and_says_so() {
    let _one_at_a_time = crate::serial_blocking();
    let run = |args: &[&str]| {
        let mut cmd = common::clusteradm();
        cmd.args(args).arg("--kubeconfig").arg(common::env().hub);
        cmd.assert().success()
    };
    run(&["init"]);
    run(&["clean", "--timeout", "120"])
        .stderr(predicate::str::contains(
            "no terminal to confirm on: proceeding",
        ))
        .stderr(predicate::str::contains("the hub is clean"));
    // Leave the hub initialised for the tests that follow.
    run(&["init"]);
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // one scenario: set up leftovers, clean, check every kind is gone
async fn clean_leaves_no_ocm_object_behind_and_is_idempotent() {
    let _one_at_a_time = crate::serial().await;
    let _hub = common::HUB_SINGLETON.lock().await;
    let hub = common::hub().await;
    common::clusteradm()
        .args(["init", "--use-bootstrap-token", "--kubeconfig"])
        .arg(common::env().hub)
        .assert()
        .success();
    common::clusteradm()
        .args(["init", "--kubeconfig"])
        .arg(common::env().hub)
        .assert()
        .success();

    // A registered cluster (with the namespace the hub controller made for it, labelled as the
    // cluster's) and a work whose controllers are gone: their finalizers would hold the CRDs
    // forever unless clean releases them.
    common::install_crds(&hub, &clusteradm::api::hub_crds(), Duration::from_secs(30)).await;
    let cluster = common::unique("it-clean");
    let leftovers = clusteradm::apply::parse_objects(
        &format!(
            "apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata:\n  name: {cluster}\n  \
             finalizers: [cluster.open-cluster-management.io/api-resource-cleanup]\nspec:\n  hubAcceptsClient: true\n---\n\
             apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {cluster}\n  labels: {{open-cluster-management.io/cluster-name: {cluster}}}\n---\n\
             apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata:\n  name: w\n  namespace: {cluster}\n  \
             finalizers: [cluster.open-cluster-management.io/manifest-work-cleanup]\nspec:\n  workload:\n    manifests:\n    - {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c, namespace: default}}}}\n"
        ),
        "leftovers",
    )
    .unwrap();
    clusteradm::apply::Applier::new(hub.clone(), Duration::from_secs(30))
        .apply(leftovers)
        .await
        .unwrap();

    // What an in-process hub adds in place of the webhooks: clean must remove it too.
    let ssa = kube::api::PatchParams::apply("clusteradm").force();
    for p in clusteradm::operator::cluster_manager::desired::admission::policies() {
        Api::<k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy>::all(
            hub.clone(),
        )
        .patch(
            p.metadata.name.as_deref().unwrap(),
            &ssa,
            &kube::api::Patch::Apply(&p),
        )
        .await
        .unwrap();
    }

    // And what an in-process hub that crashed leaves: its admission webhook configurations,
    // naming a server that is gone, which refuse every ManagedCluster and ManifestWork write
    // (releasing their finalizers included) until clean removes them.
    {
        use clusteradm::operator::cluster_manager::desired::webhook::{self, Endpoint};
        let gone = Endpoint::Url("https://127.0.0.1:1");
        for c in webhook::validating(gone, b"") {
            Api::<k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration>::all(hub.clone())
                .patch(c.metadata.name.as_deref().unwrap(), &ssa, &kube::api::Patch::Apply(&c))
                .await
                .unwrap();
        }
        for c in webhook::mutating(gone, b"") {
            Api::<k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration>::all(
                hub.clone(),
            )
            .patch(
                c.metadata.name.as_deref().unwrap(),
                &ssa,
                &kube::api::Patch::Apply(&c),
            )
            .await
            .unwrap();
        }
    }

    // No operator runs (no pods here): clean must do the operator's cleanup itself, within the timeout.
    let started = std::time::Instant::now();
    common::clusteradm()
        .args(["clean", "-y", "--timeout", "120", "--kubeconfig"])
        .arg(common::env().hub)
        .assert()
        .success()
        .stderr(predicate::str::contains("the hub is clean"));
    assert!(started.elapsed() < Duration::from_secs(120));

    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    let left: Vec<String> = crds
        .list(&kube::api::ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .filter(|n| n.ends_with(".open-cluster-management.io"))
        .collect();
    assert!(left.is_empty(), "OCM CRDs left behind: {left:?}");
    let namespaces: Api<Namespace> = Api::all(hub.clone());
    for ns in [
        "open-cluster-management",
        "open-cluster-management-hub",
        cluster.as_str(),
    ] {
        assert!(
            namespaces.get_opt(ns).await.unwrap().is_none(),
            "namespace {ns} left behind"
        );
    }
    let configs: Api<k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration> =
        Api::all(hub.clone());
    for name in clusteradm::operator::cluster_manager::desired::webhook::VALIDATORS {
        assert!(
            configs.get_opt(name).await.unwrap().is_none(),
            "ValidatingWebhookConfiguration {name} left behind"
        );
    }
    let policies: Api<k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy> =
        Api::all(hub.clone());
    for p in clusteradm::operator::cluster_manager::desired::admission::policies() {
        let name = p.metadata.name.unwrap();
        assert!(
            policies.get_opt(&name).await.unwrap().is_none(),
            "ValidatingAdmissionPolicy {name} left behind"
        );
    }
    let roles: Api<ClusterRole> = Api::all(hub.clone());
    for name in ["cluster-manager", "open-cluster-management:bootstrap"] {
        assert!(
            roles.get_opt(name).await.unwrap().is_none(),
            "ClusterRole {name} left behind"
        );
    }
    let bindings: Api<ClusterRoleBinding> = Api::all(hub.clone());
    for name in [
        "cluster-manager",
        "open-cluster-management:bootstrap:agent-registration",
        "open-cluster-management:bootstrap:managedcluster",
    ] {
        assert!(
            bindings.get_opt(name).await.unwrap().is_none(),
            "ClusterRoleBinding {name} left behind"
        );
    }
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(hub.clone(), "kube-system");
    assert!(
        secrets
            .get_opt("bootstrap-token-ocmhub")
            .await
            .unwrap()
            .is_none(),
        "bootstrap token left behind"
    );

    common::clusteradm()
        .args(["clean", "-y", "--kubeconfig"])
        .arg(common::env().hub)
        .assert()
        .success()
        .stderr(predicate::str::contains("nothing to clean"));

    // Leave the hub initialised for the tests that follow.
    common::clusteradm()
        .args(["init", "--kubeconfig"])
        .arg(common::env().hub)
        .assert()
        .success();
}
