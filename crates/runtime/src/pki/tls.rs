//! rustls configurations from PEM, as every TLS client here builds them: trust only a given CA
//! bundle, and present a certificate and key when the server asks for one.
use std::sync::Arc;

use anyhow::Context as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The crypto provider every configuration here uses (ring, as kube's client).
#[must_use]
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of a PEM bundle, as roots to trust.
pub fn roots(ca_pem: &[u8]) -> anyhow::Result<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    for der in super::certificates_der(ca_pem)? {
        roots.add(CertificateDer::from(der))?;
    }
    Ok(roots)
}

/// A PEM certificate chain and its PEM key.
pub fn chain_and_key(
    cert_pem: &[u8],
    key_pem: &[u8],
) -> anyhow::Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let chain = super::certificates_der(cert_pem)?
        .into_iter()
        .map(CertificateDer::from)
        .collect();
    let key = PrivateKeyDer::from_pem_slice(key_pem).context("the private key")?;
    Ok((chain, key))
}

/// A client trusting only `ca_pem` and presenting `client` (certificate and key, PEM) when given.
pub fn client_config(
    ca_pem: &[u8],
    client: Option<(&[u8], &[u8])>,
) -> anyhow::Result<rustls::ClientConfig> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots(ca_pem)?);
    Ok(match client {
        Some((cert, key)) => {
            let (chain, key) = chain_and_key(cert, key)?;
            builder
                .with_client_auth_cert(chain, key)
                .context("the client certificate and key do not match")?
        }
        None => builder.with_no_client_auth(),
    })
}
