//! Upstream's well-known names and defaults: namespaces, secrets, identities, images. They are a
//! wire contract (upstream's agents and hubs look for exactly these), so they are defined once,
//! here, and everything else refers to them.

/// Namespace of the operators (cluster-manager on a hub, klusterlet on a managed cluster) and of
/// the bootstrap service account.
pub const OPERATOR_NAMESPACE: &str = "open-cluster-management";
/// Namespace of the hub components (Default mode).
pub const HUB_NAMESPACE: &str = "open-cluster-management-hub";
/// Upstream's registration webhook: its Deployment and Service in the hub namespace.
pub const REGISTRATION_WEBHOOK: &str = "cluster-manager-registration-webhook";
/// Upstream's work webhook: its Deployment and Service in the hub namespace.
pub const WORK_WEBHOOK: &str = "cluster-manager-work-webhook";
/// Our hub pods' Deployment and Service in the hub namespace (one for upstream's hub controllers).
pub const HUB_SERVICE: &str = "cluster-manager-hub";
/// Namespace of the agents on a managed cluster when the Klusterlet names none.
pub const AGENT_NAMESPACE: &str = "open-cluster-management-agent";
/// Namespace add-on agents are installed into by default.
pub const ADDON_NAMESPACE: &str = "open-cluster-management-agent-addon";

/// Name of the klusterlet operator's Deployment, ServiceAccount, ClusterRole and binding.
pub const KLUSTERLET_OPERATOR: &str = "klusterlet";
/// Secret holding the bootstrap kubeconfig (key `kubeconfig`), written by `join`.
pub const BOOTSTRAP_SECRET: &str = "bootstrap-hub-kubeconfig";
/// Secret the registration agent writes once it holds a hub-signed certificate.
pub const HUB_KUBECONFIG_SECRET: &str = "hub-kubeconfig-secret";
/// Hosted hub: the secret with the hub cluster's kubeconfig (key `kubeconfig`), on the
/// management cluster in [`HOSTED_HUB_NAMESPACE`] (upstream's name and place).
pub const EXTERNAL_HUB_SECRET: &str = "external-hub-kubeconfig";
/// Hosted hub: the management cluster's namespace of the hub pods, named after the
/// ClusterManager (`cluster-manager`), as upstream's.
pub const HOSTED_HUB_NAMESPACE: &str = "cluster-manager";
/// Hosted mode: the secret with the managed cluster's kubeconfig, in the agent namespace.
pub const EXTERNAL_MANAGED_SECRET: &str = "external-managed-kubeconfig";
/// The image pull secret (a docker config JSON) `init`/`join` put in the operator namespace; each
/// operator copies it to where its pods run and names it in their `imagePullSecrets`.
pub const IMAGE_PULL_SECRET: &str = "open-cluster-management-image-pull-credentials";
/// Prefix of ManagedCluster annotations set through the Klusterlet.
pub const ANNOTATION_PREFIX: &str = "agent.open-cluster-management.io/";

/// The audience that makes a service-account token `init` or `get token` prints carry the pin of
/// the hub's CA: `<prefix>sha256:<hex>`. The API server accepts the token for its own audience
/// beside it; `join` reads the pin from the token (no secret needed), so a join line reduced to
/// `--hub-token` and `--hub-apiserver`, as upstream's scripts build it, still verifies the hub.
pub const CA_PIN_AUDIENCE_PREFIX: &str = "urn:clusteradm:ca-cert-hash:";

/// Upstream's add-on manager's ServiceAccount, in the hub namespace. Our hub reads a template
/// add-on's signing CA as this identity (impersonated), so a user grants it the CA Secret as
/// upstream documents, and the hub pod itself may read no Secret.
pub const ADDON_MANAGER_SA: &str = "addon-manager-controller-sa";

/// The signer every registration CSR names.
pub const CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";
/// The signer of the CSRs agents make through the hub's gRPC server (upstream's
/// `GRPCAuthSigner`): the gRPC server's CA signs them.
pub const GRPC_SIGNER: &str = "open-cluster-management.io/grpc";
/// On a CSR made through the hub's gRPC server (whose identity is then `spec.username`): the
/// user the server authenticated as asking for it (upstream's `CSRUsernameAnnotation`).
pub const CSR_USER_ANNOTATION: &str = "open-cluster-management.io/csr-user";
/// The gRPC server's identity (upstream's ServiceAccount): only on a CSR it made is
/// [`CSR_USER_ANNOTATION`] believed, as upstream's add-on CSR approver does.
pub const GRPC_SERVER_USER: &str =
    "system:serviceaccount:open-cluster-management-hub:grpc-server-sa";
