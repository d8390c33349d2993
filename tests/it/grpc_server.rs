//! The hub's gRPC server against the real hub: an agent speaking upstream's CloudEvents
//! protocol registers its cluster through it, is sent its cluster's changes, and may do through
//! it exactly what the hub's RBAC lets its identity do.
use std::time::Duration;

use cloudevents_grpc::event::{self, CLUSTER_NAME, RESOURCE_ID};
use cloudevents_grpc::event_type::{Action, DataType, EventType, HEARTBEAT, SubResource};
use cloudevents_grpc::proto::cloud_event_service_client::CloudEventServiceClient;
use cloudevents_grpc::proto::{CloudEvent, PublishRequest, SubscriptionRequest};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use tonic::transport::{Certificate, Channel, ClientTlsConfig};
use tonic::{Code, Request, Streaming};

use crate::common;
use clusteradm::api::cluster::ManagedCluster;

mod cli;
mod tokens;
mod works;
use clusteradm::hub::grpc_server::{self, CSR_USER_ANNOTATION, Tls};

const WAIT: Duration = Duration::from_secs(30);

/// A server on a free loopback port, for as long as the test runs; its CA's PEM and address.
struct Server {
    url: String,
    ca_pem: String,
    client_ca: Issuer<'static, KeyPair>,
    _stop: tokio_util::sync::DropGuard,
}

fn ca(name: &str) -> (String, Issuer<'static, KeyPair>) {
    let (pem, issuer, _) = ca_with_key(name);
    (pem, issuer)
}

/// A CA: its PEM, an issuer of it, and its key's PEM.
fn ca_with_key(name: &str) -> (String, Issuer<'static, KeyPair>, String) {
    let key = KeyPair::generate().unwrap();
    let key_pem = key.serialize_pem();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    let cert = params.self_signed(&key).unwrap();
    (cert.pem(), Issuer::new(params, key), key_pem)
}

/// With `signing`, the server signs approved gRPC CSRs with its client CA. A signer signs every
/// approved gRPC CSR of the hub: only one test may run one, or they would sign each other's.
async fn server(heartbeat: Option<Duration>, signing: bool) -> Server {
    let (ca_pem, issuer) = ca("grpc-server-test-ca");
    let (client_ca_pem, client_ca, client_ca_key) = ca_with_key("grpc-client-test-ca");
    let signer = signing.then(|| {
        grpc_server::signer::Signer::new(&client_ca_pem, &client_ca_key, Duration::from_secs(3600))
            .unwrap()
    });
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let tls = Tls {
        cert_pem: leaf.pem(),
        key_pem: key.serialize_pem(),
        client_ca_pem: Some(client_ca_pem),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://localhost:{}",
        listener.local_addr().unwrap().port()
    );
    let stop = tokio_util::sync::CancellationToken::new();
    let hub = common::hub().await;
    let token = stop.clone();
    let config = grpc_server::Config {
        tls,
        heartbeat,
        signer,
    };
    tokio::spawn(async move {
        grpc_server::serve(hub, listener, config, token)
            .await
            .unwrap();
    });
    Server {
        url,
        ca_pem,
        client_ca,
        _stop: stop.drop_guard(),
    }
}

impl Server {
    async fn client(
        &self,
        identity: Option<tonic::transport::Identity>,
    ) -> CloudEventServiceClient<Channel> {
        let mut tls = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&self.ca_pem))
            .domain_name("localhost");
        if let Some(identity) = identity {
            tls = tls.identity(identity);
        }
        let channel = Channel::from_shared(self.url.clone())
            .unwrap()
            .tls_config(tls)
            .unwrap()
            .connect()
            .await
            .unwrap();
        CloudEventServiceClient::new(channel)
    }

    /// A client certificate of the test's client CA naming `user` in `groups`.
    fn client_identity(&self, user: &str, groups: &[&str]) -> tonic::transport::Identity {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, user);
        for group in groups {
            params
                .distinguished_name
                .push(rcgen::DnType::OrganizationName, *group);
        }
        let cert = params.signed_by(&key, &self.client_ca).unwrap();
        tonic::transport::Identity::from_pem(cert.pem(), key.serialize_pem())
    }
}

