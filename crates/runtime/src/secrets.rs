//! Reading Secrets: one field as text, whether it was written as `data` or `stringData`.
use k8s_openapi::api::core::v1::Secret;

/// A secret field as text (`data`, else `stringData`); `None` when absent or empty.
#[must_use]
pub fn field(secret: &Secret, key: &str) -> Option<String> {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .or_else(|| {
            secret
                .string_data
                .as_ref()
                .and_then(|d| d.get(key).cloned())
        })
        .filter(|s| !s.is_empty())
}

/// What `--dry-run` prints in place of a credential.
pub const REDACTED: &str = "<redacted>";

/// `objects` as `--dry-run` prints them on a terminal: every image-pull Secret's registry
/// credentials (`auth`, `password`, `identitytoken`, `registrytoken` of each registry) replaced
/// by [`REDACTED`], its registries and user names kept for review. Other Secrets are printed as
/// built (join's bootstrap kubeconfig comes with its token already redacted).
#[must_use]
pub fn redact_pull_secrets(objects: &[kube::api::DynamicObject]) -> Vec<kube::api::DynamicObject> {
    let is_pull_secret =
        |o: &kube::api::DynamicObject| o.data["type"] == "kubernetes.io/dockerconfigjson";
    redact_key(
        objects,
        ".dockerconfigjson",
        is_pull_secret,
        |bytes| match serde_json::from_slice::<serde_json::Value>(bytes) {
            Ok(original) => {
                let mut config = original.clone();
                redact_docker_config(&mut config);
                (config != original).then(|| config.to_string())
            }
            Err(_) => Some(REDACTED.to_owned()),
        },
    )
}

/// `objects` with every Secret's `kubeconfig` key holding no credential: each user's token,
/// password, client key and exec/auth-provider settings replaced by [`REDACTED`] (the servers,
/// CAs and names kept for review). A kubeconfig a values file gave is printed this way by
/// `--dry-run`, as join's own bootstrap kubeconfig is.
#[must_use]
pub fn redact_kubeconfig_secrets(
    objects: &[kube::api::DynamicObject],
) -> Vec<kube::api::DynamicObject> {
    redact_key(
        objects,
        "kubeconfig",
        |_| true,
        |bytes| {
            let redacted = serde_yaml::from_slice::<serde_json::Value>(bytes)
                .ok()
                .and_then(|mut kc| {
                    redact_kubeconfig(&mut kc);
                    serde_yaml::to_string(&kc).ok()
                });
            Some(redacted.unwrap_or_else(|| REDACTED.to_owned()))
        },
    )
}

/// `objects` with data key `key` of each Secret that is `wanted` rewritten by `redact`: given
/// its decoded bytes, the text to store instead (`None` keeps it); a value that is not base64
/// is [`REDACTED`].
fn redact_key(
    objects: &[kube::api::DynamicObject],
    key: &str,
    wanted: impl Fn(&kube::api::DynamicObject) -> bool,
    redact: impl Fn(&[u8]) -> Option<String>,
) -> Vec<kube::api::DynamicObject> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut out = objects.to_vec();
    for o in &mut out {
        if o.types.as_ref().is_none_or(|t| t.kind != "Secret") || !wanted(o) {
            continue;
        }
        let Some(encoded) = o.data["data"][key].as_str() else {
            continue;
        };
        let replaced = match b64.decode(encoded) {
            Ok(bytes) => redact(&bytes),
            Err(_) => Some(REDACTED.to_owned()),
        };
        if let Some(replaced) = replaced {
            o.data["data"][key] = b64.encode(replaced).into();
        }
    }
    out
}

fn redact_kubeconfig(kc: &mut serde_json::Value) {
    let Some(users) = kc.get_mut("users").and_then(|u| u.as_array_mut()) else {
        return;
    };
    for user in users
        .iter_mut()
        .filter_map(|u| u.get_mut("user")?.as_object_mut())
    {
        for key in [
            "token",
            "password",
            "client-key-data",
            "exec",
            "auth-provider",
        ] {
            if let Some(v) = user.get_mut(key) {
                *v = REDACTED.into();
            }
        }
    }
}

fn redact_docker_config(config: &mut serde_json::Value) {
    let Some(auths) = config.get_mut("auths").and_then(|a| a.as_object_mut()) else {
        return;
    };
    for entry in auths.values_mut().filter_map(|e| e.as_object_mut()) {
        for key in ["auth", "password", "identitytoken", "registrytoken"] {
            if let Some(v) = entry.get_mut(key) {
                *v = REDACTED.into();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;

    #[test]
    fn pull_credentials_are_redacted_and_registries_kept() {
        let b64 = base64::engine::general_purpose::STANDARD;
        let config = r#"{"auths":{"r.example":{"username":"bot","password":"hunter2","auth":"Ym90Omh1bnRlcjI="}}}"#;
        let secret: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pull"},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": b64.encode(config)},
        }))
        .unwrap();
        let out = redact_pull_secrets(std::slice::from_ref(&secret));
        let text = String::from_utf8(
            b64.decode(out[0].data["data"][".dockerconfigjson"].as_str().unwrap())
                .unwrap(),
        )
        .unwrap();
        assert!(
            !text.contains("hunter2") && !text.contains("Ym90Omh1bnRlcjI="),
            "{text}"
        );
        assert!(text.contains("r.example") && text.contains("bot"), "{text}");
        // An empty credential is printed as it is.
        let mut empty = secret;
        empty.data["data"][".dockerconfigjson"] = "e30=".into();
        assert_eq!(
            redact_pull_secrets(&[empty])[0].data["data"][".dockerconfigjson"],
            "e30="
        );
    }
}
