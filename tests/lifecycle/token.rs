//! `clusteradm delete token`: a join command printed before it stops working, for either kind of
//! credential; running it again says there is nothing left to revoke; `--dry-run` deletes
//! nothing; a cluster that is not a hub is refused; `init` issues a new credential.
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::Api;
use predicates::prelude::*;

use crate::common;
use crate::join::{MANAGED_SINGLETON, assert_nothing_joined, hub, join, reset};

fn delete_token(kubeconfig: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = common::clusteradm();
    cmd.args(["delete", "token", "--kubeconfig"])
        .arg(kubeconfig);
    cmd
}

#[tokio::test]
async fn delete_token_revokes_every_join_command_printed_before() {
    let _one_at_a_time = crate::serial().await;
    let _m = MANAGED_SINGLETON.lock().await;
    let managed = common::managed().await;
    reset(&managed).await;
    let hub_client = common::hub().await;
    let env = common::env();
    // Both kinds of credential: a service-account token, then the bootstrap token.
    let sa_token = hub(false).await;
    let bootstrap_token = hub(true).await;
    let accounts: Api<ServiceAccount> =
        Api::namespaced(hub_client.clone(), "open-cluster-management");
    let secrets: Api<Secret> = Api::namespaced(hub_client.clone(), "kube-system");

    delete_token(&env.managed)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is not an OCM hub"));
    delete_token(&env.hub)
        .arg("--dry-run")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "would delete ServiceAccount open-cluster-management/agent-registration-bootstrap",
        ));
    assert!(
        accounts
            .get_opt("agent-registration-bootstrap")
            .await
            .unwrap()
            .is_some()
    );

    delete_token(&env.hub)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "deleted ClusterRoleBinding open-cluster-management:bootstrap:agent-registration",
        ))
        .stderr(predicate::str::contains(
            "deleted Secret kube-system/bootstrap-token-ocmhub",
        ))
        .stderr(predicate::str::contains("no longer work"));
    assert!(
        accounts
            .get_opt("agent-registration-bootstrap")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        secrets
            .get_opt("bootstrap-token-ocmhub")
            .await
            .unwrap()
            .is_none()
    );
    // Idempotent: nothing left, and it says so.
    delete_token(&env.hub)
        .assert()
        .success()
        .stderr(predicate::str::contains("already revoked"));

    // Neither join command works any more, and nothing was joined.
    join(&sa_token, "it-revoked", &["--ca-cert-hash", &sa_token.hash])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("token invalid or expired"));
    join(&bootstrap_token, "it-revoked", &[])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("token"));
    assert_nothing_joined(&managed).await;

    // `init` issues a new credential, which `get token` prints again.
    hub(false).await;
    common::clusteradm()
        .args(["get", "token", "--kubeconfig"])
        .arg(&env.hub)
        .assert()
        .success()
        .stdout(predicate::str::contains("clusteradm join --hub-token"));
}