fn with_token<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

/// A token of ServiceAccount `namespace/account`, bound to a Role of the same name holding `rules`.
async fn token_with_role(
    hub: &kube::Client,
    namespace: &str,
    account: &str,
    rules: serde_json::Value,
) -> String {
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    let apply = PatchParams::apply("it-grpc-server").force();
    let role: Role = serde_json::from_value(serde_json::json!({
        "metadata": {"name": account, "namespace": namespace},
        "rules": rules,
    }))
    .unwrap();
    Api::<Role>::namespaced(hub.clone(), namespace)
        .patch(account, &apply, &Patch::Apply(&role))
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": account, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(hub.clone(), namespace)
        .patch(account, &apply, &Patch::Apply(&binding))
        .await
        .unwrap();
    common::service_account_token(hub, namespace, account).await
}

/// A ServiceAccount bound to the bootstrap role `init` grants (rendered from our template), and
/// its token; the role and binding are removed when the returned guard drops.
async fn bootstrap_token(name: &str) -> (String, RbacGuard) {
    let hub = common::hub().await;
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/templates/hub-bootstrap/00-clusterrole.yaml.j2"
    ))
    .unwrap();
    let mut role: ClusterRole = serde_yaml::from_str(&text).unwrap();
    role.metadata = kube::api::ObjectMeta {
        name: Some(name.to_owned()),
        ..Default::default()
    };
    let apply = PatchParams::apply("it-grpc-server").force();
    Api::<ClusterRole>::all(hub.clone())
        .patch(name, &apply, &Patch::Apply(&role))
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}],
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(hub.clone())
        .patch(name, &apply, &Patch::Apply(&binding))
        .await
        .unwrap();
    let token = common::service_account_token(&hub, "default", name).await;
    (
        token,
        RbacGuard {
            hub,
            name: name.to_owned(),
        },
    )
}

struct RbacGuard {
    hub: kube::Client,
    name: String,
}

impl Drop for RbacGuard {
    fn drop(&mut self) {
        let (hub, name) = (self.hub.clone(), self.name.clone());
        tokio::spawn(async move {
            let _ = Api::<ClusterRoleBinding>::all(hub.clone())
                .delete(&name, &DeleteParams::default())
                .await;
            let _ = Api::<ClusterRole>::all(hub)
                .delete(&name, &DeleteParams::default())
                .await;
        });
    }
}

fn clusters() -> DataType {
    DataType::new(
        "cluster.open-cluster-management.io",
        "v1",
        "managedclusters",
    )
}

fn csrs() -> DataType {
    DataType::new("certificates.k8s.io", "v1", "certificatesigningrequests")
}

fn status_event(
    data_type: DataType,
    sub: SubResource,
    action: Action,
    cluster: &str,
    data: &serde_json::Value,
) -> CloudEvent {
    let mut event = event::new_event(
        "agent-test",
        &EventType::new(data_type, sub, action),
        cluster,
    );
    event::set_json(&mut event, data).unwrap();
    event
}

/// The next event of the subscription that is not a heartbeat.
async fn next_event(stream: &mut Streaming<CloudEvent>) -> CloudEvent {
    loop {
        let event = tokio::time::timeout(WAIT, stream.message())
            .await
            .expect("an event within the wait")
            .unwrap()
            .expect("the subscription open");
        if event.r#type != HEARTBEAT {
            return event;
        }
    }
}

/// The next event the subscription is sent that satisfies `wanted`.
async fn event_where(
    stream: &mut Streaming<CloudEvent>,
    wanted: impl Fn(&CloudEvent) -> bool,
) -> CloudEvent {
    loop {
        let event = next_event(stream).await;
        if wanted(&event) {
            return event;
        }
    }
}

