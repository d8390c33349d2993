//! Small certificate helpers shared by hub, agent and operator code: the kubeadm-style CA pin
//! (`sha256:<hex of the CA's SubjectPublicKeyInfo>`), PEM parsing, random tokens, the clock
//! validity is checked against, a webhook's certificates ([`webhook`]) and TLS clients from PEM
//! ([`tls`]).
pub mod tls;
pub mod webhook;

use ring::digest::{SHA256, digest};
use ring::rand::{SecureRandom, SystemRandom};
use x509_parser::pem::Pem;

/// Seconds since the Unix epoch: the clock certificates' validity is checked against.
#[must_use]
pub fn now_seconds() -> i64 {
    k8s_openapi::jiff::Timestamp::now().as_second()
}

/// Why a certificate could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Not PEM, or no CERTIFICATE block.
    #[error("no PEM certificate found")]
    NoCertificate,
    /// A CERTIFICATE block that is not a valid X.509 certificate.
    #[error("invalid X.509 certificate: {0}")]
    Invalid(String),
}

/// The DER of every certificate in a PEM bundle.
pub fn certificates_der(pem: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let ders: Vec<Vec<u8>> = Pem::iter_from_buffer(pem)
        .filter_map(Result::ok)
        .filter(|p| p.label == "CERTIFICATE")
        .map(|p| p.contents)
        .collect();
    if ders.is_empty() {
        Err(Error::NoCertificate)
    } else {
        Ok(ders)
    }
}

/// `sha256:<hex>` of the first certificate's SubjectPublicKeyInfo: the pin kubeadm prints as
/// `--discovery-token-ca-cert-hash`, stable across CA re-issue with the same key.
pub fn ca_cert_hash(ca_pem: &[u8]) -> Result<String, Error> {
    let der = certificates_der(ca_pem)?.remove(0);
    let (_, cert) =
        x509_parser::parse_x509_certificate(&der).map_err(|e| Error::Invalid(e.to_string()))?;
    let spki = cert.tbs_certificate.subject_pki.raw;
    Ok(format!("sha256:{}", hex(digest(&SHA256, spki).as_ref())))
}

/// The certificates of a PEM bundle whose SubjectPublicKeyInfo matches a `sha256:<hex>` pin
/// (case-insensitive hex), as DER. Only these are trusted after a pin check: the other members
/// of a bundle are whatever the (unverified) sender put beside the pinned CA.
pub fn certificates_matching_pin(ca_pem: &[u8], pin: &str) -> Result<Vec<Vec<u8>>, Error> {
    matching_pin(certificates_der(ca_pem)?, pin)
}

/// The DER certificates that match a `sha256:<hex>` pin.
pub fn matching_pin(ders: Vec<Vec<u8>>, pin: &str) -> Result<Vec<Vec<u8>>, Error> {
    let want = pin.trim().to_ascii_lowercase();
    let mut matching = vec![];
    for der in ders {
        // A member that does not parse cannot match: skipped, not fatal, so a stray one (or one a
        // man in the middle adds) cannot make a good bundle fail.
        let Ok((_, cert)) = x509_parser::parse_x509_certificate(&der) else {
            continue;
        };
        let got = format!(
            "sha256:{}",
            hex(digest(&SHA256, cert.tbs_certificate.subject_pki.raw).as_ref())
        );
        if got == want {
            matching.push(der);
        }
    }
    Ok(matching)
}

/// PEM text of DER certificates.
#[must_use]
pub fn der_to_pem(ders: &[Vec<u8>]) -> String {
    use base64::Engine as _;
    let mut out = String::new();
    for der in ders {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        for chunk in b64.as_bytes().chunks(64) {
            out.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
    }
    out
}

/// Lower-case hex.
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// `len` random characters from `[a-z0-9]` (the bootstrap-token alphabet).
#[must_use]
pub fn random_token_chars(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let rng = SystemRandom::new();
    let mut out = String::with_capacity(len);
    while out.len() < len {
        let mut byte = [0u8; 1];
        rng.fill(&mut byte).expect("the system RNG works");
        // Rejection sampling keeps the distribution uniform (252 = 7 * 36).
        if byte[0] < 252 {
            out.push(ALPHABET[usize::from(byte[0] % 36)] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn self_signed() -> String {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.self_signed(&key).unwrap().pem()
    }

    #[test]
    fn ca_hash_is_sha256_of_the_public_key_and_matches_itself() {
        let pem = self_signed();
        let hash = ca_cert_hash(pem.as_bytes()).unwrap();
        assert!(
            hash.starts_with("sha256:") && hash.len() == 7 + 64,
            "{hash}"
        );
        let matching =
            |bundle: &str, pin: &str| certificates_matching_pin(bundle.as_bytes(), pin).unwrap();
        assert_eq!(matching(&pem, &hash).len(), 1);
        assert_eq!(
            matching(&pem, &hash.to_uppercase().replace("SHA256", "sha256")).len(),
            1
        );
        assert!(matching(&self_signed(), &hash).is_empty());
    }

    #[test]
    fn only_the_pinned_member_of_a_bundle_is_trusted() {
        let real = self_signed();
        let pin = ca_cert_hash(real.as_bytes()).unwrap();
        let bundle = format!("{real}{}", self_signed());
        let trusted = certificates_matching_pin(bundle.as_bytes(), &pin).unwrap();
        assert_eq!(trusted, certificates_der(real.as_bytes()).unwrap());
    }

    #[test]
    fn not_a_certificate() {
        assert!(matches!(ca_cert_hash(b"hello"), Err(Error::NoCertificate)));
    }

    #[test]
    fn token_chars_use_the_bootstrap_alphabet() {
        let t = random_token_chars(16);
        assert_eq!(t.len(), 16);
        assert!(
            t.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        );
        assert_ne!(t, random_token_chars(16));
    }
}
