//! Certificate requests for agent identities: the subject upstream's hub expects, in PEM.
use super::MANAGED_CLUSTERS_GROUP;

/// OID of the X.520 organizationName attribute (O).
const ORGANIZATION_OID: &[u64] = &[2, 5, 4, 10];
/// OU's object identifier, for the second OU on (rcgen keeps one value per attribute type).
const ORGANIZATIONAL_UNIT_OID: &[u64] = &[2, 5, 4, 11];

/// A PEM certificate request for the agent's identity, signed by `key`.
pub fn cluster_agent(
    cluster: &str,
    agent: &str,
    key: &rcgen::KeyPair,
) -> Result<String, rcgen::Error> {
    let groups = [
        super::cluster_group(cluster),
        MANAGED_CLUSTERS_GROUP.to_string(),
    ];
    subject_request(
        &super::common_name(cluster, agent),
        &groups,
        &[],
        Vec::new(),
        key,
    )
}

/// A PEM certificate request for CN `user` with an O per group, an OU per organization unit and
/// `dns_names`, signed by `key` (the agent's own identity, and its add-ons').
pub fn subject_request(
    user: &str,
    groups: &[String],
    organization_units: &[String],
    dns_names: Vec<String>,
    key: &rcgen::KeyPair,
) -> Result<String, rcgen::Error> {
    let mut params = rcgen::CertificateParams::new(dns_names)?;
    params.distinguished_name = subject_name(user, groups, organization_units);
    params.serialize_request(key)?.pem()
}

/// The name of CN `user`, an O per group and an OU per organization unit. rcgen keeps one value
/// per attribute type, so at most two of each are written (one under a custom key of the same
/// OID): the most any OCM identity carries.
#[must_use]
pub fn subject_name(
    user: &str,
    groups: &[String],
    organization_units: &[String],
) -> rcgen::DistinguishedName {
    let mut dn = rcgen::DistinguishedName::new();
    dn.push(rcgen::DnType::CommonName, user);
    for (i, group) in groups.iter().enumerate() {
        // rcgen keeps one value per attribute type: further Os are the same OID under another key.
        let kind = if i == 0 {
            rcgen::DnType::OrganizationName
        } else {
            rcgen::DnType::CustomDnType(ORGANIZATION_OID.to_vec())
        };
        dn.push(kind, group.as_str());
    }
    for (i, unit) in organization_units.iter().enumerate() {
        let kind = if i == 0 {
            rcgen::DnType::OrganizationalUnitName
        } else {
            rcgen::DnType::CustomDnType(ORGANIZATIONAL_UNIT_OID.to_vec())
        };
        dn.push(kind, unit.as_str());
    }
    dn
}
