//! Upstream's AWS IRSA registration driver (`registrationDriver.authType: awsirsa`), passed
//! through to upstream's agents: our agents register by CSR only, and an EKS hub and AWS
//! credentials are out of this project's reach, so nothing here talks to AWS. What it computes is
//! what upstream's operator writes: the agents' flags and the IAM role their ServiceAccounts
//! are annotated with.
use md5::{Digest as _, Md5};

/// The ServiceAccount annotation EKS reads to give a pod a role (upstream's operator writes it).
pub const ROLE_ANNOTATION: &str = "eks.amazonaws.com/role-arn";

/// The image upstream's agents copy the AWS CLI from, in an init container.
pub const AWS_CLI_IMAGE: &str = "amazon/aws-cli:latest";

/// The two EKS clusters of a Klusterlet's AWS IRSA registration, and what follows from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsIrsa {
    /// `awsIrsa.hubClusterArn`.
    pub hub_cluster_arn: String,
    /// `awsIrsa.managedClusterArn`.
    pub managed_cluster_arn: String,
    /// Upstream's unique suffix of the IAM roles of this pair of clusters.
    pub role_suffix: String,
}

/// The account and cluster name of an EKS cluster ARN
/// (`arn:aws:eks:<region>:<12-digit account>:cluster/<name>`), or why it is not one.
fn account_and_name(arn: &str) -> Option<(&str, &str)> {
    let parts: Vec<&str> = arn.split(':').collect();
    let ["arn", "aws", "eks", region, account, resource] = parts.as_slice() else {
        return None;
    };
    let name = resource.strip_prefix("cluster/")?;
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    (word(region)
        && account.len() == 12
        && account.chars().all(|c| c.is_ascii_digit())
        && word(name))
    .then_some((*account, name))
}

/// Refuses an ARN that is not an EKS cluster's, naming `field`.
///
/// # Errors
/// `arn` is not `arn:aws:eks:<region>:<account>:cluster/<name>`.
pub fn check_arn(field: &str, arn: &str) -> Result<(), String> {
    parse(field, arn).map(|_| ())
}

/// [`account_and_name`], or an error naming `field`.
fn parse<'a>(field: &str, arn: &'a str) -> Result<(&'a str, &'a str), String> {
    account_and_name(arn).ok_or_else(|| {
        format!("{field} {arn:?} is not an EKS cluster ARN (arn:aws:eks:<region>:<12-digit account>:cluster/<name>)")
    })
}

impl AwsIrsa {
    /// The pair, or which ARN is not an EKS cluster's.
    ///
    /// # Errors
    /// An ARN that is not `arn:aws:eks:<region>:<account>:cluster/<name>`.
    pub fn from_arns(hub: &str, managed: &str) -> Result<Self, String> {
        let (hub_account, hub_name) = parse("hubClusterArn", hub)?;
        let (managed_account, managed_name) = parse("managedClusterArn", managed)?;
        // Upstream's suffix: MD5 of the four parts joined with '#', in hex.
        let joined = [hub_account, hub_name, managed_account, managed_name].join("#");
        let role_suffix = format!("{:x}", Md5::digest(joined.as_bytes()));
        Ok(Self {
            hub_cluster_arn: hub.into(),
            managed_cluster_arn: managed.into(),
            role_suffix,
        })
    }

    /// The IAM role the agents' ServiceAccounts are annotated with (in the managed cluster's
    /// account, named by the suffix), as upstream's operator names it.
    #[must_use]
    pub fn role_arn(&self) -> String {
        let (account, _) = account_and_name(&self.managed_cluster_arn).expect("checked when made");
        format!(
            "arn:aws:iam::{account}:role/ocm-managed-cluster-{}",
            self.role_suffix
        )
    }

    /// Upstream's registration agent's flags.
    #[must_use]
    pub fn flags(&self) -> Vec<String> {
        vec![
            "--registration-auth=awsirsa".into(),
            format!("--hub-cluster-arn={}", self.hub_cluster_arn),
            format!("--managed-cluster-arn={}", self.managed_cluster_arn),
            format!("--managed-cluster-role-suffix={}", self.role_suffix),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HUB: &str = "arn:aws:eks:us-west-2:123456789012:cluster/hub-cluster1";
    const MANAGED: &str = "arn:aws:eks:us-west-2:123456789012:cluster/managed-cluster1";

    #[test]
    fn role_names_match_upstreams() {
        // Oracle: md5("123456789012#hub-cluster1#123456789012#managed-cluster1"), as upstream's
        // Md5HashSuffix computes it.
        let irsa = AwsIrsa::from_arns(HUB, MANAGED).unwrap();
        assert_eq!(irsa.role_suffix, "7f8141296c75f2871e3d030f85c35692");
        assert_eq!(
            irsa.role_arn(),
            "arn:aws:iam::123456789012:role/ocm-managed-cluster-7f8141296c75f2871e3d030f85c35692"
        );
        assert_eq!(
            irsa.flags()[3],
            "--managed-cluster-role-suffix=7f8141296c75f2871e3d030f85c35692"
        );
    }

    #[test]
    fn malformed_arns_are_named() {
        let bad = "arn:aws:bks:us-west-2:123456789012:cluster/hub-cluster1";
        assert!(
            AwsIrsa::from_arns(bad, MANAGED)
                .unwrap_err()
                .contains("hubClusterArn")
        );
        assert!(
            AwsIrsa::from_arns(HUB, "managed")
                .unwrap_err()
                .contains("managedClusterArn")
        );
        for arn in [
            "arn:aws:eks:us-west-2:12345678901:cluster/a",
            "arn:aws:eks:us-west-2:123456789012:nodegroup/a",
            "arn:aws:eks:us-west-2:123456789012:cluster/",
            "arn:aws:eks::123456789012:cluster/a",
        ] {
            assert!(account_and_name(arn).is_none(), "{arn}");
        }
        assert_eq!(
            account_and_name(HUB),
            Some(("123456789012", "hub-cluster1"))
        );
    }
}
