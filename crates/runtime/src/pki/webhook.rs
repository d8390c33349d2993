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
/// Lifetime of a client certificate a custom signer issues, in seconds (upstream's template
/// agent: 24 hours; the agent renews it at a fifth left).
pub const CLIENT_LIFETIME_SECS: i64 = 24 * 3600;

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

/// A client certificate for the PEM certificate request `request`, signed by `signer`, valid
/// from a minute before `now` for [`CLIENT_LIFETIME_SECS`]: what a custom signer of an add-on
/// issues for an approved CSR.
pub fn sign_client_request(request: &str, signer: &CertKey, now: i64) -> Result<String, Error> {
    let err = |source| Error::Issue {
        what: "client".into(),
        source,
    };
    let mut csr = rcgen::CertificateSigningRequestParams::from_pem(request).map_err(err)?;
    csr.params.not_before = at(now - 60)?;
    csr.params.not_after = at(now + CLIENT_LIFETIME_SECS)?;
    csr.params.is_ca = IsCa::ExplicitNoCa;
    csr.params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    csr.params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    csr.params.use_authority_key_identifier_extension = true;
    Ok(csr.signed_by(&issuer(signer)?).map_err(err)?.pem())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_signed_by_the_ca_for_a_day_as_a_client() {
        let ca = issue_signer(1_700_000_000).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::default();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "agent");
        let request = params.serialize_request(&key).unwrap().pem().unwrap();
        let pem = sign_client_request(&request, &ca, 1_700_000_100).unwrap();
        let der = crate::pki::certificates_der(pem.as_bytes())
            .unwrap()
            .remove(0);
        let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        assert_eq!(
            cert.subject()
                .iter_common_name()
                .next()
                .unwrap()
                .as_str()
                .unwrap(),
            "agent"
        );
        assert!(
            cert.issuer()
                .to_string()
                .contains("cluster-manager-webhook@1700000000")
        );
        assert_eq!(
            cert.validity().not_after.timestamp(),
            1_700_000_100 + CLIENT_LIFETIME_SECS
        );
        assert!(
            cert.extended_key_usage()
                .unwrap()
                .unwrap()
                .value
                .client_auth
        );
    }
}
