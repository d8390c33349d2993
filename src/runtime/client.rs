//! Clients built from kubeconfig text: the bootstrap and hub kubeconfigs the agents read from
//! Secrets, the managed-cluster kubeconfig of hosted mode, the bootstrap credential `join` checks.
//!
//! A kubeconfig that comes from the cluster ([`Origin::Cluster`]) is data anyone who may write
//! that Secret controls, so it may only name a server, inline certificates and keys, a token and
//! a proxy: `exec` and `auth-provider` (which run commands on this host), and paths to files on
//! this host (`tokenFile`, `client-certificate`, `client-key`, `certificate-authority`) are
//! refused. TLS is always verified: `insecure-skip-tls-verify` is refused in every origin.
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

/// Where a kubeconfig came from, which decides what it may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Read from the cluster (a Secret): inline credentials only.
    Cluster,
    /// Given by the user on the command line: anything kubectl accepts, but TLS is verified.
    User,
}

/// Connect and read bounds of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Bound on establishing a connection.
    pub connect: Duration,
    /// Bound on waiting for data; long enough for an idle watch (the server ends watches after
    /// about five minutes).
    pub read: Duration,
}

impl Timeouts {
    /// For long-running loops with watches: fail to connect fast, keep idle watches open.
    pub const LOOP: Self = Self {
        connect: Duration::from_secs(10),
        read: Duration::from_secs(295),
    };

    /// For a command bounded by `timeout`.
    #[must_use]
    pub fn command(timeout: Duration) -> Self {
        Self {
            connect: timeout.min(Duration::from_secs(10)),
            read: timeout,
        }
    }
}

/// Why no client could be built.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The text is not a usable kubeconfig.
    #[error("{source_name} is not a usable kubeconfig: {reason}")]
    Invalid {
        /// Where it came from, e.g. `secret open-cluster-management-agent/hub-kubeconfig-secret`.
        source_name: String,
        /// Why.
        reason: String,
    },
    /// It asks for something refused for its origin.
    #[error("{source_name} is refused: it {what}")]
    Refused {
        /// Where it came from.
        source_name: String,
        /// What it asks for.
        what: String,
    },
}

/// A client for the current context of kubeconfig `text`, read from `source_name`.
pub async fn from_kubeconfig(
    text: &str,
    origin: Origin,
    source_name: &str,
    timeouts: Timeouts,
) -> Result<kube::Client, Error> {
    let invalid = |reason: String| Error::Invalid {
        source_name: source_name.to_string(),
        reason,
    };
    let kc = Kubeconfig::from_yaml(text).map_err(|e| invalid(e.to_string()))?;
    if let Some(what) = refused(&kc, origin) {
        return Err(Error::Refused {
            source_name: source_name.to_string(),
            what,
        });
    }
    let mut config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(|e| invalid(e.to_string()))?;
    config.connect_timeout = Some(timeouts.connect);
    config.read_timeout = Some(timeouts.read);
    kube::Client::try_from(config).map_err(|e| invalid(e.to_string()))
}

/// What in `kc` its origin does not allow, if anything.
#[must_use]
pub fn refused(kc: &Kubeconfig, origin: Origin) -> Option<String> {
    for named in &kc.clusters {
        let Some(cluster) = &named.cluster else {
            continue;
        };
        if cluster.insecure_skip_tls_verify == Some(true) {
            return Some(format!(
                "turns TLS verification off for cluster {:?} (insecure-skip-tls-verify)",
                named.name
            ));
        }
        if origin == Origin::Cluster && cluster.certificate_authority.is_some() {
            return Some(format!(
                "reads the CA of cluster {:?} from a file on this host",
                named.name
            ));
        }
    }
    if origin == Origin::User {
        return None;
    }
    for named in &kc.auth_infos {
        let Some(user) = &named.auth_info else {
            continue;
        };
        let name = &named.name;
        let what = if user.exec.is_some() {
            "runs a command (exec)"
        } else if user.auth_provider.is_some() {
            "uses an auth-provider plugin"
        } else if user.token_file.is_some() {
            "reads a token from a file on this host (tokenFile)"
        } else if user.client_certificate.is_some() || user.client_key.is_some() {
            "reads a client certificate or key from a file on this host"
        } else if user.impersonate.is_some() || user.impersonate_groups.is_some() {
            "impersonates another user"
        } else {
            continue;
        };
        return Some(format!("{what} for user {name:?}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kc(user: &str, cluster_extra: &str) -> Kubeconfig {
        Kubeconfig::from_yaml(&format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: 'https://h:1', certificate-authority-data: QQ== {cluster_extra}}}}}]\n\
             users: [{{name: u, user: {user}}}]\ncontexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n"
        ))
        .unwrap()
    }

    #[test]
    fn inline_credentials_are_allowed_from_the_cluster() {
        assert_eq!(refused(&kc("{token: t}", ""), Origin::Cluster), None);
        assert_eq!(
            refused(
                &kc("{client-certificate-data: QQ==, client-key-data: QQ==}", ""),
                Origin::Cluster
            ),
            None
        );
    }

    #[test]
    fn host_reaching_fields_are_refused_from_the_cluster_only() {
        for user in [
            "{exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}}",
            "{auth-provider: {name: oidc}}",
            "{tokenFile: /etc/shadow}",
            "{client-certificate: /etc/x, client-key: /etc/y}",
            "{as: system:admin}",
        ] {
            let config = kc(user, "");
            assert!(refused(&config, Origin::Cluster).is_some(), "{user}");
            assert_eq!(refused(&config, Origin::User), None, "{user}");
        }
        assert!(
            refused(
                &kc("{token: t}", ", certificate-authority: /etc/ca"),
                Origin::Cluster
            )
            .is_some()
        );
    }

    #[test]
    fn tls_verification_cannot_be_turned_off_anywhere() {
        let config = kc("{token: t}", ", insecure-skip-tls-verify: true");
        assert!(refused(&config, Origin::Cluster).is_some());
        assert!(refused(&config, Origin::User).is_some());
    }
}
