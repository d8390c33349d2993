//! Finding the hub CA without trusting the hub first.
//!
//! Upstream `join` talks to the hub with TLS verification off and trusts whatever CA it finds.
//! Here the CA is either given (`--ca-file`), or read from `kube-public/cluster-info` over a
//! connection that is *not yet* trusted and then verified before any of it is used: by the
//! `--ca-cert-hash` pin `init` prints, or by the detached JWS the hub's bootstrap-signer adds
//! for a bootstrap token (kubeadm's token discovery, [`super::jws`]). Without either there is no
//! way to tell the real hub from an impostor, so discovery fails rather than fall back.
//!
//! The untrusted read is anonymous, always: the token never crosses a connection before the hub
//! is verified (a man in the middle could answer 401 to collect it, and with a bootstrap token's
//! secret sign his own cluster-info). A hub that refuses anonymous reads can still be verified
//! with `--ca-cert-hash`, against the certificates its TLS handshake presents, or with
//! `--ca-file`. A pin makes only the certificates matching it trusted, never the rest of a bundle
//! the unverified sender put beside them. After discovery every request uses a client that
//! verifies TLS against the discovered CA ([`super::bootstrap::Bootstrap::client`]).
use anyhow::Context as _;
use base64::Engine as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::Api;

use super::hub::connection_error;
use super::jws;
use crate::error::UserError;
use crate::install::cluster_info::{JWS_PREFIX, KUBECONFIG_KEY, NAME, NAMESPACE};

/// What discovery needs.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// `--hub-apiserver`.
    pub server: &'a str,
    /// `--hub-token`.
    pub token: &'a str,
    /// Contents of `--ca-file`, if given.
    pub ca_file: Option<&'a str>,
    /// `--ca-cert-hash`, if given.
    pub pin: Option<&'a str>,
}

/// How the hub CA came to be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifiedBy {
    /// The user gave it (`--ca-file`).
    CaFile,
    /// It matches `--ca-cert-hash`.
    Pin,
    /// cluster-info carries a valid JWS for the bootstrap token.
    Jws {
        /// The token id that signed it.
        token_id: String,
    },
}

/// The verified hub CA and what cluster-info says about the hub.
#[derive(Debug, Clone)]
pub struct HubTrust {
    /// The CA bundle, PEM.
    pub ca_pem: String,
    /// The server URL cluster-info records, if cluster-info was read and names one.
    pub cluster_info_server: Option<String>,
    /// How the CA was verified.
    pub verified_by: VerifiedBy,
}

/// Discovers and verifies the hub CA (see the module docs).
pub async fn discover(req: Request<'_>) -> anyhow::Result<HubTrust> {
    if let Some(ca) = req.ca_file {
        let ders = crate::pki::certificates_der(ca.as_bytes()).map_err(|e| {
            UserError::new(
                format!("--ca-file holds no usable CA: {e}"),
                "pass a PEM file with the hub's CA certificate",
            )
        })?;
        // Both given: they must agree, or one of them is not the hub's.
        if let Some(pin) = req.pin
            && crate::pki::matching_pin(ders, pin).map_or(true, |m| m.is_empty())
        {
            return Err(UserError::new(
                format!("no certificate in --ca-file matches --ca-cert-hash {pin}"),
                "pass the hub's CA file and the hash `clusteradm init` printed for it, or only one of them",
            )
            .into());
        }
        return Ok(HubTrust {
            ca_pem: ca.to_string(),
            cluster_info_server: None,
            verified_by: VerifiedBy::CaFile,
        });
    }
    if req.pin.is_none() && jws::split_bootstrap_token(req.token).is_none() {
        // Nothing could verify what the hub sends: fail before the token goes anywhere.
        return Err(unverifiable(
            "the token is not a bootstrap token, so cluster-info cannot be checked by its signature",
        ));
    }
    let doc = match read_anonymously(req.server, NAME).await? {
        Anonymous::Read(doc) => doc,
        Anonymous::Refused => return verify_presented_chain(req).await,
    };
    let info = doc.as_ref().and_then(|cm| cm.data.as_ref());
    let kubeconfig = info.and_then(|d| d.get(KUBECONFIG_KEY));
    let (cluster_info_server, cluster_info_ca) = match kubeconfig {
        Some(text) => parse_cluster_info(text)?,
        None => (None, None),
    };

    if let Some(pin) = req.pin {
        let ca = match cluster_info_ca {
            Some(ca) => ca,
            None => match read_anonymously(req.server, "kube-root-ca.crt").await? {
                Anonymous::Read(cm) => cm
                    .and_then(|cm| cm.data?.get("ca.crt").cloned())
                    .ok_or_else(|| no_published_ca(req.server))?,
                Anonymous::Refused => return verify_presented_chain(req).await,
            },
        };
        let trusted = crate::pki::certificates_matching_pin(ca.as_bytes(), pin).map_err(|e| {
            UserError::new(
                format!("the hub published an unreadable CA: {e}"),
                "check --hub-apiserver",
            )
        })?;
        if trusted.is_empty() {
            return Err(pin_mismatch(req));
        }
        return Ok(HubTrust {
            ca_pem: crate::pki::der_to_pem(&trusted),
            cluster_info_server,
            verified_by: VerifiedBy::Pin,
        });
    }

    let Some((id, secret)) = jws::split_bootstrap_token(req.token) else {
        return Err(unverifiable(
            "the token is not a bootstrap token, so cluster-info cannot be checked by its signature",
        ));
    };
    let (Some(text), Some(ca)) = (kubeconfig, cluster_info_ca) else {
        return Err(unverifiable(
            "the hub has no kube-public/cluster-info with a CA",
        ));
    };
    let Some(signature) = info.and_then(|d| d.get(&format!("{JWS_PREFIX}{id}"))) else {
        return Err(unverifiable(format!(
            "kube-public/cluster-info is not signed for token id {id} (no {JWS_PREFIX}{id}; is the bootstrap-signer controller running on the hub?)"
        )));
    };
    jws::verify_detached(signature, text.as_bytes(), id, secret).map_err(|e| {
        UserError::new(
            format!("kube-public/cluster-info failed verification with the bootstrap token: {e}"),
            "check --hub-token and --hub-apiserver; someone may be intercepting the connection",
        )
    })?;
    Ok(HubTrust {
        ca_pem: ca,
        cluster_info_server,
        verified_by: VerifiedBy::Jws {
            token_id: id.to_string(),
        },
    })
}

