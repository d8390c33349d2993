//! Token-based registration of an add-on's hub client (upstream's `authType: token`): instead of
//! a CSR, the agent declares the token driver in the add-on's status, waits for the hub's
//! `TokenInfrastructureReady` (which names the add-on's ServiceAccount `<addon>-agent` in the
//! cluster's namespace and its UID), asks the hub for a token of that ServiceAccount with the
//! cluster's own credential (`TokenRequest`), and stores it in `<addon>-hub-kubeconfig` beside a
//! kubeconfig that reads it from the file `token` (so the add-on's agent picks up each renewal).
//! A token is renewed when a fifth of its lifetime is left, or when it belongs to another
//! ServiceAccount (one deleted and made again); each stored token is reported on the add-on
//! (`TokenRefreshed`), as upstream's agent does.
use base64::Engine as _;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt as _};
use serde::Deserialize;
use serde_json::json;

use ocm_api::addon::{ManagedClusterAddOn, token};
use ocm_api::conditions;
use ocm_api::names::CLIENT_SIGNER;
use ocm_api::operator::AddOnAuthType;

/// How the agent registers add-ons' hub clients: the Klusterlet's
/// `registrationConfiguration.addOnKubeClientRegistrationDriver`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Auth {
    /// `csr` (a client certificate, the default) or `token`.
    pub driver: AddOnAuthType,
    /// The lifetime asked for each token.
    pub expiration_seconds: i64,
}

impl Default for Auth {
    fn default() -> Self {
        Self {
            driver: AddOnAuthType::Csr,
            expiration_seconds: token::DEFAULT_EXPIRATION_SECONDS,
        }
    }
}

impl Auth {
    /// From upstream's flags: `--addon-kubeclient-registration-auth` and
    /// `--addon-token-expiration-seconds` (0 or none: the default).
    ///
    /// # Errors
    /// An unknown driver, or a lifetime under upstream's minimum of 600 s.
    pub fn from_flags(driver: &str, expiration_seconds: Option<i64>) -> Result<Self, String> {
        let driver = match driver {
            "" | "csr" => AddOnAuthType::Csr,
            "token" => AddOnAuthType::Token,
            other => {
                return Err(format!(
                    "unsupported add-on kube client registration auth {other:?}: csr or token"
                ));
            }
        };
        let expiration_seconds = match expiration_seconds {
            None | Some(0) => token::DEFAULT_EXPIRATION_SECONDS,
            Some(s) if s < token::MIN_EXPIRATION_SECONDS => {
                return Err(format!(
                    "token expiration seconds must be at least {} (10 minutes), not {s}",
                    token::MIN_EXPIRATION_SECONDS
                ));
            }
            Some(s) => s,
        };
        Ok(Self {
            driver,
            expiration_seconds,
        })
    }

    /// The driver's name in the add-on's status.
    #[must_use]
    pub fn driver_name(&self) -> &'static str {
        match self.driver {
            AddOnAuthType::Csr => "csr",
            AddOnAuthType::Token => token::DRIVER,
        }
    }
}

/// The status patch that declares this agent's driver on `mca`, as upstream's agent writes it:
/// `kubeClientDriver`, and under the token driver the hub client's subject (the ServiceAccount's
/// user, no groups), which upstream's hub keeps and binds the add-on's hub permissions to.
/// `None` when the add-on registers no hub client or says so already.
#[must_use]
pub fn declaration(
    mca: &ManagedClusterAddOn,
    cluster: &str,
    auth: Auth,
) -> Option<serde_json::Value> {
    let status = mca.status.as_ref()?;
    if !status
        .registrations
        .iter()
        .any(|r| r.signer_name == CLIENT_SIGNER)
    {
        return None;
    }
    let mut registrations = status.registrations.clone();
    if auth.driver == AddOnAuthType::Token {
        let user = token::user(cluster, &mca.name_any());
        for r in registrations
            .iter_mut()
            .filter(|r| r.signer_name == CLIENT_SIGNER)
        {
            r.subject = Some(ocm_api::addon::Subject {
                user: Some(user.clone()),
                ..ocm_api::addon::Subject::default()
            });
        }
    }
    if status.kube_client_driver == Some(auth.driver) && registrations == status.registrations {
        return None;
    }
    let mut patch = json!({
        "metadata": {"resourceVersion": mca.metadata.resource_version},
        "status": {"kubeClientDriver": auth.driver_name()},
    });
    if registrations != status.registrations {
        patch["status"]["registrations"] = json!(registrations);
    }
    Some(patch)
}

