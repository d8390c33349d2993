//! Talking to the hub as the agent will: preflight checks with the bootstrap credential over a
//! TLS-verified connection, before anything is changed on the managed cluster, and the errors a
//! user can act on (unreachable hub, untrusted certificate, invalid token).
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::Client;
use kube::api::{Api, PostParams};

use crate::error::UserError;
use crate::preflight::{self, Permission};

/// The API group and version the registration agent needs on the hub.
pub const CLUSTER_API: &str = "cluster.open-cluster-management.io/v1";

/// Turns a failed hub request into an error that says what to do.
#[must_use]
pub fn connection_error(err: kube::Error, server: &str, doing: &str) -> anyhow::Error {
    if let kube::Error::Api(status) = &err
        && status.code == 401
    {
        return UserError::new(
            format!("the hub {server} rejected the bootstrap token: token invalid or expired"),
            "run `clusteradm get token` on the hub for a fresh token",
        )
        .into();
    }
    let text = format!("{:#}", anyhow::Error::new(err));
    let (message, hint) = if [
        "UnknownIssuer",
        "invalid peer certificate",
        "certificate",
        "tls",
    ]
    .iter()
    .any(|m| text.contains(m))
    {
        (
            format!("TLS verification of the hub {server} failed while {doing}: {text}"),
            "the hub's certificate is not signed by the hub CA: check --hub-apiserver, --ca-file or --ca-cert-hash",
        )
    } else if [
        "Connection refused",
        "error trying to connect",
        "timed out",
        "dns error",
        "connect",
    ]
    .iter()
    .any(|m| text.contains(m))
    {
        (
            format!("cannot reach the hub {server} while {doing}: {text}"),
            "check --hub-apiserver and that the hub API server is reachable from here (or --proxy-url)",
        )
    } else {
        return anyhow::anyhow!(text).context(format!("{doing} on the hub {server} failed"));
    };
    UserError::new(message, hint).into()
}

/// What join says while it waits for the hub's OCM API.
pub const WAITING_FOR_API: &str = "waiting for the hub's OCM API (cluster.open-cluster-management.io/v1 managedclusters), which the cluster-manager operator installs after `clusteradm init`";
/// How often the hub's API is looked for while join waits for it.
const API_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// Checks, with the bootstrap client, that the token authenticates, may create CSRs, and that
/// the hub serves the OCM cluster API, which it waits for (calling `waiting` once) as a hub
/// `init` just set up gets it from its operator a little later; the caller bounds the wait.
/// Sends no mutating request.
pub async fn preflight(
    client: &Client,
    server: &str,
    waiting: &(dyn Fn(&str) + Send + Sync),
) -> anyhow::Result<()> {
    let reviews: Api<SelfSubjectReview> = Api::all(client.clone());
    reviews
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .map_err(|e| connection_error(e, server, "checking the bootstrap token"))?;
    let wanted = [Permission {
        verb: "create",
        group: "certificates.k8s.io",
        resource: "certificatesigningrequests",
        namespace: None,
    }];
    let missing = preflight::missing(client, &wanted).await?;
    if !missing.is_empty() {
        return Err(UserError::new(
            format!(
                "the bootstrap token may not create CertificateSigningRequests on the hub {server}"
            ),
            "use the token `clusteradm init` or `clusteradm get token` prints on the hub",
        )
        .into());
    }
    let mut announced = false;
    loop {
        match client.list_api_group_resources(CLUSTER_API).await {
            Ok(list) if list.resources.iter().any(|r| r.name == "managedclusters") => {
                return Ok(());
            }
            Ok(_) | Err(kube::Error::Api(_)) => {
                if !announced {
                    waiting(WAITING_FOR_API);
                    announced = true;
                }
                tokio::time::sleep(API_POLL).await;
            }
            Err(e) => return Err(connection_error(e, server, "discovering the OCM API")),
        }
    }
}

