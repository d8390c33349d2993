//! The agents' Deployments, with upstream's names, images, arguments and volumes:
//! `<k>-registration-agent` (`/registration agent`), `<k>-work-agent` (`/work agent`), or in
//! Singleton modes `<k>-agent` (`/registration-operator agent`).
use k8s_openapi::api::apps::v1::Deployment;
use serde_json::{Value, json};

use super::service_account::{Workload, name as sa_name};
use super::{Agent, KLUSTERLET_LABEL, deployment_name};
use crate::klusterlet::aws_irsa::{AWS_CLI_IMAGE, AwsIrsa};
use crate::klusterlet::validate::Validated;
use ocm_agent::registration::settings::ClaimLimits;
use ocm_api::names::{BOOTSTRAP_SECRET, HUB_KUBECONFIG_SECRET};
use ocm_runtime::rate::Rate;

const BOOTSTRAP_DIR: &str = "/spoke/bootstrap";
const HUB_DIR: &str = "/spoke/hub-kubeconfig";
const SPOKE_DIR: &str = crate::klusterlet::managed_kubeconfig::MOUNT_DIR;

/// Deployments of the deployed workloads.
pub(super) fn agents(v: &Validated, deployed: &[Workload]) -> Vec<Deployment> {
    deployed.iter().map(|w| agent(v, *w)).collect()
}

/// Where our agent serves `/healthz` and `/readyz`.
pub const PROBE_PORT: i32 = 8000;
/// Where our agent serves `/metrics` to authenticated callers.
pub const METRICS_PORT: i32 = ocm_runtime::metrics_server::PORT;

/// Our image's agent: `clusteradm controller agent`, which reads its secrets through the API.
/// In Hosted modes it acts on the managed cluster through the mounted external kubeconfig.
/// In Default and Hosted modes each of upstream's two Deployments runs one of its agents
/// (`--components`), with the flags of that agent alone.
fn our_args(v: &Validated, w: Workload) -> Vec<String> {
    let mut args = vec![
        "controller".into(),
        "agent".into(),
        format!("--cluster-name={}", v.cluster_name),
        format!("--agent-namespace={}", v.agent_namespace),
        format!("--probe-address=0.0.0.0:{PROBE_PORT}"),
    ];
    let (registers, works) = match w {
        Workload::Singleton => (true, true),
        Workload::Registration => {
            args.push("--components=registration".into());
            (true, false)
        }
        Workload::Work => {
            args.push("--components=work".into());
            (false, true)
        }
    };
    if v.hosted {
        args.push(format!("--managed-kubeconfig={SPOKE_DIR}/kubeconfig"));
    }
    if super::rbac::serves_metrics(v) {
        args.push(format!("--metrics-address=0.0.0.0:{METRICS_PORT}"));
    }
    // Each agent's gates, both lists for both, as upstream's Singleton agent takes them.
    let gates = [
        if registers {
            v.registration_gates.clone()
        } else {
            Vec::new()
        },
        if works {
            v.work_gates.clone()
        } else {
            Vec::new()
        },
    ]
    .concat();
    if !gates.is_empty() {
        args.push(format!("--feature-gates={}", gates.join(",")));
    }
    if works {
        args.extend(work_flags(v));
    }
    if !registers {
        args.extend(rate_flags("kube-api", v.work_rate));
        return args;
    }
    args.extend(registration_flags(v));
    // Upstream's flags, written (as upstream's join writes the field) only for tokens.
    let addon_auth = v.registration.addon_auth;
    if addon_auth.driver == ocm_api::operator::AddOnAuthType::Token {
        args.push("--addon-kubeclient-registration-auth=token".into());
        args.push(format!(
            "--addon-token-expiration-seconds={}",
            addon_auth.expiration_seconds
        ));
    }
    if !v.registration.cluster_labels.is_empty() {
        args.push(format!(
            "--cluster-labels={}",
            pairs(&v.registration.cluster_labels)
        ));
    }
    let managed_rate = if works {
        v.agent_rate()
    } else {
        v.registration_rate
    };
    args.extend(rate_flags("kube-api", managed_rate));
    if let Some(hubs) = &v.hubs {
        args.push(format!(
            "--bootstrap-kubeconfig-secrets={}",
            hubs.secrets.join(",")
        ));
        args.push(format!(
            "--hub-connection-timeout-seconds={}",
            hubs.timeout.as_secs()
        ));
    }
    args
}

