//! Clients built from kubeconfig text: the bootstrap and hub kubeconfigs the agents read from
//! Secrets, the managed-cluster kubeconfig of hosted mode, the bootstrap credential `join` checks.
//!
//! A kubeconfig that comes from the cluster ([`Origin::Cluster`]) is data anyone who may write
//! that Secret controls, so it may only name a server, inline certificates and keys, a token and
//! a proxy: `exec` and `auth-provider` (which run commands on this host), and paths to files on
//! this host (`tokenFile`, `client-certificate`, `client-key`, `certificate-authority`) are
//! refused. TLS is always verified: `insecure-skip-tls-verify` is refused in every origin.
//!
//! A Secret mounted as files (`addon agent --hub-kubeconfig`, the `<addon>-hub-kubeconfig`
//! Secret) is the same data, so [`from_mounted_secret`] applies the cluster's rules too; the only
//! files its kubeconfig may name are the Secret's other keys (`tls.crt`, `tls.key`: files in the
//! kubeconfig's own directory), which are read bounded ([`crate::input`]) and inlined.
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;

use kube::config::{KubeConfigOptions, Kubeconfig};

/// Where a kubeconfig came from, which decides what it may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Read from the cluster (a Secret): inline credentials only.
    Cluster,
    /// Given by the user on the command line: anything kubectl accepts, but TLS is verified.
    User,
}

/// Connect and read bounds of a client, and the rate it may send at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Bound on establishing a connection.
    pub connect: Duration,
    /// Bound on waiting for data; long enough for an idle watch (the server ends watches after
    /// about five minutes).
    pub read: Duration,
    /// Requests a second the client may send (none: unlimited).
    pub rate: Option<super::rate::Rate>,
}

impl Timeouts {
    /// For long-running loops with watches: fail to connect fast, keep idle watches open.
    pub const LOOP: Self = Self {
        connect: Duration::from_secs(10),
        read: Duration::from_secs(295),
        rate: None,
    };

    /// These bounds, sending at most `rate`.
    #[must_use]
    pub fn limited(self, rate: Option<super::rate::Rate>) -> Self {
        Self { rate, ..self }
    }

