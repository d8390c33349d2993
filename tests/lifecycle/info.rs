//! `get hub-info` and `get klusterlet-info` in upstream's layout: on a hub right after `init`, on
//! a cluster that is not a hub, on a cluster without a klusterlet, and after `join`. (The pod
//! tests check the replicas and images of running components.)
use predicates::prelude::*;

use crate::common;
use crate::join::{MANAGED_SINGLETON, hub, join, reset};

fn info(what: &str, kubeconfig: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = common::clusteradm();
    cmd.args(["get", what, "--kubeconfig"]).arg(kubeconfig);
    cmd
}

#[tokio::test]
async fn hub_and_klusterlet_info_read_as_upstreams() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let env = common::env();
    let hub = hub(false).await;

    info("hub-info", &env.hub)
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "Registration Operator:\n  Controller:\t(",
        ))
        .stdout(predicate::str::contains(
            ") quay.io/open-cluster-management/registration-operator:",
        ))
        .stdout(predicate::str::contains(
            "  CustomResourceDefinition:\n    (installed) clustermanagers.operator.open-cluster-management.io [*v1]\nComponents:\n",
        ));
    info("hub-info", &env.managed)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is not an OCM hub"));
    info("klusterlet-info", &env.managed)
        .assert()
        .success()
        .stdout("No klusterlet detected! Please make sure you're using the correct context!\n");

    join(&hub, "it-info", &["--ca-cert-hash", &hub.hash])
        .assert()
        .success();
    info("klusterlet-info", &env.managed)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Klusterlet Conditions:\n"))
        .stdout(predicate::str::contains(
            "Registration Operator:\n  Controller:\t(",
        ))
        .stdout(predicate::str::contains(
            "    (installed) klusterlets.operator.open-cluster-management.io\nComponents:\n",
        ))
        .stdout(predicate::str::contains("  CustomResourceDefinition:\n"))
        .stdout(predicate::str::contains(
            "appliedmanifestworks.work.open-cluster-management.io",
        ));
    reset(&managed).await;
}