/// The work agent's flags from the Klusterlet's `workConfiguration`, upstream's names and values
/// (our agent takes the same).
fn work_flags(v: &Validated) -> Vec<String> {
    let eviction = v
        .eviction_grace_period
        .iter()
        .map(|d| format!("--appliedmanifestwork-eviction-grace-period={d}"));
    let status = v
        .status_sync_interval
        .iter()
        .map(|d| format!("--status-sync-interval={d}"));
    eviction
        .chain(status)
        .chain(rate_flags("hub-kube-api", v.work_hub_rate))
        .collect()
}

/// The registration agent's flags from the Klusterlet's `registrationConfiguration` and
/// `externalServerURLs`, upstream's names and values (our agent takes the same).
fn registration_flags(v: &Validated) -> Vec<String> {
    let r = &v.registration;
    let mut args = Vec::new();
    if !r.external_servers.is_empty() {
        let urls: Vec<&str> = r.external_servers.iter().map(|s| s.url.as_str()).collect();
        args.push(format!("--spoke-external-server-urls={}", urls.join(",")));
    }
    if !r.cluster_annotations.is_empty() {
        args.push(format!(
            "--cluster-annotations={}",
            pairs(&r.cluster_annotations)
        ));
    }
    if let Some(secs) = r.cert_expiration_seconds {
        args.push(format!("--client-cert-expiration-seconds={secs}"));
    }
    if r.claims != ClaimLimits::default() {
        args.push(format!(
            "--max-custom-cluster-claims={}",
            r.claims.max_custom
        ));
    }
    if !r.claims.reserved_suffixes.is_empty() {
        args.push(format!(
            "--reserved-cluster-claim-suffixes={}",
            r.claims.reserved_suffixes.join(",")
        ));
    }
    args
}

/// `k1=v1,k2=v2`, upstream's form of a map flag.
fn pairs(map: &std::collections::BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(",")
}

/// `--<prefix>-qps` and `--<prefix>-burst` of `rate`, when one is set.
fn rate_flags(prefix: &str, rate: Option<Rate>) -> Vec<String> {
    rate.map(|r| {
        vec![
            format!("--{prefix}-qps={}", r.qps),
            format!("--{prefix}-burst={}", r.burst),
        ]
    })
    .unwrap_or_default()
}

