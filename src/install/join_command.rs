//! The `clusteradm join ...` line `init` and `get token` print: the one place a token is shown.
use serde::Serialize;

/// What a managed cluster needs to join this hub.
#[derive(Debug, Clone, Serialize)]
pub struct JoinCommand {
    /// The bootstrap token.
    #[serde(rename = "hub-token")]
    pub hub_token: String,
    /// The hub API server URL managed clusters will use.
    #[serde(rename = "hub-apiserver")]
    pub hub_apiserver: String,
    /// `sha256:<hex>` pin of the hub CA's public key, so `join` can verify the hub.
    #[serde(rename = "ca-cert-hash")]
    pub ca_cert_hash: String,
    /// When the token expires (RFC 3339), if it does.
    #[serde(
        rename = "expiration-timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub expires: Option<String>,
}

impl JoinCommand {
    /// The command line, with `cluster_name` as the `--cluster-name` value.
    #[must_use]
    pub fn command_line(&self, cluster_name: &str) -> String {
        format!(
            "clusteradm join --hub-token {} --hub-apiserver {} --ca-cert-hash {} --cluster-name {cluster_name}",
            self.hub_token, self.hub_apiserver, self.ca_cert_hash
        )
    }

    /// A script that joins the cluster named by its first argument (`--output-join-command-file`).
    #[must_use]
    pub fn script(&self) -> String {
        format!(
            "#!/bin/sh\n# Joins this hub: sh <this file> <cluster-name>\nexec {}\n",
            self.command_line("\"$1\"")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd() -> JoinCommand {
        JoinCommand {
            hub_token: "abc.def".into(),
            hub_apiserver: "https://hub:6443".into(),
            ca_cert_hash: "sha256:00".into(),
            expires: None,
        }
    }

    #[test]
    fn command_line_is_upstream_compatible() {
        assert_eq!(
            cmd().command_line("<cluster_name>"),
            "clusteradm join --hub-token abc.def --hub-apiserver https://hub:6443 --ca-cert-hash sha256:00 --cluster-name <cluster_name>"
        );
    }

    #[test]
    fn json_uses_upstream_keys() {
        let json = serde_json::to_value(cmd()).unwrap();
        assert_eq!(json["hub-token"], "abc.def");
        assert_eq!(json["hub-apiserver"], "https://hub:6443");
        assert!(json.get("expiration-timestamp").is_none());
    }
}
