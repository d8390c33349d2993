//! Our Konnectivity client (`crates/konnectivity`, under `clusteradm proxy`) against
//! apiserver-network-proxy's own proxy server and agent, the version cluster-proxy runs (built by
//! `scripts/control-plane build`; `KONNECTIVITY_SERVER`/`KONNECTIVITY_AGENT`), on loopback: a dial
//! reaches the hub's API server with TLS verified end to end, megabytes cross intact both ways,
//! and a dial to a host no agent serves, or a client the server's CA did not sign, is refused.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Empty};
use hyper::body::Bytes;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::{Child, Command};

use crate::common;

/// A binary `scripts/control-plane env` names.
fn binary(var: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{var} does not name apiserver-network-proxy's binary: run `scripts/control-plane build` \
                 and `eval \"$(scripts/control-plane env)\"`"
            )
        })
}

/// A CA and what it signs, as PEM files in `dir`.
struct Pki {
    dir: PathBuf,
    issuer: Issuer<'static, KeyPair>,
}

impl Pki {
    fn new(name: &str) -> Self {
        use std::os::unix::fs::DirBuilderExt as _;
        // Private keys: a directory only this user enters, removed with the test's Pki.
        let dir = std::env::temp_dir().join(common::unique(name));
        std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        std::fs::write(dir.join("ca.crt"), params.self_signed(&key).unwrap().pem()).unwrap();
        Self {
            dir,
            issuer: Issuer::new(params, key),
        }
    }

    /// Issues `name`.crt/.key for `sans`; returns the two paths.
    fn issue(&self, name: &str, sans: &[&str]) -> (PathBuf, PathBuf) {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(sans.iter().map(ToString::to_string).collect::<Vec<_>>())
                .unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let signed = params.signed_by(&key, &self.issuer).unwrap();
        let (crt, pem) = (
            self.dir.join(format!("{name}.crt")),
            self.dir.join(format!("{name}.key")),
        );
        std::fs::write(&crt, signed.pem()).unwrap();
        std::fs::write(&pem, key.serialize_pem()).unwrap();
        (crt, pem)
    }

    fn ca(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Free loopback ports (released before use: another process could take one in between, which
/// would fail the test loudly, not wrongly).
fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<std::net::TcpListener> = (0..N)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().unwrap().port())
}

/// apiserver-network-proxy's server with one agent, whose identifier is `host`.
struct Tunnel {
    pki: Pki,
    client_port: u16,
    _server: Child,
    _agent: Child,
}

impl Tunnel {
    fn start(host: &str) -> Self {
        let pki = Pki::new("konnectivity");
        let (server_crt, server_key) = pki.issue("proxy-server", &["localhost", "127.0.0.1"]);
        let (agent_crt, agent_key) = pki.issue("proxy-agent", &[]);
        let [
            client_port,
            agent_port,
            admin,
            health,
            agent_admin,
            agent_health,
        ] = free_ports();
        let path = |p: &Path| p.to_str().unwrap().to_string();
        let server = Command::new(binary("KONNECTIVITY_SERVER"))
            .args([
                "--mode=grpc",
                "--uds-name=",
                "--proxy-strategies=destHost",
                "--server-count=1",
            ])
            .arg(format!("--server-port={client_port}"))
            .arg(format!("--agent-port={agent_port}"))
            .arg(format!("--admin-port={admin}"))
            .arg(format!("--health-port={health}"))
            .arg(format!("--server-ca-cert={}", path(&pki.ca())))
            .arg(format!("--server-cert={}", path(&server_crt)))
            .arg(format!("--server-key={}", path(&server_key)))
            .arg(format!("--cluster-ca-cert={}", path(&pki.ca())))
            .arg(format!("--cluster-cert={}", path(&server_crt)))
            .arg(format!("--cluster-key={}", path(&server_key)))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let agent = Command::new(binary("KONNECTIVITY_AGENT"))
            .args(["--proxy-server-host=127.0.0.1"])
            .arg(format!("--proxy-server-port={agent_port}"))
            .arg(format!("--agent-identifiers=host={host}"))
            .arg(format!("--ca-cert={}", path(&pki.ca())))
            .arg(format!("--agent-cert={}", path(&agent_crt)))
            .arg(format!("--agent-key={}", path(&agent_key)))
            .arg(format!("--admin-server-port={agent_admin}"))
            .arg(format!("--health-server-port={agent_health}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Self {
            pki,
            client_port,
            _server: server,
            _agent: agent,
        }
    }

    /// A client with a certificate of the server's CA, once the server listens.
    async fn ready_client(&self) -> konnectivity::Client {
        common::eventually(
            "the proxy server to listen",
            Duration::from_secs(30),
            || async { self.client(&self.pki).await.ok() },
        )
        .await
    }

    /// A client presenting a certificate `signer` issued.
    async fn client(&self, signer: &Pki) -> Result<konnectivity::Client, String> {
        let (crt, key) = signer.issue("proxy-client", &[]);
        let read = |path: &Path| std::fs::read(path).unwrap();
        let tls = clusteradm::pki::tls::client_config(
            &read(&self.pki.ca()),
            Some((&read(&crt), &read(&key))),
        )
        .unwrap();
        let port = self.client_port;
        konnectivity::connect(
            move || tokio::net::TcpStream::connect(("127.0.0.1", port)),
            tls,
            ServerName::try_from("localhost").unwrap(),
        )
        .await
        .map(konnectivity::Client::new)
        .map_err(|e| format!("{e:?}"))
    }
}

/// The hub API server's host and port, and a TLS client trusting only its CA.
fn hub_tls() -> (String, u16, rustls::ClientConfig) {
    let url = common::hub_url();
    let (_, ca_b64) = common::server_and_ca(&common::env().hub);
    let ca = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, ca_b64).unwrap();
    let tls = clusteradm::pki::tls::client_config(&ca, None).unwrap();
    let host = url.host().unwrap().trim_matches(['[', ']']).to_string();
    (host, url.port_u16().unwrap_or(443), tls)
}

/// `GET /healthz` over `stream`, TLS verified for `host`: the body.
async fn healthz(stream: tokio::io::DuplexStream, host: &str, tls: rustls::ClientConfig) -> String {
    let stream = tokio_rustls::TlsConnector::from(Arc::new(tls))
        .connect(ServerName::try_from(host.to_string()).unwrap(), stream)
        .await
        .expect("TLS with the hub API server through the tunnel, verified against its CA");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let request = http::Request::get("/healthz")
        .header(http::header::HOST, host)
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8_lossy(&body).into_owned()
}

#[tokio::test]
async fn a_dial_through_konnectivity_reaches_the_api_server_and_carries_megabytes_intact() {
    let (host, port, tls) = hub_tls();
    let tunnel = Tunnel::start(&host);
    let client = tunnel.ready_client().await;
    // The agent connects to the server on its own schedule: dial until it is there.
    let address = format!("{host}:{port}");
    let stream = common::eventually("a dial through the agent", Duration::from_secs(60), || {
        let client = client.clone();
        let address = address.clone();
        async move { client.dial(&address).await.ok() }
    })
    .await;
    assert_eq!(healthz(stream, &host, tls.clone()).await, "ok");

    // Several connections at once on one HTTP/2 connection to the server.
    let probes = (0..8).map(|_| {
        let (client, address, host, tls) =
            (client.clone(), address.clone(), host.clone(), tls.clone());
        async move { healthz(client.dial(&address).await.unwrap(), &host, tls).await }
    });
    assert!(
        futures::future::join_all(probes)
            .await
            .iter()
            .all(|b| b == "ok")
    );

    // 4 MiB to an echo server behind the same agent, and back, byte for byte.
    let echo = tokio::net::TcpListener::bind((host.as_str(), 0))
        .await
        .unwrap();
    let echo_port = echo.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut conn, _) = echo.accept().await.unwrap();
        let (mut read, mut write) = conn.split();
        let _ = tokio::io::copy(&mut read, &mut write).await;
    });
    let mut stream = client.dial(&format!("{host}:{echo_port}")).await.unwrap();
    let sent: Vec<u8> = (0..4 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    let (mut read, mut write) = tokio::io::split(&mut stream);
    let writer = async {
        write.write_all(&sent).await.unwrap();
    };
    let mut received = vec![0; sent.len()];
    let reader = async {
        read.read_exact(&mut received).await.unwrap();
    };
    tokio::join!(writer, reader);
    assert!(received == sent, "the echoed bytes differ from those sent");
}

