//! The bootstrap kubeconfig `join` stores as `bootstrap-hub-kubeconfig`: the hub URL, the hub CA
//! (always; never `insecure-skip-tls-verify`), the bootstrap token, and `proxy-url` when the hub
//! is reached through a proxy. Cluster `hub`, user `bootstrap`, as upstream.
use base64::Engine as _;
use serde_json::json;

/// What replaces the token wherever the kubeconfig is shown rather than stored (`--dry-run`).
pub const REDACTED: &str = "<redacted>";

/// Everything the bootstrap kubeconfig holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bootstrap {
    /// Hub API server URL.
    pub server: String,
    /// Hub CA bundle, PEM.
    pub ca_pem: String,
    /// The bootstrap token.
    pub token: String,
    /// `--proxy-url`, if any.
    pub proxy_url: Option<String>,
}

impl Bootstrap {
    /// The kubeconfig text.
    #[must_use]
    pub fn kubeconfig(&self) -> String {
        let mut cluster = json!({
            "server": self.server,
            "certificate-authority-data":
                base64::engine::general_purpose::STANDARD.encode(&self.ca_pem),
        });
        if let Some(proxy) = &self.proxy_url {
            cluster["proxy-url"] = json!(proxy);
        }
        let config = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "hub", "cluster": cluster}],
            "users": [{"name": "bootstrap", "user": {"token": self.token}}],
            "contexts": [{"name": "bootstrap", "context": {"cluster": "hub", "user": "bootstrap"}}],
            "current-context": "bootstrap",
        });
        crate::yaml::to_string(&config).expect("a JSON value always prints as YAML")
    }

    /// The same with the token replaced by [`REDACTED`].
    #[must_use]
    pub fn redacted(&self) -> Self {
        Self {
            token: REDACTED.into(),
            ..self.clone()
        }
    }

    /// A client for the hub that authenticates with the token and verifies the hub's certificate
    /// against the CA: exactly what the registration agent will use. Requests are bounded so an
    /// unreachable hub fails quickly.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        client_from_kubeconfig(&self.kubeconfig(), std::time::Duration::from_secs(30)).await
    }
}

/// A client from kubeconfig text (its current context), with connect and read timeouts.
pub async fn client_from_kubeconfig(
    text: &str,
    timeout: std::time::Duration,
) -> anyhow::Result<kube::Client> {
    use anyhow::Context as _;
    let kc = kube::config::Kubeconfig::from_yaml(text).context("invalid kubeconfig")?;
    let mut config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .context("invalid kubeconfig")?;
    config.connect_timeout = Some(timeout.min(std::time::Duration::from_secs(10)));
    config.read_timeout = Some(timeout);
    kube::Client::try_from(config).context("cannot build a client from the kubeconfig")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(proxy: Option<&str>) -> Bootstrap {
        Bootstrap {
            server: "https://hub.example.com:6443".into(),
            ca_pem: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".into(),
            token: "abcdef.0123456789abcdef".into(),
            proxy_url: proxy.map(Into::into),
        }
    }

    #[test]
    fn kubeconfig_has_ca_data_token_and_upstream_names() {
        let text = sample(None).kubeconfig();
        let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        let cluster = kc.clusters[0].cluster.clone().unwrap();
        assert_eq!(kc.clusters[0].name, "hub");
        assert_eq!(
            cluster.server.as_deref(),
            Some("https://hub.example.com:6443")
        );
        let ca = base64::engine::general_purpose::STANDARD
            .decode(cluster.certificate_authority_data.unwrap())
            .unwrap();
        assert!(String::from_utf8(ca).unwrap().contains("BEGIN CERTIFICATE"));
        assert_eq!(cluster.insecure_skip_tls_verify, None);
        assert!(!text.contains("insecure"));
        assert_eq!(kc.auth_infos[0].name, "bootstrap");
        assert_eq!(kc.contexts[0].context.as_ref().unwrap().cluster, "hub");
        assert_eq!(kc.current_context.as_deref(), Some("bootstrap"));
        assert!(text.contains("token: abcdef.0123456789abcdef"));
        assert!(!text.contains("proxy-url"));
    }

    #[test]
    fn proxy_url_is_recorded() {
        let kc =
            kube::config::Kubeconfig::from_yaml(&sample(Some("http://proxy:3128")).kubeconfig())
                .unwrap();
        assert_eq!(
            kc.clusters[0]
                .cluster
                .as_ref()
                .unwrap()
                .proxy_url
                .as_deref(),
            Some("http://proxy:3128")
        );
    }

    #[test]
    fn redaction_removes_the_token() {
        let text = sample(None).redacted().kubeconfig();
        assert!(!text.contains("0123456789abcdef"));
        assert!(text.contains(REDACTED));
    }
}
