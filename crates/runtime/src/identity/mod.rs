//! Who a registration agent is, and who may ask for its certificate: the CSR subject
//! (`CN=system:open-cluster-management:<cluster>:<agent>`, `O=system:open-cluster-management:<cluster>`
//! and `O=system:open-cluster-management:managed-clusters`), and the checks `accept` (bootstrap
//! requests) and the hub controller (renewals) run before approving. Pure: no I/O.
//!
//! The subject is what the signed certificate authenticates as, so a CSR is approved only when
//! its subject is exactly the named cluster's: a bootstrap requester could otherwise ask for
//! another cluster's identity, or for `O=system:masters`.
pub mod addon;
pub mod approval;
pub mod request;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::prelude::FromDer as _;

use ocm_api::cluster::CLUSTER_NAME_LABEL;
use ocm_api::names::{CLIENT_SIGNER, CSR_USER_ANNOTATION, GRPC_SERVER_USER, GRPC_SIGNER};

/// Prefix of every agent user name and cluster group.
pub const PREFIX: &str = "system:open-cluster-management:";
/// The group every managed cluster agent is in.
pub const MANAGED_CLUSTERS_GROUP: &str = "system:open-cluster-management:managed-clusters";
/// User-name prefix of bootstrap-token users.
pub const BOOTSTRAP_USER_PREFIX: &str = "system:bootstrap:";
/// The service account whose tokens are the default bootstrap credential.
pub const BOOTSTRAP_SA_USER: &str =
    "system:serviceaccount:open-cluster-management:agent-registration-bootstrap";
/// The usages a registration CSR may ask for.
pub const ALLOWED_USAGES: &[&str] = &["client auth", "digital signature", "key encipherment"];

/// The agent's user name (its certificate's CN).
#[must_use]
pub fn common_name(cluster: &str, agent: &str) -> String {
    format!("{PREFIX}{cluster}:{agent}")
}

/// The group of one cluster's agents (its certificate's first O).
#[must_use]
pub fn cluster_group(cluster: &str) -> String {
    format!("{PREFIX}{cluster}")
}

/// The subject of a certificate request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// CN.
    pub common_name: String,
    /// Every O.
    pub organizations: Vec<String>,
}

/// Parses the subject of a PEM certificate request (`spec.request` of a CSR).
pub fn parse_request(pem: &[u8]) -> Result<Subject, String> {
    let (_, block) =
        x509_parser::pem::parse_x509_pem(pem).map_err(|e| format!("not a PEM request: {e}"))?;
    if block.label != "CERTIFICATE REQUEST" {
        return Err(format!(
            "PEM block is {:?}, not a CERTIFICATE REQUEST",
            block.label
        ));
    }
    let (_, req) = X509CertificationRequest::from_der(&block.contents)
        .map_err(|e| format!("invalid certificate request: {e}"))?;
    let subject = &req.certification_request_info.subject;
    let text = |v: &x509_parser::x509::AttributeTypeAndValue<'_>| {
        v.as_str().map(str::to_owned).map_err(|e| e.to_string())
    };
    let mut cns = subject.iter_common_name().map(text);
    let common_name = cns.next().ok_or("the request has no CN")??;
    if cns.next().is_some() {
        return Err("the request has more than one CN".into());
    }
    let organizations = subject
        .iter_organization()
        .map(text)
        .collect::<Result<_, _>>()?;
    Ok(Subject {
        common_name,
        organizations,
    })
}

/// Checks that `subject` is exactly an agent identity of `cluster`: CN
/// `system:open-cluster-management:<cluster>:<agent>` and only the cluster's own groups.
pub fn check_subject(subject: &Subject, cluster: &str) -> Result<(), String> {
    let agent = subject
        .common_name
        .strip_prefix(&format!("{PREFIX}{cluster}:"))
        .ok_or_else(|| {
            format!(
                "its subject CN {:?} is not an agent of cluster {cluster}",
                subject.common_name
            )
        })?;
    if agent.is_empty() || agent.contains(':') {
        return Err(format!(
            "its subject CN {:?} has no agent name",
            subject.common_name
        ));
    }
    let own = cluster_group(cluster);
    if !subject.organizations.contains(&own) {
        return Err(format!("its subject lacks O={own}"));
    }
    if let Some(other) = subject
        .organizations
        .iter()
        .find(|o| **o != own && o.as_str() != MANAGED_CLUSTERS_GROUP)
    {
        return Err(format!("its subject asks for group O={other}"));
    }
    Ok(())
}

