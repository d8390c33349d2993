//! Observe: what the build and status steps need from the clusters — whether the bootstrap and
//! hub kubeconfig secrets work against the hub (a SelfSubjectReview with each, as upstream's
//! ssar controller does), and in Hosted modes a client for the managed cluster.
use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, PostParams};

use super::managed_kubeconfig::ManagedCluster;
use super::validate::Validated;
use ocm_api::names::{BOOTSTRAP_SECRET, EXTERNAL_MANAGED_SECRET, HUB_KUBECONFIG_SECRET};
use ocm_runtime::client::{self as kubeconfig_client, Origin, Timeouts};

/// How long one hub check may take: a dead hub must not stall the loop.
const HUB_CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// What a kubeconfig secret is worth against the hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretCheck {
    /// The secret does not exist.
    Missing,
    /// It exists but cannot be used (unparsable, hub unreachable, ...).
    Error(String),
    /// The hub rejects its credential.
    Unauthorized,
    /// The hub accepts it.
    Functional,
}

/// The observed state.
pub struct Observed {
    /// The bootstrap kubeconfig secret.
    pub bootstrap: SecretCheck,
    /// The hub kubeconfig secret the registration agent writes.
    pub hub_kubeconfig: SecretCheck,
    /// A client for the managed cluster, or why there is none (Hosted without its kubeconfig).
    pub managed: Result<Client, String>,
    /// Hosted modes: the managed cluster as the user's kubeconfig names it, for the agents' own
    /// kubeconfigs.
    pub managed_cluster: Option<ManagedCluster>,
    /// The operator namespace's image pull secret, if any (unreadable counts as none: the
    /// agents may not need it, and the next resync reads it again).
    pub pull_secret: Option<Secret>,
}

/// Observes a Klusterlet's surroundings; `client` is the cluster the operator runs against.
pub async fn observe(client: &Client, v: &Validated) -> Observed {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &v.agent_namespace);
    let (bootstrap, hub_kubeconfig, managed, pull_secret) = tokio::join!(
        check(&secrets, BOOTSTRAP_SECRET),
        check(&secrets, HUB_KUBECONFIG_SECRET),
        managed(client, &secrets, v.hosted),
        crate::pull_secret::read(client),
    );
    let pull_secret = pull_secret.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "reading the image pull secret");
        None
    });
    let (managed, managed_cluster) = match managed {
        Ok((client, cluster)) => (Ok(client), cluster),
        Err(e) => (Err(e), None),
    };
    Observed {
        bootstrap,
        hub_kubeconfig,
        managed,
        managed_cluster,
        pull_secret,
    }
}

async fn managed(
    client: &Client,
    secrets: &Api<Secret>,
    hosted: bool,
) -> Result<(Client, Option<ManagedCluster>), String> {
    if !hosted {
        return Ok((client.clone(), None));
    }
    let (client, cluster) = external_managed(secrets).await?;
    Ok((client, Some(cluster)))
}

/// Hosted modes: a client for the managed cluster from the `external-managed-kubeconfig` secret.
pub async fn external_managed_client(secrets: &Api<Secret>) -> Result<Client, String> {
    Ok(external_managed(secrets).await?.0)
}

/// Hosted modes: a client for the managed cluster from the `external-managed-kubeconfig` secret,
/// and the cluster it names.
async fn external_managed(secrets: &Api<Secret>) -> Result<(Client, ManagedCluster), String> {
    let secret = secrets
        .get_opt(EXTERNAL_MANAGED_SECRET)
        .await
        .map_err(|e| format!("reading secret {EXTERNAL_MANAGED_SECRET}: {e}"))?
        .ok_or_else(|| format!("secret {EXTERNAL_MANAGED_SECRET} is missing"))?;
    let text = field(&secret, "kubeconfig")
        .ok_or_else(|| format!("secret {EXTERNAL_MANAGED_SECRET} has no kubeconfig"))?;
    let text = String::from_utf8_lossy(&text);
    let client = kubeconfig_client::from_kubeconfig(
        &text,
        Origin::Cluster,
        &format!("secret {EXTERNAL_MANAGED_SECRET}"),
        Timeouts::LOOP,
    )
    .await
    .map_err(|e| e.to_string())?;
    Ok((
        client,
        ManagedCluster::from_kubeconfig(&text, &format!("secret {EXTERNAL_MANAGED_SECRET}"))?,
    ))
}

