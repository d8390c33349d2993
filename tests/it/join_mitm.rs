//! A man in the middle during `join`: a local TLS server, with a certificate of its own CA,
//! stands where the hub should be. Whatever it answers, join must fail and the token must never
//! reach it. (The real hub's CA is public — cluster-info is anonymously readable — so the attacker
//! can put it in what he serves.)
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use crate::common;

const TOKEN: &str = "abcdef.0123456789abcdef";

/// How the impostor answers.
#[derive(Clone, Copy)]
enum Impostor {
    /// Serves cluster-info whose CA bundle is `[real hub CA, attacker CA]`.
    BundleWithTheRealCa,
    /// Refuses every anonymous request with 401, hoping for a retry with the token.
    Unauthorized,
    /// Serves cluster-info with the real hub CA alone, naming a server elsewhere (for
    /// `--force-internal-endpoint-lookup` to follow).
    RealCaElsewhere,
}

/// The impostor's address and what it saw: the Authorization headers it was sent.
async fn impostor(kind: Impostor, real_ca_pem: String) -> (String, Arc<Mutex<Vec<String>>>) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der()).unwrap(),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (bundle, server) = match kind {
        Impostor::RealCaElsewhere => (real_ca_pem, "https://elsewhere.invalid:6443".to_string()),
        _ => (format!("{real_ca_pem}{}", ca.pem()), url.clone()),
    };
    let cluster_info = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cluster-info", "namespace": "kube-public"},
        "data": {"kubeconfig": format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: ''\n  cluster:\n    server: {server}\n    certificate-authority-data: {}\n",
            base64::engine::general_purpose::STANDARD.encode(&bundle))}
    })
    .to_string();
    let record = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let Ok(mut tls) = acceptor.accept(tcp).await else {
                continue;
            };
            let (record, cluster_info) = (record.clone(), cluster_info.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                let mut head = Vec::new();
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).to_string();
                for line in head.lines() {
                    if line.to_ascii_lowercase().starts_with("authorization:") {
                        record.lock().unwrap().push(line.to_string());
                    }
                }
                let (status, body) = match kind {
                    Impostor::BundleWithTheRealCa | Impostor::RealCaElsewhere
                        if head.contains("/configmaps/cluster-info") =>
                    {
                        ("200 OK", cluster_info)
                    }
                    _ => (
                        "401 Unauthorized",
                        r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}"#.to_string(),
                    ),
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(response.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (url, seen)
}

fn real_hub_ca() -> (String, String) {
    let (_, ca_b64) = common::server_and_ca(&common::env().hub);
    let pem = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(ca_b64)
            .unwrap(),
    )
    .unwrap();
    let pin = clusteradm::pki::ca_cert_hash(pem.as_bytes()).unwrap();
    (pem, pin)
}

async fn join(url: &str, pin: Option<&str>) -> std::process::Output {
    join_with(url, pin, &[]).await
}

async fn join_with(url: &str, pin: Option<&str>, extra: &[&str]) -> std::process::Output {
    let mut cmd = common::clusteradm();
    cmd.args([
        "join",
        "--dry-run",
        "--cluster-name",
        &common::unique("mitm"),
    ])
    .args([
        "--hub-apiserver",
        url,
        "--hub-token",
        TOKEN,
        "--timeout",
        "20s",
    ])
    .arg("--kubeconfig")
    .arg(&common::env().managed);
    if let Some(pin) = pin {
        cmd.args(["--ca-cert-hash", pin]);
    }
    cmd.args(extra);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_ca_beside_the_attackers_does_not_make_the_attacker_trusted() {
    let (ca, pin) = real_hub_ca();
    let (url, seen) = impostor(Impostor::BundleWithTheRealCa, ca).await;
    let out = join(&url, Some(&pin)).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "join trusted the impostor: {stderr}");
    assert!(
        seen.lock().unwrap().is_empty(),
        "the token reached the impostor"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_never_follows_a_refused_anonymous_read() {
    let (ca, pin) = real_hub_ca();
    let (url, seen) = impostor(Impostor::Unauthorized, ca).await;
    for pin in [Some(pin.as_str()), None] {
        let out = join(&url, pin).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("--ca-file"), "{stderr}");
        assert!(
            seen.lock().unwrap().is_empty(),
            "the token reached the impostor"
        );
    }
}

/// With a pin, cluster-info read without verification vouches for nothing but the CA: the server
/// it names for `--force-internal-endpoint-lookup` is read again over the verified connection,
/// which an impostor cannot answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_impostor_cannot_choose_the_internal_endpoint() {
    let (ca, pin) = real_hub_ca();
    let (url, seen) = impostor(Impostor::RealCaElsewhere, ca).await;
    let out = join_with(&url, Some(&pin), &["--force-internal-endpoint-lookup"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("re-reading kube-public/cluster-info over the verified connection"),
        "{stderr}"
    );
    assert!(!stderr.contains("elsewhere.invalid"), "{stderr}");
    assert!(
        seen.lock().unwrap().is_empty(),
        "the token reached the impostor"
    );
}