/// Whether a requester is a bootstrap identity (what `accept` approves without `--skip-approve-check`).
#[must_use]
pub fn is_bootstrap_requester(username: &str, groups: &[String]) -> bool {
    // Only the identities `init` creates: its service account, or a bootstrap token in OCM's
    // bootstrap group — not any bootstrap token (kubeadm's node-join tokens are `system:bootstrap:*`
    // too), nor anyone who merely claims the group without a bootstrap token.
    username == BOOTSTRAP_SA_USER
        || (username.starts_with(BOOTSTRAP_USER_PREFIX)
            && groups.iter().any(|g| g == ocm_api::names::BOOTSTRAP_GROUP))
}

/// What matters of a CSR for approval decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsrFacts {
    /// CSR name.
    pub name: String,
    /// Its `open-cluster-management.io/cluster-name` label.
    pub cluster: Option<String>,
    /// Who created it.
    pub username: String,
    /// The requester's groups.
    pub groups: Vec<String>,
    /// `spec.signerName`.
    pub signer: String,
    /// `spec.usages`.
    pub usages: Vec<String>,
    /// The parsed subject, or why it could not be parsed.
    pub subject: Result<Subject, String>,
    /// Neither approved nor denied (nor failed) yet.
    pub pending: bool,
    /// Approved.
    pub approved: bool,
    /// `spec.expirationSeconds`: the validity the requester asks for.
    pub expiration_seconds: Option<i32>,
    /// When it was created.
    pub created: Option<k8s_openapi::jiff::Timestamp>,
}

/// The longest certificate validity an agent may ask for (a year, kube-controller-manager's
/// default `--cluster-signing-duration`): a stolen certificate must not outlive a revocation
/// for longer.
pub const MAX_CERT_SECONDS: i32 = 365 * 24 * 3600;