/// What the hub at `server` presents as its CA, unverified: its pin (`sha256:<hex>`, as
/// `--ca-cert-hash` takes it) and subject. The CA of cluster-info, else of
/// `kube-public/kube-root-ca.crt`, else the last certificate of its TLS handshake. Only for a
/// person to compare with what the hub's `clusteradm get token` prints: nothing here is trusted.
pub async fn presented_ca(server: &str) -> anyhow::Result<(String, String)> {
    let mut pem = match read_anonymously(server, NAME).await? {
        Anonymous::Read(doc) => match doc.and_then(|cm| cm.data?.get(KUBECONFIG_KEY).cloned()) {
            Some(text) => parse_cluster_info(&text)?.1,
            None => None,
        },
        Anonymous::Refused => None,
    };
    if pem.is_none()
        && let Anonymous::Read(Some(cm)) = read_anonymously(server, "kube-root-ca.crt").await?
    {
        pem = cm.data.and_then(|d| d.get("ca.crt").cloned());
    }
    let pem = if let Some(pem) = pem {
        pem
    } else {
        let chain = super::peer::presented_chain(server).await?;
        crate::pki::der_to_pem(&chain[chain.len().saturating_sub(1)..])
    };
    let pin = crate::pki::ca_cert_hash(pem.as_bytes()).map_err(|e| {
        UserError::new(
            format!("the hub presented an unreadable CA: {e}"),
            "check --hub-apiserver",
        )
    })?;
    let subject = crate::pki::certificates_der(pem.as_bytes())
        .ok()
        .and_then(|ders| {
            let der = ders.into_iter().next()?;
            let (_, cert) = x509_parser::parse_x509_certificate(&der).ok()?;
            Some(cert.subject().to_string())
        })
        .unwrap_or_default();
    Ok((pin, subject))
}

/// The error when nothing can vouch for the hub's CA.
fn unverifiable(why: impl std::fmt::Display) -> anyhow::Error {
    UserError::new(
        format!("cannot verify the hub's identity: {why}"),
        "pass --ca-cert-hash sha256:<hex> (printed by `clusteradm init` and `clusteradm get token` on the hub), or --ca-file with the hub's CA",
    )
    .into()
}

/// `(server, CA PEM)` of a cluster-info kubeconfig.
pub fn parse_cluster_info(text: &str) -> anyhow::Result<(Option<String>, Option<String>)> {
    let kc = kube::config::Kubeconfig::from_yaml(text)
        .context("kube-public/cluster-info on the hub holds an invalid kubeconfig")?;
    let Some(cluster) = kc.clusters.into_iter().find_map(|c| c.cluster) else {
        return Ok((None, None));
    };
    let ca = cluster
        .certificate_authority_data
        .map(|b64| base64::engine::general_purpose::STANDARD.decode(b64.trim()))
        .transpose()
        .context("kube-public/cluster-info: certificate-authority-data is not base64")?
        .map(|pem| String::from_utf8_lossy(&pem).into_owned());
    Ok((cluster.server, ca))
}

