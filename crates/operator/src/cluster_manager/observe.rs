//! The observe step: reads what the pure steps cannot know — the certificates already on the
//! cluster (signer, CA bundle, serving certificates). A missing object (or namespace) is `None`.
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client};

use super::certs::{CA_BUNDLE_CONFIGMAP, CA_BUNDLE_KEY, CertKey, Existing, SIGNER_SECRET};
use super::desired::serving_specs;
use ocm_api::names::{IMAGE_PULL_SECRET, OPERATOR_NAMESPACE};

/// Why the cluster could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading one object failed.
    #[error("reading {kind} {namespace}/{name} failed")]
    Read {
        /// Kind.
        kind: &'static str,
        /// Namespace.
        namespace: &'static str,
        /// Name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

/// What the cluster holds now.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The certificates.
    pub certs: Existing,
    /// The operator namespace's image pull secret, if any.
    pub pull_secret: Option<Secret>,
}

/// Reads the certificate Secrets and the CA bundle of `namespace` (where the hub pods run: the
/// hub namespace, or a hosted hub's namespace on the management cluster).
pub async fn observe(client: &Client, namespace: &'static str) -> Result<Observed, Error> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let read = |name: String| {
        let secrets = secrets.clone();
        async move {
            let secret = secrets.get_opt(&name).await.map_err(|source| Error::Read {
                kind: "Secret",
                namespace,
                name: name.clone(),
                source,
            })?;
            Ok::<_, Error>(secret.and_then(|s| pair(&s)))
        }
    };
    let mut certs = Existing {
        signer: read(SIGNER_SECRET.into()).await?,
        ..Existing::default()
    };
    // Every Secret any layout keeps, so a change of layout finds what the other one issued.
    for spec in serving_specs(true) {
        if let Some(p) = read(spec.secret.into()).await? {
            certs.serving.insert(spec.secret.into(), p);
        }
    }
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    certs.ca_bundle = config_maps
        .get_opt(CA_BUNDLE_CONFIGMAP)
        .await
        .map_err(|source| Error::Read {
            kind: "ConfigMap",
            namespace,
            name: CA_BUNDLE_CONFIGMAP.into(),
            source,
        })?
        .and_then(|cm| cm.data?.remove(CA_BUNDLE_KEY));
    let pull_secret = crate::pull_secret::read(client)
        .await
        .map_err(|source| Error::Read {
            kind: "Secret",
            namespace: OPERATOR_NAMESPACE,
            name: IMAGE_PULL_SECRET.into(),
            source,
        })?;
    Ok(Observed { certs, pull_secret })
}

/// `tls.crt` and `tls.key` of a Secret, when both are there and are text.
fn pair(secret: &Secret) -> Option<CertKey> {
    let data = secret.data.as_ref()?;
    let text = |k: &str| String::from_utf8(data.get(k)?.0.clone()).ok();
    Some(CertKey {
        cert: text("tls.crt")?,
        key: text("tls.key")?,
    })
}
