//! `clusteradm get hub-info` and `get klusterlet-info`: the operator and the components it runs,
//! in upstream's layout (two spaces a level, a tab before each workload's replicas and image), so
//! what a user or a script reads there reads the same here. A component Deployment shows
//! `(spec replicas/available replicas) image`, the operator `(available/spec)`, as upstream's do;
//! a CRD shows `(installed|absent) name [served versions, * the stored one]`.
//!
//! Our own image's hub runs as one Deployment, `cluster-manager-hub`, listed under `Hub:` (a
//! section upstream does not have); an in-process hub or agent has no Deployment to list.
use std::fmt::Write as _;
use std::process::ExitCode;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, ListParams};

use crate::api::names::OPERATOR_NAMESPACE;
use crate::api::operator::{CLUSTER_MANAGER_NAME, ClusterManager, KLUSTERLET_NAME, Klusterlet};
use crate::cli::Ctx;
use crate::operator::klusterlet::desired::{self, Agent};

/// Flags of `get hub-info` and `get klusterlet-info` (none, as upstream's).
#[derive(Debug, clap::Args)]
pub struct Args {}

const CLUSTER_MANAGER_CRD: &str = "clustermanagers.operator.open-cluster-management.io";
const KLUSTERLET_CRD: &str = "klusterlets.operator.open-cluster-management.io";

/// The hub's component Deployments by section, in upstream's order (ours last).
const HUB_SECTIONS: [(&str, &[&str]); 5] = [
    (
        "AddOn Manager",
        &["cluster-manager-addon-manager-controller"],
    ),
    (
        "Registration",
        &[
            "cluster-manager-registration-controller",
            "cluster-manager-registration-webhook",
        ],
    ),
    (
        "Work",
        &[
            "cluster-manager-work-controller",
            "cluster-manager-work-webhook",
        ],
    ),
    ("Placement", &["cluster-manager-placement-controller"]),
    ("Hub", &["cluster-manager-hub"]),
];

/// Lines indented two spaces a level, as upstream's prefix writer prints them.
#[derive(Default)]
struct Tree(String);

impl Tree {
    fn line(&mut self, level: usize, text: impl AsRef<str>) {
        let _ = writeln!(self.0, "{}{}", "  ".repeat(level), text.as_ref());
    }
}

/// Runs `get hub-info`.
pub async fn hub(_args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx.kube().await?;
    crate::cli::require_hub(&kube).await?;
    let client = &kube.client;
    let mut tree = Tree::default();
    if operator(
        &mut tree,
        client,
        "cluster-manager",
        "registration-operator",
    )
    .await?
    {
        for line in crd_lines(client, &[CLUSTER_MANAGER_CRD.to_string()]).await? {
            tree.line(2, line);
        }
    }
    let cms: Api<ClusterManager> = Api::all(client.clone());
    let Some(cm) = cms.get_opt(CLUSTER_MANAGER_NAME).await? else {
        tree.line(0, "Components:\t<uninstalled>");
        return print(&tree);
    };
    tree.line(0, "Components:");
    let related = cm.status.map(|s| s.related_resources).unwrap_or_default();
    let of = |resource: &str| {
        related
            .iter()
            .filter(|r| r.resource == resource)
            .map(|r| (r.namespace.clone().unwrap_or_default(), r.name.clone()))
            .collect::<Vec<_>>()
    };
    let deployments = of("deployments");
    for (section, names) in HUB_SECTIONS {
        let mut lines = Vec::new();
        for (namespace, name) in deployments
            .iter()
            .filter(|(_, n)| names.contains(&n.as_str()))
        {
            lines.extend(deployment_line(client, namespace, name).await?);
        }
        if !lines.is_empty() {
            tree.line(1, format!("{section}:"));
            for line in &lines {
                tree.line(2, line);
            }
        }
    }
    tree.line(1, "CustomResourceDefinition:");
    let names: Vec<String> = of("customresourcedefinitions")
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    for line in crd_lines(client, &names).await? {
        tree.line(2, line);
    }
    print(&tree)
}

