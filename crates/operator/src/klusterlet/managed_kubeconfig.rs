//! Hosted modes: each agent's kubeconfig for the managed cluster, as upstream's operator makes it
//! (`external-managed-kubeconfig-{agent,registration,work}` in the agents' namespace): a token of
//! the agent's own ServiceAccount there, asked for with a TokenRequest of 8640 hours and asked
//! for again when a fifth of that is left, when the ServiceAccount was re-created, or when the
//! managed cluster's address or CA changed. So the agents act with the least-privilege RBAC
//! rendered for them and the managed cluster's audit log names them, never the admin credential
//! the user gave the operator (`external-managed-kubeconfig`), which no agent pod mounts.
use k8s_openapi::ByteString;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, Patch, PatchParams, PostParams};

use super::desired::{Workload, service_account};
use super::validate::Validated;
use ocm_api::names::EXTERNAL_MANAGED_SECRET;

/// The token's lifetime (upstream's).
pub const TOKEN_SECONDS: i64 = 8640 * 3600;
/// A token with less than this left is replaced (upstream's fifth).
const RENEW_BEFORE: SignedDuration = SignedDuration::from_secs(TOKEN_SECONDS / 5);
/// Where the agent pods mount the Secret; the kubeconfig reads the token beside it.
pub const MOUNT_DIR: &str = "/spoke/config";
/// The field manager of the Secrets.
const MANAGER: &str = "klusterlet-operator";

/// The Secret of workload `w` (upstream's names).
#[must_use]
pub fn secret_name(w: Workload) -> &'static str {
    match w {
        Workload::Registration => "external-managed-kubeconfig-registration",
        Workload::Work => "external-managed-kubeconfig-work",
        Workload::Singleton => "external-managed-kubeconfig-agent",
    }
}

/// The managed cluster as the user's kubeconfig names it: what each agent's kubeconfig names too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedCluster {
    server: String,
    ca_data: Option<String>,
    tls_server_name: Option<String>,
}

impl ManagedCluster {
    /// From the `external-managed-kubeconfig` Secret's kubeconfig text.
    ///
    /// # Errors
    /// It is not a kubeconfig, or its current context names no cluster.
    pub fn from_kubeconfig(text: &str) -> Result<Self, String> {
        let what = format!("secret {EXTERNAL_MANAGED_SECRET}");
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

    /// The kubeconfig of an agent: this cluster, the token in the file beside it.
    fn kubeconfig(&self) -> String {
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
            "users": [{"name": "user", "user": {"tokenFile": format!("{MOUNT_DIR}/token")}}],
            "contexts": [{"name": "context", "context": {"cluster": "cluster", "user": "user"}}],
            "current-context": "context",
        });
        serde_yaml::to_string(&kubeconfig).expect("a kubeconfig serialises")
    }
}

/// Makes or renews the kubeconfig Secret of each workload in `deployed`, on `management` (where
/// the agents run) from tokens of their ServiceAccounts on `managed`. Returns how many Secrets
/// were written.
///
/// # Errors
/// A message for the Applied condition: a ServiceAccount missing, a token refused, a write failed.
pub async fn sync(
    management: &kube::Client,
    managed: &kube::Client,
    v: &Validated,
    deployed: &[Workload],
    cluster: &ManagedCluster,
) -> Result<usize, String> {
    let secrets: Api<Secret> = Api::namespaced(management.clone(), &v.agent_namespace);
    let accounts: Api<ServiceAccount> = Api::namespaced(managed.clone(), &v.managed_namespace);
    let kubeconfig = cluster.kubeconfig();
    let mut written = 0;
    for w in deployed {
        let (name, account) = (secret_name(*w), service_account::name(v, *w));
        let uid = accounts
            .get(&account)
            .await
            .map_err(|e| format!("reading ServiceAccount {account} on the managed cluster: {e}"))?
            .metadata
            .uid
            .unwrap_or_default();
        let current = secrets
            .get_opt(name)
            .await
            .map_err(|e| format!("reading secret {name}: {e}"))?;
        if current.is_some_and(|s| is_fresh(&s, &kubeconfig, &uid, Timestamp::now())) {
            continue;
        }
        let request = TokenRequest {
            spec: Some(k8s_openapi::api::authentication::v1::TokenRequestSpec {
                expiration_seconds: Some(TOKEN_SECONDS),
                ..Default::default()
            }),
            ..Default::default()
        };
        let status = accounts
            .create_token_request(&account, &PostParams::default(), &request)
            .await
            .map_err(|e| format!("asking a token of ServiceAccount {account}: {e}"))?
            .status
            .ok_or_else(|| format!("the token of ServiceAccount {account} came back empty"))?;
        let empty = || format!("the token of ServiceAccount {account} came back empty");
        let token = status.token.filter(|t| !t.is_empty()).ok_or_else(empty)?;
        let expiration = status.expiration_timestamp.ok_or_else(empty)?.0;
        let data = [
            ("kubeconfig", kubeconfig.clone()),
            ("token", token),
            ("expiration", expiration.to_string()),
            ("serviceaccount_namespace", v.managed_namespace.clone()),
            ("serviceaccount_name", account.clone()),
            ("serviceaccount_uid", uid.clone()),
        ];
        let secret = Secret {
            metadata: super::desired::meta(v, name, Some(&v.agent_namespace)),
            data: Some(
                data.into_iter()
                    .map(|(k, v)| (k.to_owned(), ByteString(v.into_bytes())))
                    .collect(),
            ),
            ..Default::default()
        };
        secrets
            .patch(
                name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&secret),
            )
            .await
            .map_err(|e| format!("writing secret {name}: {e}"))?;
        written += 1;
    }
    Ok(written)
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
    fn the_agents_kubeconfig_names_the_users_cluster_and_no_admin_credential() {
        let cluster = ManagedCluster::from_kubeconfig(USER_KUBECONFIG).unwrap();
        let text = cluster.kubeconfig();
        assert!(
            text.contains("https://10.0.0.1:6443") && text.contains("Q0E="),
            "{text}"
        );
        assert!(text.contains("/spoke/config/token"), "{text}");
        assert!(!text.contains("admin-token"), "{text}");
        let err = ManagedCluster::from_kubeconfig("apiVersion: v1\nkind: Config\n").unwrap_err();
        assert!(err.contains("current context"), "{err}");
    }

    #[test]
    fn a_token_is_renewed_when_a_fifth_is_left_or_its_account_or_cluster_changed() {
        let kubeconfig = ManagedCluster::from_kubeconfig(USER_KUBECONFIG)
            .unwrap()
            .kubeconfig();
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let days = |d: i64| (now + SignedDuration::from_hours(24 * d)).to_string();
        // 8640 hours is 360 days: renewed when 72 are left.
        assert!(is_fresh(
            &secret(&kubeconfig, &days(100), "u1"),
            &kubeconfig,
            "u1",
            now
        ));
        assert!(!is_fresh(
            &secret(&kubeconfig, &days(71), "u1"),
            &kubeconfig,
            "u1",
            now
        ));
        assert!(!is_fresh(
            &secret(&kubeconfig, &days(100), "u0"),
            &kubeconfig,
            "u1",
            now
        ));
        assert!(!is_fresh(
            &secret("other", &days(100), "u1"),
            &kubeconfig,
            "u1",
            now
        ));
        assert!(!is_fresh(
            &secret(&kubeconfig, "never", "u1"),
            &kubeconfig,
            "u1",
            now
        ));
    }
}
