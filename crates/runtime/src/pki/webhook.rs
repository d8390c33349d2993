//! A webhook's certificates: a signer CA and serving certificates it signs, as the operator
//! keeps them for the hub's webhooks (`crate::operator::cluster_manager::certs`) and the
//! in-process hub issues them for its webhooks.
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use time::OffsetDateTime;

/// What [`Error::Issue`] calls the signer.
const SIGNER: &str = "webhook signer";
/// Lifetime of the signer, in seconds (one year).
pub const SIGNER_LIFETIME_SECS: i64 = 365 * 24 * 3600;
/// Lifetime of a serving certificate, in seconds (30 days).
pub const SERVING_LIFETIME_SECS: i64 = 30 * 24 * 3600;

/// Why certificates could not be issued.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// rcgen refused the parameters or the key.
    #[error("issuing the {what} certificate failed")]
    Issue {
        /// Which certificate.
        what: String,
        /// Cause.
        #[source]
        source: rcgen::Error,
    },
    /// A time outside what X.509 can encode.
    #[error("time {0} is out of range")]
    Time(i64),
}

/// A certificate and its private key, both PEM.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CertKey {
    /// `tls.crt`.
    pub cert: String,
    /// `tls.key`.
    pub key: String,
}

fn at(unix: i64) -> Result<OffsetDateTime, Error> {
    OffsetDateTime::from_unix_timestamp(unix).map_err(|_| Error::Time(unix))
}

/// A fresh signer CA valid from `now` for [`SIGNER_LIFETIME_SECS`].
pub fn issue_signer(now: i64) -> Result<CertKey, Error> {
    let err = |source| Error::Issue {
        what: SIGNER.into(),
        source,
    };
    let key = KeyPair::generate().map_err(err)?;
    let mut params = CertificateParams::default();
    // A unique name per issue, so a serving certificate names the exact signer that issued it.
    params
        .distinguished_name
        .push(DnType::CommonName, format!("cluster-manager-webhook@{now}"));
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = at(now)?;
    params.not_after = at(now + SIGNER_LIFETIME_SECS)?;
    let cert = params.self_signed(&key).map_err(err)?;
    Ok(CertKey {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// A serving certificate for `dns_names`, signed by `issuer`, valid from `now` for
/// [`SERVING_LIFETIME_SECS`].
pub fn issue_serving(
    issuer: &Issuer<'_, KeyPair>,
    dns_names: &[String],
    now: i64,
) -> Result<CertKey, Error> {
    issue_serving_window(issuer, dns_names, now, now + SERVING_LIFETIME_SECS)
}

/// A serving certificate valid from `not_before` to `not_after` (tests use short windows).
pub fn issue_serving_window(
    issuer: &Issuer<'_, KeyPair>,
    dns_names: &[String],
    not_before: i64,
    not_after: i64,
) -> Result<CertKey, Error> {
    let what = dns_names.first().cloned().unwrap_or_default();
    let err = |source| Error::Issue {
        what: what.clone(),
        source,
    };
    let key = KeyPair::generate().map_err(err)?;
    let mut params = CertificateParams::new(dns_names.to_vec()).map_err(err)?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, what.clone());
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    params.not_before = at(not_before)?;
    params.not_after = at(not_after)?;
    let cert = params.signed_by(&key, issuer).map_err(err)?;
    Ok(CertKey {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// An issuer for a signer pair, to sign serving certificates with.
pub fn issuer(signer: &CertKey) -> Result<Issuer<'static, KeyPair>, Error> {
    let err = |source| Error::Issue {
        what: SIGNER.into(),
        source,
    };
    let key = KeyPair::from_pem(&signer.key).map_err(err)?;
    Issuer::from_ca_cert_pem(&signer.cert, key).map_err(err)
}
