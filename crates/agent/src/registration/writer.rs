//! The registration agent's writes, the only place it changes either cluster: on the hub its
//! ManagedCluster (created when absent, its status when it changed), its lease and its CSRs; on
//! the cluster it runs on, the hub kubeconfig secret. What they write is decided in
//! [`super::status`], [`super::lease`] and [`super::secret`]; what it reads of the managed
//! cluster is [`super::observe`].
use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::json;

use super::secret::{self, AGENT_NAME_KEY, CLUSTER_NAME_KEY, HubCredential};
use super::{AgentOptions, Error, FIELD_MANAGER, lease, status};
use ocm_api::cluster::{CLUSTER_LEASE_NAME, ManagedCluster, ManagedClusterSpec};

/// Creates the ManagedCluster when it does not exist (the bootstrap credential may create and get).
pub async fn create_cluster(hub: &kube::Client, opts: &AgentOptions) -> Result<(), Error> {
    let api: Api<ManagedCluster> = Api::all(hub.clone());
    let what = || format!("creating ManagedCluster {} on the hub", opts.cluster_name);
    if api
        .get_opt(&opts.cluster_name)
        .await
        .map_err(|e| Error::kube(what(), e))?
        .is_some()
    {
        return Ok(());
    }
    let mc = ManagedCluster {
        metadata: ObjectMeta {
            name: Some(opts.cluster_name.clone()),
            annotations: Some(opts.settings.annotations()).filter(|a| !a.is_empty()),
            labels: Some(opts.settings.cluster_labels.clone()).filter(|l| !l.is_empty()),
            ..Default::default()
        },
        spec: ManagedClusterSpec {
            managed_cluster_client_configs: opts
                .settings
                .client_configs(opts.client_config.as_ref(), opts.managed_ca.as_deref()),
            hub_accepts_client: false,
            lease_duration_seconds: opts.lease_duration_seconds,
            taints: vec![],
        },
        status: None,
    };
    match api.create(&PostParams::default(), &mc).await {
        Ok(_) => {
            tracing::info!(cluster = %opts.cluster_name, "created ManagedCluster on the hub");
            Ok(())
        }
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(Error::kube(what(), e)),
    }
}

/// How many times a status write that lost a race with another writer (the hub controller adds
/// its own conditions right after accept) is re-read and retried within one beat: leaving it to
/// the next beat would keep a freshly accepted cluster from being Available for a lease duration.
const CONFLICT_RETRIES: usize = 3;

/// Brings the ManagedCluster status up to date, re-reading it after a conflict.
pub async fn update_status(
    hub: &kube::Client,
    mc: &ManagedCluster,
    observed: &status::Observed,
) -> Result<(), Error> {
    let name = mc.metadata.name.clone().unwrap_or_default();
    let what = || format!("updating the status of ManagedCluster {name}");
    let api: Api<ManagedCluster> = Api::all(hub.clone());
    let mut mc = std::borrow::Cow::Borrowed(mc);
    for attempt in 1..=CONFLICT_RETRIES {
        let current = mc.status.clone().unwrap_or_default();
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let wanted = status::desired(&current, observed, &now);
        let Some(body) = status::patch(&current, &wanted, mc.metadata.resource_version.as_deref())
        else {
            return Ok(());
        };
        match api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(body))
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 && attempt < CONFLICT_RETRIES => {
                tracing::debug!(cluster = %name, "status changed meanwhile; reading it again");
                mc = std::borrow::Cow::Owned(
                    api.get(&name).await.map_err(|e| Error::kube(what(), e))?,
                );
            }
            Err(kube::Error::Api(s)) if s.code == 409 => {
                tracing::debug!(cluster = %name, "status keeps changing; updating on the next beat");
                return Ok(());
            }
            Err(e) => return Err(Error::kube(what(), e)),
        }
    }
    Ok(())
}

/// Renews the lease of `cluster`: one GET and one UPDATE (guarded by the resourceVersion read).
pub async fn renew_lease(hub: &kube::Client, cluster: &str) -> Result<lease::Renewal, Error> {
    let api: Api<Lease> = Api::namespaced(hub.clone(), cluster);
    let what = || format!("renewing lease {cluster}/{CLUSTER_LEASE_NAME} on the hub");
    let Some(lease) = api
        .get_opt(CLUSTER_LEASE_NAME)
        .await
        .map_err(|e| Error::kube(what(), e))?
    else {
        return Ok(lease::Renewal::Missing);
    };
    let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
    api.replace(
        CLUSTER_LEASE_NAME,
        &PostParams::default(),
        &lease::renewed(lease, now),
    )
    .await
    .map_err(|e| Error::kube(what(), e))?;
    Ok(lease::Renewal::Renewed)
}

/// Creates `csr` on the hub; returns its name (the API server makes it from `generateName`).
pub async fn send_csr(
    api: &Api<CertificateSigningRequest>,
    csr: &CertificateSigningRequest,
) -> Result<String, Error> {
    let created = api
        .create(
            &PostParams {
                field_manager: Some(FIELD_MANAGER.into()),
                ..Default::default()
            },
            csr,
        )
        .await
        .map_err(|e| Error::kube("creating a CertificateSigningRequest on the hub", e))?;
    Ok(created.metadata.name.unwrap_or_default())
}

async fn apply_secret(
    opts: &AgentOptions,
    data: BTreeMap<String, ByteString>,
) -> Result<(), Error> {
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(opts.hub_secret.clone()),
            namespace: Some(opts.namespace.clone()),
            ..Default::default()
        },
        type_: Some("Opaque".into()),
        data: Some(data),
        ..Default::default()
    };
    let mut value = serde_json::to_value(&secret).expect("a Secret serialises");
    value["apiVersion"] = json!("v1");
    value["kind"] = json!("Secret");
    secret::api(opts)
        .patch(
            &opts.hub_secret,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&value),
        )
        .await
        .map_err(|e| Error::kube(format!("writing {}", secret::what(opts)), e))?;
    Ok(())
}

/// Stores only the cluster and agent names, so a restart before the CSR is signed keeps them.
pub async fn store_identity(opts: &AgentOptions, agent: &str) -> Result<(), Error> {
    let data = [
        (CLUSTER_NAME_KEY, opts.cluster_name.as_str()),
        (AGENT_NAME_KEY, agent),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
    .collect();
    apply_secret(opts, data).await
}

/// Stores a credential.
pub async fn store_credential(
    opts: &AgentOptions,
    credential: &HubCredential,
) -> Result<(), Error> {
    apply_secret(opts, secret::data(credential)).await
}