    /// For a command bounded by `timeout`.
    #[must_use]
    pub fn command(timeout: Duration) -> Self {
        Self {
            connect: timeout.min(Duration::from_secs(10)),
            read: timeout,
            rate: None,
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
    /// The file could not be read, or is too large.
    #[error(transparent)]
    Unreadable(crate::input::Error),
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
    client(kc, origin, source_name, timeouts).await
}

/// A client for the current context of the kubeconfig file `path` of a mounted Secret, named by
/// flag `what`: the cluster's rules ([`Origin::Cluster`]), with the files it names read from
/// its own directory ([`load_mounted`]).
pub async fn from_mounted_secret(
    path: &Path,
    what: &str,
    timeouts: Timeouts,
) -> Result<kube::Client, Error> {
    let text = crate::input::read_text(path, what).map_err(Error::Unreadable)?;
    let source_name = format!("{what} {}", path.display());
    let dir = path.parent().unwrap_or(Path::new(""));
    let kc = load_mounted(&text, dir, &source_name)?;
    client(kc, Origin::Cluster, &source_name, timeouts).await
}

/// Parses the kubeconfig `text` of a Secret mounted at `dir` and inlines the files it names —
/// only the Secret's own keys: a bare file name, or a path in `dir` itself. Refuses what the
/// cluster's rules refuse ([`refused`]): `exec`, `auth-provider`, any other file.
pub fn load_mounted(text: &str, dir: &Path, source_name: &str) -> Result<Kubeconfig, Error> {
    let mut kc = Kubeconfig::from_yaml(text).map_err(|e| Error::Invalid {
        source_name: source_name.to_string(),
        reason: e.to_string(),
    })?;
    let refuse = |what: String| Error::Refused {
        source_name: source_name.to_string(),
        what,
    };
    let read = |file: &str, field: &str, of: &str| -> Result<Vec<u8>, Error> {
        let path = sibling(dir, file).ok_or_else(|| {
            refuse(format!(
                "reads {field} of {of} from {file:?}, outside its own directory {}",
                dir.display()
            ))
        })?;
        crate::input::read(&path, field).map_err(Error::Unreadable)
    };
    let b64 = |bytes: Vec<u8>| base64::engine::general_purpose::STANDARD.encode(bytes);
    for named in &mut kc.clusters {
        let of = format!("cluster {:?}", named.name);
        if let Some(cluster) = named.cluster.as_mut()
            && let Some(file) = cluster.certificate_authority.take()
        {
            cluster.certificate_authority_data =
                Some(b64(read(&file, "certificate-authority", &of)?));
        }
    }
    for named in &mut kc.auth_infos {
        let of = format!("user {:?}", named.name);
        let Some(user) = named.auth_info.as_mut() else {
            continue;
        };
        if let Some(file) = user.client_certificate.take() {
            user.client_certificate_data = Some(b64(read(&file, "client-certificate", &of)?));
        }
        if let Some(file) = user.client_key.take() {
            user.client_key_data = Some(b64(read(&file, "client-key", &of)?).into());
        }
        if let Some(file) = user.token_file.take() {
            let token = String::from_utf8(read(&file, "tokenFile", &of)?)
                .map_err(|_| refuse(format!("has a tokenFile {file:?} that is not text")))?;
            user.token = Some(token.trim().to_string().into());
        }
    }
    if let Some(what) = refused(&kc, Origin::Cluster) {
        return Err(refuse(what));
    }
    Ok(kc)
}

/// `file` as one of the files beside a mounted kubeconfig in `dir`: a bare name, or an absolute
/// path whose directory is `dir`; `None` for anything else (`..`, subdirectories, elsewhere).
fn sibling(dir: &Path, file: &str) -> Option<PathBuf> {
    let path = Path::new(file);
    let name = path.file_name()?;
    let parent = path.parent().unwrap_or(Path::new(""));
    let here = parent.as_os_str().is_empty()
        || parent == Path::new(".")
        || (path.is_absolute() && std::path::absolute(dir).is_ok_and(|d| d == parent));
    here.then(|| dir.join(name))
}

/// A client for the current context of `kc`, if its origin allows what it asks for.
async fn client(
    kc: Kubeconfig,
    origin: Origin,
    source_name: &str,
    timeouts: Timeouts,
) -> Result<kube::Client, Error> {
    let invalid = |reason: String| Error::Invalid {
        source_name: source_name.to_string(),
        reason,
    };
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
    super::rate::client(config, timeouts.rate).map_err(|e| invalid(e.to_string()))
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

    /// A kubeconfig mounted at a fresh temp dir with `tls.crt` and `tls.key` beside it.
    fn mounted(name: &str, user: &str) -> Result<Kubeconfig, Error> {
        let dir = std::env::temp_dir().join(format!("clusteradm-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tls.crt"), "CERT").unwrap();
        std::fs::write(dir.join("tls.key"), "KEY").unwrap();
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: 'https://h:1', certificate-authority-data: QQ==}}}}]\n\
             users: [{{name: u, user: {user}}}]\ncontexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n"
        );
        let loaded = load_mounted(&text, &dir, "--hub-kubeconfig x");
        std::fs::remove_dir_all(&dir).unwrap();
        loaded
    }

    #[test]
    fn a_mounted_addon_kubeconfig_with_exec_is_refused() {
        let loaded = mounted(
            "mounted-exec",
            "{exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}}",
        );
        let err = loaded.unwrap_err().to_string();
        assert_eq!(
            err,
            "--hub-kubeconfig x is refused: it runs a command (exec) for user \"u\""
        );
        let loaded = mounted("mounted-provider", "{auth-provider: {name: oidc}}");
        assert!(loaded.unwrap_err().to_string().contains("auth-provider"));
    }

    #[test]
    fn a_mounted_kubeconfig_reads_only_files_beside_it() {
        let loaded = mounted(
            "mounted-token",
            "{tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}",
        );
        let err = loaded.unwrap_err().to_string();
        assert!(err.contains("outside its own directory"), "{err}");
        let loaded = mounted(
            "mounted-dotdot",
            "{client-certificate: ../tls.crt, client-key: tls.key}",
        );
        assert!(loaded.unwrap_err().to_string().contains("outside"));
        let loaded = mounted(
            "mounted-ok",
            "{client-certificate: tls.crt, client-key: tls.key}",
        );
        let kc = loaded.unwrap();
        let user = kc.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(user.client_certificate_data.as_deref(), Some("Q0VSVA=="));
        assert!(user.client_certificate.is_none() && user.client_key.is_none());
        let dir = std::env::temp_dir().join("d");
        assert_eq!(sibling(&dir, "/etc/tls.crt"), None);
        assert_eq!(
            sibling(&dir, dir.join("tls.key").to_str().unwrap()),
            Some(dir.join("tls.key"))
        );
    }

    #[test]
    fn tls_verification_cannot_be_turned_off_anywhere() {
        let config = kc("{token: t}", ", insecure-skip-tls-verify: true");
        assert!(refused(&config, Origin::Cluster).is_some());
        assert!(refused(&config, Origin::User).is_some());
    }
}
