//! The webhook certificates: a signer CA the operator owns (`signer-secret`, one year), the CA
//! bundle published for clients (`ca-bundle-configmap`), and one serving certificate per webhook
//! service (30 days), signed by the signer.
//!
//! [`plan`] keeps what is still good and re-issues what is not: a certificate is replaced when it
//! is missing or unreadable, its key does not match, less than a fifth of its lifetime remains,
//! or (serving certificates) it was not issued by the current signer or lacks a wanted DNS name.
//! The CA bundle keeps still-valid earlier signers, so a webhook still serving a certificate of
//! the previous signer stays trusted until it picks up its new one.
use std::collections::BTreeMap;

use rcgen::KeyPair;

pub use ocm_runtime::pki::webhook::{
    CertKey, Error, SERVING_LIFETIME_SECS, SIGNER_LIFETIME_SECS, issue_serving,
    issue_serving_window, issue_signer, issuer,
};

/// Secret holding the signer CA (`tls.crt`, `tls.key`).
pub const SIGNER_SECRET: &str = "signer-secret";
/// ConfigMap publishing the CA bundle.
pub const CA_BUNDLE_CONFIGMAP: &str = "ca-bundle-configmap";
/// Key of the CA bundle in [`CA_BUNDLE_CONFIGMAP`].
pub const CA_BUNDLE_KEY: &str = "ca-bundle.crt";
/// At most this many earlier signers stay in the bundle beside the current one.
const MAX_PREVIOUS_SIGNERS: usize = 2;

/// A serving certificate the hub needs: its Secret and its DNS names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServingSpec {
    /// Secret name, e.g. `registration-webhook-serving-cert`.
    pub secret: &'static str,
    /// DNS names, e.g. `cluster-manager-registration-webhook.open-cluster-management-hub.svc`.
    pub dns_names: Vec<String>,
}

/// What exists on the cluster now.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    /// The signer, if its Secret has both keys.
    pub signer: Option<CertKey>,
    /// The published bundle.
    pub ca_bundle: Option<String>,
    /// Serving certificates by Secret name.
    pub serving: BTreeMap<String, CertKey>,
}

/// The certificates to write.
#[derive(Debug, Clone, Default)]
pub struct Certs {
    /// The signer.
    pub signer: CertKey,
    /// The CA bundle (current signer first).
    pub ca_bundle: String,
    /// Serving certificates by Secret name.
    pub serving: BTreeMap<&'static str, CertKey>,
    /// What this plan (re-)issued, for logs.
    pub issued: Vec<String>,
    /// Unix time at which the next certificate enters its renewal window.
    pub next_renewal: i64,
}

/// Facts read from one certificate.
#[derive(Debug, Clone)]
pub struct Info {
    /// Start of validity (unix seconds).
    pub not_before: i64,
    /// End of validity (unix seconds).
    pub not_after: i64,
    subject: Vec<u8>,
    issuer: Vec<u8>,
    public_key: Vec<u8>,
    is_ca: bool,
    dns_names: Vec<String>,
}

impl Info {
    /// When the certificate should be replaced: once less than 20% of its lifetime remains.
    #[must_use]
    pub fn renew_at(&self) -> i64 {
        self.not_before + (self.not_after - self.not_before) * 4 / 5
    }
}