fn field(secret: &Secret, key: &str) -> Option<Vec<u8>> {
    secret.data.as_ref()?.get(key).map(|b| b.0.clone())
}

async fn check(secrets: &Api<Secret>, name: &str) -> SecretCheck {
    let secret = match secrets.get_opt(name).await {
        Ok(Some(s)) => s,
        Ok(None) => return SecretCheck::Missing,
        Err(e) => return SecretCheck::Error(format!("reading secret {name}: {e}")),
    };
    let Some(text) = kubeconfig_of(&secret) else {
        // Our registration agent keeps its key in the hub kubeconfig secret until the hub signs
        // (upstream's keeps it in memory, so its secret does not exist yet): no kubeconfig there
        // is the state upstream reports as HubKubeConfigSecretMissing.
        if name == HUB_KUBECONFIG_SECRET {
            return SecretCheck::Missing;
        }
        return SecretCheck::Error(format!("secret {name} has no usable kubeconfig"));
    };
    let source = format!("secret {name}");
    let timeouts = Timeouts::command(HUB_CHECK_TIMEOUT);
    let client =
        match kubeconfig_client::from_kubeconfig(&text, Origin::Cluster, &source, timeouts).await {
            Ok(c) => c,
            Err(e) => return SecretCheck::Error(e.to_string()),
        };
    let reviews: Api<SelfSubjectReview> = Api::all(client);
    match tokio::time::timeout(
        HUB_CHECK_TIMEOUT,
        reviews.create(&PostParams::default(), &SelfSubjectReview::default()),
    )
    .await
    {
        Ok(Ok(_)) => SecretCheck::Functional,
        Ok(Err(kube::Error::Api(s))) if s.code == 401 => SecretCheck::Unauthorized,
        Ok(Err(e)) => SecretCheck::Error(format!("secret {name}: {e}")),
        Err(_) => SecretCheck::Error(format!(
            "secret {name}: the hub did not answer within {HUB_CHECK_TIMEOUT:?}"
        )),
    }
}

/// The kubeconfig of a secret, with the client certificate and key files the registration agent
/// refers to (`tls.crt`, `tls.key`, beside the kubeconfig in the same secret) inlined.
#[must_use]
pub fn kubeconfig_of(secret: &Secret) -> Option<String> {
    let text = String::from_utf8(field(secret, "kubeconfig")?).ok()?;
    let mut kc = kube::config::Kubeconfig::from_yaml(&text).ok()?;
    let b64 = |bytes: Vec<u8>| base64::engine::general_purpose::STANDARD.encode(bytes);
    for auth in kc
        .auth_infos
        .iter_mut()
        .filter_map(|a| a.auth_info.as_mut())
    {
        if let Some(file) = auth.client_certificate.take() {
            auth.client_certificate_data = Some(b64(field(secret, base_name(&file))?));
        }
        if let Some(file) = auth.client_key.take() {
            let key = b64(field(secret, base_name(&file))?);
            auth.client_key_data = Some(key.into());
        }
    }
    ocm_api::yaml::to_string(&kc).ok()
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::ByteString;

    use super::*;

    #[test]
    fn hub_kubeconfig_files_are_inlined_from_the_secret() {
        let kubeconfig = "apiVersion: v1\nkind: Config\nclusters: [{name: hub, cluster: {server: 'https://hub:6443'}}]\n\
            users: [{name: default-auth, user: {client-certificate: tls.crt, client-key: /spoke/hub-kubeconfig/tls.key}}]\n\
            contexts: [{name: default-context, context: {cluster: hub, user: default-auth}}]\ncurrent-context: default-context\n";
        let secret = Secret {
            data: Some(BTreeMap::from([
                (
                    "kubeconfig".to_string(),
                    ByteString(kubeconfig.as_bytes().to_vec()),
                ),
                ("tls.crt".to_string(), ByteString(b"CERT".to_vec())),
                ("tls.key".to_string(), ByteString(b"KEY".to_vec())),
            ])),
            ..Default::default()
        };
        let text = kubeconfig_of(&secret).unwrap();
        let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        let auth = kc.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(auth.client_certificate_data.as_deref(), Some("Q0VSVA=="));
        assert!(auth.client_certificate.is_none() && auth.client_key.is_none());
        assert!(auth.client_key_data.is_some());
    }
}
