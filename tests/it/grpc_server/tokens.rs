//! Token requests over gRPC: an agent asks for a token of its add-on's ServiceAccount and is
//! sent it down its subscription, when the hub's RBAC lets it (upstream's token role: `create`
//! on that account's `serviceaccounts/token`, `subscribe` to read the answers).
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::PostParams;

use super::*;

fn token_requests() -> DataType {
    DataType::new("authentication.k8s.io", "v1", "tokenrequests")
}

/// A token of ServiceAccount `cluster/requester`, granted upstream's add-on token role for
/// `account`.
async fn requester_token(hub: &kube::Client, cluster: &str, account: &str) -> String {
    let rules = serde_json::json!([
        {"apiGroups": [""], "resources": ["serviceaccounts/token"], "resourceNames": [account], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["subscribe"]},
    ]);
    token_with_role(hub, cluster, "requester", rules).await
}

fn token_request(cluster: &str, account: &str, id: &str) -> CloudEvent {
    status_event(
        token_requests(),
        SubResource::Spec,
        Action::Create,
        cluster,
        &serde_json::json!({
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "metadata": {"name": account, "namespace": cluster, "uid": id},
            "spec": {"expirationSeconds": 600, "audiences": null},
        }),
    )
}

#[tokio::test]
async fn an_agent_is_sent_the_token_it_may_request_over_grpc() {
    let hub = common::hub().await;
    let cluster = common::unique("grpc-tokens");
    let namespace: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": cluster}})).unwrap();
    Api::<Namespace>::all(hub.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    let account = "addon1-agent";
    let sa: ServiceAccount =
        serde_json::from_value(serde_json::json!({"metadata": {"name": account}})).unwrap();
    Api::<ServiceAccount>::namespaced(hub.clone(), &cluster)
        .create(&PostParams::default(), &sa)
        .await
        .unwrap();
    let token = requester_token(&hub, &cluster, account).await;
    let server = server(None, false).await;
    let mut agent = server.client(None).await;
    let mut answers = common::eventually("the token role in effect", WAIT, || {
        let (mut agent, cluster, token) = (agent.clone(), cluster.clone(), token.clone());
        async move {
            let subscription = SubscriptionRequest {
                source: String::new(),
                cluster_name: cluster,
                data_type: token_requests().to_string(),
            };
            let response = agent
                .subscribe(with_token(subscription, &token))
                .await
                .ok()?;
            Some(response.into_inner())
        }
    })
    .await;

    publish(
        &mut agent,
        token_request(&cluster, account, "request-1"),
        &token,
    )
    .await;
    let answer = next_event(&mut answers).await;
    assert_eq!(
        answer.r#type,
        "authentication.k8s.io.v1.tokenrequests.spec.create_request"
    );
    assert_eq!(
        event::string(&answer, RESOURCE_ID).as_deref(),
        Some("request-1")
    );
    let answered: serde_json::Value = event::json(&answer).unwrap();
    let issued = answered["status"]["token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let issued_to = common::whoami(&common::hub_client_with_token(&issued).await)
        .await
        .unwrap();
    assert_eq!(
        issued_to,
        format!("system:serviceaccount:{cluster}:{account}")
    );

    // Another account's token is not the requester's to ask for.
    let refused = agent
        .publish(with_token(
            PublishRequest {
                event: Some(token_request(&cluster, "requester", "request-2")),
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");

    Api::<Namespace>::all(hub.clone())
        .delete(&cluster, &DeleteParams::default())
        .await
        .unwrap();
}
