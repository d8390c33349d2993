//! The component Deployments, shaped as upstream's (names, labels, args, probes, security
//! context), with the image, feature gates, resources and node placement from the spec.
use k8s_openapi::api::apps::v1::Deployment;
use serde_json::{Value, json};

use super::Component;
use crate::cluster_manager::validate::{Validated, WebhookPorts};
use ocm_api::names::HUB_NAMESPACE;

/// The ports of a served component (a webhook): `None` for a controller.
#[must_use]
pub fn ports(c: Component, v: &Validated) -> Option<WebhookPorts> {
    match c {
        Component::RegistrationWebhook => Some(v.registration_webhook),
        Component::WorkWebhook => Some(v.work_webhook),
        Component::AddonWebhook => Some(v.addon_webhook),
        _ => None,
    }
}

/// The container arguments of a component.
#[must_use]
pub fn args(c: Component, v: &Validated) -> Vec<String> {
    let (binary, command) = match c {
        Component::RegistrationController => ("/registration", "controller"),
        Component::RegistrationWebhook => ("/registration", "webhook-server"),
        Component::WorkWebhook => ("/work", "webhook-server"),
        Component::PlacementController => ("/placement", "controller"),
        Component::AddonManager => ("/addon", "manager"),
        Component::AddonWebhook => ("/addon", "webhook-server"),
        Component::WorkController => ("/work", "manager"),
    };
    let mut args: Vec<String> = vec![binary.into(), command.into()];
    if let Some(p) = ports(c, v) {
        args.extend([
            format!("--port={}", p.port),
            format!("--health-probe-port={}", p.health_probe_port),
            format!("--metrics-port={}", p.metrics_port),
        ]);
    }
    match c {
        Component::RegistrationController => {
            args.extend(v.registration_gates.iter().cloned());
            if !v.auto_approve_users.is_empty() {
                args.push(format!(
                    "--cluster-auto-approval-users={}",
                    v.auto_approve_users.join(",")
                ));
            }
            if !v.registration_drivers.is_empty() {
                args.push(format!(
                    "--enabled-registration-drivers={}",
                    v.registration_drivers.join(",")
                ));
            }
            if !v.csr_auto_approved.is_empty() {
                args.push(format!(
                    "--auto-approved-csr-users={}",
                    v.csr_auto_approved.join(",")
                ));
            }
            args.extend(awsirsa_flags(v));
        }
        Component::RegistrationWebhook => {
            if v.registration_gates.is_empty() {
                args.push("--feature-gates=DefaultClusterSet=true".into());
            }
            args.extend(v.registration_gates.iter().cloned());
        }
        Component::WorkWebhook | Component::WorkController => {
            args.extend(v.work_gates.iter().cloned());
        }
        Component::PlacementController => args.extend(v.placement_gates.iter().cloned()),
        Component::AddonManager => args.extend(v.addon_gates.iter().cloned()),
        Component::AddonWebhook => {}
    }
    args
}

