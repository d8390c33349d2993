//! Cluster DNS for the node's pods: Debian's dnsmasq, run as a child, answering for the cluster
//! domain from a hosts file this process rewrites (and tells it to read again), and for nothing
//! else (the test plane has no outside to forward to).
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use tokio::process::{Child, Command};

use crate::table::DOMAIN;

/// How long a starting dnsmasq may take to write its pid file, which it does once its signal
/// handlers are in place (a HUP before that would end it).
const STARTING: Duration = Duration::from_secs(5);

/// The DNS server, started on the first records.
pub struct Dns {
    address: String,
    dir: PathBuf,
    child: Option<Child>,
    written: Option<String>,
}

impl Dns {
    /// A server for `address` port 53, keeping its files in `dir`; started by [`Dns::serve`].
    pub fn new(address: &str, dir: &Path) -> Self {
        Self {
            address: address.to_owned(),
            dir: dir.to_owned(),
            child: None,
            written: None,
        }
    }

    fn hosts(&self) -> PathBuf {
        self.dir.join("hosts")
    }

    fn pid_file(&self) -> PathBuf {
        self.dir.join("dnsmasq.pid")
    }

    /// Serves `text` (a hosts file) from now on: written, then dnsmasq started (or started again,
    /// if it exited) or told to read it again.
    ///
    /// # Errors
    /// The file cannot be written, dnsmasq cannot start or be signalled.
    pub async fn serve(&mut self, text: String) -> anyhow::Result<()> {
        let running = match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => true,
            Some(exited) => {
                tracing::warn!("dnsmasq exited ({exited:?}); starting it again");
                false
            }
            None => false,
        };
        if running && self.written.as_ref() == Some(&text) {
            return Ok(());
        }
        tokio::fs::create_dir_all(&self.dir).await?;
        let tmp = self.hosts().with_extension("tmp");
        tokio::fs::write(&tmp, &text).await?;
        tokio::fs::rename(&tmp, self.hosts()).await?;
        if running {
            self.reload().await?;
        } else {
            self.start().await?;
        }
        self.written = Some(text);
        Ok(())
    }

    async fn start(&mut self) -> anyhow::Result<()> {
        let _ = tokio::fs::remove_file(self.pid_file()).await;
        let child = Command::new("dnsmasq")
            .args([
                "--keep-in-foreground",
                "--no-resolv",
                "--no-hosts",
                "--bind-interfaces",
            ])
            .arg(format!("--listen-address={}", self.address))
            .arg(format!("--addn-hosts={}", self.hosts().display()))
            .arg(format!("--local=/{DOMAIN}/"))
            .arg(format!("--pid-file={}", self.pid_file().display()))
            // Root keeps reading the hosts file in the plane's private directory after a HUP.
            .args(["--user=root", "--log-facility=-", "--cache-size=0"])
            .kill_on_drop(true)
            .spawn()
            .context("starting dnsmasq (install Debian's dnsmasq-base: scripts/install-deps)")?;
        self.child = Some(child);
        Ok(())
    }

    /// Tells dnsmasq to read the hosts file again, once it can take the signal.
    async fn reload(&mut self) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + STARTING;
        while !tokio::fs::try_exists(self.pid_file()).await? {
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "dnsmasq wrote no pid file in {STARTING:?}"
            );
            // dnsmasq tells nothing else when it is ready.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let pid = self
            .child
            .as_ref()
            .and_then(Child::id)
            .context("dnsmasq exited")?;
        let status = Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .await?;
        anyhow::ensure!(status.success(), "signalling dnsmasq ({pid})");
        Ok(())
    }
}
