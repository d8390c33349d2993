//! The hub components the operator can deploy, and the names each one uses (upstream's names, so
//! tooling written for upstream hubs finds them).
use super::super::InProcess;
use super::super::validate::Validated;
use ocm_api::names::{HUB_NAMESPACE, REGISTRATION_WEBHOOK, WORK_WEBHOOK};

/// One hub component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Component {
    /// Accepts clusters, creates their namespaces and RBAC, tracks their leases.
    RegistrationController,
    /// Admission webhook for ManagedClusters and ManagedClusterSetBindings.
    RegistrationWebhook,
    /// Admission webhook for ManifestWorks.
    WorkWebhook,
    /// Schedules Placements into PlacementDecisions.
    PlacementController,
    /// Installs and deploys add-ons (the `AddonManagement` gate, on by default).
    AddonManager,
    /// Serves the add-on API's conversion between its versions.
    AddonWebhook,
    /// Rolls ManifestWorkReplicaSets out (the `ManifestWorkReplicaSet` gate, off by default).
    WorkController,
}

impl Component {
    /// Every component, in apply order.
    pub const ALL: [Self; 7] = [
        Self::RegistrationController,
        Self::RegistrationWebhook,
        Self::WorkWebhook,
        Self::PlacementController,
        Self::AddonManager,
        Self::AddonWebhook,
        Self::WorkController,
    ];

    /// Whether the operator deploys this component (rather than nobody or this process running
    /// it). The add-on manager, its webhook and the work controller run wherever the hub
    /// controllers run: in this process or our hub pods, else as upstream's Deployments.
    #[must_use]
    pub fn deployed(self, in_process: InProcess) -> bool {
        match self {
            Self::RegistrationController
            | Self::AddonManager
            | Self::AddonWebhook
            | Self::WorkController => !in_process.registration,
            Self::RegistrationWebhook | Self::WorkWebhook => !in_process.webhooks,
            Self::PlacementController => !in_process.placement,
        }
    }

    /// Whether the spec's gates ask for this component at all.
    #[must_use]
    pub fn wanted(self, v: &Validated) -> bool {
        match self {
            Self::AddonManager => v.addon_management(),
            Self::WorkController => v.manifest_work_replica_set(),
            _ => true,
        }
    }

    /// Deployment name, also its `app` label.
    #[must_use]
    pub fn deployment(self) -> &'static str {
        match self {
            Self::RegistrationController => "cluster-manager-registration-controller",
            Self::RegistrationWebhook => REGISTRATION_WEBHOOK,
            Self::WorkWebhook => WORK_WEBHOOK,
            Self::PlacementController => "cluster-manager-placement-controller",
            Self::AddonManager => "cluster-manager-addon-manager-controller",
            Self::AddonWebhook => "cluster-manager-addon-webhook",
            Self::WorkController => "cluster-manager-work-controller",
        }
    }

    /// The `app` label of the pods (and the Deployment's selector).
    #[must_use]
    pub fn pod_label(self) -> &'static str {
        match self {
            Self::RegistrationController => "clustermanager-registration-controller",
            Self::PlacementController => "clustermanager-placement-controller",
            Self::AddonManager => "clustermanager-addon-manager-controller",
            Self::RegistrationWebhook
            | Self::WorkWebhook
            | Self::AddonWebhook
            | Self::WorkController => self.deployment(),
        }
    }

    /// Service account in the hub namespace.
    #[must_use]
    pub fn service_account(self) -> &'static str {
        match self {
            Self::RegistrationController => "registration-controller-sa",
            Self::RegistrationWebhook => "registration-webhook-sa",
            Self::WorkWebhook => "work-webhook-sa",
            Self::PlacementController => "placement-controller-sa",
            Self::AddonManager => ocm_api::names::ADDON_MANAGER_SA,
            Self::AddonWebhook => "addon-webhook-sa",
            Self::WorkController => "work-controller-sa",
        }
    }

    /// ClusterRole and ClusterRoleBinding name.
    #[must_use]
    pub fn cluster_role(self) -> &'static str {
        match self {
            Self::RegistrationController => {
                "open-cluster-management:cluster-manager-registration:controller"
            }
            Self::RegistrationWebhook => {
                "open-cluster-management:cluster-manager-registration:webhook"
            }
            Self::WorkWebhook => "open-cluster-management:cluster-manager-work:webhook",
            Self::PlacementController => {
                "open-cluster-management:cluster-manager-placement:controller"
            }
            Self::AddonManager => {
                "open-cluster-management:cluster-manager-addon-manager:controller"
            }
            Self::AddonWebhook => "open-cluster-management:cluster-manager-addon:webhook",
            Self::WorkController => "open-cluster-management:cluster-manager-work:controller",
        }
    }

    /// Whether this is an admission webhook (has a Service and a serving certificate).
    #[must_use]
    pub fn is_webhook(self) -> bool {
        matches!(self, Self::RegistrationWebhook | Self::WorkWebhook)
    }

    /// Whether it serves HTTPS behind a Service of its own: the admission webhooks and the
    /// add-on API's conversion webhook.
    #[must_use]
    pub fn is_served(self) -> bool {
        self.is_webhook() || self == Self::AddonWebhook
    }

    /// The Secret holding the webhook's serving certificate.
    #[must_use]
    pub fn serving_secret(self) -> Option<&'static str> {
        match self {
            Self::RegistrationWebhook => Some("registration-webhook-serving-cert"),
            Self::WorkWebhook => Some("work-webhook-serving-cert"),
            Self::AddonWebhook => Some("addon-webhook-serving-cert"),
            _ => None,
        }
    }

    /// The DNS name the apiserver calls the webhook's Service by.
    #[must_use]
    pub fn service_dns(self) -> String {
        format!("{}.{HUB_NAMESPACE}.svc", self.deployment())
    }

    /// The component's image.
    #[must_use]
    pub fn image(self, v: &Validated) -> &str {
        match self {
            Self::RegistrationController | Self::RegistrationWebhook => &v.registration_image,
            Self::WorkWebhook | Self::WorkController => &v.work_image,
            Self::PlacementController => &v.placement_image,
            Self::AddonManager | Self::AddonWebhook => &v.addon_manager_image,
        }
    }
}