/// An agent's key and a CSR of its cluster's identity (both groups, as the agent asks), as the
/// data of a create request.
fn csr_request(name: &str, cluster: &str) -> (KeyPair, serde_json::Value) {
    use base64::Engine as _;
    let key = KeyPair::generate().unwrap();
    let groups = [
        format!("system:open-cluster-management:{cluster}"),
        "system:open-cluster-management:managed-clusters".to_string(),
    ];
    let user = format!("system:open-cluster-management:{cluster}:agent1");
    let request =
        clusteradm::identity::request::subject_request(&user, &groups, &[], vec![], &key).unwrap();
    let data = serde_json::json!({
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name, "labels": {"open-cluster-management.io/cluster-name": cluster}},
        "spec": {
            "request": base64::engine::general_purpose::STANDARD.encode(request),
            "signerName": "open-cluster-management.io/grpc",
            "usages": ["digital signature", "key encipherment", "client auth"],
        },
    });
    (key, data)
}

async fn publish(client: &mut CloudEventServiceClient<Channel>, event: CloudEvent, token: &str) {
    client
        .publish(with_token(PublishRequest { event: Some(event) }, token))
        .await
        .unwrap();
}

async fn subscribe(
    client: &mut CloudEventServiceClient<Channel>,
    cluster: &str,
    data_type: DataType,
    token: &str,
) -> Streaming<CloudEvent> {
    let subscription = SubscriptionRequest {
        source: String::new(),
        cluster_name: cluster.to_owned(),
        data_type: data_type.to_string(),
    };
    let response = client
        .subscribe(with_token(subscription, token))
        .await
        .unwrap();
    assert!(
        response.metadata().get("subscription-id").is_some(),
        "the subscription is named"
    );
    response.into_inner()
}

#[tokio::test]
async fn an_agent_registers_its_cluster_over_grpc_and_is_sent_its_changes() {
    let hub = common::hub().await;
    common::install_crds(&hub, &clusteradm::api::hub_crds(), WAIT).await;
    let name = common::unique("grpc-register");
    let (token, _rbac) = bootstrap_token(&name).await;
    let server = server(Some(Duration::from_secs(10)), false).await;
    let mut client = server.client(None).await;

    // Subscribe first, as upstream's agent does, then create the cluster.
    let mut cluster_events = subscribe(&mut client, &name, clusters(), &token).await;
    let created = status_event(
        clusters(),
        SubResource::Spec,
        Action::Create,
        &name,
        &serde_json::json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name}, "spec": {"hubAcceptsClient": false},
        }),
    );
    publish(&mut client, created, &token).await;
    let clusters_api: Api<ManagedCluster> = Api::all(hub.clone());
    let cluster = clusters_api
        .get(&name)
        .await
        .expect("the cluster made through gRPC");
    let uid = cluster.metadata.uid.clone().unwrap();

    // The hub's watch tells the agent of its cluster: created, then each change.
    let first = next_event(&mut cluster_events).await;
    assert_eq!(
        first.r#type,
        "cluster.open-cluster-management.io.v1.managedclusters.spec.create_request"
    );
    assert_eq!(
        event::string(&first, RESOURCE_ID).as_deref(),
        Some(uid.as_str())
    );
    assert_eq!(
        event::string(&first, CLUSTER_NAME).as_deref(),
        Some(name.as_str())
    );
    let patch = serde_json::json!({"spec": {"hubAcceptsClient": true}});
    clusters_api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let accepted = event_where(&mut cluster_events, |e| {
        event::json::<ManagedCluster>(e).is_ok_and(|c| c.spec.hub_accepts_client)
    })
    .await;
    assert!(
        accepted.r#type.ends_with(".spec.update_request"),
        "{}",
        accepted.r#type
    );

    // A second create is the API server's refusal, in the form upstream's agents decode.
    let again = status_event(
        clusters(),
        SubResource::Spec,
        Action::Create,
        &name,
        &serde_json::json!({"metadata": {"name": name}, "spec": {"hubAcceptsClient": false}}),
    );
    let refused = client
        .publish(with_token(PublishRequest { event: Some(again) }, &token))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    let body: serde_json::Value = serde_json::from_str(refused.message()).unwrap();
    assert_eq!(body["ErrStatus"]["reason"], "AlreadyExists", "{body}");
    clusters_api
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
}

