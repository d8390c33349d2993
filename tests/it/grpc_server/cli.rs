//! `clusteradm controller grpc-server` as a user runs it: bad flags and files are named, and the
//! server serves until SIGTERM, then exits cleanly.
use std::process::Stdio;

use predicates::prelude::*;

use super::*;

/// A serving certificate and key for localhost, and the CA's PEM, written to a fresh directory.
fn pem_files() -> (std::path::PathBuf, String) {
    let (ca_pem, issuer) = ca("grpc-cli-test-ca");
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let cert = common::temp_file("tls.crt", &leaf.pem());
    let dir = cert.parent().unwrap().to_path_buf();
    std::fs::write(dir.join("tls.key"), key.serialize_pem()).unwrap();
    (dir, ca_pem)
}

fn grpc_server(dir: &std::path::Path, port: u16) -> assert_cmd::Command {
    let mut cmd = common::clusteradm();
    cmd.args(["controller", "grpc-server", "--kubeconfig"])
        .arg(&common::env().hub)
        .arg("--grpc-server-bindport")
        .arg(port.to_string())
        .arg("--grpc-tls-cert-file")
        .arg(dir.join("tls.crt"))
        .arg("--grpc-tls-key-file")
        .arg(dir.join("tls.key"))
        .timeout(Duration::from_secs(30));
    cmd
}

#[test]
fn bad_flags_and_files_are_named() {
    let (dir, _) = pem_files();
    // A missing file, a file that is not PEM.
    let missing = dir.join("nowhere.crt");
    grpc_server(&dir, 0)
        .arg("--grpc-tls-cert-file")
        .arg(&missing)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--grpc-tls-cert-file"))
        .stderr(predicate::str::contains(missing.to_str().unwrap()));
    let not_pem = common::temp_file("ca.crt", "hello");
    grpc_server(&dir, 0)
        .arg("--grpc-client-ca-file")
        .arg(&not_pem)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a PEM file"));
    // A heartbeat faster than upstream allows; a signing CA without its key.
    grpc_server(&dir, 0)
        .args(["--broker-heartbeat-interval", "5s"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("at least 10s"));
    grpc_server(&dir, 0)
        .arg("--grpc-ca-file")
        .arg(dir.join("tls.crt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--grpc-key-file"));
}

#[test]
fn a_port_in_use_is_named_with_the_flag_to_change() {
    let (dir, _) = pem_files();
    let taken = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    grpc_server(&dir, port)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!("0.0.0.0:{port}")))
        .stderr(predicate::str::contains("--grpc-server-bindport"));
}

#[tokio::test]
async fn it_serves_until_sigterm_and_then_exits_cleanly() {
    let (dir, ca_pem) = pem_files();
    let port = std::net::TcpListener::bind("0.0.0.0:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let binary = assert_cmd::cargo::cargo_bin("clusteradm");
    let mut server = std::process::Command::new(binary)
        .args(["controller", "grpc-server", "--kubeconfig"])
        .arg(&common::env().hub)
        .arg("--grpc-server-bindport")
        .arg(port.to_string())
        .arg("--grpc-tls-cert-file")
        .arg(dir.join("tls.crt"))
        .arg("--grpc-tls-key-file")
        .arg(dir.join("tls.key"))
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Serving: an anonymous call gets the server's answer (not a connection error).
    let url = format!("https://localhost:{port}");
    let answer = common::eventually("the server answering", WAIT, || {
        let (url, ca_pem) = (url.clone(), ca_pem.clone());
        async move {
            let tls = ClientTlsConfig::new()
                .ca_certificate(Certificate::from_pem(&ca_pem))
                .domain_name("localhost");
            let channel = Channel::from_shared(url)
                .ok()?
                .tls_config(tls)
                .ok()?
                .connect()
                .await
                .ok()?;
            let event = status_event(
                clusters(),
                SubResource::Spec,
                Action::Create,
                "c1",
                &serde_json::json!({}),
            );
            CloudEventServiceClient::new(channel)
                .publish(Request::new(PublishRequest { event: Some(event) }))
                .await
                .err()
        }
    })
    .await;
    assert_eq!(answer.code(), Code::Unauthenticated, "{answer:?}");

    let kill = std::process::Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = common::eventually("the server to exit", WAIT, || {
        let exited = server.try_wait().unwrap();
        async move { exited }
    })
    .await;
    let mut stderr = String::new();
    std::io::Read::read_to_string(server.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "exit {status:?}: {stderr}");
    assert!(stderr.contains("the gRPC server stopped"), "{stderr}");
}
