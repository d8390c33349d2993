//! `clusteradm install hub-addon` / `uninstall hub-addon` against a real API server (without a
//! node the controllers' pods do not run here: `scripts/addon-e2e governance-policy-framework`
//! and `scripts/addon-e2e application-manager` run them and deliver a policy and an
//! application): `--dry-run` applies nothing, bad names and a missing namespace are refused
//! saying why, every object is applied and a second run changes nothing; uninstall is refused
//! while a cluster has one of the add-ons, then removes the controllers and keeps the CRDs, and a
//! second run says there is nothing to remove. Both add-ons at once share their one common CRD,
//! and each uninstalls without the other.
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
use predicates::prelude::*;

use crate::common;
use clusteradm::api::addon::{
    ClusterManagementAddOn, ManagedClusterAddOn, ManagedClusterAddOnSpec,
};

const POLICY_CRDS: [&str; 5] = [
    "placementbindings.policy.open-cluster-management.io",
    "policies.policy.open-cluster-management.io",
    "policyautomations.policy.open-cluster-management.io",
    "policysets.policy.open-cluster-management.io",
    "placementrules.apps.open-cluster-management.io",
];

fn hub_addon(verb: &str, namespace: &str) -> assert_cmd::Command {
    hub_addons(verb, "governance-policy-framework", namespace)
}

fn hub_addons(verb: &str, names: &str, namespace: &str) -> assert_cmd::Command {
    let mut cmd = common::clusteradm();
    cmd.args([
        verb,
        "hub-addon",
        "--names",
        names,
        "--namespace",
        namespace,
    ])
    .arg("--kubeconfig")
    .arg(common::env().hub);
    cmd
}

#[tokio::test]
async fn install_hub_addon_applies_the_policy_framework_and_uninstall_keeps_only_its_crds() {
    let _one_at_a_time = crate::serial().await;
    crate::join::hub(false).await;
    let hub = common::hub().await;
    let namespace = common::unique("policy");
    let deployments: Api<Deployment> = Api::namespaced(hub.clone(), &namespace);
    let addons: Api<ClusterManagementAddOn> = Api::all(hub.clone());
    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    let namespaces: Api<Namespace> = Api::all(hub.clone());

    nothing_applied_by_dry_run_or_refusals(&namespace, &namespaces).await;
    hub_addon("install", &namespace)
        .arg("--create-namespace")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "governance-policy-framework installed",
        ));
    for name in CONTROLLERS {
        assert!(deployments.get_opt(name).await.unwrap().is_some(), "{name}");
    }
    for name in ["governance-policy-framework", "config-policy-controller"] {
        assert!(addons.get_opt(name).await.unwrap().is_some(), "{name}");
    }
    hub_addon("install", &namespace)
        .arg("--create-namespace")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "already installed: nothing changed",
        ));

    let cluster = uninstall_refused_while_enabled(&hub, &namespace, &namespaces).await;
    assert!(deployments.get_opt(CONTROLLERS[0]).await.unwrap().is_some());

    hub_addon("uninstall", &namespace)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "governance-policy-framework uninstalled",
        ));
    for name in CONTROLLERS {
        assert!(
            deployments.get_opt(name).await.unwrap().is_none(),
            "{name} stayed"
        );
    }
    assert!(
        addons
            .get_opt("governance-policy-framework")
            .await
            .unwrap()
            .is_none()
    );
    let roles: Api<ClusterRole> = Api::all(hub.clone());
    assert!(
        roles
            .get_opt("policy-addon-ctrl-manager-role")
            .await
            .unwrap()
            .is_none()
    );
    for crd in POLICY_CRDS {
        assert!(crds.get_opt(crd).await.unwrap().is_some(), "{crd} went");
    }
    hub_addon("uninstall", &namespace)
        .assert()
        .success()
        .stderr(predicate::str::contains("nothing to remove"));

    remove_crds(&crds).await;
    for name in [namespace.as_str(), cluster.as_str()] {
        let _ = namespaces.delete(name, &DeleteParams::default()).await;
    }
}

const APPLICATION_CONTROLLERS: [&str; 4] = [
    "multicluster-operators-subscription",
    "multicluster-operators-channel",
    "multicluster-operators-placementrule",
    "multicluster-operators-appsub-summary",
];