/// Writes [`declaration`]'s patch, if any; `true` when it wrote (the add-on's change wakes the
/// registration controller again). A conflict is retried by the controller.
pub async fn declare(
    hub: &Client,
    mca: &ManagedClusterAddOn,
    cluster: &str,
    auth: Auth,
) -> Result<bool, kube::Error> {
    let Some(patch) = declaration(mca, cluster, auth) else {
        return Ok(false);
    };
    Api::<ManagedClusterAddOn>::namespaced(hub.clone(), cluster)
        .patch_status(
            &mca.name_any(),
            &PatchParams::default(),
            &Patch::Merge(patch),
        )
        .await?;
    tracing::info!(%cluster, addon = %mca.name_any(), driver = auth.driver_name(), "declared the add-on's kube client driver");
    Ok(true)
}

/// The ServiceAccount UID the hub's `TokenInfrastructureReady` names, once it is true.
#[must_use]
pub fn ready_uid(mca: &ManagedClusterAddOn) -> Option<String> {
    let ready = mca
        .status
        .as_ref()
        .and_then(|s| conditions::find(&s.conditions, token::INFRASTRUCTURE_READY))
        .filter(|c| c.status == conditions::TRUE)?;
    token::uid_in(&ready.message).map(str::to_string)
}

/// What the agent reads of a ServiceAccount token (a JWT's claims; the API server signed it, the
/// agent only decides when to renew).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// Issued at (Unix seconds).
    pub issued: i64,
    /// Expires at (Unix seconds).
    pub expires: i64,
    /// The ServiceAccount's UID.
    pub uid: Option<String>,
}

#[derive(Deserialize)]
struct RawClaims {
    #[serde(default)]
    exp: i64,
    #[serde(default)]
    iat: i64,
    #[serde(rename = "kubernetes.io", default)]
    kubernetes: Option<RawKubernetes>,
}

#[derive(Deserialize)]
struct RawKubernetes {
    serviceaccount: Option<RawAccount>,
}

#[derive(Deserialize)]
struct RawAccount {
    uid: Option<String>,
}

impl Claims {
    /// The claims of a JWT, or why it has none usable.
    ///
    /// # Errors
    /// Not three parts, a payload not base64url JSON, or no expiry or issue time.
    pub fn of(jwt: &str) -> Result<Self, String> {
        let parts: Vec<&str> = jwt.trim().split('.').collect();
        let [_, payload, _] = parts[..] else {
            return Err(format!("a JWT has 3 parts, this one {}", parts.len()));
        };
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .map_err(|e| format!("the payload is not base64url: {e}"))?;
        let raw: RawClaims =
            serde_json::from_slice(&bytes).map_err(|e| format!("the claims: {e}"))?;
        if raw.exp == 0 || raw.iat == 0 {
            return Err("the token has no expiry or issue time".into());
        }
        Ok(Self {
            issued: raw.iat,
            expires: raw.exp,
            uid: raw
                .kubernetes
                .and_then(|k| k.serviceaccount)
                .and_then(|a| a.uid),
        })
    }

    /// When it is renewed: a fifth of its lifetime before it expires, as upstream's.
    #[must_use]
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_precision_loss,
        reason = "lifetimes in seconds are far below 2^52"
    )]
    pub fn renew_at(&self) -> i64 {
        let lifetime = (self.expires - self.issued).max(0);
        self.expires - (lifetime as f64 * token::REFRESH_THRESHOLD) as i64
    }
}

