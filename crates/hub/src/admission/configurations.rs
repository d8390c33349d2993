//! In-process, the leading hub points upstream's webhook configurations (same names, same rules)
//! at its own server while the ClusterManager asks for admission by webhooks, and removes them
//! when it stops leading or the ClusterManager asks for policies.
//!
//! Each write is a compare-and-swap on the resourceVersion read, so a stepping-down leader never
//! removes or overwrites the configurations the next leader pointed at itself: it removes only
//! those that still name its own URL. A crash leaves them naming a server that is gone; they fail
//! closed (`failurePolicy: Fail`, as upstream's) and ManagedCluster and ManifestWork writes are
//! refused until the next hub points them at itself.
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{Api, DeleteParams, PostParams, Preconditions};
use kube::{Client, Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::webhooks::{self as webhook, Endpoint};
use crate::settings::Watched;
use crate::webhook::Serving;
use ocm_runtime::Shutdown;

/// How often the configurations are checked again without a change of settings (someone may
/// have removed or changed them: the operator's pass for a former admission mode, still in flight
/// when the mode changed, deletes what this hub just created). Five reads each time.
const RECHECK: Duration = Duration::from_secs(10);

/// A kind of webhook configuration: its `webhooks` read as JSON.
trait Configuration:
    Resource<DynamicType = ()> + Clone + std::fmt::Debug + Serialize + DeserializeOwned + Send + Sync
{
    fn hooks(&self) -> Value;
}

impl Configuration for ValidatingWebhookConfiguration {
    fn hooks(&self) -> Value {
        serde_json::to_value(&self.webhooks).unwrap_or_default()
    }
}

impl Configuration for MutatingWebhookConfiguration {
    fn hooks(&self) -> Value {
        serde_json::to_value(&self.webhooks).unwrap_or_default()
    }
}

/// Whether `config` sends any review to `serving`.
fn names_us<K: Configuration>(config: &K, serving: &Serving) -> bool {
    let ours = format!("{}/", serving.base);
    config.hooks().as_array().is_some_and(|hooks| {
        hooks.iter().any(|h| {
            h["clientConfig"]["url"]
                .as_str()
                .is_some_and(|u| u.starts_with(&ours))
        })
    })
}

/// Whether `current` already says what `wanted` says: every field `wanted` sets, as the API server
/// returns it (it adds defaults: `matchPolicy`, selectors, each rule's `scope`), so a configuration
/// already pointed here is not written again.
fn up_to_date(current: &Value, wanted: &Value) -> bool {
    let (Some(current), Some(wanted)) = (current.as_array(), wanted.as_array()) else {
        return false;
    };
    current.len() == wanted.len()
        && wanted.iter().zip(current).all(|(w, c)| {
            w.as_object().is_some_and(|fields| {
                fields.iter().all(|(key, value)| {
                    if key != "rules" {
                        return c[key] == *value;
                    }
                    let mut rules = c[key].clone();
                    for rule in rules.as_array_mut().into_iter().flatten() {
                        if let Some(r) = rule.as_object_mut() {
                            r.remove("scope");
                        }
                    }
                    rules == *value
                })
            })
        })
}

async fn point_one<K: Configuration>(api: &Api<K>, mut wanted: K) -> Result<(), kube::Error> {
    let name = wanted.name_any();
    match api.get_opt(&name).await? {
        None => {
            api.create(&PostParams::default(), &wanted).await?;
        }
        Some(current) if up_to_date(&current.hooks(), &wanted.hooks()) => {}
        Some(current) => {
            // Replaced on the version read: a newer leader's write makes this one conflict.
            wanted.meta_mut().resource_version = current.resource_version();
            api.replace(&name, &PostParams::default(), &wanted).await?;
        }
    }
    Ok(())
}

async fn remove_one<K: Configuration>(
    api: &Api<K>,
    name: &str,
    serving: &Serving,
) -> Result<(), kube::Error> {
    let Some(current) = api.get_opt(name).await? else {
        return Ok(());
    };
    if !names_us(&current, serving) {
        return Ok(());
    }
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            resource_version: current.resource_version(),
            uid: None,
        }),
        ..Default::default()
    };
    match api.delete(name, &params).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Points every configuration at `serving`.