/// Service account whose tokens are the default bootstrap credential.
pub const BOOTSTRAP_SA: &str = "agent-registration-bootstrap";
/// The bootstrap token id `--use-bootstrap-token` uses.
pub const BOOTSTRAP_TOKEN_ID: &str = "ocmhub";
/// Group bootstrap-token users get, bound to the bootstrap ClusterRole.
pub const BOOTSTRAP_GROUP: &str = "system:bootstrappers:managedcluster";
/// The ClusterRole every bootstrap identity is bound to.
pub const BOOTSTRAP_CLUSTER_ROLE: &str = "open-cluster-management:bootstrap";

/// `spec.leaseDurationSeconds` when a ManagedCluster names none (upstream's default).
pub const DEFAULT_LEASE_SECONDS: i32 = 60;

/// Default image registry.
pub const DEFAULT_REGISTRY: &str = "quay.io/open-cluster-management";
/// Annotation on the ClusterManager choosing how the hub's admission rules are enforced:
/// `webhooks` (upstream's webhook Deployments, the default) or `policies`
/// (ValidatingAdmissionPolicies, no webhook Deployments). Only this project's operator reads it.
pub const ADMISSION_ANNOTATION: &str = "clusteradm.open-cluster-management.io/admission";
/// The OCM release whose images `--bundle-version default` means.
pub const DEFAULT_BUNDLE_VERSION: &str = "1.3.1";

/// `<registry>/<component>:<tag>`, the image of one OCM component.
#[must_use]
pub fn image_ref(registry: &str, component: &str, tag: &str) -> String {
    format!("{}/{component}:{tag}", registry.trim_end_matches('/'))
}

/// The namespace the agents run in, on the cluster that runs them: `spec.namespace` (default
/// `open-cluster-management-agent`), or in Hosted modes the Klusterlet's own name on the
/// management cluster (as upstream).
#[must_use]
pub fn agent_namespace(
    klusterlet_name: &str,
    spec_namespace: Option<&str>,
    hosted: bool,
) -> String {
    if hosted {
        klusterlet_name.to_string()
    } else {
        spec_namespace
            .filter(|n| !n.is_empty())
            .unwrap_or(AGENT_NAMESPACE)
            .to_string()
    }
}

/// Checks a cluster name: a DNS-1123 label (`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, at most 63).
pub fn validate_cluster_name(name: &str) -> Result<(), String> {
    if is_dns_label(name) {
        Ok(())
    } else {
        Err(format!(
            "invalid cluster name {name:?}: it must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)"
        ))
    }
}

/// Why no cluster may be called `name` on the hub, if none may: the hub's own and Kubernetes'
/// system namespaces are never a cluster's (a cluster named `kube-system` or `kube-node-lease`
/// would otherwise be granted leases and events there), nor are names whose per-cluster
/// ClusterRole is a shared one (`registration`, `work`).
#[must_use]
pub fn reserved_namespace(name: &str) -> Option<&'static str> {
    if name == "registration" || name == "work" {
        // `open-cluster-management:managedcluster:<name>` is a ClusterRole every cluster shares.
        Some("its ClusterRole would be the one every cluster's agents share")
    } else if name == "default" || name.starts_with("kube-") {
        Some("it is a Kubernetes system namespace")
    } else if name.starts_with("open-cluster-management") {
        Some("it is one of OCM's own namespaces")
    } else {
        None
    }
}

/// Whether `name` is a DNS-1123 label.
#[must_use]
pub fn is_dns_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    let ok_char = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes.iter().all(|c| ok_char(c) || *c == b'-')
        && bytes.first().is_some_and(ok_char)
        && bytes.last().is_some_and(ok_char)
}

/// Whether `name` is a DNS-1123 subdomain: dot-separated labels, at most 253 characters.
#[must_use]
pub fn is_dns_subdomain(name: &str) -> bool {
    name.len() <= 253 && name.split('.').all(is_dns_label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains_are_dot_separated_labels() {
        assert!(is_dns_subdomain("helloworld-0.0.1"));
        assert!(!is_dns_subdomain("helloworld-0..1"));
        assert!(!is_dns_subdomain("Hello"));
    }

    #[test]
    fn system_namespaces_are_never_a_clusters() {
        for name in [
            "default",
            "kube-system",
            "kube-node-lease",
            "kube-public",
            "open-cluster-management",
            "open-cluster-management-hub",
            "open-cluster-management-agent",
        ] {
            assert!(reserved_namespace(name).is_some(), "{name}");
        }
        for name in ["cluster1", "kubernetes", "prod-kube-1"] {
            assert!(reserved_namespace(name).is_none(), "{name}");
        }
    }

    #[test]
    fn cluster_names_are_dns_labels() {
        assert!(validate_cluster_name("cluster1").is_ok());
        assert!(validate_cluster_name("a-b").is_ok());
        for bad in ["", "-a", "a-", "A", "a_b", &"a".repeat(64)] {
            assert!(validate_cluster_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn image_refs_ignore_a_trailing_slash() {
        assert_eq!(
            image_ref("quay.io/ocm/", "work", "v1"),
            "quay.io/ocm/work:v1"
        );
    }
}
