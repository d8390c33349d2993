//! The webhooks as the hub pods serve them: on every replica (they need no Lease), behind
//! the hub's Service, with the serving certificate the ClusterManager operator issues from its
//! own CA and mounts from a Secret. The operator points the CRDs at the Service with that CA's
//! bundle, so no pod writes a CRD.
//!
//! The kubelet rewrites the mounted files when the operator renews the certificate: each TLS
//! handshake checks the certificate file's modification time and loads the pair again when it
//! changed, so a renewal takes effect without a restart.
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use anyhow::Context as _;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use ocm_runtime::Shutdown;

/// The port the hub pods serve the webhook on (the Service's target port).
pub const PORT: u16 = 9443;
const CERT_FILE: &str = "tls.crt";
const KEY_FILE: &str = "tls.key";

/// Serves the webhook on `addr` with the pair in `dir` until `shutdown` is cancelled.
pub async fn serve(
    dir: &Path,
    addr: SocketAddr,
    routes: Arc<dyn super::Routes>,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let resolver = Arc::new(MountedCert::load(dir)?);
    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_cert_resolver(resolver);
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on {addr} for the hub's webhooks"))?;
    tracing::info!(
        "hub webhooks (add-on conversion, admission) serving on {addr} with the certificate in {}",
        dir.display()
    );
    super::server::spawn(listener, TlsAcceptor::from(Arc::new(tls)), routes, shutdown);
    Ok(())
}

/// The certificate in a mounted directory, loaded again when its file changes.
#[derive(Debug)]
struct MountedCert {
    dir: PathBuf,
    current: Mutex<(Option<SystemTime>, Arc<CertifiedKey>)>,
}

impl MountedCert {
    fn load(dir: &Path) -> anyhow::Result<Self> {
        let (modified, key) = read_pair(dir)?;
        Ok(Self {
            dir: dir.to_owned(),
            current: Mutex::new((modified, Arc::new(key))),
        })
    }
}

impl ResolvesServerCert for MountedCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let modified = modified(&self.dir);
        if modified != current.0 {
            // A pair half written (the kubelet swaps a symlink, so rarely) keeps the old one.
            match read_pair(&self.dir) {
                Ok((at, key)) => *current = (at, Arc::new(key)),
                Err(e) => tracing::warn!("reloading the hub webhooks' certificate: {e:#}"),
            }
        }
        Some(current.1.clone())
    }
}

fn modified(dir: &Path) -> Option<SystemTime> {
    std::fs::metadata(dir.join(CERT_FILE)).ok()?.modified().ok()
}

fn read_pair(dir: &Path) -> anyhow::Result<(Option<SystemTime>, CertifiedKey)> {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let at = modified(dir);
    let read = |name: &str| {
        std::fs::read(dir.join(name))
            .with_context(|| format!("reading {}", dir.join(name).display()))
    };
    let chain = ocm_runtime::pki::certificates_der(&read(CERT_FILE)?)?
        .into_iter()
        .map(CertificateDer::from)
        .collect();
    let key = PrivateKeyDer::from_pem_slice(&read(KEY_FILE)?)
        .with_context(|| format!("{} holds no private key", dir.join(KEY_FILE).display()))?;
    let signing = rustls::crypto::ring::sign::any_supported_type(&key)
        .context("the webhook's private key is of no supported type")?;
    Ok((at, CertifiedKey::new(chain, signing)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_runtime::pki::webhook as certs;

    fn write_pair(dir: &Path, name: &str) {
        let now = ocm_runtime::pki::now_seconds();
        let signer = certs::issue_signer(now).unwrap();
        let serving =
            certs::issue_serving(&certs::issuer(&signer).unwrap(), &[name.to_owned()], now)
                .unwrap();
        std::fs::write(dir.join(CERT_FILE), serving.cert).unwrap();
        std::fs::write(dir.join(KEY_FILE), serving.key).unwrap();
    }

    #[test]
    fn a_renewed_pair_is_picked_up_and_a_broken_one_is_not() {
        let dir = std::env::temp_dir().join(format!("mounted-cert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_pair(&dir, "first.example");
        let mounted = MountedCert::load(&dir).unwrap();
        let first = mounted.current.lock().unwrap().1.cert[0].clone();
        write_pair(&dir, "second.example");
        let (at, key) = read_pair(&dir).unwrap();
        assert_ne!(key.cert[0], first, "a new pair reads as new");
        assert_eq!(at, modified(&dir), "the time it was read at is the file's");
        std::fs::write(dir.join(KEY_FILE), "not a key").unwrap();
        assert!(read_pair(&dir).is_err(), "a broken pair is refused");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