///
/// # Errors
/// The first read or write that failed (a conflict with another writer included).
pub async fn point_at(hub: &Client, serving: &Serving) -> Result<(), kube::Error> {
    let endpoint = Endpoint::Url(&serving.base);
    let ca = serving.ca.as_bytes();
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(hub.clone());
    for config in webhook::validating(endpoint, ca) {
        point_one(&validating, config).await?;
    }
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(hub.clone());
    for config in webhook::mutating(endpoint, ca) {
        point_one(&mutating, config).await?;
    }
    Ok(())
}

/// Removes every configuration that still names `serving`; others (the next leader's, the
/// operator's) are left alone.
///
/// # Errors
/// The first read or delete that failed.
pub async fn remove_if_ours(hub: &Client, serving: &Serving) -> Result<(), kube::Error> {
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(hub.clone());
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(hub.clone());
    // At once: a stepping-down hub has a few seconds for this.
    let (validators, mutator) = futures::join!(
        futures::future::join_all(webhook::VALIDATORS.iter().map(|name| remove_one(
            &validating,
            name,
            serving
        ))),
        remove_one(&mutating, webhook::MANAGED_CLUSTER_MUTATOR, serving),
    );
    validators.into_iter().collect::<Result<Vec<()>, _>>()?;
    mutator
}

/// Keeps the configurations as the ClusterManager's `settings` ask: pointed at `serving` for
/// admission by webhooks, removed (where ours) otherwise, until `stop` is cancelled. A pass in
/// flight then finishes (its writes land before the caller removes what names it), and no new one
/// starts.
pub async fn keep_pointed(hub: &Client, serving: &Serving, mut settings: Watched, stop: Shutdown) {
    let mut backoff = ocm_runtime::Backoff::capped(Duration::from_secs(10));
    while !stop.is_cancelled() {
        let result = match settings.now() {
            None => Ok(()),
            Some(s) if s.webhooks => point_at(hub, serving).await,
            Some(_) => remove_if_ours(hub, serving).await,
        };
        match result {
            Ok(()) => {
                backoff = ocm_runtime::Backoff::capped(Duration::from_secs(10));
                tokio::select! {
                    changed = settings.changed() => if changed.is_none() {
                        return stop.cancelled().await;
                    },
                    () = tokio::time::sleep(RECHECK) => {}
                    () = stop.cancelled() => {}
                }
            }
            Err(e) => {
                tracing::debug!("pointing the admission webhook configurations at this hub: {e}");
                tokio::select! {
                    () = tokio::time::sleep(backoff.next_delay()) => {}
                    () = stop.cancelled() => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_as_the_server_returns_it_is_up_to_date() {
        let wanted = webhook::mutating(Endpoint::Url("https://127.0.0.1:1"), b"CA").remove(0);
        let mut returned = serde_json::to_value(&wanted.webhooks).unwrap();
        returned[0]["matchPolicy"] = "Equivalent".into();
        returned[0]["rules"][0]["scope"] = "*".into();
        assert!(up_to_date(&returned, &wanted.hooks()));
        returned[0]["clientConfig"]["url"] = "https://127.0.0.1:2/x".into();
        assert!(!up_to_date(&returned, &wanted.hooks()));
    }

    #[test]
    fn only_configurations_naming_this_server_are_ours() {
        let serving = Serving {
            base: "https://127.0.0.1:1".into(),
            ca: String::new(),
        };
        let ours = webhook::mutating(Endpoint::Url(&serving.base), b"CA").remove(0);
        assert!(names_us(&ours, &serving));
        let next = webhook::mutating(Endpoint::Url("https://127.0.0.1:10"), b"CA").remove(0);
        assert!(
            !names_us(&next, &serving),
            "a port with our port as prefix is not ours"
        );
        let pods = webhook::mutating(
            Endpoint::HubService(crate::webhook::mounted::PORT.into()),
            b"CA",
        )
        .remove(0);
        assert!(!names_us(&pods, &serving));
    }
}
