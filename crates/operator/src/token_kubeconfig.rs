//! Kubeconfigs of a ServiceAccount's token, as upstream's operators make them for pods that act on
//! another cluster (Hosted modes): the user gives the operator a kubeconfig of that cluster (in a
//! Secret beside the pods), and the pods get a kubeconfig naming the same cluster with a token of
//! their own ServiceAccount there, asked for with a TokenRequest of 8640 hours and asked for again
//! when a fifth of that is left, when the ServiceAccount was re-created, or when the cluster's
//! address or CA changed. So the pods act with the least-privilege RBAC rendered for them and
//! that cluster's audit log names them, never the credential the user gave the operator, which
//! no pod mounts.
use k8s_openapi::ByteString;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};

use ocm_runtime::client::{self as kubeconfig_client, Origin, Timeouts};

/// The token's lifetime (upstream's).
pub const TOKEN_SECONDS: i64 = 8640 * 3600;
/// A token with less than this left is replaced (upstream's fifth).
const RENEW_BEFORE: SignedDuration = SignedDuration::from_secs(TOKEN_SECONDS / 5);

/// The other cluster as the user's kubeconfig names it: what each pod's kubeconfig names too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    server: String,
    ca_data: Option<String>,
    tls_server_name: Option<String>,
}

impl Cluster {
    /// From the kubeconfig text of the user's Secret (`what` names it in errors).
    ///
    /// # Errors
    /// It is not a kubeconfig, or its current context names no cluster.
    pub fn from_kubeconfig(text: &str, what: &str) -> Result<Self, String> {
        let kc = kube::config::Kubeconfig::from_yaml(text).map_err(|e| format!("{what}: {e}"))?;
        let context = kc.current_context.as_deref().unwrap_or_default();
        let cluster_name = kc
            .contexts
            .iter()
            .find(|c| c.name == context)
            .and_then(|c| c.context.as_ref())
            .map(|c| c.cluster.clone())
            .ok_or_else(|| format!("{what}: its current context {context:?} is missing"))?;
        let cluster = kc
            .clusters
            .iter()
            .find(|c| c.name == cluster_name)
            .and_then(|c| c.cluster.clone())
            .ok_or_else(|| format!("{what}: cluster {cluster_name:?} is missing"))?;
        Ok(Self {
            server: cluster
                .server
                .ok_or_else(|| format!("{what}: cluster {cluster_name:?} has no server"))?,
            ca_data: cluster.certificate_authority_data,
            tls_server_name: cluster.tls_server_name,
        })
    }

    /// A pod's kubeconfig: this cluster, the token in the file `token` of `mount_dir`.
    #[must_use]
    pub fn kubeconfig(&self, mount_dir: &str) -> String {
        let mut cluster = serde_json::json!({"server": self.server});
        if let Some(ca) = &self.ca_data {
            cluster["certificate-authority-data"] = ca.clone().into();
        }
        if let Some(name) = &self.tls_server_name {
            cluster["tls-server-name"] = name.clone().into();
        }
        let kubeconfig = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "cluster", "cluster": cluster}],
            "users": [{"name": "user", "user": {"tokenFile": format!("{mount_dir}/token")}}],
            "contexts": [{"name": "context", "context": {"cluster": "cluster", "user": "user"}}],
            "current-context": "context",
        });
        serde_yaml::to_string(&kubeconfig).expect("a kubeconfig serialises")
    }
}

/// A client of the cluster the user's Secret `name` (key `kubeconfig`) names, and that cluster.
///
/// # Errors
/// A message for a condition: the Secret missing or unreadable, its kubeconfig unusable.
pub async fn from_secret(secrets: &Api<Secret>, name: &str) -> Result<FromSecret, String> {
    let secret = secrets
        .get_opt(name)
        .await
        .map_err(|e| format!("reading secret {name}: {e}"))?
        .ok_or_else(|| format!("secret {name} is missing"))?;
    let text = secret
        .data
        .as_ref()
        .and_then(|d| d.get("kubeconfig"))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .ok_or_else(|| format!("secret {name} has no kubeconfig"))?;
    let what = format!("secret {name}");
    let client = kubeconfig_client::from_kubeconfig(&text, Origin::Cluster, &what, Timeouts::LOOP)
        .await
        .map_err(|e| e.to_string())?;
    Ok(FromSecret {
        client,
        cluster: Cluster::from_kubeconfig(&text, &what)?,
        text,
    })
}

/// A user's kubeconfig Secret, read.
pub struct FromSecret {
    /// A client with it.
    pub client: Client,
    /// The cluster it names.
    pub cluster: Cluster,
    /// Its text, to tell when the user changes it.
    pub text: String,
}

/// One pod identity's kubeconfig Secret.
pub struct Identity<'a> {
    /// The Secret, with its name and namespace (where the pods run).
    pub secret: ObjectMeta,
    /// The ServiceAccount on the other cluster.
    pub account: &'a str,
    /// Its namespace there.
    pub account_namespace: &'a str,
}

