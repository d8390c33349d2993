//! The bootstrap credential managed clusters join with: a short-lived token of the
//! `agent-registration-bootstrap` service account (TokenRequest; the default, as upstream), or the
//! long-lived bootstrap token `ocmhub.<secret>` (`--use-bootstrap-token`). A service-account token
//! carries the pin of the hub's CA (see [`issue_service_account_token`]).
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::Client;
use kube::api::{Api, PostParams};

use crate::api::names::{
    BOOTSTRAP_SA, BOOTSTRAP_TOKEN_ID, CA_PIN_AUDIENCE_PREFIX, OPERATOR_NAMESPACE,
};
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

/// Issues a fresh service-account token valid for `lifetime` (at least 10 minutes, the API's
/// minimum), carrying the hub CA's pin `ca_cert_hash` as an extra audience
/// ([`CA_PIN_AUDIENCE_PREFIX`]) beside the API server's own, so that `join` verifies the hub with
/// the token alone.
pub async fn issue_service_account_token(
    client: &Client,
    lifetime: Duration,
    ca_cert_hash: &str,
) -> anyhow::Result<Token> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    let request = |audiences: Vec<String>, lifetime: Duration| TokenRequest {
        spec: Some(TokenRequestSpec {
            audiences: Some(audiences),
            expiration_seconds: Some(i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX)),
            ..Default::default()
        }),
        ..Default::default()
    };
    // The API server's own audiences (`--api-audiences`) are what it fills in for a request that
    // names none. Asked as a dry run of the shortest lifetime: Kubernetes 1.36 still issues a
    // token then, which is dropped here unread.
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let shortest = Duration::from_secs(600);
    let defaults = token_request(&accounts, &dry_run, &request(Vec::new(), shortest)).await?;
    let mut audiences = defaults.spec.and_then(|s| s.audiences).unwrap_or_default();
    if audiences.is_empty() {
        return Err(crate::error::Internal(
            "the API server named no audience for a service-account token".into(),
        )
        .into());
    }
    audiences.push(format!("{CA_PIN_AUDIENCE_PREFIX}{ca_cert_hash}"));
    let issued = token_request(
        &accounts,
        &PostParams::default(),
        &request(audiences, lifetime),
    )
    .await?;
    let status = issued.status.context("the TokenRequest has no status")?;
    let value = status.token.context("the TokenRequest returned no token")?;
    Ok(Token {
        value,
        expires: status.expiration_timestamp.map(|t| t.0.to_string()),
    })
}

async fn token_request(
    accounts: &Api<ServiceAccount>,
    params: &PostParams,
    request: &TokenRequest,
) -> anyhow::Result<TokenRequest> {
    match accounts
        .create_token_request(BOOTSTRAP_SA, params, request)
        .await
    {
        Err(kube::Error::Api(s)) if s.code == 404 => Err(UserError::new(
            format!("service account {OPERATOR_NAMESPACE}/{BOOTSTRAP_SA} does not exist: this cluster is not an OCM hub"),
            "run `clusteradm init` on the hub first",
        )
        .into()),
        other => other.context("requesting a bootstrap token (TokenRequest)"),
    }
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
