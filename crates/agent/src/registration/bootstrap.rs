//! The bootstrap phase: read `bootstrap-hub-kubeconfig`, pick (or reuse) the agent name, create
//! the ManagedCluster if absent, and trade a CSR for a hub-signed certificate.
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::config::Kubeconfig;
use ocm_runtime::Shutdown;
use ocm_runtime::client::{Origin, Timeouts};
use std::collections::BTreeMap;

use super::secret::{self, HubCredential};
use super::{AgentOptions, Error, csr, writer};

/// The secret key holding a kubeconfig.
pub const KUBECONFIG_KEY: &str = "kubeconfig";
/// Length of a new agent name (upstream: 5 random characters).
pub const AGENT_NAME_LEN: usize = 5;

/// The bootstrap kubeconfig and the hub it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bootstrap {
    /// The kubeconfig text.
    pub kubeconfig: String,
    /// The hub's URL.
    pub server: String,
    /// The hub's CA, base64 PEM as in the kubeconfig.
    pub ca_data: String,
}

impl Bootstrap {
    /// Parses a bootstrap kubeconfig.
    pub fn parse(kubeconfig: String) -> Result<Self, String> {
        let (server, ca_data) = hub_endpoint(&kubeconfig)?;
        Ok(Self {
            kubeconfig,
            server,
            ca_data,
        })
    }
}

/// The server and CA data of a kubeconfig's current context (or only cluster).
pub fn hub_endpoint(kubeconfig: &str) -> Result<(String, String), String> {
    let kc = Kubeconfig::from_yaml(kubeconfig).map_err(|e| e.to_string())?;
    let cluster_name = kc
        .current_context
        .as_ref()
        .and_then(|name| kc.contexts.iter().find(|c| &c.name == name))
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone());
    let cluster = match cluster_name {
        Some(name) => kc.clusters.iter().find(|c| c.name == name),
        None if kc.clusters.len() == 1 => kc.clusters.first(),
        None => None,
    }
    .and_then(|c| c.cluster.as_ref())
    .ok_or("no cluster for the current context")?;
    let server = cluster.server.clone().ok_or("the cluster has no server")?;
    let ca = cluster
        .certificate_authority_data
        .clone()
        .ok_or("the cluster has no certificate-authority-data (the hub must be verified)")?;
    Ok((server, ca))
}

/// A hub client from kubeconfig text read from `secret` on the managed cluster: inline
/// credentials only, TLS always verified ([`ocm_runtime::client`]).
pub async fn client(kubeconfig: &str, secret: &str) -> Result<kube::Client, Error> {
    let source = format!("secret {secret}");
    ocm_runtime::client::from_kubeconfig(kubeconfig, Origin::Cluster, &source, Timeouts::LOOP)
        .await
        .map_err(|e| Error::InvalidKubeconfig {
            secret: secret.to_string(),
            reason: e.to_string(),
        })
}

/// Reads the bootstrap secret; `None` when it does not exist.
pub async fn read(opts: &AgentOptions) -> Result<Option<Bootstrap>, Error> {
    let secrets: Api<Secret> = Api::namespaced(opts.management.clone(), &opts.namespace);
    let secret = secrets.get_opt(&opts.bootstrap_secret).await.map_err(|e| {
        Error::kube(
            format!(
                "reading secret {}/{}",
                opts.namespace, opts.bootstrap_secret
            ),
            e,
        )
    })?;
    let Some(text) = secret
        .as_ref()
        .and_then(|s| secret::field(s, KUBECONFIG_KEY))
    else {
        return Ok(None);
    };
    Bootstrap::parse(text)
        .map(Some)
        .map_err(|reason| Error::InvalidKubeconfig {
            secret: format!("{}/{}", opts.namespace, opts.bootstrap_secret),
            reason,
        })
}

