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

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::prelude::FromDer as _;

use crate::api::cluster::CLUSTER_NAME_LABEL;
use crate::api::names::CLIENT_SIGNER;

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
            && groups
                .iter()
                .any(|g| g == crate::api::names::BOOTSTRAP_GROUP))
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
        Self {
            name: csr.metadata.name.clone().unwrap_or_default(),
            cluster: csr
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(CLUSTER_NAME_LABEL).cloned()),
            username: csr.spec.username.clone().unwrap_or_default(),
            groups: csr.spec.groups.clone().unwrap_or_default(),
            signer: csr.spec.signer_name.clone(),
            usages: csr.spec.usages.clone().unwrap_or_default(),
            subject: parse_request(&csr.spec.request.0),
            pending: conditions.is_empty(),
            approved,
            expiration_seconds: csr.spec.expiration_seconds,
        }
    }

    /// The checks every approval runs: our signer, a bounded validity, allowed usages, the cluster's
    /// subject (callers pick the pending CSRs).
    pub fn check_request(&self, cluster: &str) -> Result<(), String> {
        if self.signer != CLIENT_SIGNER {
            return Err(format!(
                "its signer is {}, not {CLIENT_SIGNER}",
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
mod tests;