/// When the stored token `stored` is due for renewal, or `None` when it must be replaced now:
/// none, unreadable, of another ServiceAccount than `uid`, or due.
#[must_use]
pub fn renew_at(stored: Option<&str>, uid: &str, now: i64) -> Option<i64> {
    let claims = Claims::of(stored?).ok()?;
    if claims.uid.as_deref() != Some(uid) {
        return None;
    }
    let at = claims.renew_at();
    (at > now).then_some(at)
}

/// Where the add-on's kubeconfig finds the token.
pub enum TokenIn<'a> {
    /// The file `token` beside the kubeconfig, as upstream writes it for the add-on's agent.
    File,
    /// In the kubeconfig itself (an agent run in this process reads no files).
    Inline(&'a str),
}

/// A kubeconfig for the hub at `server` (CA `ca_data`, base64 PEM) authenticating with a token.
#[must_use]
pub fn kubeconfig(server: &str, ca_data: &str, token_in: &TokenIn) -> String {
    let user = match token_in {
        TokenIn::File => json!({"tokenFile": token::SECRET_KEY}),
        TokenIn::Inline(t) => json!({"token": t}),
    };
    let doc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "default-cluster", "cluster": {
            "server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": "default-auth", "user": user}],
        "contexts": [{"name": "default-context", "context": {
            "cluster": "default-cluster", "user": "default-auth", "namespace": "configuration"}}],
        "current-context": "default-context",
    });
    ocm_api::yaml::to_string(&doc).expect("a JSON value prints as YAML")
}

/// Asks the hub for a token of the add-on's ServiceAccount in the cluster's namespace, with the
/// cluster's credential (the hub's token Role lets it).
pub async fn request(
    hub: &Client,
    cluster: &str,
    addon: &str,
    expiration_seconds: i64,
) -> Result<String, kube::Error> {
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(expiration_seconds),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let issued = Api::<ServiceAccount>::namespaced(hub.clone(), cluster)
        .create_token_request(
            &token::service_account(addon),
            &PostParams::default(),
            &request,
        )
        .await?;
    Ok(issued.status.and_then(|s| s.token).unwrap_or_default())
}

/// The `TokenRefreshed` condition for a token just stored.
#[must_use]
pub fn refreshed(jwt: &str) -> conditions::Condition {
    let expires = Claims::of(jwt)
        .ok()
        .and_then(|c| Timestamp::from_second(c.expires).ok())
        .map_or_else(|| "unknown".to_string(), |t| t.to_string());
    conditions::new(
        token::REFRESHED,
        conditions::TRUE,
        token::REFRESHED_REASON,
        format!("Addon token refreshed, expires at {expires}"),
        &Time(Timestamp::now()),
    )
}

