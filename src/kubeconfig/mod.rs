//! Choosing a cluster the way kubectl does: `--kubeconfig`, else `KUBECONFIG` (a list of files,
//! merged), else `~/.kube/config`; `--context`, else the current context. Errors say which file and
//! which context, and list the contexts that do exist. Files are read bounded, as every file a
//! user names is ([`crate::input`]).
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

/// Why a kubeconfig could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--kubeconfig` names a file that does not exist.
    #[error("kubeconfig file {path} does not exist")]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// Neither `--kubeconfig`, `KUBECONFIG` nor `~/.kube/config` gave a kubeconfig.
    #[error(
        "no kubeconfig found: --kubeconfig is not set, KUBECONFIG is unset and {default} does not exist"
    )]
    NoneFound {
        /// The default path that was tried.
        default: PathBuf,
    },
    /// No kubeconfig, and the pod's in-cluster configuration is unusable.
    #[error(
        "no kubeconfig found ({default} does not exist) and the in-cluster configuration is unusable"
    )]
    InCluster {
        /// The default path that was tried.
        default: PathBuf,
        /// Why the in-cluster configuration failed.
        #[source]
        source: Box<kube::config::InClusterError>,
    },
    /// The file could not be read, or is larger than any kubeconfig
    /// ([`crate::input::MAX_FILE_BYTES`]).
    #[error(transparent)]
    Unreadable(crate::input::Error),
    /// The file exists but is not a valid kubeconfig.
    #[error("cannot load kubeconfig {source_name}")]
    Invalid {
        /// The file or variable it came from.
        source_name: String,
        /// What the parser said.
        #[source]
        source: KubeconfigError,
    },
    /// `--context` names a context the kubeconfig lacks.
    #[error("context \"{context}\" not found in {source_name} (contexts: {})", if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    UnknownContext {
        /// The requested context.
        context: String,
        /// The file or variable it came from.
        source_name: String,
        /// The contexts that exist.
        available: Vec<String>,
    },
    /// No `--context` and the kubeconfig has no current-context.
    #[error("{source_name} has no current-context and --context was not given")]
    NoCurrentContext {
        /// The file or variable it came from.
        source_name: String,
    },
}

impl Error {
    /// Advice printed under the error.
    #[must_use]
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Missing { .. } | Self::NoneFound { .. } => Some(
                "pass --kubeconfig <file> or set KUBECONFIG to a kubeconfig of the cluster".into(),
            ),
            Self::UnknownContext { .. } | Self::NoCurrentContext { .. } => {
                Some("pick one of the listed contexts with --context".into())
            }
            Self::InCluster { .. } => Some(
                "in a pod, mount the ServiceAccount token (automountServiceAccountToken); elsewhere pass --kubeconfig".into(),
            ),
            Self::Invalid { .. } | Self::Unreadable(_) => None,
        }
    }
}

/// Which kubeconfig and context to use; `None` means kubectl's defaults.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`.
    pub context: Option<String>,
}

/// A loaded kubeconfig selection: the client config and the names it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// What kube's client needs.
    pub config: kube::Config,
    /// The kubeconfig as parsed (merged when `KUBECONFIG` lists several files).
    pub kubeconfig: Kubeconfig,
    /// The selected context's name.
    pub context: String,
    /// Where the kubeconfig came from, for messages.
    pub source_name: String,
}

impl Selection {
    /// Loads and validates the selection. With no kubeconfig anywhere and a ServiceAccount
    /// mounted (a pod), the in-cluster configuration, as client-go's `rest.InClusterConfig`.
    pub async fn load(&self) -> Result<Loaded, Error> {
        let (kubeconfig, source_name) = match read(self.kubeconfig.as_deref()) {
            Err(Error::NoneFound { default })
                if self.context.is_none() && std::env::var_os(IN_CLUSTER_HOST).is_some() =>
            {
                return in_cluster().map_err(|source| Error::InCluster {
                    default,
                    source: Box::new(source),
                });
            }
            other => other?,
        };
        let context = match &self.context {
            Some(c) => c.clone(),
            None => kubeconfig
                .current_context
                .clone()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| Error::NoCurrentContext {
                    source_name: source_name.clone(),
                })?,
        };
        if !kubeconfig.contexts.iter().any(|c| c.name == context) {
            return Err(Error::UnknownContext {
                context,
                source_name,
                available: kubeconfig.contexts.iter().map(|c| c.name.clone()).collect(),
            });
        }
        let options = KubeConfigOptions {
            context: Some(context.clone()),
            ..Default::default()
        };
        let mut config = kube::Config::from_custom_kubeconfig(kubeconfig.clone(), &options)
            .await
            .map_err(|source| Error::Invalid {
                source_name: source_name.clone(),
                source,
            })?;
        // An unreachable address should fail in seconds, not hang for the OS default.
        config.connect_timeout = Some(Duration::from_secs(10));
        Ok(Loaded {
            config,
            kubeconfig,
            context,
            source_name,
        })
    }
}

/// Set in every pod's environment by the kubelet: the `kubernetes` Service's address.
const IN_CLUSTER_HOST: &str = "KUBERNETES_SERVICE_HOST";
/// The context name messages use for the in-cluster configuration.
pub const IN_CLUSTER_CONTEXT: &str = "in-cluster";