/// Reads the first certificate of a PEM text; `None` when there is none or it is not X.509.
#[must_use]
pub fn info(pem: &str) -> Option<Info> {
    let der = ocm_runtime::pki::certificates_der(pem.as_bytes())
        .ok()?
        .remove(0);
    let (_, cert) = x509_parser::parse_x509_certificate(&der).ok()?;
    let dns_names = cert
        .subject_alternative_name()
        .ok()
        .flatten()
        .map(|san| {
            san.value
                .general_names
                .iter()
                .filter_map(|n| match n {
                    x509_parser::extensions::GeneralName::DNSName(d) => Some((*d).to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Info {
        not_before: cert.validity().not_before.timestamp(),
        not_after: cert.validity().not_after.timestamp(),
        subject: cert.subject().as_raw().to_vec(),
        issuer: cert.issuer().as_raw().to_vec(),
        public_key: cert.public_key().subject_public_key.data.to_vec(),
        is_ca: cert.is_ca(),
        dns_names,
    })
}

/// The certificate's facts when `pair` is usable at `now`: readable, key matching, not due.
fn usable(pair: &CertKey, now: i64) -> Option<Info> {
    let info = info(&pair.cert)?;
    let key = KeyPair::from_pem(&pair.key).ok()?;
    (key.public_key_raw() == info.public_key.as_slice() && now < info.renew_at()).then_some(info)
}

/// Keeps or re-issues the signer and every wanted serving certificate at unix time `now`.
pub fn plan(existing: &Existing, wanted: &[ServingSpec], now: i64) -> Result<Certs, Error> {
    let mut issued = Vec::new();
    let kept_signer = existing
        .signer
        .as_ref()
        .and_then(|s| usable(s, now).filter(|i| i.is_ca).map(|i| (s.clone(), i)));
    let (signer, signer_info) = if let Some(kept) = kept_signer {
        kept
    } else {
        issued.push(SIGNER_SECRET.to_string());
        let fresh = issue_signer(now)?;
        let info = info(&fresh.cert).expect("a certificate rcgen just issued parses");
        (fresh, info)
    };
    let signing = issuer(&signer)?;
    let mut next_renewal = signer_info.renew_at();
    let mut serving = BTreeMap::new();
    for spec in wanted {
        let kept = existing.serving.get(spec.secret).and_then(|pair| {
            let info = usable(pair, now)?;
            let good = info.issuer == signer_info.subject
                && spec.dns_names.iter().all(|d| info.dns_names.contains(d));
            good.then(|| (pair.clone(), info))
        });
        let (pair, info) = if let Some(kept) = kept {
            kept
        } else {
            issued.push(spec.secret.to_string());
            let fresh = issue_serving(&signing, &spec.dns_names, now)?;
            let info = info(&fresh.cert).expect("a certificate rcgen just issued parses");
            (fresh, info)
        };
        next_renewal = next_renewal.min(info.renew_at());
        serving.insert(spec.secret, pair);
    }
    Ok(Certs {
        ca_bundle: bundle(&signer.cert, existing.ca_bundle.as_deref(), now),
        signer,
        serving,
        issued,
        next_renewal,
    })
}

/// The current signer followed by the still-valid earlier signers of `previous`, normalised PEM.
fn bundle(current: &str, previous: Option<&str>, now: i64) -> String {
    let current_der = ocm_runtime::pki::certificates_der(current.as_bytes()).unwrap_or_default();
    let mut ders = current_der.clone();
    let older = previous
        .and_then(|p| ocm_runtime::pki::certificates_der(p.as_bytes()).ok())
        .unwrap_or_default();
    for der in older {
        let valid = x509_parser::parse_x509_certificate(&der)
            .is_ok_and(|(_, c)| c.validity().not_after.timestamp() > now);
        if valid && !ders.contains(&der) && ders.len() <= MAX_PREVIOUS_SIGNERS {
            ders.push(der);
        }
    }
    ocm_runtime::pki::der_to_pem(&ders)
}

#[cfg(test)]
mod tests {
    //! Unit tests of the certs step.
    use super::*;

    const DAY: i64 = 24 * 3600;
    const NOW: i64 = 1_800_000_000;

    fn spec() -> Vec<ServingSpec> {
        vec![ServingSpec {
            secret: "registration-webhook-serving-cert",
            dns_names: vec!["svc.ns.svc".into()],
        }]
    }

    /// A hub whose signer was issued at `NOW - signer_age` and whose serving certificate (signed by
    /// it) covers `[from, to]`.
    fn existing(signer_age: i64, from: i64, to: i64) -> Existing {
        let signer = issue_signer(NOW - signer_age).unwrap();
        let serving =
            issue_serving_window(&issuer(&signer).unwrap(), &spec()[0].dns_names, from, to)
                .unwrap();
        Existing {
            ca_bundle: Some(signer.cert.clone()),
            signer: Some(signer),
            serving: [(spec()[0].secret.to_string(), serving)].into(),
        }
    }

    #[test]
    fn a_fresh_hub_gets_a_signer_and_serving_certificates() {
        let certs = plan(&Existing::default(), &spec(), NOW).unwrap();
        assert_eq!(
            certs.issued,
            [SIGNER_SECRET, "registration-webhook-serving-cert"]
        );
        let signer = info(&certs.signer.cert).unwrap();
        assert!(signer.is_ca);
        assert_eq!(signer.not_after - signer.not_before, SIGNER_LIFETIME_SECS);
        let serving = info(&certs.serving["registration-webhook-serving-cert"].cert).unwrap();
        assert_eq!(
            serving.not_after - serving.not_before,
            SERVING_LIFETIME_SECS
        );
        assert_eq!(serving.dns_names, ["svc.ns.svc"]);
        assert_eq!(serving.issuer, signer.subject);
        assert_eq!(
            certs.ca_bundle,
            ocm_runtime::pki::der_to_pem(
                &ocm_runtime::pki::certificates_der(certs.signer.cert.as_bytes()).unwrap()
            )
        );
        assert_eq!(certs.next_renewal, serving.renew_at());
    }

    #[test]
    fn a_cert_with_half_its_lifetime_left_is_kept() {
        let old = existing(DAY, NOW - 15 * DAY, NOW + 15 * DAY);
        let certs = plan(&old, &spec(), NOW).unwrap();
        assert!(certs.issued.is_empty(), "{:?}", certs.issued);
        assert_eq!(
            certs.serving["registration-webhook-serving-cert"],
            old.serving["registration-webhook-serving-cert"]
        );
        assert_eq!(&certs.signer, old.signer.as_ref().unwrap());
        // Re-planning from what was kept changes nothing: no write, no reconcile loop.
        assert_eq!(certs.ca_bundle, plan(&old, &spec(), NOW).unwrap().ca_bundle);
    }

    #[test]
    fn a_cert_with_ten_percent_left_is_replaced() {
        let old = existing(DAY, NOW - 27 * DAY, NOW + 3 * DAY);
        let certs = plan(&old, &spec(), NOW).unwrap();
        assert_eq!(certs.issued, ["registration-webhook-serving-cert"]);
        let fresh = info(&certs.serving["registration-webhook-serving-cert"].cert).unwrap();
        assert_eq!(fresh.not_before, NOW);
        assert_eq!(certs.next_renewal, fresh.renew_at());
    }

    #[test]
    fn an_old_signer_is_replaced_with_every_serving_cert_and_stays_in_the_bundle() {
        // Signer 330 days into its 365: about 10% left.
        let old = existing(330 * DAY, NOW - DAY, NOW + 29 * DAY);
        let certs = plan(&old, &spec(), NOW).unwrap();
        assert_eq!(
            certs.issued,
            [SIGNER_SECRET, "registration-webhook-serving-cert"]
        );
        let bundle = ocm_runtime::pki::certificates_der(certs.ca_bundle.as_bytes()).unwrap();
        assert_eq!(bundle.len(), 2, "new signer first, then the old one");
        let old_der =
            ocm_runtime::pki::certificates_der(old.signer.unwrap().cert.as_bytes()).unwrap();
        assert_eq!(bundle[1], old_der[0]);
    }

    #[test]
    fn a_foreign_or_mismatched_serving_cert_is_replaced() {
        let mut old = existing(DAY, NOW - DAY, NOW + 29 * DAY);
        let stranger = issue_signer(NOW).unwrap();
        let foreign = issue_serving_window(
            &issuer(&stranger).unwrap(),
            &spec()[0].dns_names,
            NOW,
            NOW + 29 * DAY,
        )
        .unwrap();
        old.serving.insert(spec()[0].secret.into(), foreign.clone());
        assert_eq!(plan(&old, &spec(), NOW).unwrap().issued, [spec()[0].secret]);

        // A key that does not belong to the certificate.
        let mut swapped = old.serving[spec()[0].secret].clone();
        swapped.key = stranger.key;
        old.serving.insert(spec()[0].secret.into(), swapped);
        assert_eq!(plan(&old, &spec(), NOW).unwrap().issued, [spec()[0].secret]);

        // Garbage.
        old.serving.insert(
            spec()[0].secret.into(),
            CertKey {
                cert: "x".into(),
                key: "y".into(),
            },
        );
        assert_eq!(plan(&old, &spec(), NOW).unwrap().issued, [spec()[0].secret]);
    }
}
