//! The add-on's own signer: its CA, kept in a Secret on the hub, with which the manager signs its
//! agents' client certificates ([`crate::CustomSigner`]), and the TLS both ends of the add-on's
//! own endpoint use: the manager serves with a certificate of that CA and requires a client
//! certificate of it ([`server_config`]); the agent presents its custom-signed certificate and
//! trusts only that CA ([`client_config`]).
use std::sync::Arc;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use kube::{Client, api::ObjectMeta};

use crate::CertKey;
use ocm_runtime::pki::{self, tls, webhook};

/// The CA in Secret `name` of `namespace` (`tls.crt`, `tls.key`), made there if it is missing.
pub async fn load_or_create(
    client: &Client,
    namespace: &str,
    name: &str,
) -> anyhow::Result<CertKey> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    if let Some(secret) = secrets.get_opt(name).await? {
        let ca = pair(&secret).ok_or_else(|| {
            anyhow::anyhow!("secret {namespace}/{name} holds no tls.crt and tls.key")
        })?;
        return unexpired(ca, &format!("{namespace}/{name}"));
    }
    let ca = webhook::issue_signer(pki::now_seconds())?;
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..Default::default()
        },
        type_: Some("kubernetes.io/tls".into()),
        data: Some(
            [("tls.crt", &ca.cert), ("tls.key", &ca.key)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), ByteString(v.clone().into_bytes())))
                .collect(),
        ),
        ..Default::default()
    };
    match secrets.create(&PostParams::default(), &secret).await {
        Ok(_) => Ok(ca),
        // Another replica made it meanwhile: theirs.
        Err(kube::Error::Api(s)) if s.code == 409 => {
            let secret = secrets.get(name).await?;
            pair(&secret).ok_or_else(|| {
                anyhow::anyhow!("secret {namespace}/{name} holds no tls.crt and tls.key")
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// `ca` while it is valid; an error saying how to replace it once it is not (it lasts a year: a
/// new one is made when its Secret is deleted, and agents get certificates of it as they renew).
fn unexpired(ca: CertKey, secret: &str) -> anyhow::Result<CertKey> {
    let der = pki::certificates_der(ca.cert.as_bytes())?
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("secret {secret} holds no certificate"))?;
    let (_, cert) = x509_parser::parse_x509_certificate(&der)
        .map_err(|e| anyhow::anyhow!("secret {secret}: {e}"))?;
    let until = cert.validity().not_after.timestamp();
    anyhow::ensure!(
        until > pki::now_seconds(),
        "the add-on's CA in secret {secret} expired (at {until}, Unix time): delete the Secret and \
         restart the manager, which makes a new CA"
    );
    Ok(ca)
}

fn pair(secret: &Secret) -> Option<CertKey> {
    let field = |k: &str| ocm_runtime::secrets::field(secret, k);
    Some(CertKey {
        cert: field("tls.crt")?,
        key: field("tls.key")?,
    })
}

/// A serving certificate of `ca` for `dns_names` (and IP addresses written as names).
pub fn serving(ca: &CertKey, dns_names: &[String]) -> anyhow::Result<CertKey> {
    Ok(webhook::issue_serving(
        &webhook::issuer(ca)?,
        dns_names,
        pki::now_seconds(),
    )?)
}

/// TLS for the manager's endpoint: `serving` presented, and a client certificate signed by `ca`
/// required of every caller.
pub fn server_config(ca: &CertKey, serving: &CertKey) -> anyhow::Result<rustls::ServerConfig> {
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(tls::roots(ca.cert.as_bytes())?),
        tls::provider(),
    )
    .build()?;
    let (chain, key) = tls::chain_and_key(serving.cert.as_bytes(), serving.key.as_bytes())?;
    Ok(rustls::ServerConfig::builder_with_provider(tls::provider())
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)?)
}

/// TLS for an agent calling the manager: trusts only `ca_pem`, presents `client`.
pub fn client_config(ca_pem: &str, client: &CertKey) -> anyhow::Result<rustls::ClientConfig> {
    tls::client_config(
        ca_pem.as_bytes(),
        Some((client.cert.as_bytes(), client.key.as_bytes())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expired_ca_is_refused_with_how_to_replace_it() {
        let now = pki::now_seconds();
        let fresh = webhook::issue_signer(now).unwrap();
        assert!(unexpired(fresh, "ns/ca").is_ok());
        let old = webhook::issue_signer(now - 2 * webhook::SIGNER_LIFETIME_SECS).unwrap();
        let refused = unexpired(old, "ns/ca").unwrap_err().to_string();
        assert!(refused.contains("delete the Secret"), "{refused}");
    }
}
