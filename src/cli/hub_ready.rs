//! Hub-side commands right after `init`: the ClusterManager operator installs the OCM CRDs a
//! moment after `init` returns, and an API server serves a CRD's resources only once it is
//! Established. [`Ctx::hub`] waits for the CRDs a command uses, within `--timeout`, saying what it
//! waits for, instead of failing with "not an OCM hub (yet)" (as `join` waits for the hub's API).
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use kube::runtime::wait::{Condition as _, await_condition, conditions::is_crd_established};

use super::{Ctx, Kube};
use crate::error::UserError;

impl Ctx {
    /// A client for the hub, once the hub serves every CRD of `crds` (`plural.group` names, e.g.
    /// `ManagedCluster::crd_name()`): at once where they are Established, else after waiting for
    /// them within `--timeout`. A cluster that has neither them nor the ClusterManager CRD is not
    /// an OCM hub: said at once. `--dry-run`, or a user who may not read CRDs, does not wait.
    pub async fn hub(&self, crds: &[&str]) -> anyhow::Result<Kube> {
        let kube = self.kube().await?;
        kube.server_version().await?;
        if self.global.dry_run {
            return Ok(kube);
        }
        let api: Api<CustomResourceDefinition> = Api::all(kube.client.clone());
        let mut waiting = Vec::new();
        for name in crds {
            let established = match api.get_opt(name).await {
                // A user who may not read CRDs (a read-only hub user) gets no wait: the
                // command's own requests say what is wrong, as before.
                Err(kube::Error::Api(s)) if s.code == 403 => return Ok(kube),
                other => other?,
            };
            if !established
                .as_ref()
                .is_some_and(|crd| is_crd_established().matches_object(Some(crd)))
            {
                waiting.push(*name);
            }
        }
        if waiting.is_empty() {
            return Ok(kube);
        }
        // Nobody is about to install the OCM APIs on a cluster without the ClusterManager CRD.
        super::require_cluster_manager_crd(&kube).await?;
        let what = waiting.join(", ");
        let spinner = self
            .printer
            .spinner(format!("waiting for the hub to serve {what}"));
        if spinner.is_hidden() {
            self.printer
                .info(format!("waiting for the hub to serve {what}"));
        }
        let timeout = self.global.timeout;
        let all = futures::future::try_join_all(
            waiting
                .iter()
                .map(|name| await_condition(api.clone(), name, is_crd_established())),
        );
        let result = tokio::time::timeout(timeout, all).await;
        spinner.finish_and_clear();
        match result {
            Ok(Ok(_)) => Ok(kube),
            Ok(Err(e)) => Err(anyhow::Error::new(e).context(format!("watching {what}"))),
            Err(_) => Err(UserError::new(
                format!("the hub did not serve {what} within {timeout:?}"),
                "check the cluster-manager operator (`clusteradm get hub-info`), or raise --timeout",
            )
            .into()),
        }
    }
}
