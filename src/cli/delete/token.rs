//! `clusteradm delete token`: revoke the join credential `init` made and `get token` prints, so a
//! join command that leaked stops working. As upstream's, it deletes both bootstrap
//! ClusterRoleBindings, the bootstrap ClusterRole, the bootstrap token
//! (`kube-system/bootstrap-token-ocmhub`) and the ServiceAccount
//! `open-cluster-management/agent-registration-bootstrap` (every token issued for it stops
//! authenticating with it). Clusters already joined keep working: they authenticate with their
//! own certificates. `init` issues a new credential.
use std::process::ExitCode;

use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject};
use kube::{Client, Resource};

use crate::api::names::{BOOTSTRAP_CLUSTER_ROLE, BOOTSTRAP_SA, OPERATOR_NAMESPACE};
use crate::cli::Ctx;
use crate::error::UserError;
use crate::install::credential::bootstrap_token_secret_name;

/// Flags of `delete token` (none of its own, as upstream's).
#[derive(Debug, clap::Args)]
pub struct Args {}

/// One object of the join credential: what to call it, and where it is.
struct Part {
    label: String,
    api: Api<DynamicObject>,
    name: String,
}

impl Part {
    fn new<K: Resource<DynamicType = ()>>(
        client: &Client,
        namespace: Option<&str>,
        name: &str,
    ) -> Self {
        let resource = ApiResource::erase::<K>(&());
        let (api, label) = match namespace {
            Some(ns) => (
                Api::namespaced_with(client.clone(), ns, &resource),
                format!("{} {ns}/{name}", K::kind(&())),
            ),
            None => (
                Api::all_with(client.clone(), &resource),
                format!("{} {name}", K::kind(&())),
            ),
        };
        Self {
            label,
            api,
            name: name.to_owned(),
        }
    }
}

/// The objects of the join credential, bindings first: the grant goes before the identities.
fn parts(client: &Client) -> [Part; 5] {
    let managedcluster = format!("{BOOTSTRAP_CLUSTER_ROLE}:managedcluster");
    let agent_registration = format!("{BOOTSTRAP_CLUSTER_ROLE}:agent-registration");
    [
        Part::new::<ClusterRoleBinding>(client, None, &managedcluster),
        Part::new::<ClusterRoleBinding>(client, None, &agent_registration),
        Part::new::<ClusterRole>(client, None, BOOTSTRAP_CLUSTER_ROLE),
        Part::new::<Secret>(client, Some("kube-system"), &bootstrap_token_secret_name()),
        Part::new::<ServiceAccount>(client, Some(OPERATOR_NAMESPACE), BOOTSTRAP_SA),
    ]
}

/// Runs `delete token`.
pub async fn run(_args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx.kube().await?;
    crate::cli::require_hub(&kube).await?;
    let mut present = Vec::new();
    for part in parts(&kube.client) {
        if part.api.get_opt(&part.name).await?.is_some() {
            present.push(part);
        }
    }
    if present.is_empty() {
        ctx.printer
            .info("no join credential to delete: it was already revoked (`clusteradm init` issues a new one)");
        return Ok(ExitCode::SUCCESS);
    }
    if ctx.global.dry_run {
        for part in &present {
            ctx.printer.info(format!("would delete {}", part.label));
        }
        return Ok(ExitCode::SUCCESS);
    }
    for part in &present {
        match part.api.delete(&part.name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => {
                return Err(UserError::new(
                    format!("deleting {}: {e}", part.label),
                    "run `clusteradm delete token` again: it deletes what is left",
                )
                .into());
            }
        }
        ctx.printer.done(format!("deleted {}", part.label));
    }
    ctx.printer.info(
        "join commands printed before no longer work; clusters already joined are not affected. \
         `clusteradm init` issues a new credential",
    );
    Ok(ExitCode::SUCCESS)
}