/// The command-line arguments of a workload.
pub(super) fn args(v: &Validated, w: Workload) -> Vec<String> {
    if v.ours {
        return our_args(v, w);
    }
    let mut args: Vec<String> = match w {
        Workload::Registration => vec!["/registration".into(), "agent".into()],
        Workload::Work => vec!["/work".into(), "agent".into()],
        Workload::Singleton => vec!["/registration-operator".into(), "agent".into()],
    };
    args.push(format!("--spoke-cluster-name={}", v.cluster_name));
    let registers = w != Workload::Work;
    if let (true, Some(hubs)) = (registers, &v.hubs) {
        // Upstream's layout: each hub's secret mounted at /spoke/<name>.
        for name in &hubs.secrets {
            args.push(format!("--bootstrap-kubeconfigs=/spoke/{name}/kubeconfig"));
        }
        args.push(format!(
            "--hub-connection-timeout-seconds={}",
            hubs.timeout.as_secs()
        ));
    } else if registers {
        args.push(format!("--bootstrap-kubeconfig={BOOTSTRAP_DIR}/kubeconfig"));
    } else {
        args.push(format!("--hub-kubeconfig={HUB_DIR}/kubeconfig"));
    }
    let gates = match w {
        Workload::Registration => v.registration_gates.clone(),
        Workload::Work => v.work_gates.clone(),
        Workload::Singleton => [v.registration_gates.clone(), v.work_gates.clone()].concat(),
    };
    if !gates.is_empty() {
        args.push(format!("--feature-gates={}", gates.join(",")));
    }
    if w != Workload::Registration {
        args.extend(work_flags(v));
    }
    if registers {
        args.extend(registration_flags(v));
        if let Some((auth, expiration)) = &v.addon_client_auth {
            args.push(format!("--addon-kubeclient-registration-auth={auth}"));
            if let Some(secs) = expiration {
                args.push(format!("--addon-token-expiration-seconds={secs}"));
            }
        }
        args.extend(v.aws_irsa.iter().flat_map(AwsIrsa::flags));
    }
    let managed_rate = match w {
        Workload::Registration => v.registration_rate,
        Workload::Work => v.work_rate,
        Workload::Singleton => v.agent_rate(),
    };
    args.extend(rate_flags("kube-api", managed_rate));
    args.push("--disable-leader-election".into());
    if v.hosted {
        args.push(format!("--spoke-kubeconfig={SPOKE_DIR}/kubeconfig"));
        args.push(format!("--terminate-on-files={SPOKE_DIR}/kubeconfig"));
    }
    args.push(format!("--terminate-on-files={HUB_DIR}/kubeconfig"));
    args
}

/// The Klusterlet's placement of the agent pods: `nodePlacement`, `priorityClassName` and
/// `hubApiServerHostAlias`, where upstream's operator puts them.
fn placed(pod: &mut Value, v: &Validated) {
    let placement = &v.node_placement;
    if !placement.node_selector.is_empty() {
        pod["nodeSelector"] = json!(placement.node_selector);
    }
    if !placement.tolerations.is_empty() {
        pod["tolerations"] = serde_json::to_value(&placement.tolerations).expect("serialisable");
    }
    if let Some(class) = &v.priority_class_name {
        pod["priorityClassName"] = json!(class);
    }
    if let Some(alias) = &v.hub_host_alias {
        pod["hostAliases"] = json!([{"ip": alias.ip, "hostnames": [alias.hostname]}]);
    }
}