/// The pod's ServiceAccount configuration (token file re-read as the kubelet rotates it).
fn in_cluster() -> Result<Loaded, kube::config::InClusterError> {
    let mut config = kube::Config::incluster()?;
    config.connect_timeout = Some(Duration::from_secs(10));
    Ok(Loaded {
        config,
        kubeconfig: Kubeconfig::default(),
        context: IN_CLUSTER_CONTEXT.into(),
        source_name: "the pod's ServiceAccount (in-cluster configuration)".into(),
    })
}

fn read(path: Option<&Path>) -> Result<(Kubeconfig, String), Error> {
    let invalid = |source_name: String| {
        move |source| Error::Invalid {
            source_name,
            source,
        }
    };
    if let Some(path) = path {
        if !path.exists() {
            return Err(Error::Missing {
                path: path.to_path_buf(),
            });
        }
        return Ok((read_file(path, "--kubeconfig")?, path.display().to_string()));
    }
    if let Some(list) = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        let name = format!("KUBECONFIG={}", list.to_string_lossy());
        let existing: Vec<PathBuf> = std::env::split_paths(&list)
            .filter(|p| p.exists())
            .collect();
        if existing.is_empty() {
            return Err(Error::Missing {
                path: PathBuf::from(list),
            });
        }
        let mut merged: Option<Kubeconfig> = None;
        for p in existing {
            let next = read_file(&p, "KUBECONFIG file")?;
            merged = Some(match merged {
                None => next,
                Some(m) => m.merge(next).map_err(invalid(name.clone()))?,
            });
        }
        return Ok((merged.expect("at least one file"), name));
    }
    let default = home_dir().join(".kube").join("config");
    if !default.exists() {
        return Err(Error::NoneFound { default });
    }
    Ok((
        read_file(&default, "kubeconfig")?,
        default.display().to_string(),
    ))
}

/// Reads one kubeconfig file named by `what`, at most [`crate::input::MAX_FILE_BYTES`], with its
/// relative paths made absolute against its directory, as `Kubeconfig::read_from` (and kubectl)
/// do.
fn read_file(path: &Path, what: &str) -> Result<Kubeconfig, Error> {
    let text = crate::input::read_text(path, what).map_err(Error::Unreadable)?;
    let mut kc = Kubeconfig::from_yaml(&text).map_err(|source| Error::Invalid {
        source_name: path.display().to_string(),
        source,
    })?;
    if let Some(dir) = path.parent() {
        absolute_paths(&mut kc, dir);
    }
    Ok(kc)
}

/// Makes the file paths in `kc` absolute against `dir`; an exec command only when it has a
/// separator (a bare name is looked up in `PATH`), as client-go does.
fn absolute_paths(kc: &mut Kubeconfig, dir: &Path) {
    let fix = |p: &mut Option<String>| {
        let rel = p.as_deref().filter(|p| Path::new(p).is_relative());
        if let Some(abs) = rel.and_then(|r| dir.join(r).to_str().map(str::to_owned)) {
            *p = Some(abs);
        }
    };
    for cluster in kc.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
        fix(&mut cluster.certificate_authority);
    }
    for auth in kc
        .auth_infos
        .iter_mut()
        .filter_map(|a| a.auth_info.as_mut())
    {
        fix(&mut auth.client_certificate);
        fix(&mut auth.client_key);
        fix(&mut auth.token_file);
        if let Some(exec) = auth.exec.as_mut()
            && exec
                .command
                .as_deref()
                .is_some_and(|c| c.contains(std::path::MAIN_SEPARATOR))
        {
            fix(&mut exec.command);
        }
    }
}

fn home_dir() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// Writes a file only its owner can read (kubeconfigs, keys, tokens): a new file of mode 0600
/// beside `path`, renamed over it. A symlink planted at `path` is replaced, never followed (its
/// target is not written), and a reader never sees a half-written file.
pub fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{} names no file", path.display())))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(
        ".{}-{}.tmp",
        std::process::id(),
        crate::pki::random_token_chars(8)
    ));
    let temp = path.with_file_name(temp_name);
    // create_new: fails on anything already there, a symlink included.
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut file| {
            file.write_all(contents)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_file_replaces_a_planted_symlink_and_is_owner_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!(
            "clusteradm-private-{}-{}",
            std::process::id(),
            crate::pki::random_token_chars(6)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let path = dir.join("out.yaml");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_private(&path, b"secret").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file(), "{meta:?}");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "secret");
        // Written again: replaced, still 0600, and no temporary file left beside it.
        write_private(&path, b"again").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "again");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_oversized_kubeconfig_is_refused_and_relative_paths_are_made_absolute() {
        let dir =
            std::env::temp_dir().join(format!("clusteradm-kubeconfig-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://h:1', certificate-authority: ca.crt}}]\n\
             users: [{name: u, user: {client-certificate: /abs/tls.crt, tokenFile: token}}]\n",
        )
        .unwrap();
        let (kc, _) = read(Some(&path)).unwrap();
        let size = usize::try_from(crate::input::MAX_FILE_BYTES).unwrap() + 1;
        std::fs::write(&path, vec![b'#'; size]).unwrap();
        let err = read(Some(&path)).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            err.starts_with("--kubeconfig ") && err.contains("over 2000 KiB"),
            "{err}"
        );
        let ca = kc.clusters[0]
            .cluster
            .as_ref()
            .unwrap()
            .certificate_authority
            .as_deref();
        assert_eq!(ca, dir.join("ca.crt").to_str());
        let user = kc.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(user.client_certificate.as_deref(), Some("/abs/tls.crt"));
        assert_eq!(user.token_file.as_deref(), dir.join("token").to_str());
    }
}