/// The Deployment of component `c`.
#[must_use]
pub fn deployment(c: Component, v: &Validated) -> Deployment {
    let security = crate::pod_security::container();
    let mut container = json!({
        "name": container_name(c),
        "image": c.image(v),
        "args": args(c, v),
        "securityContext": security,
    });
    if let Some(resources) = &v.resources {
        container["resources"] = serde_json::to_value(resources).expect("serialisable");
    }
    let volumes = if let (Some(secret), Some(ports)) = (c.serving_secret(), ports(c, v)) {
        let probe = |path: &str| {
            json!({
                "httpGet": {"path": path, "scheme": "HTTP", "port": ports.health_probe_port},
                "initialDelaySeconds": 2,
            })
        };
        container["livenessProbe"] = probe("/healthz");
        container["livenessProbe"]["periodSeconds"] = json!(10);
        container["readinessProbe"] = probe("/readyz");
        container["ports"] = json!([{"containerPort": ports.port, "protocol": "TCP"}]);
        container["volumeMounts"] = json!([{
            "name": "webhook-secret",
            "mountPath": "/tmp/k8s-webhook-server/serving-certs",
            "readOnly": true,
        }]);
        json!([{"name": "webhook-secret", "secret": {"secretName": secret}}])
    } else {
        let probe = json!({
            "httpGet": {"path": "/healthz", "scheme": "HTTPS", "port": 8443},
            "initialDelaySeconds": 2,
        });
        container["livenessProbe"] = probe.clone();
        container["livenessProbe"]["periodSeconds"] = json!(10);
        container["readinessProbe"] = probe;
        let field = |name: &str, path: &str| json!({"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}});
        container["env"] = if c == Component::AddonManager {
            json!([
                field("POD_NAMESPACE", "metadata.namespace"),
                field("POD_NAME", "metadata.name")
            ])
        } else {
            json!([field("POD_NAME", "metadata.name")])
        };
        container["volumeMounts"] = json!([{"name": "tmpdir", "mountPath": "/tmp"}]);
        json!([{"name": "tmpdir", "emptyDir": {}}])
    };
    let mut pod_spec = json!({
        "serviceAccountName": c.service_account(),
        "securityContext": crate::pod_security::pod(),
        "containers": [container],
        "volumes": volumes,
        "affinity": anti_affinity(c.pod_label()),
    });
    place(&mut pod_spec, v);
    if ports(c, v).is_some_and(|p| p.host_network) {
        pod_spec["hostNetwork"] = json!(true);
    }
    serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": c.deployment(),
            "namespace": HUB_NAMESPACE,
            "labels": {"app": c.deployment()},
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": c.pod_label()}},
            "template": {
                "metadata": {"labels": {"app": c.pod_label()}},
                "spec": pod_spec,
            },
        },
    }))
    .expect("a valid Deployment")
}

/// Upstream's registration controller flags of the `awsirsa` driver.
fn awsirsa_flags(v: &Validated) -> Vec<String> {
    let Some(aws) = &v.awsirsa else {
        return Vec::new();
    };
    let mut args = Vec::new();
    if let Some(arn) = aws.hub_cluster_arn.as_deref().filter(|a| !a.is_empty()) {
        args.push(format!("--hub-cluster-arn={arn}"));
    }
    if !aws.auto_approved_identities.is_empty() {
        args.push(format!(
            "--auto-approved-arn-patterns={}",
            aws.auto_approved_identities.join(",")
        ));
    }
    if !aws.tags.is_empty() {
        args.push(format!("--aws-resource-tags={}", aws.tags.join(",")));
    }
    args
}

/// Puts the spec's node selector and tolerations on a pod spec.
pub(super) fn place(pod_spec: &mut Value, v: &Validated) {
    if !v.node_placement.node_selector.is_empty() {
        pod_spec["nodeSelector"] = json!(v.node_placement.node_selector);
    }
    if !v.node_placement.tolerations.is_empty() {
        pod_spec["tolerations"] =
            serde_json::to_value(&v.node_placement.tolerations).expect("serialisable");
    }
}

fn container_name(c: Component) -> &'static str {
    match c {
        Component::RegistrationController => "hub-registration-controller",
        Component::RegistrationWebhook | Component::WorkWebhook => "cluster-manager-webhook",
        Component::PlacementController => "placement-controller",
        Component::AddonManager => "addon-manager-controller",
        Component::AddonWebhook => "cluster-manager-addon-webhook",
        Component::WorkController => "cluster-manager-work-controller",
    }
}

/// Spread replicas over zones, then nodes (preferred, as upstream).
fn anti_affinity(app: &str) -> Value {
    let term = |weight: i32, topology: &str| {
        json!({
            "weight": weight,
            "podAffinityTerm": {
                "topologyKey": topology,
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": [app]}]},
            },
        })
    };
    json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        term(70, "topology.kubernetes.io/zone"),
        term(30, "kubernetes.io/hostname"),
    ]}})
}
