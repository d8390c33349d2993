//! What `clusteradm accept` does for one cluster, decided from what it observed (pure): which
//! pending CSRs to approve, which to refuse and why, and whether to set `hubAcceptsClient`.
use crate::identity::CsrFacts;
use ocm_api::cluster::{MANAGED_CLUSTER_JOINED, ManagedCluster};
use ocm_api::conditions;

/// An annotation upstream uses for clusters registered through AWS IAM (no CSR involved).
pub const AWS_ARN_ANNOTATION: &str = "agent.open-cluster-management.io/managed-cluster-arn";
/// Condition reason of an approval by `accept` (upstream: `<argv0> Approve`).
pub const APPROVE_REASON: &str = "clusteradm Approve";
/// Condition message of an approval by `accept` (upstream's wording).
pub const APPROVE_MESSAGE: &str = "This CSR was approved by clusteradm certificate approve.";

/// What accept will do for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Cluster name.
    pub cluster: String,
    /// Pending CSRs to approve.
    pub approve: Vec<String>,
    /// Pending CSRs refused, with the reason.
    pub refused: Vec<(String, String)>,
    /// Whether `spec.hubAcceptsClient` must be set.
    pub set_accepted: bool,
    /// The cluster is accepted only on the word of a CSR approved before this ManagedCluster was
    /// created: an earlier cluster of the name, or this agent's, kept over a re-registration.
    /// A new agent's CSR may be on its way (`accept --wait` waits a moment for it).
    pub on_an_earlier_csr: bool,
}

/// Why accept cannot proceed for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// Not accepted, no pending CSR to approve and no certificate yet: the agent has not asked.
    NoCsr {
        /// Refused CSRs, to explain what was seen.
        refused: Vec<(String, String)>,
    },
    /// Several agent identities ask for this cluster; the admin must pick with `--requesters`.
    SeveralAgents(Vec<String>),
    /// Several pending CSRs ask for the same agent identity: all but one were made by someone
    /// else (or by an agent restarted meanwhile), and nothing tells which; none is approved.
    Competing(Vec<String>),
}

/// Whether `csr` was made for this ManagedCluster, not for an earlier one of the same name: CSRs
/// outlive `clean` and an unjoin (the API server keeps an approved one for an hour), so one
/// approved before the cluster was created says nothing of the agent asking now.
fn made_since(csr: &CsrFacts, mc: &ManagedCluster) -> bool {
    match (csr.created, mc.metadata.creation_timestamp.as_ref()) {
        (Some(csr), Some(cluster)) => csr >= cluster.0,
        _ => true,
    }
}

/// Decides for `cluster` from its ManagedCluster and the CSRs labelled with its name.
/// `requesters` (subject CNs) narrows the approval to those agents.
pub fn plan(
    cluster: &str,
    mc: &ManagedCluster,
    csrs: &[CsrFacts],
    skip_approve_check: bool,
    requesters: &[String],
) -> Result<Plan, Blocked> {
    let already = mc.spec.hub_accepts_client;
    let mut approve = vec![];
    let mut refused = vec![];
    let mut agents: Vec<String> = vec![];
    let mut ours = csrs
        .iter()
        .filter(|f| f.cluster.as_deref() == Some(cluster))
        .collect::<Vec<_>>();
    ours.sort_by(|a, b| a.name.cmp(&b.name));
    let no_csr_needed = mc
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(AWS_ARN_ANNOTATION));
    for f in ours.iter().filter(|f| f.pending && !no_csr_needed) {
        if let Err(why) = f.check_bootstrap(cluster, skip_approve_check) {
            refused.push((f.name.clone(), why));
            continue;
        }
        let cn = f
            .subject
            .as_ref()
            .map(|s| s.common_name.clone())
            .unwrap_or_default();
        if !requesters.is_empty() && !requesters.contains(&cn) {
            refused.push((
                f.name.clone(),
                format!("its agent {cn} is not in --requesters"),
            ));
            continue;
        }
        if !agents.contains(&cn) {
            agents.push(cn);
        }
        approve.push(f.name.clone());
    }
    if agents.len() > 1 && requesters.is_empty() {
        return Err(Blocked::SeveralAgents(agents));
    }
    if approve.len() > agents.len() {
        return Err(Blocked::Competing(approve));
    }
    // The agent may already hold a certificate (accepted before, then denied): no CSR needed.
    let approved: Vec<&CsrFacts> = ours
        .iter()
        .copied()
        .filter(|f| f.approved && f.check_bootstrap(cluster, skip_approve_check).is_ok())
        .collect();
    let has_certificate = no_csr_needed
        || mc
            .status
            .as_ref()
            .is_some_and(|s| conditions::is_true(&s.conditions, MANAGED_CLUSTER_JOINED))
        || approved.iter().any(|f| made_since(f, mc));
    let earlier_certificate = approved.iter().any(|f| !made_since(f, mc));
    if approve.is_empty() && !already && !has_certificate && !earlier_certificate {
        return Err(Blocked::NoCsr { refused });
    }
    let on_an_earlier_csr = approve.is_empty() && !already && !has_certificate;
    Ok(Plan {
        cluster: cluster.to_string(),
        approve,
        refused,
        set_accepted: !already,
        on_an_earlier_csr,
    })
}

