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
        issue_serving_window(&issuer(&signer).unwrap(), &spec()[0].dns_names, from, to).unwrap();
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
        crate::pki::der_to_pem(
            &crate::pki::certificates_der(certs.signer.cert.as_bytes()).unwrap()
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
    let bundle = crate::pki::certificates_der(certs.ca_bundle.as_bytes()).unwrap();
    assert_eq!(bundle.len(), 2, "new signer first, then the old one");
    let old_der = crate::pki::certificates_der(old.signer.unwrap().cert.as_bytes()).unwrap();
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
