//! `get credentials` through the managed-serviceaccount add-on, when the cluster has it: a
//! short-lived token, rotated by the add-on, that never passes through a status others can read.
//!
//! - A ManagedServiceAccount `clusteradm-<role>` in the cluster's namespace on the hub asks the
//!   add-on's agent for a ServiceAccount of that name on the managed cluster (in the add-on's
//!   install namespace) and a token of it (`TokenRequest`, valid for `validity`, renewed before it
//!   expires), which the agent writes into the hub Secret of the same name.
//! - The ManifestWork `clusteradm-credentials-<role>` binds ROLE to that ServiceAccount. It
//!   carries no feedback rule: the token is not in its status. It replaces the work of the
//!   add-on-less way ([`super::credentials::work`]), so a never-expiring token made before goes.
//! - The token is read from that Secret, which only who may read Secrets in the cluster's
//!   namespace can read, and printed with its expiry, after which client-go asks again.
use std::time::Duration;

use anyhow::Context as _;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::{Client, ResourceExt as _};
use serde_json::{Value, json};

use crate::api::addon::ManagedClusterAddOn;
use crate::api::work::{ManifestWork, ManifestWorkSpec, ManifestsTemplate};
use crate::error::UserError;

/// The add-on's name, as its chart installs it.
pub const ADDON: &str = "managed-serviceaccount";

/// A token and when it expires (RFC 3339), as the add-on reports it.
pub struct Token {
    /// The bearer token.
    pub token: String,
    /// Its `expirationTimestamp`.
    pub expires: Option<String>,
}

/// The ManagedServiceAccount API (`authentication.open-cluster-management.io/v1beta1`).
#[must_use]
pub fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(
            "authentication.open-cluster-management.io",
            "v1beta1",
            "ManagedServiceAccount",
        ),
        "managedserviceaccounts",
    )
}

/// The namespace the add-on's agent runs in on `cluster`, when the add-on is there and
/// Available; `None` otherwise (the caller takes the add-on-less way).
pub async fn install_namespace(client: &Client, cluster: &str) -> Option<String> {
    let addons: Api<ManagedClusterAddOn> = Api::namespaced(client.clone(), cluster);
    let addon = addons.get_opt(ADDON).await.ok()??;
    let status = addon.status.as_ref()?;
    crate::api::conditions::is_true(&status.conditions, "Available")
        .then(|| addon.install_namespace())
}

/// The name of the ManagedServiceAccount, its ServiceAccount and its hub Secret for `role`.
#[must_use]
pub fn account(role: &str) -> String {
    format!("clusteradm-{role}")
}

/// The ManagedServiceAccount asking for a token valid for `validity`, rotated.
#[must_use]
pub fn managed_service_account(cluster: &str, role: &str, validity: Duration) -> Value {
    json!({
        "apiVersion": "authentication.open-cluster-management.io/v1beta1",
        "kind": "ManagedServiceAccount",
        "metadata": {"name": account(role), "namespace": cluster},
        "spec": {"rotation": {"enabled": true, "validity": format!("{}s", validity.as_secs())}},
    })
}

/// The ManifestWork binding `role` to the add-on's ServiceAccount in `namespace`: no feedback.
#[must_use]
pub fn binding_work(cluster: &str, role: &str, namespace: &str) -> ManifestWork {
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": format!("{}-{role}", super::credentials::PREFIX)},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account(role), "namespace": namespace}],
    });
    let mut work = ManifestWork::new(
        &format!("{}-{role}", super::credentials::PREFIX),
        ManifestWorkSpec {
            workload: ManifestsTemplate {
                manifests: vec![binding],
            },
            ..ManifestWorkSpec::default()
        },
    );
    work.metadata.namespace = Some(cluster.to_owned());
    work
}

/// Asks for the credential and waits up to `timeout` for the add-on's token.
pub async fn credential(
    client: &Client,
    cluster: &str,
    role: &str,
    namespace: &str,
    validity: Duration,
    timeout: Duration,
) -> anyhow::Result<Token> {
    let apply = PatchParams::apply(crate::FIELD_MANAGER).force();
    let name = account(role);
    let accounts: Api<DynamicObject> = Api::namespaced_with(client.clone(), cluster, &resource());
    let wanted: DynamicObject =
        serde_json::from_value(managed_service_account(cluster, role, validity))?;
    accounts
        .patch(&name, &apply, &Patch::Apply(&wanted))
        .await
        .map_err(|e| refused(e, cluster))
        .with_context(|| format!("applying ManagedServiceAccount {cluster}/{name}"))?;
    let work = binding_work(cluster, role, namespace);
    let work_name = work.name_any();
    Api::<ManifestWork>::namespaced(client.clone(), cluster)
        .patch(&work_name, &apply, &Patch::Apply(&work))
        .await
        .map_err(|e| refused(e, cluster))
        .with_context(|| format!("applying ManifestWork {cluster}/{work_name}"))?;
    wait_token(client, &accounts, cluster, &name, timeout).await
}

/// The token in the add-on's hub Secret, once the ManagedServiceAccount reports it.
async fn wait_token(
    client: &Client,
    accounts: &Api<DynamicObject>,
    cluster: &str,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<Token> {
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(client.clone(), cluster);
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let msa = accounts
            .get(name)
            .await
            .context("reading the ManagedServiceAccount")?;
        let reported = msa.data["status"]["tokenSecretRef"]["name"].as_str();
        if let Some(secret) = reported {
            let found = secrets
                .get_opt(secret)
                .await
                .map_err(|e| refused(e, cluster))
                .context("reading the add-on's token Secret")?;
            let token = found
                .as_ref()
                .and_then(|s| crate::runtime::secrets::field(s, "token"));
            if let Some(token) = token {
                let expires = msa.data["status"]["expirationTimestamp"]
                    .as_str()
                    .map(str::to_owned);
                return Ok(Token { token, expires });
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(UserError::new(
                format!("the managed-serviceaccount add-on reported no token for {cluster} within {timeout:?}"),
                format!("check the add-on is Available (`clusteradm get addon {ADDON}`) and the ManagedServiceAccount's conditions (`kubectl get managedserviceaccount {name} -n {cluster} -o yaml`)"),
            )
            .into());
        }
        // The add-on's agent writes the Secret once, then renews it: a watch would add a
        // connection for one value.
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A refusal from the hub, with the rights this way needs.
fn refused(err: kube::Error, cluster: &str) -> anyhow::Error {
    super::credentials::refused(
        err,
        &format!(
            "a credential for {cluster} through managed-serviceaccount needs the rights to apply ManagedServiceAccounts and ManifestWorks and to read Secrets in the hub namespace {cluster}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_account_is_rotated_and_the_work_binds_it_without_feedback() {
        let msa = managed_service_account("c1", "view", Duration::from_secs(3600));
        assert_eq!(msa["metadata"]["name"], "clusteradm-view");
        assert_eq!(
            msa["spec"]["rotation"],
            json!({"enabled": true, "validity": "3600s"})
        );
        let work = binding_work("c1", "view", "addons");
        // The same name as the add-on-less way's work, which it replaces.
        assert_eq!(
            work.metadata.name,
            super::super::credentials::work("c1", "view").metadata.name
        );
        assert!(work.spec.manifest_configs.is_empty(), "no token in status");
        let binding = &work.spec.workload.manifests[0];
        assert_eq!(binding["roleRef"]["name"], "view");
        assert_eq!(
            binding["subjects"][0],
            json!({"kind": "ServiceAccount", "name": "clusteradm-view", "namespace": "addons"})
        );
    }
}