/// What an anonymous read of a public document found.
enum Anonymous {
    /// The document, or `None` when it does not exist.
    Read(Option<Box<ConfigMap>>),
    /// The hub does not let anonymous users read it.
    Refused,
}

/// Reads `kube-public/<name>` anonymously over a connection whose certificate is not checked.
async fn read_anonymously(server: &str, name: &str) -> anyhow::Result<Anonymous> {
    match get(&untrusted_client(server)?, name).await {
        Ok(doc) => Ok(Anonymous::Read(doc.map(Box::new))),
        Err(kube::Error::Api(s)) if s.code == 401 || s.code == 403 => Ok(Anonymous::Refused),
        Err(e) => Err(connection_error(
            e,
            server,
            "reading kube-public/cluster-info",
        )),
    }
}

/// The hub refuses anonymous reads: only a pin, checked against the certificates the hub's TLS
/// handshake presents, can verify it without sending the token.
async fn verify_presented_chain(req: Request<'_>) -> anyhow::Result<HubTrust> {
    let Some(pin) = req.pin else {
        return Err(UserError::new(
            format!(
                "cannot verify the hub's identity: {} does not let anonymous users read kube-public/cluster-info, and the token is never sent to an unverified hub",
                req.server
            ),
            "pass --ca-file with the hub's CA, or --ca-cert-hash (printed by `clusteradm init` and `clusteradm get token` on the hub)",
        )
        .into());
    };
    let chain = super::peer::presented_chain(req.server).await?;
    let trusted = crate::pki::matching_pin(chain, pin).map_err(|e| {
        UserError::new(
            format!("the hub presented an unreadable certificate: {e}"),
            "check --hub-apiserver",
        )
    })?;
    if trusted.is_empty() {
        return Err(UserError::new(
            format!(
                "cannot verify the hub's identity: {} does not let anonymous users read kube-public/cluster-info, and no certificate its TLS handshake presents matches --ca-cert-hash {pin}",
                req.server
            ),
            "pass --ca-file with the hub's CA (most API servers do not send their CA in the handshake); or someone may be intercepting the connection",
        )
        .into());
    }
    Ok(HubTrust {
        ca_pem: crate::pki::der_to_pem(&trusted),
        cluster_info_server: None,
        verified_by: VerifiedBy::Pin,
    })
}

fn pin_mismatch(req: Request<'_>) -> anyhow::Error {
    UserError::new(
        format!(
            "the hub's CA does not match --ca-cert-hash {}: refusing to trust {}",
            req.pin.unwrap_or_default(),
            req.server
        ),
        "check --hub-apiserver and --ca-cert-hash (`clusteradm get token` on the hub prints both); someone may be intercepting the connection",
    )
    .into()
}

fn no_published_ca(server: &str) -> anyhow::Error {
    UserError::new(
        format!("the hub {server} publishes neither kube-public/cluster-info nor kube-public/kube-root-ca.crt"),
        "pass the hub's CA with --ca-file",
    )
    .into()
}

async fn get(client: &Client, name: &str) -> Result<Option<ConfigMap>, kube::Error> {
    Api::<ConfigMap>::namespaced(client.clone(), NAMESPACE)
        .get_opt(name)
        .await
}

/// An anonymous client that accepts any server certificate. Used only by [`read_anonymously`]
/// for one read of a public discovery document whose content is verified (pin or JWS) before
/// anything in it is used; it carries no credential and never acts on the hub.
fn untrusted_client(server: &str) -> anyhow::Result<Client> {
    let uri: http::Uri = server
        .parse()
        .with_context(|| format!("invalid hub URL {server}"))?;
    let mut config = kube::Config::new(uri);
    config.accept_invalid_certs = true;
    config.connect_timeout = Some(std::time::Duration::from_secs(10));
    config.read_timeout = Some(std::time::Duration::from_secs(30));
    Client::try_from(config).context("cannot build a client for the hub")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_info_parses_server_and_ca() {
        let text = crate::install::cluster_info::kubeconfig_text("https://hub:6443", "PEM");
        let (server, ca) = parse_cluster_info(&text).unwrap();
        assert_eq!(server.as_deref(), Some("https://hub:6443"));
        assert_eq!(ca.as_deref(), Some("PEM"));
    }
}