impl Plan {
    /// Nothing to do: accepted before, nothing pending.
    #[must_use]
    pub fn is_noop(&self) -> bool {
        self.approve.is_empty() && !self.set_accepted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{MANAGED_CLUSTERS_GROUP, Subject, common_name};

    fn facts(name: &str, user: &str, subject_cluster: &str, agent: &str) -> CsrFacts {
        CsrFacts {
            name: name.into(),
            cluster: Some("c1".into()),
            username: user.into(),
            groups: if user.starts_with("system:bootstrap:") {
                vec![ocm_api::names::BOOTSTRAP_GROUP.into()]
            } else {
                vec![]
            },
            signer: ocm_api::names::CLIENT_SIGNER.into(),
            usages: vec!["client auth".into()],
            subject: Ok(Subject {
                common_name: common_name(subject_cluster, agent),
                organizations: vec![
                    format!("system:open-cluster-management:{subject_cluster}"),
                    MANAGED_CLUSTERS_GROUP.into(),
                ],
            }),
            pending: true,
            approved: false,
            expiration_seconds: None,
            created: None,
        }
    }

    fn mc(accepted: bool) -> ManagedCluster {
        let mut mc = ManagedCluster::new("c1", ocm_api::cluster::ManagedClusterSpec::default());
        mc.spec.hub_accepts_client = accepted;
        mc
    }

    #[test]
    fn an_approved_csr_older_than_the_cluster_is_marked_as_such() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        use k8s_openapi::jiff::Timestamp;
        // A cluster joined again under the same name; its new agent's CSR is not listed yet.
        let mut cluster = mc(false);
        cluster.metadata.creation_timestamp = Some(Time(Timestamp::from_second(2_000).unwrap()));
        let mut earlier = facts("c1-old", "system:bootstrap:abc", "c1", "x");
        (earlier.pending, earlier.approved) = (false, true);
        earlier.created = Some(Timestamp::from_second(1_000).unwrap());
        let on_earlier = plan("c1", &cluster, &[earlier.clone()], false, &[]).unwrap();
        assert!(on_earlier.on_an_earlier_csr && on_earlier.set_accepted);
        // One approved since the cluster was made: its agent holds a certificate.
        earlier.created = Some(Timestamp::from_second(2_001).unwrap());
        let current = plan("c1", &cluster, &[earlier], false, &[]).unwrap();
        assert!(!current.on_an_earlier_csr && current.set_accepted);
    }

    #[test]
    fn approves_the_bootstrap_csr_and_accepts() {
        let plan = plan(
            "c1",
            &mc(false),
            &[facts("c1-a", "system:bootstrap:abc", "c1", "x")],
            false,
            &[],
        )
        .unwrap();
        assert_eq!(plan.approve, ["c1-a"]);
        assert!(plan.set_accepted && plan.refused.is_empty());
    }

    #[test]
    fn a_forged_subject_is_refused_and_nothing_else_pending_blocks() {
        let forged = facts("c1-f", "system:bootstrap:abc", "c2", "x");
        let Err(Blocked::NoCsr { refused }) = plan("c1", &mc(false), &[forged], false, &[]) else {
            panic!("a forged CSR must not count");
        };
        assert_eq!(refused[0].0, "c1-f");
        assert!(
            refused[0].1.contains("not an agent of cluster c1"),
            "{}",
            refused[0].1
        );
    }

    #[test]
    fn already_accepted_without_pending_csrs_is_a_noop() {
        let mut done = facts("c1-a", "system:bootstrap:abc", "c1", "x");
        done.pending = false;
        done.approved = true;
        let plan = plan("c1", &mc(true), &[done], false, &[]).unwrap();
        assert!(plan.is_noop());
    }

    #[test]
    fn denied_then_accepted_again_needs_no_csr() {
        let mut done = facts("c1-a", "system:bootstrap:abc", "c1", "x");
        done.pending = false;
        done.approved = true;
        let plan = plan("c1", &mc(false), &[done], false, &[]).unwrap();
        assert!(plan.approve.is_empty() && plan.set_accepted);
    }

    #[test]
    fn several_agents_need_requesters() {
        let csrs = [
            facts("c1-a", "system:bootstrap:a", "c1", "aaaaa"),
            facts("c1-b", "system:bootstrap:a", "c1", "bbbbb"),
        ];
        assert!(
            matches!(plan("c1", &mc(false), &csrs, false, &[]), Err(Blocked::SeveralAgents(a)) if a.len() == 2)
        );
        let pick = [common_name("c1", "bbbbb")];
        let plan = plan("c1", &mc(false), &csrs, false, &pick).unwrap();
        assert_eq!(plan.approve, ["c1-b"]);
        assert_eq!(plan.refused.len(), 1);
    }

    #[test]
    fn two_csrs_for_one_agent_are_both_refused() {
        let csrs = [
            facts("c1-a", "system:bootstrap:a", "c1", "aaaaa"),
            facts("c1-b", "system:bootstrap:a", "c1", "aaaaa"),
        ];
        assert_eq!(
            plan("c1", &mc(false), &csrs, false, &[]),
            Err(Blocked::Competing(vec!["c1-a".into(), "c1-b".into()]))
        );
    }

    #[test]
    fn only_inits_identities_count_as_bootstrap() {
        // A kubeadm node-join token: a bootstrap token, but not OCM's.
        let mut node_token = facts("c1-k", "system:bootstrap:kdm123", "c1", "x");
        node_token.groups = vec!["system:bootstrappers:kubeadm:default-node-token".into()];
        assert!(plan("c1", &mc(false), &[node_token], false, &[]).is_err());
        let sa = facts("c1-s", crate::identity::BOOTSTRAP_SA_USER, "c1", "x");
        assert_eq!(
            plan("c1", &mc(false), &[sa], false, &[]).unwrap().approve,
            ["c1-s"]
        );
    }

    #[test]
    fn other_requesters_need_the_skip_flag() {
        let csrs = [facts("c1-a", "alice", "c1", "x")];
        assert!(plan("c1", &mc(false), &csrs, false, &[]).is_err());
        assert_eq!(
            plan("c1", &mc(false), &csrs, true, &[]).unwrap().approve,
            ["c1-a"]
        );
    }
}