/// The `TokenRefreshed` condition when the hub refused a token.
#[must_use]
pub fn refused(why: &str) -> conditions::Condition {
    conditions::new(
        token::REFRESHED,
        conditions::FALSE,
        token::CREATION_FAILED,
        format!("Failed to create token: {why}"),
        &Time(Timestamp::now()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::addon::{
        ManagedClusterAddOnSpec, ManagedClusterAddOnStatus, RegistrationConfig, Subject,
    };

    fn jwt(claims: &serde_json::Value) -> String {
        let b64 = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        format!(
            "{}.{}.sig",
            b64(br#"{"alg":"RS256"}"#),
            b64(claims.to_string().as_bytes())
        )
    }

    #[test]
    fn a_token_is_renewed_with_a_fifth_of_its_life_left_or_for_another_account() {
        let t = jwt(&json!({"iat": 1000, "exp": 2000,
            "kubernetes.io": {"serviceaccount": {"name": "hello-agent", "uid": "u1"}}}));
        let claims = Claims::of(&t).unwrap();
        assert_eq!(claims.uid.as_deref(), Some("u1"));
        assert_eq!(claims.renew_at(), 1800);
        assert_eq!(renew_at(Some(&t), "u1", 1500), Some(1800));
        assert_eq!(renew_at(Some(&t), "u1", 1800), None);
        assert_eq!(renew_at(Some(&t), "u2", 1500), None);
        assert_eq!(renew_at(None, "u1", 1500), None);
        assert_eq!(renew_at(Some("not.a-jwt"), "u1", 1500), None);
        assert!(Claims::of(&jwt(&json!({"iat": 1000}))).is_err());
        assert!(Claims::of("one-part").is_err());
    }

    #[test]
    fn upstreams_flags_and_their_limits() {
        assert_eq!(Auth::from_flags("", None).unwrap(), Auth::default());
        let t = Auth::from_flags("token", Some(3600)).unwrap();
        assert_eq!(
            (t.driver, t.expiration_seconds),
            (AddOnAuthType::Token, 3600)
        );
        assert_eq!(
            Auth::from_flags("token", Some(0))
                .unwrap()
                .expiration_seconds,
            token::DEFAULT_EXPIRATION_SECONDS
        );
        assert!(
            Auth::from_flags("token", Some(599))
                .unwrap_err()
                .contains("600")
        );
        assert!(
            Auth::from_flags("awsirsa", None)
                .unwrap_err()
                .contains("csr or token")
        );
    }

    fn addon(driver: Option<AddOnAuthType>, user: &str) -> ManagedClusterAddOn {
        let mut mca = ManagedClusterAddOn::new("hello", ManagedClusterAddOnSpec::default());
        mca.status = Some(ManagedClusterAddOnStatus {
            kube_client_driver: driver,
            registrations: vec![RegistrationConfig {
                signer_name: CLIENT_SIGNER.into(),
                subject: Some(Subject {
                    user: Some(user.into()),
                    groups: vec!["g".into()],
                    ..Subject::default()
                }),
            }],
            ..ManagedClusterAddOnStatus::default()
        });
        mca
    }

    #[test]
    fn the_driver_and_the_token_subject_are_declared_once() {
        let token = Auth {
            driver: AddOnAuthType::Token,
            ..Auth::default()
        };
        let patch = declaration(&addon(None, "x"), "c1", token).unwrap();
        assert_eq!(patch["status"]["kubeClientDriver"], "token");
        assert_eq!(
            patch["status"]["registrations"][0]["subject"],
            json!({"user": "system:serviceaccount:c1:hello-agent"})
        );
        let done = addon(
            Some(AddOnAuthType::Token),
            "system:serviceaccount:c1:hello-agent",
        );
        let mut done = done;
        done.status.as_mut().unwrap().registrations[0]
            .subject
            .as_mut()
            .unwrap()
            .groups
            .clear();
        assert_eq!(declaration(&done, "c1", token), None);
        // Under csr only the driver is declared; the hub names the certificate's subject.
        let csr = declaration(
            &addon(Some(AddOnAuthType::Token), "x"),
            "c1",
            Auth::default(),
        )
        .unwrap();
        assert_eq!(csr["status"]["kubeClientDriver"], "csr");
        assert!(csr["status"].get("registrations").is_none());
        let mut no_client = addon(None, "x");
        no_client.status.as_mut().unwrap().registrations[0].signer_name = "example.com/s".into();
        assert_eq!(declaration(&no_client, "c1", token), None);
    }

    #[test]
    fn the_kubeconfig_reads_the_token_from_its_file_or_itself() {
        let file = kubeconfig("https://hub:6443", "Q0E=", &TokenIn::File);
        assert!(file.contains("tokenFile: token"), "{file}");
        let inline = kubeconfig("https://hub:6443", "Q0E=", &TokenIn::Inline("abc"));
        assert!(inline.contains("token: abc"), "{inline}");
    }
}
