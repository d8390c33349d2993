//! The conditions upstream's agent sets on a ManagedClusterAddOn each time it stores a credential
//! for the add-on (`ClusterCertificateRotated`, and `TokenRefreshed` under the token driver): the
//! add-on's owners (and upstream's e2e suite) read them to know the add-on's agent has its
//! identity.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use crate::registration::rotate;
use ocm_api::addon::ManagedClusterAddOn;
use ocm_api::conditions;

/// Upstream's condition type.
pub const CLUSTER_CERTIFICATE_ROTATED: &str = "ClusterCertificateRotated";

/// Upstream's message: the certificate's validity window.
fn message(cert_pem: &str) -> String {
    let at = |s: i64| Timestamp::from_second(s).map_or_else(|_| s.to_string(), |t| t.to_string());
    match rotate::validity(cert_pem.as_bytes()) {
        Ok(v) => format!(
            "client certificate rotated starting from {} to {}",
            at(v.not_before),
            at(v.not_after)
        ),
        Err(_) => "client certificate rotated".into(),
    }
}

/// Sets the condition on add-on `addon` of `cluster` on the hub, for the certificate just
/// stored.
pub async fn report(
    hub: &Client,
    cluster: &str,
    addon: &str,
    cert_pem: &str,
) -> Result<(), kube::Error> {
    let rotated = conditions::new(
        CLUSTER_CERTIFICATE_ROTATED,
        conditions::TRUE,
        "ClientCertificateUpdated",
        message(cert_pem),
        &Time(Timestamp::now()),
    );
    set_condition(hub, cluster, addon, rotated).await
}

/// Sets `condition` on add-on `addon` of `cluster` on the hub; a write that meets a newer
/// version reads again (a few times), a deleted add-on is left.
pub async fn set_condition(
    hub: &Client,
    cluster: &str,
    addon: &str,
    condition: conditions::Condition,
) -> Result<(), kube::Error> {
    let api: Api<ManagedClusterAddOn> = Api::namespaced(hub.clone(), cluster);
    for _ in 0..3 {
        let Some(mca) = api.get_opt(addon).await? else {
            return Ok(());
        };
        let mut wanted = mca.status.map(|s| s.conditions).unwrap_or_default();
        if !conditions::set(&mut wanted, condition.clone()) {
            return Ok(());
        }
        let patch = json!({
            "metadata": {"resourceVersion": mca.metadata.resource_version},
            "status": {"conditions": wanted},
        });
        match api
            .patch_status(addon, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(kube::Error::Api(e)) if e.code == 404 => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_validity_window() {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["a".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let m = message(&cert.pem());
        assert!(
            m.starts_with("client certificate rotated starting from 19"),
            "{m}"
        );
        assert!(m.contains(" to "), "{m}");
        assert_eq!(message("not a certificate"), "client certificate rotated");
    }
}