/// Makes or renews `id`'s Secret through `secrets` (the pods' cluster) from a token of its
/// ServiceAccount through `accounts` (the other cluster), with `kubeconfig`
/// ([`Cluster::kubeconfig`]). Returns whether it wrote the Secret.
///
/// # Errors
/// A message for a condition: the ServiceAccount missing, a token refused, a write failed.
pub async fn ensure(
    secrets: &Api<Secret>,
    accounts: &Api<ServiceAccount>,
    id: Identity<'_>,
    kubeconfig: &str,
    manager: &str,
) -> Result<bool, String> {
    let (name, account) = (id.secret.name.clone().unwrap_or_default(), id.account);
    let uid = accounts
        .get(account)
        .await
        .map_err(|e| format!("reading ServiceAccount {account}: {e}"))?
        .metadata
        .uid
        .unwrap_or_default();
    let current = secrets
        .get_opt(&name)
        .await
        .map_err(|e| format!("reading secret {name}: {e}"))?;
    if current.is_some_and(|s| is_fresh(&s, kubeconfig, &uid, Timestamp::now())) {
        return Ok(false);
    }
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(TOKEN_SECONDS),
            ..Default::default()
        }),
        ..Default::default()
    };
    let empty = || format!("the token of ServiceAccount {account} came back empty");
    let status = accounts
        .create_token_request(account, &PostParams::default(), &request)
        .await
        .map_err(|e| format!("asking a token of ServiceAccount {account}: {e}"))?
        .status
        .ok_or_else(empty)?;
    let token = status.token.filter(|t| !t.is_empty()).ok_or_else(empty)?;
    let expiration = status.expiration_timestamp.ok_or_else(empty)?.0;
    let data = [
        ("kubeconfig", kubeconfig.to_owned()),
        ("token", token),
        ("expiration", expiration.to_string()),
        ("serviceaccount_namespace", id.account_namespace.to_owned()),
        ("serviceaccount_name", account.to_owned()),
        ("serviceaccount_uid", uid),
    ];
    let secret = Secret {
        metadata: id.secret,
        data: Some(
            data.into_iter()
                .map(|(k, v)| (k.to_owned(), ByteString(v.into_bytes())))
                .collect(),
        ),
        ..Default::default()
    };
    secrets
        .patch(
            &name,
            &PatchParams::apply(manager).force(),
            &Patch::Apply(&secret),
        )
        .await
        .map_err(|e| format!("writing secret {name}: {e}"))?;
    Ok(true)
}

/// Whether `secret` still serves: a token with more than [`RENEW_BEFORE`] left, of the
/// ServiceAccount with `uid`, in a kubeconfig naming the cluster as `kubeconfig` does.
fn is_fresh(secret: &Secret, kubeconfig: &str, uid: &str, now: Timestamp) -> bool {
    let field = |k: &str| {
        secret
            .data
            .as_ref()
            .and_then(|d| d.get(k))
            .map(|b| String::from_utf8_lossy(&b.0).into_owned())
    };
    let expires = field("expiration").and_then(|e| e.parse::<Timestamp>().ok());
    field("token").is_some_and(|t| !t.is_empty())
        && expires.is_some_and(|e| e.duration_since(now) > RENEW_BEFORE)
        && field("serviceaccount_uid").as_deref() == Some(uid)
        && field("kubeconfig").as_deref() == Some(kubeconfig)
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER_KUBECONFIG: &str = "apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://10.0.0.1:6443', certificate-authority-data: Q0E=}}]
users: [{name: admin, user: {token: admin-token}}]
contexts: [{name: x, context: {cluster: c, user: admin}}]
current-context: x
";

    fn secret(kubeconfig: &str, expiration: &str, uid: &str) -> Secret {
        let data = [
            ("kubeconfig", kubeconfig),
            ("token", "t"),
            ("expiration", expiration),
            ("serviceaccount_uid", uid),
        ];
        Secret {
            data: Some(
                data.into_iter()
                    .map(|(k, v)| (k.to_owned(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn the_pods_kubeconfig_names_the_users_cluster_and_no_admin_credential() {
        let cluster = Cluster::from_kubeconfig(USER_KUBECONFIG, "secret s").unwrap();
        let text = cluster.kubeconfig("/spoke/config");
        assert!(
            text.contains("https://10.0.0.1:6443") && text.contains("Q0E="),
            "{text}"
        );
        assert!(text.contains("/spoke/config/token"), "{text}");
        assert!(!text.contains("admin-token"), "{text}");
        let err =
            Cluster::from_kubeconfig("apiVersion: v1\nkind: Config\n", "secret s").unwrap_err();
        assert!(
            err.contains("secret s") && err.contains("current context"),
            "{err}"
        );
    }

    #[test]
    fn a_token_is_renewed_when_a_fifth_is_left_or_its_account_or_cluster_changed() {
        let kubeconfig = Cluster::from_kubeconfig(USER_KUBECONFIG, "s")
            .unwrap()
            .kubeconfig("/d");
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let days = |d: i64| (now + SignedDuration::from_hours(24 * d)).to_string();
        let fresh = |s: &Secret| is_fresh(s, &kubeconfig, "u1", now);
        // 8640 hours is 360 days: renewed when 72 are left.
        assert!(fresh(&secret(&kubeconfig, &days(100), "u1")));
        assert!(!fresh(&secret(&kubeconfig, &days(71), "u1")));
        assert!(!fresh(&secret(&kubeconfig, &days(100), "u0")));
        assert!(!fresh(&secret("other", &days(100), "u1")));
        assert!(!fresh(&secret(&kubeconfig, "never", "u1")));
    }
}