/// A resync answers with what the hub holds for the cluster (the CSR), and deletes what it does
/// not (an ID the agent claims to hold).
async fn resync_answers_with_what_the_hub_holds(
    client: &mut CloudEventServiceClient<Channel>,
    csr_events: &mut Streaming<CloudEvent>,
    name: &str,
    csr_name: &str,
    token: &str,
) {
    let resync = status_event(
        csrs(),
        SubResource::Spec,
        Action::ResyncRequest,
        name,
        &serde_json::json!({"resourceVersions": [{"resourceID": "gone-uid", "resourceVersion": 1}]}),
    );
    publish(client, resync, token).await;
    let held = event_where(csr_events, |e| {
        e.r#type.ends_with(".spec.resync_response") && !event::has(e, "deletiontimestamp")
    })
    .await;
    let held: CertificateSigningRequest = event::json(&held).unwrap();
    assert_eq!(held.metadata.name.as_deref(), Some(csr_name));
    let gone = event_where(csr_events, |e| event::has(e, "deletiontimestamp")).await;
    assert_eq!(
        event::string(&gone, RESOURCE_ID).as_deref(),
        Some("gone-uid")
    );
}

/// The bootstrap phase end to end: the CSR an agent makes through the server names it, `accept`
/// approves it, the server's signer signs it, and the certificate authenticates the agent.
#[tokio::test]
async fn a_csr_made_over_grpc_is_accepted_signed_and_then_authenticates_its_agent() {
    let hub = common::hub().await;
    common::install_crds(&hub, &clusteradm::api::hub_crds(), WAIT).await;
    let name = common::unique("grpc-csr");
    let (token, _rbac) = bootstrap_token(&name).await;
    let server = server(None, true).await;
    let mut client = server.client(None).await;
    let cluster =
        serde_json::json!({"metadata": {"name": name}, "spec": {"hubAcceptsClient": false}});
    publish(
        &mut client,
        status_event(
            clusters(),
            SubResource::Spec,
            Action::Create,
            &name,
            &cluster,
        ),
        &token,
    )
    .await;

    let mut csr_events = subscribe(&mut client, &name, csrs(), &token).await;
    let csr_name = common::unique("grpc-csr");
    let (agent_key, request) = csr_request(&csr_name, &name);
    publish(
        &mut client,
        status_event(csrs(), SubResource::Spec, Action::Create, &name, &request),
        &token,
    )
    .await;
    let csr_api = Api::<CertificateSigningRequest>::all(hub.clone());
    let made = csr_api.get(&csr_name).await.unwrap();
    let annotations = made.metadata.annotations.unwrap_or_default();
    assert_eq!(
        annotations.get(CSR_USER_ANNOTATION).map(String::as_str),
        Some(format!("system:serviceaccount:default:{name}").as_str())
    );

    resync_answers_with_what_the_hub_holds(&mut client, &mut csr_events, &name, &csr_name, &token)
        .await;

    // `accept` approves it (the requester is the annotation's, not the bootstrap SA: skip that
    // check), the server signs it, and the agent is told.
    common::clusteradm()
        .args([
            "accept",
            "--clusters",
            &name,
            "--skip-approve-check",
            "--kubeconfig",
        ])
        .arg(&common::env().hub)
        .assert()
        .success();
    let signed = event_where(&mut csr_events, |e| {
        event::json::<CertificateSigningRequest>(e).is_ok_and(|c| {
            c.status
                .and_then(|s| s.certificate)
                .is_some_and(|c| !c.0.is_empty())
        })
    })
    .await;
    let signed: CertificateSigningRequest = event::json(&signed).unwrap();
    let certificate = String::from_utf8(signed.status.unwrap().certificate.unwrap().0).unwrap();

    // The certificate is the agent's identity on the server: asked for another cluster's
    // status (which no hub grants it, whether or not a hub controller has granted it its own),
    // the refusal names the agent.
    let identity = tonic::transport::Identity::from_pem(certificate, agent_key.serialize_pem());
    let mut agent = server.client(Some(identity)).await;
    let other = format!("{name}-other");
    let status = status_event(
        clusters(),
        SubResource::Status,
        Action::Update,
        &other,
        &serde_json::json!({"metadata": {"name": other}, "spec": {}, "status": {}}),
    );
    let denied = agent
        .publish(Request::new(PublishRequest {
            event: Some(status),
        }))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    let user = format!("system:open-cluster-management:{name}:agent1");
    assert!(denied.message().contains(&user), "{}", denied.message());

    csr_api
        .delete(&csr_name, &DeleteParams::default())
        .await
        .unwrap();
    Api::<ManagedCluster>::all(hub.clone())
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn the_grpc_server_refuses_what_the_hub_refuses_the_caller() {
    let hub = common::hub().await;
    common::install_crds(&hub, &clusteradm::api::hub_crds(), WAIT).await;
    let name = common::unique("grpc-refused");
    let (token, _rbac) = bootstrap_token(&name).await;
    let server = server(None, false).await;
    let mut client = server.client(None).await;
    let create = || {
        status_event(
            clusters(),
            SubResource::Spec,
            Action::Create,
            &name,
            &serde_json::json!({"metadata": {"name": name}, "spec": {"hubAcceptsClient": true}}),
        )
    };

    // No credential, a token the hub does not know: unauthenticated.
    let anonymous = client
        .publish(Request::new(PublishRequest {
            event: Some(create()),
        }))
        .await
        .unwrap_err();
    assert_eq!(anonymous.code(), Code::Unauthenticated, "{anonymous:?}");
    let forged = client
        .publish(with_token(
            PublishRequest {
                event: Some(create()),
            },
            "not-a-token",
        ))
        .await
        .unwrap_err();
    assert_eq!(forged.code(), Code::Unauthenticated, "{forged:?}");

    // An identity with no rights on the hub: denied, and nothing made.
    let nobody = common::service_account_token(&hub, "default", &format!("{name}-nobody")).await;
    let denied = client
        .publish(with_token(
            PublishRequest {
                event: Some(create()),
            },
            &nobody,
        ))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    let subscribe = SubscriptionRequest {
        source: String::new(),
        cluster_name: name.clone(),
        data_type: clusters().to_string(),
    };
    let watch_denied = client
        .subscribe(with_token(subscribe, &nobody))
        .await
        .unwrap_err();
    assert_eq!(
        watch_denied.code(),
        Code::PermissionDenied,
        "{watch_denied:?}"
    );
    let clusters_api: Api<ManagedCluster> = Api::all(hub.clone());
    assert!(
        clusters_api.get_opt(&name).await.unwrap().is_none(),
        "a denied create made the cluster"
    );

    // The bootstrap identity may create its cluster but not write its status (as on the API server).
    client
        .publish(with_token(
            PublishRequest {
                event: Some(create()),
            },
            &token,
        ))
        .await
        .unwrap();
    let status = status_event(
        clusters(),
        SubResource::Status,
        Action::Update,
        &name,
        &serde_json::json!({"metadata": {"name": name}, "status": {"version": {"kubernetes": "forged"}}}),
    );
    let status_denied = client
        .publish(with_token(
            PublishRequest {
                event: Some(status),
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_eq!(
        status_denied.code(),
        Code::PermissionDenied,
        "{status_denied:?}"
    );

    clusters_api
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
}

/// Lets `group` update ManagedCluster `cluster`'s status, by a ClusterRole and binding `name`.
async fn grant_group(hub: &kube::Client, name: &str, group: &str, cluster: &str) {
    let rules: ClusterRole = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "rules": [{"apiGroups": ["cluster.open-cluster-management.io"], "resources": ["managedclusters/status"],
                   "resourceNames": [cluster], "verbs": ["update"]}],
    }))
    .unwrap();
    let apply = PatchParams::apply("it-grpc-server").force();
    Api::<ClusterRole>::all(hub.clone())
        .patch(name, &apply, &Patch::Apply(&rules))
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "Group", "name": group, "apiGroup": "rbac.authorization.k8s.io"}],
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(hub.clone())
        .patch(name, &apply, &Patch::Apply(&binding))
        .await
        .unwrap();
}

