//! `hub-kubeconfig-secret` on the managed cluster: the hub kubeconfig (user `default-auth`,
//! certificate and key inline), `tls.crt`, `tls.key`, `cluster-name` and `agent-name`; how it is
//! written, read back, and judged reusable.
use std::collections::BTreeMap;

use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use serde_json::json;

use super::bootstrap::{self, Bootstrap, KUBECONFIG_KEY};
use super::{AgentOptions, Error, rotate};

/// Key of the client certificate (PEM).
pub const TLS_CRT_KEY: &str = "tls.crt";
/// Key of the client key (PEM).
pub const TLS_KEY_KEY: &str = "tls.key";
/// Key of the cluster name.
pub const CLUSTER_NAME_KEY: &str = "cluster-name";
/// Key of the agent name.
pub const AGENT_NAME_KEY: &str = "agent-name";
/// The kubeconfig user name (upstream's).
pub const USER: &str = "default-auth";

/// A hub-signed client credential and whom it is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubCredential {
    /// Hub URL.
    pub server: String,
    /// Hub CA, base64 PEM.
    pub ca_data: String,
    /// Signed client certificate (PEM).
    pub cert_pem: String,
    /// Its private key (PEM).
    pub key_pem: String,
    /// Cluster name.
    pub cluster: String,
    /// Agent name.
    pub agent: String,
}

impl HubCredential {
    /// The kubeconfig text stored under `kubeconfig`.
    #[must_use]
    pub fn kubeconfig(&self) -> String {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let doc = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "default-cluster", "cluster": {
                "server": self.server, "certificate-authority-data": self.ca_data}}],
            "users": [{"name": USER, "user": {
                "client-certificate-data": b64(&self.cert_pem),
                "client-key-data": b64(&self.key_pem)}}],
            "contexts": [{"name": "default-context", "context": {
                "cluster": "default-cluster", "user": USER, "namespace": "configuration"}}],
            "current-context": "default-context",
        });
        ocm_api::yaml::to_string(&doc).expect("a JSON value prints as YAML")
    }

    /// A hub client with this credential.
    pub async fn client(&self) -> Result<kube::Client, Error> {
        bootstrap::client(&self.kubeconfig(), ocm_api::names::HUB_KUBECONFIG_SECRET).await
    }

    /// Whether the stored credential can be used instead of bootstrapping: same cluster, a
    /// certificate for it that has not expired, and the hub the bootstrap kubeconfig names.
    pub fn usable_with(
        &self,
        boot: Option<&Bootstrap>,
        cluster: &str,
        now: i64,
    ) -> Result<(), String> {
        if self.cluster != cluster {
            return Err(format!("it is for cluster {}", self.cluster));
        }
        let validity = rotate::validity(self.cert_pem.as_bytes())?;
        if validity.not_after <= now + 10 {
            return Err("its certificate has expired".into());
        }
        if let Some(boot) = boot
            && (boot.server != self.server || boot.ca_data != self.ca_data)
        {
            return Err(format!(
                "the bootstrap kubeconfig names another hub ({})",
                boot.server
            ));
        }
        Ok(())
    }
}

pub use ocm_runtime::secrets::field;

/// The hub kubeconfig secret's namespace on the cluster the agent runs on.
pub(super) fn api(opts: &AgentOptions) -> Api<Secret> {
    Api::namespaced(opts.management.clone(), &opts.namespace)
}

/// The secret, for messages.
pub(super) fn what(opts: &AgentOptions) -> String {
    format!("secret {}/{}", opts.namespace, opts.hub_secret)
}

/// The data of the hub kubeconfig secret, if it exists.
pub async fn read_data(opts: &AgentOptions) -> Result<Option<BTreeMap<String, ByteString>>, Error> {
    let secret = api(opts)
        .get_opt(&opts.hub_secret)
        .await
        .map_err(|e| Error::kube(format!("reading {}", what(opts)), e))?;
    Ok(secret.map(|s| s.data.unwrap_or_default()))
}

/// The stored credential, if the secret holds a complete one.
pub async fn load(opts: &AgentOptions) -> Result<Option<HubCredential>, Error> {
    let Some(secret) = api(opts)
        .get_opt(&opts.hub_secret)
        .await
        .map_err(|e| Error::kube(format!("reading {}", what(opts)), e))?
    else {
        return Ok(None);
    };
    Ok(parse(&secret))
}

/// A complete credential from the secret's fields.
#[must_use]
pub fn parse(secret: &Secret) -> Option<HubCredential> {
    let (server, ca_data) = bootstrap::hub_endpoint(&field(secret, KUBECONFIG_KEY)?).ok()?;
    Some(HubCredential {
        server,
        ca_data,
        cert_pem: field(secret, TLS_CRT_KEY)?,
        key_pem: field(secret, TLS_KEY_KEY)?,
        cluster: field(secret, CLUSTER_NAME_KEY)?,
        agent: field(secret, AGENT_NAME_KEY)?,
    })
}

/// The secret's data for a credential.
#[must_use]
pub fn data(credential: &HubCredential) -> BTreeMap<String, ByteString> {
    [
        (KUBECONFIG_KEY, credential.kubeconfig()),
        (TLS_CRT_KEY, credential.cert_pem.clone()),
        (TLS_KEY_KEY, credential.key_pem.clone()),
        (CLUSTER_NAME_KEY, credential.cluster.clone()),
        (AGENT_NAME_KEY, credential.agent.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), ByteString(v.into_bytes())))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credential() -> HubCredential {
        HubCredential {
            server: "https://hub:6443".into(),
            ca_data: "Q0E=".into(),
            cert_pem: "CERT".into(),
            key_pem: "KEY".into(),
            cluster: "c1".into(),
            agent: "ab12c".into(),
        }
    }

    #[test]
    fn kubeconfig_uses_default_auth_with_inline_data() {
        let text = credential().kubeconfig();
        let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        assert_eq!(kc.current_context.as_deref(), Some("default-context"));
        let user = kc.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(kc.auth_infos[0].name, "default-auth");
        assert_eq!(user.client_certificate_data.as_deref(), Some("Q0VSVA=="));
        assert_eq!(
            bootstrap::hub_endpoint(&text).unwrap(),
            ("https://hub:6443".to_string(), "Q0E=".to_string())
        );
    }

    #[test]
    fn secret_data_round_trips() {
        let secret = Secret {
            data: Some(data(&credential())),
            ..Default::default()
        };
        assert_eq!(parse(&secret), Some(credential()));
        let partial = Secret {
            data: Some(
                data(&credential())
                    .into_iter()
                    .filter(|(k, _)| k != TLS_KEY_KEY)
                    .collect(),
            ),
            ..Default::default()
        };
        assert_eq!(parse(&partial), None);
    }

    #[test]
    fn another_cluster_or_hub_is_not_reused() {
        let c = credential();
        assert!(
            c.usable_with(None, "c2", 0)
                .unwrap_err()
                .contains("cluster c1")
        );
        // The (fake) certificate does not parse: not usable either.
        assert!(c.usable_with(None, "c1", 0).is_err());
    }
}
