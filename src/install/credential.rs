//! The bootstrap credential managed clusters join with: a short-lived token of the
//! `agent-registration-bootstrap` service account (TokenRequest; the default, as upstream), or the
//! long-lived bootstrap token `ocmhub.<secret>` (`--use-bootstrap-token`).
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::Client;
use kube::api::{Api, PostParams};

use crate::api::names::{BOOTSTRAP_SA, BOOTSTRAP_TOKEN_ID, OPERATOR_NAMESPACE};
use crate::error::UserError;

/// A token and when it expires.
#[derive(Debug, Clone)]
pub struct Token {
    /// The bearer token.
    pub value: String,
    /// Expiry, RFC 3339, when the token expires.
    pub expires: Option<String>,
}

/// The bootstrap-token secret's name.
#[must_use]
pub fn bootstrap_token_secret_name() -> String {
    format!("bootstrap-token-{BOOTSTRAP_TOKEN_ID}")
}

/// The secret half of the existing `ocmhub` bootstrap token, if there is one (so re-running
/// init keeps the token users already hold).
pub async fn existing_bootstrap_token_secret(client: &Client) -> anyhow::Result<Option<String>> {
    let token = read_bootstrap_token(client).await?;
    Ok(token.and_then(|t| {
        t.value
            .split_once('.')
            .map(|(_, secret)| secret.to_string())
    }))
}

/// Issues a fresh service-account token valid for `lifetime` (at least 10 minutes, the API's minimum).
pub async fn issue_service_account_token(
    client: &Client,
    lifetime: Duration,
) -> anyhow::Result<Token> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX)),
            ..Default::default()
        }),
        ..Default::default()
    };
    let issued = match accounts
        .create_token_request(BOOTSTRAP_SA, &PostParams::default(), &request)
        .await
    {
        Err(kube::Error::Api(s)) if s.code == 404 => {
            return Err(UserError::new(
                format!("service account {OPERATOR_NAMESPACE}/{BOOTSTRAP_SA} does not exist: this cluster is not an OCM hub"),
                "run `clusteradm init` on the hub first",
            )
            .into());
        }
        other => other.context("requesting a bootstrap token (TokenRequest)")?,
    };
    let status = issued.status.context("the TokenRequest has no status")?;
    let value = status.token.context("the TokenRequest returned no token")?;
    Ok(Token {
        value,
        expires: status.expiration_timestamp.map(|t| t.0.to_string()),
    })
}

/// The `ocmhub.<secret>` bootstrap token, read from its secret.
pub async fn read_bootstrap_token(client: &Client) -> anyhow::Result<Option<Token>> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
    let Some(secret) = secrets
        .get_opt(&bootstrap_token_secret_name())
        .await
        .context("reading the bootstrap token")?
    else {
        return Ok(None);
    };
    let Some(value) = crate::secrets::field(&secret, "token-secret") else {
        return Ok(None);
    };
    Ok(Some(Token {
        value: format!("{BOOTSTRAP_TOKEN_ID}.{value}"),
        expires: crate::secrets::field(&secret, "expiration"),
    }))
}
