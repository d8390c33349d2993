//! Who called: the cluster an add-on agent's client certificate was issued for. The certificate
//! carries the registration agent's default subject, whose group names the cluster
//! (`system:open-cluster-management:cluster:<c>:addon:<addon>`); the framework signed it only
//! after checking the CSR came from that cluster's agent, so the group is the cluster's word.
use ocm_runtime::identity::PREFIX;

/// The cluster whose agent of `addon` holds the certificate `der` (DER), from its subject's
/// organizations; None when it names none.
#[must_use]
pub fn cluster_of(der: &[u8], addon: &str) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let suffix = format!(":addon:{addon}");
    let prefix = format!("{PREFIX}cluster:");
    cert.subject()
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .find_map(|o| {
            o.strip_prefix(&prefix)?
                .strip_suffix(&suffix)
                .filter(|c| !c.is_empty() && !c.contains(':'))
                .map(str::to_owned)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A certificate whose subject has the one organization `o` (rcgen keeps one per type).
    fn certificate(o: Option<&str>) -> Vec<u8> {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::default();
        if let Some(o) = o {
            params
                .distinguished_name
                .push(rcgen::DnType::OrganizationName, o);
        }
        params.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn the_cluster_is_read_from_the_addons_group_only() {
        let der = certificate(Some(
            "system:open-cluster-management:cluster:c1:addon:status",
        ));
        assert_eq!(cluster_of(&der, "status").as_deref(), Some("c1"));
        assert_eq!(cluster_of(&der, "other"), None, "another add-on's group");
        let every_cluster = certificate(Some("system:open-cluster-management:addon:status"));
        assert_eq!(cluster_of(&every_cluster, "status"), None);
        let colon = certificate(Some(
            "system:open-cluster-management:cluster:c1:addon:x:addon:status",
        ));
        assert_eq!(cluster_of(&colon, "status"), None, "a name with a colon");
        assert_eq!(cluster_of(&certificate(None), "status"), None);
    }
}
