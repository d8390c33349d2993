//! Identity checks from generated requests; no cluster.
use super::*;

/// A PEM request with the given CN and Os.
fn request(cn: &str, orgs: &[&str]) -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    // rcgen keeps one value per attribute type: the second O goes in under another key
    // with the same OID (two Os at most).
    assert!(orgs.len() <= 2);
    let keys = [
        rcgen::DnType::OrganizationName,
        rcgen::DnType::CustomDnType(vec![2, 5, 4, 10]),
    ];
    for (key, o) in keys.into_iter().zip(orgs) {
        params.distinguished_name.push(key, *o);
    }
    params.serialize_request(&key).unwrap().pem().unwrap()
}

fn facts(user: &str, groups: &[&str], cn: &str, orgs: &[&str]) -> CsrFacts {
    CsrFacts {
        name: "c1-abc".into(),
        cluster: Some("c1".into()),
        username: user.into(),
        groups: groups.iter().map(|g| (*g).to_string()).collect(),
        signer: CLIENT_SIGNER.into(),
        usages: vec!["client auth".into(), "digital signature".into()],
        subject: parse_request(request(cn, orgs).as_bytes()),
        pending: true,
        approved: false,
        expiration_seconds: None,
    }
}

const OWN: &[&str] = &[
    "system:open-cluster-management:c1",
    "system:open-cluster-management:managed-clusters",
];

#[test]
fn parses_the_subject_of_a_request() {
    let subject =
        parse_request(request("system:open-cluster-management:c1:ab12c", OWN).as_bytes()).unwrap();
    assert_eq!(
        subject.common_name,
        "system:open-cluster-management:c1:ab12c"
    );
    assert_eq!(subject.organizations, OWN);
    assert!(parse_request(b"garbage").is_err());
}

#[test]
fn bootstrap_request_for_its_own_cluster_is_approvable() {
    let f = facts(
        "system:bootstrap:abcdef",
        &[BOOTSTRAP_GROUP],
        &common_name("c1", "ab12c"),
        OWN,
    );
    assert_eq!(f.check_bootstrap("c1", false), Ok(()));
    let sa = facts(BOOTSTRAP_SA_USER, &[], &common_name("c1", "x"), OWN);
    assert_eq!(sa.check_bootstrap("c1", false), Ok(()));
    // The group alone, or another bootstrap token (kubeadm's node-join one), is not init's.
    let group = facts("someone", &[BOOTSTRAP_GROUP], &common_name("c1", "x"), OWN);
    assert!(group.check_bootstrap("c1", false).is_err());
    let node_token = facts(
        "system:bootstrap:kdm123",
        &["system:bootstrappers:kubeadm:default-node-token"],
        &common_name("c1", "x"),
        OWN,
    );
    assert!(node_token.check_bootstrap("c1", false).is_err());
}

const BOOTSTRAP_GROUP: &str = crate::api::names::BOOTSTRAP_GROUP;

#[test]
fn another_clusters_identity_is_refused() {
    let f = facts(
        "system:bootstrap:abcdef",
        &[BOOTSTRAP_GROUP],
        &common_name("c2", "ab12c"),
        &["system:open-cluster-management:c2", MANAGED_CLUSTERS_GROUP],
    );
    let err = f.check_bootstrap("c1", false).unwrap_err();
    assert!(err.contains("not an agent of cluster c1"), "{err}");
    // A CN prefix trick: cluster "c1" must not match "c1x".
    let f = facts(
        "system:bootstrap:a",
        &[BOOTSTRAP_GROUP],
        &common_name("c1x", "a"),
        OWN,
    );
    assert!(f.check_bootstrap("c1", false).is_err());
}

#[test]
fn extra_groups_are_refused() {
    let f = facts(
        "system:bootstrap:abcdef",
        &[BOOTSTRAP_GROUP],
        &common_name("c1", "a"),
        &["system:open-cluster-management:c1", "system:masters"],
    );
    assert!(
        f.check_bootstrap("c1", false)
            .unwrap_err()
            .contains("system:masters")
    );
    let f = facts(
        "system:bootstrap:a",
        &[BOOTSTRAP_GROUP],
        &common_name("c1", "a"),
        &[MANAGED_CLUSTERS_GROUP],
    );
    assert!(
        f.check_bootstrap("c1", false)
            .unwrap_err()
            .contains("lacks")
    );
}

#[test]
fn other_requesters_need_skip_approve_check() {
    let f = facts("alice", &["devs"], &common_name("c1", "a"), OWN);
    assert!(
        f.check_bootstrap("c1", false)
            .unwrap_err()
            .contains("alice")
    );
    assert_eq!(f.check_bootstrap("c1", true), Ok(()));
}

#[test]
fn signer_and_usages_are_checked() {
    let mut f = facts(
        "system:bootstrap:a",
        &[BOOTSTRAP_GROUP],
        &common_name("c1", "a"),
        OWN,
    );
    f.signer = "kubernetes.io/kubelet-serving".into();
    assert!(f.check_bootstrap("c1", false).is_err());
    let mut f = facts(
        "system:bootstrap:a",
        &[BOOTSTRAP_GROUP],
        &common_name("c1", "a"),
        OWN,
    );
    f.usages.push("server auth".into());
    assert!(f.check_bootstrap("c1", false).is_err());
}

#[test]
fn renewal_must_come_from_the_agent_itself() {
    let cn = common_name("c1", "ab12c");
    let own = facts(
        &cn,
        &["system:open-cluster-management:c1", "system:authenticated"],
        &cn,
        OWN,
    );
    assert_eq!(own.check_renewal("c1"), Ok(()));
    let bootstrap = facts("system:bootstrap:a", &[BOOTSTRAP_GROUP], &cn, OWN);
    assert!(bootstrap.check_renewal("c1").is_err());
    let other = common_name("c2", "zz");
    let foreign = facts(&other, &["system:open-cluster-management:c2"], &cn, OWN);
    assert!(foreign.check_renewal("c1").is_err());
}

#[test]
fn a_certificate_longer_than_a_year_is_refused() {
    let mut f = facts(
        "system:bootstrap:abcdef",
        &[BOOTSTRAP_GROUP],
        &common_name("c1", "ab12c"),
        OWN,
    );
    f.expiration_seconds = Some(MAX_CERT_SECONDS);
    assert_eq!(f.check_bootstrap("c1", false), Ok(()));
    f.expiration_seconds = Some(MAX_CERT_SECONDS + 1);
    assert!(
        f.check_bootstrap("c1", false)
            .unwrap_err()
            .contains("longer than")
    );
}
