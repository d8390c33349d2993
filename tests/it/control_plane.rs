//! The test control plane behaves like a kubeadm cluster: bootstrap tokens authenticate, the
//! controller-manager signs approved client CSRs, and deleted namespaces go away.
use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestSpec,
};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};

use crate::common;

#[tokio::test]
async fn bootstrap_token_authenticates() {
    let hub = common::hub().await;
    let id = common::token_id();
    let secret_part = "0123456789abcdef";
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), "kube-system");
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(format!("bootstrap-token-{id}")),
            ..Default::default()
        },
        type_: Some("bootstrap.kubernetes.io/token".into()),
        string_data: Some(BTreeMap::from([
            ("token-id".to_string(), id.clone()),
            ("token-secret".to_string(), secret_part.to_string()),
            (
                "usage-bootstrap-authentication".to_string(),
                "true".to_string(),
            ),
        ])),
        ..Default::default()
    };
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();

    let client = common::hub_client_with_token(&format!("{id}.{secret_part}")).await;
    // The authenticator reads token secrets through an informer: allow it to catch up.
    let user = common::eventually(
        "the bootstrap token to authenticate",
        Duration::from_secs(20),
        || async { common::whoami(&client).await.ok() },
    )
    .await;
    assert_eq!(user, format!("system:bootstrap:{id}"));

    let wrong = common::hub_client_with_token(&format!("{id}.ffffffffffffffff")).await;
    let err = common::whoami(&wrong).await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 401),
        "{err:?}"
    );
    secrets
        .delete(&format!("bootstrap-token-{id}"), &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn approved_client_csr_is_signed_and_authenticates() {
    let hub = common::hub().await;
    let name = common::unique("it-csr");
    let user = format!("it-user-{name}");
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, user.clone());
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "it-group");
    let request = params.serialize_request(&key).unwrap().pem().unwrap();

    let csrs: Api<CertificateSigningRequest> = Api::all(hub.clone());
    let csr = CertificateSigningRequest {
        metadata: kube::api::ObjectMeta {
            name: Some(name.clone()),
            ..Default::default()
        },
        spec: CertificateSigningRequestSpec {
            request: ByteString(request.into_bytes()),
            signer_name: "kubernetes.io/kube-apiserver-client".into(),
            usages: Some(vec!["client auth".into(), "digital signature".into()]),
            expiration_seconds: Some(600),
            ..Default::default()
        },
        status: None,
    };
    csrs.create(&PostParams::default(), &csr).await.unwrap();
    let approval = serde_json::json!({"status": {"conditions": [{
        "type": "Approved", "status": "True", "reason": "ITApprove", "message": "approved by the test"
    }]}});
    csrs.patch_approval(&name, &PatchParams::default(), &Patch::Merge(&approval))
        .await
        .unwrap();

    let signed = tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(
            csrs.clone(),
            &name,
            |c: Option<&CertificateSigningRequest>| {
                c.and_then(|c| c.status.as_ref())
                    .and_then(|s| s.certificate.as_ref())
                    .is_some()
            },
        ),
    )
    .await
    .expect("the controller-manager signs within 30 s")
    .unwrap()
    .unwrap();
    let cert = String::from_utf8(signed.status.unwrap().certificate.unwrap().0).unwrap();
    assert!(cert.contains("BEGIN CERTIFICATE"));

    let client = common::hub_client_with_cert(&cert, &key.serialize_pem()).await;
    assert_eq!(common::whoami(&client).await.unwrap(), user);
    csrs.delete(&name, &DeleteParams::default()).await.unwrap();
}

#[tokio::test]
async fn deleted_namespace_disappears() {
    let hub = common::hub().await;
    let name = common::unique("it-ns");
    let namespaces: Api<Namespace> = Api::all(hub.clone());
    let ns = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(name.clone()),
            ..Default::default()
        },
        ..Default::default()
    };
    let created = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let uid = created.metadata.uid.unwrap();
    namespaces
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    tokio::time::timeout(
        Duration::from_secs(60),
        await_condition(namespaces, &name, conditions::is_deleted(&uid)),
    )
    .await
    .expect("the namespace controller finishes within 60 s")
    .unwrap();
}