/// Our agent's probes and ports (upstream's agents serve theirs differently, unprobed here).
fn probed(container: &mut Value, v: &Validated) {
    let probe = |path: &str| json!({"httpGet": {"path": path, "port": PROBE_PORT, "scheme": "HTTP"}, "periodSeconds": 10});
    container["livenessProbe"] = probe("/healthz");
    container["readinessProbe"] = probe("/readyz");
    container["ports"] =
        json!([{"name": "healthz", "containerPort": PROBE_PORT, "protocol": "TCP"}]);
    if super::rbac::serves_metrics(v) {
        container["ports"]
            .as_array_mut()
            .expect("a list")
            .push(json!({"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}));
    }
}

/// Upstream's registering agents run the AWS CLI (with AWS IRSA), copied in by an init
/// container: its volumes and mounts, and the init containers.
fn aws_cli(mounts: &mut Vec<Value>, volumes: &mut Vec<Value>) -> Value {
    mounts.push(json!({"name": "dot-aws", "mountPath": "/.aws"}));
    mounts.push(json!({"name": "awscli", "mountPath": "/awscli"}));
    volumes.push(json!({"name": "dot-aws", "emptyDir": {}}));
    volumes.push(json!({"name": "awscli", "emptyDir": {}}));
    json!([{
        "name": "load-awscli",
        "image": AWS_CLI_IMAGE,
        "command": ["cp", "-vr", "/usr/local/aws-cli/v2/current/dist", "/awscli"],
        "volumeMounts": [{"name": "awscli", "mountPath": "/awscli"}],
    }])
}

fn agent(v: &Validated, w: Workload) -> Deployment {
    let (name, image, app) = match w {
        Workload::Registration => (
            deployment_name(v, Agent::Registration),
            &v.registration_image,
            "klusterlet-registration-agent",
        ),
        Workload::Work => (
            deployment_name(v, Agent::Work),
            &v.work_image,
            "klusterlet-manifestwork-agent",
        ),
        Workload::Singleton => (
            deployment_name(v, Agent::Registration),
            &v.agent_image,
            "klusterlet-agent",
        ),
    };
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    if w == Workload::Work && v.ours {
        // Our work agent reads the hub kubeconfig secret through the API.
    } else if w == Workload::Work {
        mounts
            .push(json!({"name": "hub-kubeconfig-secret", "mountPath": HUB_DIR, "readOnly": true}));
        volumes.push(json!({"name": "hub-kubeconfig-secret", "secret": {"secretName": HUB_KUBECONFIG_SECRET}}));
    } else {
        match &v.hubs {
            // Our agent reads the hubs' secrets through the API: none is mounted (a missing
            // one would keep the pod from starting).
            Some(_) if v.ours => {}
            Some(hubs) => {
                for name in &hubs.secrets {
                    mounts.push(json!({"name": name, "mountPath": format!("/spoke/{name}"), "readOnly": true}));
                    volumes.push(json!({"name": name, "secret": {"secretName": name}}));
                }
            }
            None => {
                mounts.push(
                    json!({"name": "bootstrap-secret", "mountPath": BOOTSTRAP_DIR, "readOnly": true}),
                );
                volumes.push(
                    json!({"name": "bootstrap-secret", "secret": {"secretName": BOOTSTRAP_SECRET}}),
                );
            }
        }
        mounts.push(json!({"name": "hub-kubeconfig", "mountPath": HUB_DIR}));
        volumes.push(json!({"name": "hub-kubeconfig", "emptyDir": {"medium": "Memory"}}));
    }
    // Upstream's agents write their serving certificates under /tmp (the root is read-only).
    mounts.push(json!({"name": "tmpdir", "mountPath": "/tmp"}));
    volumes.push(json!({"name": "tmpdir", "emptyDir": {}}));
    let aws_cli =
        (w != Workload::Work && v.aws_irsa.is_some()).then(|| aws_cli(&mut mounts, &mut volumes));
    if v.hosted {
        mounts.push(
            json!({"name": "spoke-kubeconfig-secret", "mountPath": SPOKE_DIR, "readOnly": true}),
        );
        // The agent's own least-privilege kubeconfig, never the user's admin one.
        let secret = crate::klusterlet::managed_kubeconfig::secret_name(w);
        volumes.push(json!({"name": "spoke-kubeconfig-secret", "secret": {"secretName": secret}}));
    }
    let labels = json!({"app": app, KLUSTERLET_LABEL: v.name});
    let mut container = json!({
        "name": app,
        "image": image,
        "args": args(v, w),
        "volumeMounts": mounts,
        "securityContext": crate::pod_security::container(),
        "resources": v.resources,
    });
    if v.ours {
        probed(&mut container, v);
    }
    let mut pod = json!({
        "serviceAccountName": sa_name(v, w),
        "securityContext": crate::pod_security::pod(),
        "containers": [container],
        "volumes": volumes,
    });
    if let Some(init) = aws_cli {
        pod["initContainers"] = init;
    }
    placed(&mut pod, v);
    let value: Value = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": v.agent_namespace, "labels": labels},
        "spec": {
            // Ours: a leader and a standby under the agent's Lease. Upstream's: one, as upstream.
            "replicas": if v.ours { 2 } else { 1 },
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": labels},
                "spec": pod,
            },
        },
    });
    serde_json::from_value(value).expect("a well-formed Deployment (checked by the unit tests)")
}