/// Runs `get klusterlet-info`.
pub async fn klusterlet(_args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx.kube().await?;
    kube.server_version().await?;
    let client = &kube.client;
    let klusterlets: Api<Klusterlet> = Api::all(client.clone());
    // No Klusterlet CRD answers 404 too: either way there is no klusterlet here.
    let found = match klusterlets.get_opt(KLUSTERLET_NAME).await {
        Err(kube::Error::Api(s)) if s.code == 404 => None,
        other => other?,
    };
    let Some(k) = found else {
        crate::ui::stdout::println(
            "No klusterlet detected! Please make sure you're using the correct context!",
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    let mut tree = Tree::default();
    tree.line(0, "Klusterlet Conditions:");
    for c in k.status.iter().flat_map(|s| &s.conditions) {
        tree.line(1, format!("Type:\t\t\t{}", c.type_));
        tree.line(1, format!("Status:\t\t{}", c.status));
        tree.line(
            1,
            format!("LastTransitionTime:\t{}", c.last_transition_time.0),
        );
        tree.line(1, format!("Reason:\t\t{}", c.reason));
        tree.line(1, format!("Message:\t\t{}", c.message));
        tree.line(0, "");
    }
    if operator(&mut tree, client, "klusterlet", "klusterlet").await? {
        // Upstream names the operator's CRD here without its versions.
        let installed = Api::<CustomResourceDefinition>::all(client.clone())
            .get_opt(KLUSTERLET_CRD)
            .await?
            .is_some();
        let state = if installed { "installed" } else { "absent" };
        tree.line(2, format!("({state}) {KLUSTERLET_CRD}"));
    }
    tree.line(0, "Components:");
    if let Ok(v) = crate::operator::klusterlet::validate::lenient(&k) {
        let ns = &v.agent_namespace;
        // The combined agent of Singleton modes; otherwise upstream's two.
        let combined = deployment_line(client, ns, &format!("{}-agent", v.name)).await?;
        if let Some(line) = combined {
            tree.line(1, "Controller:");
            tree.line(2, line);
        } else {
            for (section, agent) in [("Registration", Agent::Registration), ("Work", Agent::Work)] {
                tree.line(1, format!("{section}:"));
                let name = desired::deployment_name(&v, agent);
                if let Some(line) = deployment_line(client, ns, &name).await? {
                    tree.line(2, line);
                }
            }
        }
    }
    tree.line(1, "CustomResourceDefinition:");
    let names: Vec<String> = crate::api::managed_crds()
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    for line in crd_lines(client, &names).await? {
        tree.line(2, line);
    }
    print(&tree)
}

fn print(tree: &Tree) -> anyhow::Result<ExitCode> {
    crate::ui::stdout::print(&tree.0)?;
    Ok(ExitCode::SUCCESS)
}

/// `Registration Operator:` and its Deployment's `Controller:` line (the image of `container`),
/// or `<none>` (then `false`); the caller adds the CRD lines under it.
async fn operator(
    tree: &mut Tree,
    client: &Client,
    name: &str,
    container: &str,
) -> anyhow::Result<bool> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    let Some(d) = deployments.get_opt(name).await? else {
        tree.line(0, "Registration Operator:\t<none>");
        return Ok(false);
    };
    let (expected, available, image) = workload(&d, Some(container));
    tree.line(0, "Registration Operator:");
    tree.line(1, format!("Controller:\t({available}/{expected}) {image}"));
    tree.line(1, "CustomResourceDefinition:");
    Ok(true)
}

/// A component Deployment's line, `<Agent|Controller|Webhook>:\t(replicas/available) image` (by
/// its name's suffix, as upstream's; `Controller:` otherwise); `None` when it does not exist.
async fn deployment_line(
    client: &Client,
    namespace: &str,
    name: &str,
) -> anyhow::Result<Option<String>> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let Some(d) = deployments.get_opt(name).await? else {
        return Ok(None);
    };
    let kind = if name.ends_with("agent") {
        "Agent"
    } else if name.ends_with("webhook") {
        "Webhook"
    } else {
        "Controller"
    };
    let (replicas, available, image) = workload(&d, None);
    Ok(Some(format!("{kind}:\t({replicas}/{available}) {image}")))
}

/// A Deployment's replicas, available replicas and image: of the container named `container`,
/// else of its last container (as upstream reads them).
fn workload(d: &Deployment, container: Option<&str>) -> (i32, i32, String) {
    let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let available = d
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    let containers = d
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .map(|p| p.containers.as_slice())
        .unwrap_or_default();
    let chosen = match container {
        Some(name) => containers.iter().find(|c| c.name == name),
        None => containers.last(),
    };
    let image = chosen
        .and_then(|c| c.image.clone())
        .unwrap_or_else(|| "<none>".into());
    (replicas, available, image)
}

/// `(installed|absent) name [versions]` for each CRD of `names`, sorted by name; the versions are
/// the served ones, the stored one marked `*`.
async fn crd_lines(client: &Client, names: &[String]) -> anyhow::Result<Vec<String>> {
    let crds = Api::<CustomResourceDefinition>::all(client.clone())
        .list(&ListParams::default())
        .await?;
    let mut names = names.to_vec();
    names.sort();
    names.dedup();
    Ok(names
        .iter()
        .map(|name| {
            let Some(crd) = crds
                .items
                .iter()
                .find(|c| c.metadata.name.as_ref() == Some(name))
            else {
                return format!("(absent) {name} []");
            };
            let mut served: Vec<String> = crd
                .spec
                .versions
                .iter()
                .filter(|v| v.served)
                .map(|v| {
                    if v.storage {
                        format!("*{}", v.name)
                    } else {
                        v.name.clone()
                    }
                })
                .collect();
            served.sort();
            format!("(installed) {name} [{}]", served.join("|"))
        })
        .collect())
}
