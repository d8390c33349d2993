//! What vouches for the hub when the join line names no `--ca-cert-hash`: the pin a service
//! account token carries in its audiences ([`carried_pin`], set by `init`/`get token`), or, for a
//! token that carries nothing, the CA this cluster trusted when it last joined the same server
//! (`recorded_pin`, read from its bootstrap kubeconfig).
use base64::Engine as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;

use crate::api::names::{AGENT_NAMESPACE, BOOTSTRAP_SECRET, CA_PIN_AUDIENCE_PREFIX};

/// The hub CA pin a JWT carries as an audience ([`CA_PIN_AUDIENCE_PREFIX`]), if `token` is a JWT
/// and carries one. The token's signature is not checked: the pin is as trustworthy as the join
/// line it came in, as `--ca-cert-hash` beside it would be.
#[must_use]
pub fn carried_pin(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&json).ok()?;
    let audiences = match &claims["aud"] {
        serde_json::Value::String(one) => vec![one.as_str()],
        serde_json::Value::Array(many) => many.iter().filter_map(|a| a.as_str()).collect(),
        _ => return None,
    };
    audiences
        .into_iter()
        .find_map(|a| a.strip_prefix(CA_PIN_AUDIENCE_PREFIX))
        .map(str::to_owned)
}

/// The CA bundle (PEM) this cluster's bootstrap kubeconfig trusts for `server`, if an earlier
/// join to that server left one (Default and Singleton modes: `open-cluster-management-agent`).
pub async fn recorded_ca(managed: &kube::Client, server: &str) -> anyhow::Result<Option<String>> {
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), AGENT_NAMESPACE);
    let Some(secret) = secrets.get_opt(BOOTSTRAP_SECRET).await? else {
        return Ok(None);
    };
    let Some(text) = crate::secrets::field(&secret, "kubeconfig") else {
        return Ok(None);
    };
    Ok(ca_for_server(&text, server))
}

/// The CA data of the kubeconfig's cluster whose server is `server`.
fn ca_for_server(kubeconfig: &str, server: &str) -> Option<String> {
    let kc = kube::config::Kubeconfig::from_yaml(kubeconfig).ok()?;
    let want = server.trim_end_matches('/');
    kc.clusters
        .iter()
        .filter_map(|c| c.cluster.as_ref())
        .filter(|c| c.server.as_deref().map(|s| s.trim_end_matches('/')) == Some(want))
        .find_map(|c| c.certificate_authority_data.as_deref())
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .and_then(|pem| String::from_utf8(pem).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &serde_json::Value) -> String {
        let b64 = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        format!(
            "{}.{}.{}",
            b64(br#"{"alg":"RS256"}"#),
            b64(claims.to_string().as_bytes()),
            b64(b"sig")
        )
    }

    #[test]
    fn the_pin_is_read_from_the_audiences() {
        let pin = "sha256:00ff";
        let token = jwt(&serde_json::json!({
            "aud": ["https://kubernetes.default.svc", format!("{CA_PIN_AUDIENCE_PREFIX}{pin}")]
        }));
        assert_eq!(carried_pin(&token).as_deref(), Some(pin));
        let one = jwt(&serde_json::json!({"aud": format!("{CA_PIN_AUDIENCE_PREFIX}{pin}")}));
        assert_eq!(carried_pin(&one).as_deref(), Some(pin));
    }

    #[test]
    fn a_token_without_a_pin_carries_none() {
        assert_eq!(
            carried_pin(&jwt(&serde_json::json!({"aud": ["api"]}))),
            None
        );
        assert_eq!(carried_pin(&jwt(&serde_json::json!({}))), None);
        assert_eq!(carried_pin("abcdef.0123456789abcdef"), None);
        assert_eq!(carried_pin("not a token"), None);
        assert_eq!(carried_pin("a.b.c.d"), None);
    }

    #[test]
    fn the_recorded_ca_is_the_one_for_that_server() {
        let ca = base64::engine::general_purpose::STANDARD.encode("PEM");
        let kc = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n    server: https://hub:6443/\n    certificate-authority-data: {ca}\n"
        );
        assert_eq!(
            ca_for_server(&kc, "https://hub:6443").as_deref(),
            Some("PEM")
        );
        assert_eq!(ca_for_server(&kc, "https://other:6443"), None);
    }
}
