//! The certificate chain a TLS server presents, read without trusting it: when the hub refuses
//! anonymous reads of cluster-info, a `--ca-cert-hash` pin can still be checked against the
//! certificates the hub itself sends — and nothing but a TLS handshake goes over that
//! connection, never the token.
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// The DER certificates `server` (an `https://host:port` URL) presents, leaf first.
pub async fn presented_chain(server: &str) -> anyhow::Result<Vec<Vec<u8>>> {
    let uri: http::Uri = server
        .parse()
        .with_context(|| format!("invalid hub URL {server}"))?;
    let host = uri.host().context("the hub URL has no host")?.to_string();
    let port = uri.port_u16().unwrap_or(443);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS set-up")?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptAny(provider)))
        .with_no_client_auth();
    let name = ServerName::try_from(host.trim_matches(['[', ']']).to_string())
        .with_context(|| format!("invalid hub host {host}"))?;
    let connect = async {
        let tcp = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port)).await?;
        tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
    };
    let tls = tokio::time::timeout(Duration::from_secs(10), connect)
        .await
        .with_context(|| format!("{server} did not complete a TLS handshake in 10 s"))?
        .with_context(|| format!("TLS handshake with {server}"))?;
    Ok(tls
        .get_ref()
        .1
        .peer_certificates()
        .unwrap_or_default()
        .iter()
        .map(|c| c.as_ref().to_vec())
        .collect())
}

/// Accepts any certificate: the chain is only looked at afterwards, against a pin. Handshake
/// signatures are still checked, so the chain belongs to whoever holds its leaf's key.
#[derive(Debug)]
struct AcceptAny(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
