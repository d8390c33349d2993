//! The component Deployments, shaped as upstream's (names, labels, args, probes, security
//! context), with the image, feature gates, resources and node placement from the spec.
use k8s_openapi::api::apps::v1::Deployment;
use serde_json::{Value, json};

use super::Component;
use crate::api::names::HUB_NAMESPACE;
use crate::operator::cluster_manager::validate::Validated;

/// The container arguments of a component.
#[must_use]
pub fn args(c: Component, v: &Validated) -> Vec<String> {
    let webhook_ports = |p: crate::operator::cluster_manager::validate::WebhookPorts| {
        vec![
            format!("--port={}", p.port),
            format!("--health-probe-port={}", p.health_probe_port),
            format!("--metrics-port={}", p.metrics_port),
        ]
    };
    let mut args: Vec<String> = match c {
        Component::RegistrationController => vec!["/registration".into(), "controller".into()],
        Component::RegistrationWebhook => vec!["/registration".into(), "webhook-server".into()],
        Component::WorkWebhook => vec!["/work".into(), "webhook-server".into()],
        Component::PlacementController => vec!["/placement".into(), "controller".into()],
    };
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
            args.extend(webhook_ports(v.registration_webhook));
            if v.registration_gates.is_empty() {
                args.push("--feature-gates=DefaultClusterSet=true".into());
            }
            args.extend(v.registration_gates.iter().cloned());
        }
        Component::WorkWebhook => {
            args.extend(webhook_ports(v.work_webhook));
            args.extend(v.work_gates.iter().cloned());
        }
        Component::PlacementController => args.extend(v.placement_gates.iter().cloned()),
    }
    args
}

/// The Deployment of component `c`.
#[must_use]
pub fn deployment(c: Component, v: &Validated) -> Deployment {
    let security = crate::operator::pod_security::container();
    let mut container = json!({
        "name": container_name(c),
        "image": c.image(v),
        "args": args(c, v),
        "securityContext": security,
    });
    if let Some(resources) = &v.resources {
        container["resources"] = serde_json::to_value(resources).expect("serialisable");
    }
    let volumes = if let Some(secret) = c.serving_secret() {
        let ports = if c == Component::RegistrationWebhook {
            v.registration_webhook
        } else {
            v.work_webhook
        };
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
        container["env"] = json!([{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]);
        container["volumeMounts"] = json!([{"name": "tmpdir", "mountPath": "/tmp"}]);
        json!([{"name": "tmpdir", "emptyDir": {}}])
    };
    let mut pod_spec = json!({
        "serviceAccountName": c.service_account(),
        "securityContext": crate::operator::pod_security::pod(),
        "containers": [container],
        "volumes": volumes,
        "affinity": anti_affinity(c.pod_label()),
    });
    place(&mut pod_spec, v);
    let host_network = match c {
        Component::RegistrationWebhook => v.registration_webhook.host_network,
        Component::WorkWebhook => v.work_webhook.host_network,
        _ => false,
    };
    if host_network {
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