#[tokio::test]
async fn both_hub_addons_at_once_share_their_crd_and_each_uninstalls_alone() {
    let _one_at_a_time = crate::serial().await;
    crate::join::hub(false).await;
    let hub = common::hub().await;
    let namespace = common::unique("apps");
    let both = "governance-policy-framework,application-manager";
    let deployments: Api<Deployment> = Api::namespaced(hub.clone(), &namespace);
    let roles: Api<ClusterRole> = Api::all(hub.clone());
    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    let namespaces: Api<Namespace> = Api::all(hub.clone());

    hub_addons("install", both, &namespace)
        .arg("--create-namespace")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "governance-policy-framework, application-manager installed",
        ))
        .stderr(predicate::str::contains(
            "--names config-policy-controller,governance-policy-framework,application-manager",
        ));
    for name in CONTROLLERS.iter().chain(&APPLICATION_CONTROLLERS) {
        assert!(deployments.get_opt(name).await.unwrap().is_some(), "{name}");
    }
    // Each application controller has a role of its own, with no wildcard.
    for name in APPLICATION_CONTROLLERS {
        let role = roles.get(name).await.unwrap();
        let text = serde_json::to_string(&role.rules).unwrap();
        assert!(!text.contains('*'), "{name}: {text}");
        let deployment = deployments.get(name).await.unwrap();
        let account = deployment
            .spec
            .unwrap()
            .template
            .spec
            .unwrap()
            .service_account_name;
        assert_eq!(account.as_deref(), Some(name));
    }
    hub_addons("install", both, &namespace)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "already installed: nothing changed",
        ));

    let cluster = refused_for_application_manager_alone(&hub, &namespace, both).await;
    hub_addons("uninstall", "application-manager", &namespace)
        .assert()
        .success()
        .stderr(predicate::str::contains("application-manager uninstalled"));
    for name in APPLICATION_CONTROLLERS {
        assert!(
            deployments.get_opt(name).await.unwrap().is_none(),
            "{name} stayed"
        );
        assert!(
            roles.get_opt(name).await.unwrap().is_none(),
            "role {name} stayed"
        );
    }
    let webhooks: Api<k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration> =
        Api::all(hub.clone());
    assert!(
        webhooks
            .get_opt("ocm-mutating-webhook")
            .await
            .unwrap()
            .is_none()
    );
    for crd in [
        "subscriptions.apps.open-cluster-management.io",
        "placementrules.apps.open-cluster-management.io",
        "policies.policy.open-cluster-management.io",
    ] {
        assert!(crds.get_opt(crd).await.unwrap().is_some(), "{crd} went");
    }
    hub_addons("uninstall", both, &namespace)
        .assert()
        .success()
        .stderr(predicate::str::contains("nothing to remove"));
    remove_crds(&crds).await;
    for name in [namespace.as_str(), cluster.as_str()] {
        let _ = namespaces.delete(name, &DeleteParams::default()).await;
    }
}

/// With application-manager enabled on a cluster, uninstalling both is refused and removes
/// nothing; the policy framework uninstalls alone. The add-on is then disabled. Returns the
/// cluster's namespace.
async fn refused_for_application_manager_alone(
    hub: &kube::Client,
    namespace: &str,
    both: &str,
) -> String {
    let deployments: Api<Deployment> = Api::namespaced(hub.clone(), namespace);
    let namespaces: Api<Namespace> = Api::all(hub.clone());
    // application-manager enabled on a cluster: its uninstall is refused, the policy framework's
    // is not.
    let (cluster, enabled) =
        enabled_on_a_new_cluster(hub, &namespaces, "apps-cluster", "application-manager").await;
    hub_addons("uninstall", both, namespace)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "application-manager is still enabled on {cluster}"
        )));
    assert!(
        deployments.get_opt(CONTROLLERS[0]).await.unwrap().is_some(),
        "nothing may go"
    );
    hub_addon("uninstall", namespace).assert().success();
    for name in CONTROLLERS {
        assert!(
            deployments.get_opt(name).await.unwrap().is_none(),
            "{name} stayed"
        );
    }
    for name in APPLICATION_CONTROLLERS {
        assert!(
            deployments.get_opt(name).await.unwrap().is_some(),
            "{name} went"
        );
    }
    disabled(&enabled, "application-manager").await;
    cluster
}

const CONTROLLERS: [&str; 2] = [
    "governance-policy-propagator",
    "governance-policy-addon-controller",
];