/// What [`connect`] needs: the join flags that concern the hub.
#[derive(Clone, Copy)]
pub struct Connect<'a> {
    /// `--hub-apiserver`.
    pub server: &'a str,
    /// `--hub-token`.
    pub token: &'a str,
    /// Contents of `--ca-file`.
    pub ca_file: Option<&'a str>,
    /// `--ca-cert-hash`.
    pub pin: Option<&'a str>,
    /// `--proxy-url`.
    pub proxy_url: Option<&'a str>,
    /// Contents of `--proxy-ca-file`, trusted beside the hub CA.
    pub proxy_ca: Option<&'a str>,
    /// `--force-internal-endpoint-lookup`: use the server cluster-info records.
    pub internal_endpoint: bool,
    /// Told once if the hub has no OCM API yet, which [`preflight()`](fn@preflight) then waits for.
    pub waiting: &'a (dyn Fn(&str) + Send + Sync),
}

/// Discovery and preflight: the bootstrap kubeconfig, with a verified CA, that the hub accepts.
pub async fn connect(c: Connect<'_>) -> anyhow::Result<super::bootstrap::Bootstrap> {
    let trust = super::discovery::discover(super::discovery::Request {
        server: c.server,
        token: c.token,
        ca_file: c.ca_file,
        pin: c.pin,
    })
    .await?;
    let mut bootstrap = super::bootstrap::Bootstrap {
        server: c.server.to_string(),
        ca_pem: trust.ca_pem + c.proxy_ca.unwrap_or_default(),
        token: c.token.to_string(),
        proxy_url: c.proxy_url.map(str::to_string),
    };
    if c.internal_endpoint {
        // Only a signed cluster-info (JWS) vouches for its server URL. A pin vouches for the CA
        // alone: what the anonymous, unverified read said about the server is read again over
        // the verified connection (as kubeadm does), and must say the same.
        let server = match (trust.verified_by, trust.cluster_info_server) {
            (super::discovery::VerifiedBy::Jws { .. }, Some(s)) => Some(s),
            (_, unverified) => {
                let client = bootstrap.client().await?;
                let verified = crate::install::cluster_info::server(&client)
                    .await
                    .map_err(|e| {
                        UserError::new(
                            format!(
                                "--force-internal-endpoint-lookup: re-reading kube-public/cluster-info over the verified connection to {} failed: {e:#}",
                                c.server
                            ),
                            "check --hub-apiserver; someone may be intercepting the connection",
                        )
                    })?;
                if unverified.is_some() && unverified != verified {
                    return Err(UserError::new(
                        format!(
                            "--force-internal-endpoint-lookup: kube-public/cluster-info read without verification names server {}, but read over the verified connection it names {}",
                            unverified.unwrap_or_default(),
                            verified.as_deref().unwrap_or("none")
                        ),
                        "someone may be intercepting the connection; pass the URL with --hub-apiserver and drop the flag",
                    )
                    .into());
                }
                verified
            }
        };
        bootstrap.server = server.ok_or_else(|| {
            UserError::new(
                "--force-internal-endpoint-lookup: the hub's cluster-info names no server",
                "drop the flag and pass the URL with --hub-apiserver",
            )
        })?;
    }
    preflight(&bootstrap.client().await?, &bootstrap.server, c.waiting).await?;
    Ok(bootstrap)
}

/// Waits, with the bootstrap credential, until the hub has the ManagedCluster `cluster`.
pub async fn wait_registered(
    bootstrap: &super::bootstrap::Bootstrap,
    cluster: &str,
    timeout: std::time::Duration,
) -> anyhow::Result<()> {
    use crate::api::cluster::ManagedCluster;
    use anyhow::Context as _;
    let api: Api<ManagedCluster> = Api::all(bootstrap.client().await?);
    let seen = |mc: Option<&ManagedCluster>| mc.is_some();
    tokio::time::timeout(
        timeout,
        kube::runtime::wait::await_condition(api, cluster, seen),
    )
    .await
    .map_err(|_| {
        UserError::new(
            format!("ManagedCluster {cluster} did not appear on the hub within {timeout:?}"),
            "check the registration agent and the Klusterlet's HubConnectionDegraded condition",
        )
    })?
    .context("watching ManagedClusters on the hub")?;
    Ok(())
}