/// A client certificate of the server's client CA names the caller (CN user, O groups), who
/// may then do what the hub's RBAC lets that identity do; a certificate of another CA is refused
/// at the handshake.
#[tokio::test]
async fn a_client_certificate_of_the_client_ca_is_an_identity_and_another_cas_is_not() {
    let hub = common::hub().await;
    common::install_crds(&hub, &clusteradm::api::hub_crds(), WAIT).await;
    let name = common::unique("grpc-mtls");
    let server = server(None, false).await;
    let clusters_api: Api<ManagedCluster> = Api::all(hub.clone());
    let cluster: ManagedCluster = serde_json::from_value(
        serde_json::json!({"metadata": {"name": name}, "spec": {"hubAcceptsClient": true}}),
    )
    .unwrap();
    clusters_api
        .create(&kube::api::PostParams::default(), &cluster)
        .await
        .unwrap();
    let cluster_group = format!("system:open-cluster-management:{name}");
    grant_group(&hub, &format!("{name}-agent"), &cluster_group, &name).await;
    let identity = server.client_identity(&format!("{cluster_group}:agent1"), &[&cluster_group]);
    let agent = server.client(Some(identity)).await;
    let current = clusters_api.get(&name).await.unwrap();
    let mut reported = serde_json::to_value(&current).unwrap();
    reported["status"] = serde_json::json!({"version": {"kubernetes": "v1.36.0"}});
    let status = status_event(
        clusters(),
        SubResource::Status,
        Action::Update,
        &name,
        &reported,
    );
    common::eventually("the agent's status written through gRPC", WAIT, || {
        let (mut agent, status) = (agent.clone(), status.clone());
        async move {
            agent
                .publish(Request::new(PublishRequest {
                    event: Some(status),
                }))
                .await
                .ok()
        }
    })
    .await;
    let written = clusters_api.get(&name).await.unwrap();
    assert_eq!(
        written
            .status
            .and_then(|s| s.version)
            .and_then(|v| v.kubernetes)
            .as_deref(),
        Some("v1.36.0")
    );
    let (_, stranger_ca) = ca("stranger-ca");
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, format!("{cluster_group}:agent1"));
    let forged_cert = params.signed_by(&key, &stranger_ca).unwrap();
    let forged_identity =
        tonic::transport::Identity::from_pem(forged_cert.pem(), key.serialize_pem());
    let channel = Channel::from_shared(server.url.clone())
        .unwrap()
        .tls_config(
            ClientTlsConfig::new()
                .ca_certificate(Certificate::from_pem(&server.ca_pem))
                .domain_name("localhost")
                .identity(forged_identity),
        )
        .unwrap();
    // The handshake fails (at connect, or at the first call on a lazy channel): a transport
    // error, not the server's refusal of an identity it accepted.
    if let Ok(channel) = channel.connect().await {
        let refused = CloudEventServiceClient::new(channel)
            .publish(Request::new(PublishRequest {
                event: Some(status.clone()),
            }))
            .await
            .unwrap_err();
        assert!(
            refused.message().contains("transport error"),
            "refused by the server, not at the handshake: {refused:?}"
        );
    }

    let _ = Api::<ClusterRoleBinding>::all(hub.clone())
        .delete(&format!("{name}-agent"), &DeleteParams::default())
        .await;
    let _ = Api::<ClusterRole>::all(hub.clone())
        .delete(&format!("{name}-agent"), &DeleteParams::default())
        .await;
    clusters_api
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
}
