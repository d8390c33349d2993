//! The heartbeat: Lease `managed-cluster-lease` in the cluster namespace on the hub, its
//! `renewTime` moved to now on every beat ([`super::writer::renew_lease`] sends it). The hub creates the lease when it accepts the cluster;
//! the agent only reads and updates it — upstream's hub grants cluster agents exactly
//! get/list/watch/update on leases, so a patch or a create would be refused there.
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

/// What a beat found.
#[derive(Debug, PartialEq, Eq)]
pub enum Renewal {
    /// `renewTime` moved to now.
    Renewed,
    /// The hub has not created the lease yet.
    Missing,
}

/// `lease` with `renewTime` at `now` and nothing else changed.
#[must_use]
pub fn renewed(mut lease: Lease, now: MicroTime) -> Lease {
    lease.spec.get_or_insert_with(Default::default).renew_time = Some(now);
    lease
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_renewal_moves_only_the_renew_time() {
        let lease: Lease = serde_json::from_value(json!({
            "metadata": {"name": "managed-cluster-lease", "namespace": "c1", "resourceVersion": "7",
                         "labels": {"open-cluster-management.io/cluster-name": "c1"}},
            "spec": {"holderIdentity": "managed-cluster-lease", "renewTime": "2026-01-01T00:00:00.000000Z"}
        }))
        .unwrap();
        let t: k8s_openapi::jiff::Timestamp = "2026-01-02T03:04:05.123456Z".parse().unwrap();
        let out = serde_json::to_value(renewed(lease, MicroTime(t))).unwrap();
        assert_eq!(
            out,
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": "managed-cluster-lease", "namespace": "c1", "resourceVersion": "7",
                             "labels": {"open-cluster-management.io/cluster-name": "c1"}},
                "spec": {"holderIdentity": "managed-cluster-lease", "renewTime": "2026-01-02T03:04:05.123456Z"}})
        );
    }
}