/// `--dry-run`, a Helm-chart add-on and a missing namespace: nothing applied, each saying why.
async fn nothing_applied_by_dry_run_or_refusals(namespace: &str, namespaces: &Api<Namespace>) {
    hub_addon("install", namespace)
        .args(["--create-namespace", "--dry-run"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "name: governance-policy-propagator",
        ))
        .stdout(predicate::str::contains(
            "quay.io/open-cluster-management/governance-policy-addon-controller:v0.18.0",
        ));
    assert!(
        namespaces.get_opt(namespace).await.unwrap().is_none(),
        "--dry-run made the namespace"
    );
    common::clusteradm()
        .args(["install", "hub-addon", "--names", "argocd", "--kubeconfig"])
        .arg(common::env().hub)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("helm repo add"));
    hub_addon("install", namespace)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "the namespace {namespace} does not exist"
        )));
}

/// With `config-policy-controller` enabled on a cluster, uninstall removes nothing; the add-on is
/// then disabled. Returns the cluster's namespace.
async fn uninstall_refused_while_enabled(
    hub: &kube::Client,
    namespace: &str,
    namespaces: &Api<Namespace>,
) -> String {
    let (cluster, enabled) = enabled_on_a_new_cluster(
        hub,
        namespaces,
        "policy-cluster",
        "config-policy-controller",
    )
    .await;
    hub_addon("uninstall", namespace)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "config-policy-controller is still enabled on {cluster}"
        )));
    disabled(&enabled, "config-policy-controller").await;
    cluster
}

/// A new cluster namespace (`prefix`, made unique) with add-on `addon` enabled in it: its name
/// and its ManagedClusterAddOns.
async fn enabled_on_a_new_cluster(
    hub: &kube::Client,
    namespaces: &Api<Namespace>,
    prefix: &str,
    addon: &str,
) -> (String, Api<ManagedClusterAddOn>) {
    let cluster = common::unique(prefix);
    let cluster_namespace: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": cluster}})).unwrap();
    namespaces
        .create(&PostParams::default(), &cluster_namespace)
        .await
        .unwrap();
    let enabled: Api<ManagedClusterAddOn> = Api::namespaced(hub.clone(), &cluster);
    enabled
        .create(
            &PostParams::default(),
            &ManagedClusterAddOn::new(addon, ManagedClusterAddOnSpec::default()),
        )
        .await
        .unwrap();
    (cluster, enabled)
}

/// Add-on `addon` disabled: its ManagedClusterAddOn deleted and gone.
async fn disabled(enabled: &Api<ManagedClusterAddOn>, addon: &str) {
    enabled
        .delete(addon, &DeleteParams::default())
        .await
        .unwrap();
    common::eventually("the add-on gone", Duration::from_secs(30), || async {
        enabled
            .get_opt(addon)
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
}

/// The CRDs uninstall keeps, removed once a test is done with them (`clean`'s test, which may run
/// next, finds no OCM CRD but the hub's), waiting until they are gone, so that the next install
/// does not meet one being deleted.
async fn remove_crds(crds: &Api<CustomResourceDefinition>) {
    let all = POLICY_CRDS.iter().chain(&[
        "channels.apps.open-cluster-management.io",
        "helmreleases.apps.open-cluster-management.io",
        "subscriptions.apps.open-cluster-management.io",
        "subscriptionreports.apps.open-cluster-management.io",
        "subscriptionstatuses.apps.open-cluster-management.io",
    ]);
    for crd in all.clone() {
        let _ = crds.delete(crd, &DeleteParams::default()).await;
    }
    // The API server's finalizer removes each CRD in turn; on CI's loaded plane, with ten of
    // them queued at once, one took over a minute.
    for crd in all {
        common::eventually_seen(crd, Duration::from_secs(180), || async {
            match crds.get_opt(crd).await.unwrap() {
                None => Ok(()),
                Some(left) => Err(terminating(&left)),
            }
        })
        .await;
    }
}

/// What a CRD being deleted shows: its Terminating condition (why it is not gone yet).
fn terminating(crd: &CustomResourceDefinition) -> String {
    let condition = crd
        .status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .find(|c| c.type_ == "Terminating");
    match condition {
        Some(c) => format!(
            ": Terminating={} {}: {}",
            c.status,
            c.reason.as_deref().unwrap_or_default(),
            c.message.as_deref().unwrap_or_default()
        ),
        None => format!(
            ": not yet Terminating (deletionTimestamp {:?})",
            crd.metadata.deletion_timestamp
        ),
    }
}
