//! A client that acts as someone else: the same connection and credential, every request sent
//! with `Impersonate-User` and `Impersonate-Group`, so the API server authorizes it as that user
//! (the caller must be allowed to impersonate). The in-process add-on agents use it to run with
//! the rights of their Deployment's ServiceAccount, not the klusterlet's.
use http::HeaderValue;
use kube::Client;
use kube::client::Body;

/// The user and groups a ServiceAccount authenticates as.
#[must_use]
pub fn service_account(namespace: &str, name: &str) -> (String, Vec<String>) {
    (
        format!("system:serviceaccount:{namespace}:{name}"),
        vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{namespace}"),
            "system:authenticated".into(),
        ],
    )
}

/// `client`, acting as `user` in `groups`. A name that cannot be a header value (it never comes
/// from a valid namespace or ServiceAccount name) makes every request fail, never go out as the
/// caller.
#[must_use]
pub fn as_user(client: &Client, user: &str, groups: &[String]) -> Client {
    let headers: Vec<(&'static str, Option<HeaderValue>)> =
        std::iter::once(("impersonate-user", HeaderValue::from_str(user).ok()))
            .chain(
                groups
                    .iter()
                    .map(|g| ("impersonate-group", HeaderValue::from_str(g).ok())),
            )
            .collect();
    let inner = client.clone();
    let default_namespace = client.default_namespace().to_owned();
    let service = tower::service_fn(move |mut request: http::Request<Body>| {
        let inner = inner.clone();
        let mut valid = true;
        for (name, value) in &headers {
            match value {
                Some(v) => {
                    request.headers_mut().append(*name, v.clone());
                }
                None => valid = false,
            }
        }
        async move {
            if !valid {
                return Err(kube::Error::Service(
                    "an impersonated name is not a valid header value".into(),
                ));
            }
            inner.send(request).await
        }
    });
    Client::new(service, default_namespace)
}