/// The agent name to use: the stored one when the stored secret is for this cluster and holds a
/// well-formed name, else a fresh one. The flag says whether it is new (and must be stored).
#[must_use]
pub fn agent_name(stored: Option<&BTreeMap<String, ByteString>>, cluster: &str) -> (String, bool) {
    let get = |key: &str| {
        stored
            .and_then(|d| d.get(key))
            .map(|b| String::from_utf8_lossy(&b.0).into_owned())
    };
    let reusable = get(secret::CLUSTER_NAME_KEY).as_deref() == Some(cluster);
    match get(secret::AGENT_NAME_KEY) {
        Some(name) if reusable && valid_agent_name(&name) => (name, false),
        _ => (ocm_runtime::pki::random_token_chars(AGENT_NAME_LEN), true),
    }
}

/// An agent name fits in a CN segment and a DNS label: `[a-z0-9]`, 1..=63 characters.
#[must_use]
pub fn valid_agent_name(name: &str) -> bool {
    (1..=63).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// Registers with the bootstrap credential: ManagedCluster, CSR, signed certificate, secret.
pub async fn register(
    opts: &AgentOptions,
    boot: Option<&Bootstrap>,
    cancel: &Shutdown,
) -> Result<HubCredential, Error> {
    let boot = boot.ok_or_else(|| Error::BootstrapMissing {
        namespace: opts.namespace.clone(),
        name: opts.bootstrap_secret.clone(),
    })?;
    let hub = client(&boot.kubeconfig, &opts.bootstrap_secret).await?;
    let stored = secret::read_data(opts).await?;
    let (agent, new) = agent_name(stored.as_ref(), &opts.cluster_name);
    if new {
        writer::store_identity(opts, &agent).await?;
    }
    writer::create_cluster(&hub, opts).await?;
    tracing::info!(cluster = %opts.cluster_name, agent = %agent, "requesting a hub client certificate");
    let (cert_pem, key_pem) = csr::issue(&hub, opts, &agent, cancel).await?;
    let credential = HubCredential {
        server: boot.server.clone(),
        ca_data: boot.ca_data.clone(),
        cert_pem,
        key_pem,
        cluster: opts.cluster_name.clone(),
        agent,
    };
    writer::store_credential(opts, &credential).await?;
    tracing::info!(cluster = %opts.cluster_name, "hub client certificate stored in {}/{}", opts.namespace, opts.hub_secret);
    Ok(credential)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, ByteString> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), ByteString(v.as_bytes().to_vec())))
            .collect()
    }

    #[test]
    fn stored_agent_name_is_reused_for_the_same_cluster() {
        let stored = data(&[("cluster-name", "c1"), ("agent-name", "ab12c")]);
        assert_eq!(
            agent_name(Some(&stored), "c1"),
            ("ab12c".to_string(), false)
        );
    }

    #[test]
    fn a_new_name_for_another_cluster_or_nothing_stored_or_garbage() {
        let stored = data(&[("cluster-name", "c2"), ("agent-name", "ab12c")]);
        let (name, new) = agent_name(Some(&stored), "c1");
        assert!(new && name.len() == AGENT_NAME_LEN && valid_agent_name(&name));
        assert!(agent_name(None, "c1").1);
        let bad = data(&[("cluster-name", "c1"), ("agent-name", "a:b")]);
        assert!(agent_name(Some(&bad), "c1").1);
    }

    #[test]
    fn endpoint_of_the_current_context() {
        let kc = "apiVersion: v1\nkind: Config\nclusters:\n- name: a\n  cluster: {server: 'https://a:1', certificate-authority-data: QUFB}\n\
                  - name: hub\n  cluster: {server: 'https://hub:6443', certificate-authority-data: Q0E=}\n\
                  contexts: [{name: x, context: {cluster: hub, user: u}}]\ncurrent-context: x\nusers: [{name: u, user: {token: t}}]\n";
        assert_eq!(
            hub_endpoint(kc).unwrap(),
            ("https://hub:6443".to_string(), "Q0E=".to_string())
        );
        let no_ca = "apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: 'https://a:1'}}]\n";
        assert!(
            hub_endpoint(no_ca)
                .unwrap_err()
                .contains("certificate-authority-data")
        );
    }
}
