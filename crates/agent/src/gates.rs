//! The Klusterlet's feature gates our agents act on, read from upstream's `Name=true|false`
//! flags (the Klusterlet's `featureGates` lists, as the operator renders them): a gate our agents
//! do not act on is left to the gate table ([`ocm_api::gates`]), which `join` and the operator
//! check, so it is passed over here.

/// What the agents do differently by gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Gates {
    /// `ClusterClaim` (registration; on unless switched off): the ClusterClaims are reported in
    /// `status.clusterClaims`.
    pub cluster_claim: bool,
    /// `ClusterProperty` (registration; off unless switched on): the About API's ClusterProperties
    /// are reported with the ClusterClaims.
    pub cluster_property: bool,
    /// `RawFeedbackJsonString` (work; off unless switched on): status feedback reports any value,
    /// as JSON text when it is not an integer, a string or a boolean.
    pub raw_feedback_json_string: bool,
    /// `AddonManagement` (registration; on unless switched off): the cluster's add-ons are
    /// registered (their leases and certificates, [`crate::addon`]).
    pub addon_management: bool,
    /// `ExecutorValidatingCaches` (work; off unless switched on): executor access reviews are
    /// cached and forgotten on RBAC changes, else asked for every apply.
    pub executor_validating_caches: bool,
}

impl Default for Gates {
    /// Upstream's defaults.
    fn default() -> Self {
        Self {
            cluster_claim: true,
            cluster_property: false,
            raw_feedback_json_string: false,
            addon_management: true,
            executor_validating_caches: false,
        }
    }
}

impl Gates {
    /// The gates `flags` (`Name=true|false`, the last setting of a name wins) switch, on top of
    /// upstream's defaults.
    #[must_use]
    pub fn from_flags<S: AsRef<str>>(flags: &[S]) -> Self {
        let mut gates = Self::default();
        for flag in flags {
            let Some((name, value)) = flag.as_ref().split_once('=') else {
                continue;
            };
            let on = value.trim().eq_ignore_ascii_case("true");
            match name.trim() {
                "ClusterClaim" => gates.cluster_claim = on,
                "ClusterProperty" => gates.cluster_property = on,
                "RawFeedbackJsonString" => gates.raw_feedback_json_string = on,
                "AddonManagement" => gates.addon_management = on,
                "ExecutorValidatingCaches" => gates.executor_validating_caches = on,
                _ => {}
            }
        }
        gates
    }

    /// The flags that give these gates back (for the agents' command line).
    #[must_use]
    pub fn flags(self) -> Vec<String> {
        vec![
            format!("ClusterClaim={}", self.cluster_claim),
            format!("ClusterProperty={}", self.cluster_property),
            format!("RawFeedbackJsonString={}", self.raw_feedback_json_string),
            format!("AddonManagement={}", self.addon_management),
            format!(
                "ExecutorValidatingCaches={}",
                self.executor_validating_caches
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_setting_wins_and_others_pass() {
        let gates = Gates::from_flags(&[
            "ClusterProperty=true",
            "AddonManagement=true",
            "RawFeedbackJsonString=true",
        ]);
        assert!(gates.cluster_property && gates.raw_feedback_json_string);
        assert!(
            !Gates::from_flags(&["ClusterProperty=true", "ClusterProperty=false"]).cluster_property
        );
        assert_eq!(Gates::from_flags(&gates.flags()), gates);
        assert_eq!(Gates::from_flags::<&str>(&[]), Gates::default());
        assert!(Gates::default().cluster_claim);
        assert!(!Gates::from_flags(&["ClusterClaim=false"]).cluster_claim);
    }
}