impl CsrFacts {
    /// Extracts the facts of a CSR.
    #[must_use]
    pub fn of(csr: &CertificateSigningRequest) -> Self {
        let conditions = csr
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .unwrap_or_default();
        let approved = conditions
            .iter()
            .any(|c| c.type_ == "Approved" && c.status == "True");
        let subject = parse_request(&csr.spec.request.0);
        // A CSR made through the gRPC server names the server as its requester; as upstream's
        // add-on approver, the requester is then the agent the server authenticated (its
        // annotation), in the groups its request asks for. Anyone else's annotation is no
        // more than a claim.
        let by_grpc_server = csr.spec.username.as_deref() == Some(GRPC_SERVER_USER);
        let (username, groups) = if by_grpc_server {
            let user = csr
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(CSR_USER_ANNOTATION).cloned());
            let groups = subject
                .as_ref()
                .map(|s| s.organizations.clone())
                .unwrap_or_default();
            (user.unwrap_or_default(), groups)
        } else {
            (
                csr.spec.username.clone().unwrap_or_default(),
                csr.spec.groups.clone().unwrap_or_default(),
            )
        };
        Self {
            name: csr.metadata.name.clone().unwrap_or_default(),
            cluster: csr
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(CLUSTER_NAME_LABEL).cloned()),
            username,
            groups,
            signer: csr.spec.signer_name.clone(),
            usages: csr.spec.usages.clone().unwrap_or_default(),
            subject,
            pending: conditions.is_empty(),
            approved,
            expiration_seconds: csr.spec.expiration_seconds,
            created: csr.metadata.creation_timestamp.as_ref().map(|t| t.0),
        }
    }

    /// The checks every approval runs: our signer (the API server's client signer, or the gRPC
    /// server's), a bounded validity, allowed usages, the cluster's subject (callers pick the
    /// pending CSRs).
    pub fn check_request(&self, cluster: &str) -> Result<(), String> {
        if self.signer != CLIENT_SIGNER && self.signer != GRPC_SIGNER {
            return Err(format!(
                "its signer is {}, not {CLIENT_SIGNER} or {GRPC_SIGNER}",
                self.signer
            ));
        }
        if let Some(s) = self.expiration_seconds.filter(|s| *s > MAX_CERT_SECONDS) {
            return Err(format!(
                "it asks for a certificate valid {s} s, longer than {MAX_CERT_SECONDS} s (a year)"
            ));
        }
        if let Some(u) = self
            .usages
            .iter()
            .find(|u| !ALLOWED_USAGES.contains(&u.as_str()))
        {
            return Err(format!("it asks for usage {u:?}"));
        }
        check_subject(self.subject.as_ref().map_err(Clone::clone)?, cluster)
    }

    /// Whether `accept` may approve this CSR for `cluster` (bootstrap requester unless
    /// `skip_requester_check`, and the cluster's subject).
    pub fn check_bootstrap(&self, cluster: &str, skip_requester_check: bool) -> Result<(), String> {
        if !skip_requester_check && !is_bootstrap_requester(&self.username, &self.groups) {
            return Err(format!(
                "its requester {} is not a bootstrap identity",
                self.username
            ));
        }
        self.check_request(cluster)
    }

    /// Whether the hub may approve this CSR as a renewal: the requester is the agent itself
    /// (user name = the new subject's CN, in the cluster's group) asking for the same identity.
    pub fn check_renewal(&self, cluster: &str) -> Result<(), String> {
        self.check_request(cluster)?;
        let subject = self.subject.as_ref().map_err(Clone::clone)?;
        if self.username != subject.common_name {
            return Err(format!(
                "its requester {} is not the agent {}",
                self.username, subject.common_name
            ));
        }
        if !self.groups.contains(&cluster_group(cluster)) {
            return Err(format!(
                "its requester is not in group {}",
                cluster_group(cluster)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
            created: None,
        }
    }

    const OWN: &[&str] = &[
        "system:open-cluster-management:c1",
        "system:open-cluster-management:managed-clusters",
    ];

    #[test]
    fn parses_the_subject_of_a_request() {
        let subject =
            parse_request(request("system:open-cluster-management:c1:ab12c", OWN).as_bytes())
                .unwrap();
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

    const BOOTSTRAP_GROUP: &str = ocm_api::names::BOOTSTRAP_GROUP;

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
    fn a_grpc_csr_is_judged_by_the_agent_the_server_authenticated() {
        use base64::Engine as _;
        let request = request(&common_name("c1", "a"), OWN);
        let csr = |username: &str, annotations: serde_json::Value| -> CertificateSigningRequest {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "c1-grpc", "labels": {CLUSTER_NAME_LABEL: "c1"}, "annotations": annotations},
                "spec": {"request": base64::engine::general_purpose::STANDARD.encode(&request),
                         "signerName": GRPC_SIGNER, "usages": ["client auth"], "username": username},
            }))
            .unwrap()
        };
        let claim = serde_json::json!({CSR_USER_ANNOTATION: BOOTSTRAP_SA_USER});
        let bootstrap = CsrFacts::of(&csr(GRPC_SERVER_USER, claim.clone()));
        assert_eq!(bootstrap.username, BOOTSTRAP_SA_USER);
        bootstrap.check_bootstrap("c1", false).unwrap();
        // The server's own identity is not the requester: without the annotation, none is.
        let unnamed = CsrFacts::of(&csr(GRPC_SERVER_USER, serde_json::json!({})));
        assert!(unnamed.check_bootstrap("c1", false).is_err());
        // Anyone else's annotation is only a claim: the CSR is judged by its own requester.
        let forged = CsrFacts::of(&csr("system:serviceaccount:default:someone", claim));
        assert_eq!(forged.username, "system:serviceaccount:default:someone");
        assert!(forged.check_bootstrap("c1", false).is_err());
        // A renewal: the agent itself (its CN) asked, in its cluster's group (from the request).
        let renewal = CsrFacts::of(&csr(
            GRPC_SERVER_USER,
            serde_json::json!({CSR_USER_ANNOTATION: common_name("c1", "a")}),
        ));
        renewal.check_renewal("c1").unwrap();
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
}