#[tokio::test]
async fn konnectivity_refuses_a_host_no_agent_serves_and_a_client_of_another_ca() {
    let (host, port, _) = hub_tls();
    let tunnel = Tunnel::start(&host);
    let client = tunnel.ready_client().await;
    let address = format!("{host}:{port}");
    common::eventually("a dial through the agent", Duration::from_secs(60), || {
        let (client, address) = (client.clone(), address.clone());
        async move { client.dial(&address).await.ok() }
    })
    .await;

    let refused = client.dial("no-agent.invalid:443").await.unwrap_err();
    assert!(
        matches!(refused, konnectivity::DialError::Refused { .. }),
        "{refused:?}"
    );

    // A client certificate of another CA: the TLS handshake or the first call fails.
    let stranger = Pki::new("konnectivity-stranger");
    if let Ok(stranger) = tunnel.client(&stranger).await {
        let dialled = stranger.dial(&address).await;
        assert!(
            dialled.is_err(),
            "a client of another CA dialled through the server"
        );
    }
}

/// `clusteradm proxy …` with `args` on the hub.
fn proxy(args: &[&str]) -> assert_cmd::assert::Assert {
    common::clusteradm()
        .arg("proxy")
        .args(args)
        .arg("--kubeconfig")
        .arg(&common::env().hub)
        .assert()
}

#[test]
fn the_proxy_commands_refuse_bad_input_saying_why() {
    use predicates::prelude::*;
    // Flags that cannot work are refused before anything is read from the hub.
    proxy(&["health", "--proxy-ca-cert", "/nonexistent/ca.crt"])
        .code(1)
        .stderr(predicate::str::contains(
            "--proxy-ca-cert, --proxy-cert and --proxy-key go together",
        ));
    proxy(&["health", "--in-cluster-proxy-cert-lookup=false"])
        .code(1)
        .stderr(predicate::str::contains("needs the certificate files"));
    proxy(&["kubectl", "--sa", "x", "--args", "get ns"])
        .code(1)
        .stderr(predicate::str::contains("no managed cluster named"));
    proxy(&["kubectl", "--cluster", "a", "--sa", "x"])
        .code(1)
        .stderr(predicate::str::contains("no kubectl arguments"));
    // Then what the hub says: an unknown cluster, and no add-on.
    proxy(&["health", "--clusters", "no-such-cluster"])
        .code(1)
        .stderr(predicate::str::contains(
            "managed cluster no-such-cluster not found",
        ));
    proxy(&[
        "kubectl",
        "--cluster",
        "no-such-cluster",
        "--sa",
        "x",
        "--args",
        "get ns",
    ])
    .code(1)
    .stderr(predicate::str::contains(
        "managed cluster no-such-cluster not found",
    ));
    proxy(&["health"]).code(1).stderr(predicate::str::contains(
        "the cluster-proxy add-on is not installed on this hub",
    ));
}
