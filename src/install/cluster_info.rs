//! `kube-public/cluster-info`: the discovery document kubeadm publishes (a kubeconfig with the
//! hub URL and CA). `join` reads it with the bootstrap token and verifies it — by the JWS the
//! bootstrap-signer adds for each signing bootstrap token, or by the CA pin `init` prints. `init`
//! creates it when the cluster has none.
use std::collections::BTreeMap;

use anyhow::Context as _;
use base64::Engine as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};

/// Namespace of the discovery document.
pub const NAMESPACE: &str = "kube-public";
/// Name of the discovery document.
pub const NAME: &str = "cluster-info";
/// Its key holding the kubeconfig.
pub const KUBECONFIG_KEY: &str = "kubeconfig";
/// Prefix of the keys holding detached JWS signatures, one per signing bootstrap token id.
pub const JWS_PREFIX: &str = "jws-kubeconfig-";

/// The kubeconfig text kubeadm writes into cluster-info: one nameless cluster, no users.
#[must_use]
pub fn kubeconfig_text(server: &str, ca_pem: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: {ca}\n    server: {server}\n  name: \"\"\n\
         contexts: null\ncurrent-context: \"\"\nkind: Config\npreferences: {{}}\nusers: null\n"
    )
}

/// What `ensure` found or did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It already existed (left as it is: kubeadm or an earlier init owns it).
    Existed,
    /// It was created.
    Created,
}

/// Creates cluster-info when missing.
pub async fn ensure(client: &Client, server: &str, ca_pem: &str) -> anyhow::Result<Outcome> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    if api
        .get_opt(NAME)
        .await
        .context("reading kube-public/cluster-info")?
        .is_some()
    {
        return Ok(Outcome::Existed);
    }
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(NAME.into()),
            namespace: Some(NAMESPACE.into()),
            labels: Some(BTreeMap::from([(
                crate::apply::MANAGED_BY_LABEL.into(),
                crate::FIELD_MANAGER.into(),
            )])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            KUBECONFIG_KEY.into(),
            kubeconfig_text(server, ca_pem),
        )])),
        ..Default::default()
    };
    match api
        .create(
            &PostParams {
                field_manager: Some(crate::FIELD_MANAGER.into()),
                ..Default::default()
            },
            &cm,
        )
        .await
    {
        Ok(_) => Ok(Outcome::Created),
        // Created concurrently (another init, or kubeadm): fine.
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(Outcome::Existed),
        Err(e) => Err(e).context("creating kube-public/cluster-info"),
    }
}

/// The CA bundle (PEM) the hub is trusted with: the kubeconfig's CA if it has one, else the
/// cluster's published `kube-public/kube-root-ca.crt`.
pub async fn hub_ca_pem(client: &Client, config: &kube::Config) -> anyhow::Result<String> {
    if let Some(ders) = config.root_cert.as_ref().filter(|d| !d.is_empty()) {
        return Ok(crate::pki::der_to_pem(ders));
    }
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let cm = api
        .get("kube-root-ca.crt")
        .await
        .context("reading kube-public/kube-root-ca.crt (the kubeconfig has no CA)")?;
    cm.data
        .and_then(|d| d.get("ca.crt").cloned())
        .context("kube-public/kube-root-ca.crt has no ca.crt")
}

/// The server URL recorded in cluster-info, if it exists and names one.
pub async fn server(client: &Client) -> anyhow::Result<Option<String>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let Some(cm) = api
        .get_opt(NAME)
        .await
        .context("reading kube-public/cluster-info")?
    else {
        return Ok(None);
    };
    let Some(text) = cm.data.and_then(|d| d.get(KUBECONFIG_KEY).cloned()) else {
        return Ok(None);
    };
    let kc = kube::config::Kubeconfig::from_yaml(&text)
        .context("kube-public/cluster-info holds an invalid kubeconfig")?;
    Ok(kc
        .clusters
        .into_iter()
        .find_map(|c| c.cluster.and_then(|c| c.server)))
}
