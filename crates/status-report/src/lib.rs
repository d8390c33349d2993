//! An example add-on on [`ocm_addon_framework`], the Rust counterpart of addon-framework's
//! `helloworld` with the framework's second communication pattern: the agent talks to an
//! endpoint of its add-on manager on the hub, not to the hub's API server.
//!
//! Each cluster's agent reports the Kubernetes version of its cluster to the manager over HTTPS
//! ([`agent`]), with a client certificate of the add-on's own signer, which the manager signs
//! for the identity the cluster's registration agent asks for. The manager ([`server`]) knows
//! the cluster from that certificate alone and makes the add-on `Available` there
//! (`Customized` health), `Unknown` when reports stop.
//!
//! This file is what an add-on author writes for the framework: the agent's manifests and its
//! registration.
pub mod agent;
pub mod server;

use ocm_addon_framework::api::{ManagedCluster, ManagedClusterAddOn};
use ocm_addon_framework::{AgentAddon, CertKey, CustomSigner, Health, Registration};
use serde_json::{Value, json};

/// The add-on's name.
pub const NAME: &str = "status-report";

/// The add-on, as its manager runs it.
pub struct StatusReport {
    /// Its name (tests run several side by side).
    pub name: String,
    /// The image holding this binary, for the agent's Deployment.
    pub image: String,
    /// Where agents reach the manager (`https://host:port`).
    pub manager_url: String,
    /// The add-on's CA: it signs the agents' certificates and the manager's.
    pub ca: CertKey,
}

impl StatusReport {
    /// The signer of the agents' certificates.
    #[must_use]
    pub fn signer_name(&self) -> String {
        format!("open-cluster-management.io/{}", self.name)
    }

    /// The Secret the registration agent keeps the agent's certificate in (upstream's name).
    #[must_use]
    pub fn certificate_secret(&self) -> String {
        format!(
            "{}-{}-client-cert",
            self.name,
            self.signer_name().replace('/', "-")
        )
    }
}

impl AgentAddon for StatusReport {
    fn name(&self) -> &str {
        &self.name
    }

    fn registration(&self) -> Registration {
        Registration {
            custom_signer: Some(CustomSigner {
                signer_name: self.signer_name(),
                ca: self.ca.clone(),
            }),
            ..Registration::default()
        }
    }

    fn health(&self) -> Health {
        Health::Customized
    }

    fn manifests(
        &self,
        cluster: &ManagedCluster,
        _: &ManagedClusterAddOn,
    ) -> anyhow::Result<Vec<Value>> {
        let (name, ns) = (&self.name, self.install_namespace());
        let cluster = cluster.metadata.name.clone().unwrap_or_default();
        let args = [
            "agent",
            &format!("--cluster={cluster}"),
            &format!("--manager={}", self.manager_url),
            "--ca-file=/etc/status-report/ca/ca.crt",
            "--cert-dir=/etc/status-report/client",
        ];
        Ok(vec![
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": name, "namespace": ns}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("{name}-ca"), "namespace": ns},
                "data": {"ca.crt": self.ca.cert}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": {
                    "serviceAccountName": name,
                    "securityContext": {"runAsNonRoot": true, "runAsUser": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [{"name": "agent", "image": self.image, "args": args,
                        "securityContext": {"allowPrivilegeEscalation": false,
                            "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": true},
                        "resources": {"requests": {"cpu": "2m", "memory": "8Mi"},
                            "limits": {"cpu": "100m", "memory": "64Mi"}},
                        "volumeMounts": [
                            {"name": "ca", "mountPath": "/etc/status-report/ca", "readOnly": true},
                            {"name": "client", "mountPath": "/etc/status-report/client", "readOnly": true}]}],
                    "volumes": [
                        {"name": "ca", "configMap": {"name": format!("{name}-ca")}},
                        {"name": "client", "secret": {"secretName": self.certificate_secret()}}]}}}}),
        ])
    }
}

/// How the manager runs.
#[derive(Debug, Clone)]
pub struct ManagerOptions {
    /// The add-on's name ([`NAME`]).
    pub name: String,
    /// The namespace on the hub of the add-on's CA Secret (`<name>-ca`), made if missing.
    pub namespace: String,
    /// The image of the agents' Deployment.
    pub image: String,
    /// Where agents reach the manager (`https://host:port`).
    pub url: String,
    /// The names (and addresses) the manager's serving certificate holds: the URL's host, and
    /// e.g. its Service's name.
    pub dns_names: Vec<String>,
}

/// Runs the manager until `shutdown` is cancelled: the framework's controllers for the add-on,
/// and its endpoint on `listener` (a serving certificate of the add-on's CA, issued again daily).
pub async fn run_manager(
    hub: kube::Client,
    opts: ManagerOptions,
    listener: tokio::net::TcpListener,
    shutdown: ocm_addon_framework::Shutdown,
) -> anyhow::Result<()> {
    use ocm_addon_framework::{Manager, signer};
    let ca = signer::load_or_create(&hub, &opts.namespace, &format!("{}-ca", opts.name)).await?;
    let tls = server::Tls {
        ca: ca.clone(),
        dns_names: opts.dns_names,
    };
    let endpoint = server::serve(
        listener,
        tls,
        hub.clone(),
        opts.name.clone(),
        shutdown.clone(),
    );
    let addon = StatusReport {
        name: opts.name,
        image: opts.image,
        manager_url: opts.url,
        ca,
    };
    tokio::try_join!(endpoint, Manager::new(hub, addon).run(shutdown))?;
    Ok(())
}
