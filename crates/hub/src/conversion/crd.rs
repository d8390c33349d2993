//! Pointing the add-on CRDs' `spec.conversion` at this process's webhook, and back to none.
//!
//! Each write is a compare-and-swap: the CRD is read, and the merge patch carries the
//! resourceVersion read, so a write decided on a stale read fails with 409 instead of landing.
//! That is what makes a leader hand-over safe: a stepping-down leader resets a CRD only while
//! it still names this process's webhook, and a write of its that was in flight when the new
//! leader pointed the CRD at itself conflicts rather than overwriting the new `url`/`caBundle`.
use base64::Engine as _;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use super::{CRDS, PATH};
use crate::webhook::Serving;

/// Reads and writes tried per CRD before giving up on one that keeps changing.
const ATTEMPTS: usize = 5;

/// Why a CRD's conversion could not be set.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the CRD failed (it may not exist yet: the operator installs it).
    #[error("reading the CRD {name}")]
    Read {
        /// The CRD.
        name: &'static str,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Writing its `spec.conversion` failed.
    #[error("setting the conversion of the CRD {name}")]
    Write {
        /// The CRD.
        name: &'static str,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Every write conflicted with another writer.
    #[error("the CRD {name} changed under each of {ATTEMPTS} writes")]
    Contended {
        /// The CRD.
        name: &'static str,
    },
}

/// What a CRD's `spec.conversion` should be.
#[derive(Clone, Copy)]
enum Target<'a> {
    /// This process's webhook.
    Webhook(&'a Serving),
    /// No conversion, but only if the CRD still names this process's webhook.
    NoneIfOurs(&'a Serving),
}

/// The `spec.conversion` this process's webhook is.
fn webhook(serving: &Serving) -> Value {
    json!({
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "url": serving.url(PATH),
                "caBundle": base64::engine::general_purpose::STANDARD.encode(&serving.ca),
            },
        },
    })
}

/// Whether `crd` converts through the webhook at `url`.
fn names(crd: &CustomResourceDefinition, url: &str) -> bool {
    crd.spec
        .conversion
        .as_ref()
        .and_then(|c| c.webhook.as_ref()?.client_config.as_ref()?.url.as_deref())
        == Some(url)
}

/// The `spec.conversion` to write to `crd` for `target`, or `None` when it needs no write.
fn decide(crd: &CustomResourceDefinition, target: Target<'_>) -> Option<Value> {
    match target {
        Target::Webhook(s) => {
            let current = crd.spec.conversion.as_ref().map(serde_json::to_value);
            let wanted = webhook(s);
            // Compared as written, so a CRD already pointed here (caBundle included) is left be.
            let same = current.and_then(Result::ok).is_some_and(|c| {
                c["strategy"] == wanted["strategy"]
                    && c["webhook"]["clientConfig"] == wanted["webhook"]["clientConfig"]
            });
            (!same).then_some(wanted)
        }
        Target::NoneIfOurs(s) => {
            names(crd, &s.url(PATH)).then(|| json!({"strategy": "None", "webhook": null}))
        }
    }
}

async fn set(hub: &Client, target: Target<'_>) -> Result<(), Error> {
    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    for name in CRDS {
        set_one(&crds, name, target).await?;
    }
    Ok(())
}

async fn set_one(
    crds: &Api<CustomResourceDefinition>,
    name: &'static str,
    target: Target<'_>,
) -> Result<(), Error> {
    for _ in 0..ATTEMPTS {
        let crd = crds
            .get(name)
            .await
            .map_err(|source| Error::Read { name, source })?;
        let Some(conversion) = decide(&crd, target) else {
            return Ok(());
        };
        let patch = json!({
            "metadata": {"resourceVersion": crd.metadata.resource_version},
            "spec": {"conversion": conversion},
        });
        match crds
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => {} // changed since read: decide again
            Err(source) => return Err(Error::Write { name, source }),
        }
    }
    Err(Error::Contended { name })
}

/// Points both CRDs' conversion at `serving`; a CRD already pointed there is not written.
pub async fn point_at(hub: &Client, serving: &Serving) -> Result<(), Error> {
    set(hub, Target::Webhook(serving)).await
}

/// Sets both CRDs back to no conversion, each only if it still names `serving`: one that names
/// another process's webhook (the next leader's) is left alone.
pub async fn reset_if_ours(hub: &Client, serving: &Serving) -> Result<(), Error> {
    set(hub, Target::NoneIfOurs(serving)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serving(base: &str) -> Serving {
        Serving {
            base: base.into(),
            ca: "CA".into(),
        }
    }

    fn crd(conversion: &Value) -> CustomResourceDefinition {
        serde_json::from_value(json!({
            "metadata": {"name": CRDS[0], "resourceVersion": "7"},
            "spec": {
                "group": "addon.open-cluster-management.io",
                "names": {"kind": "K", "plural": "ks"},
                "scope": "Namespaced",
                "versions": [],
                "conversion": conversion,
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_crd_pointed_elsewhere_is_pointed_here_and_one_pointed_here_is_left() {
        let ours = serving("https://127.0.0.1:1");
        let none = crd(&json!({"strategy": "None"}));
        assert_eq!(decide(&none, Target::Webhook(&ours)), Some(webhook(&ours)));
        let here = crd(&webhook(&ours));
        assert_eq!(decide(&here, Target::Webhook(&ours)), None);
        // Same URL, another CA (a restarted process on the same port): written.
        let other_ca = crd(&webhook(&Serving {
            ca: "OTHER".into(),
            ..serving(&ours.base)
        }));
        assert!(decide(&other_ca, Target::Webhook(&ours)).is_some());
    }

    #[test]
    fn stepping_down_never_resets_the_next_leaders_webhook() {
        let ours = serving("https://127.0.0.1:1");
        let next = serving("https://127.0.0.1:2");
        let theirs = crd(&webhook(&next));
        assert_eq!(decide(&theirs, Target::NoneIfOurs(&ours)), None);
        let mine = crd(&webhook(&ours));
        assert_eq!(
            decide(&mine, Target::NoneIfOurs(&ours)),
            Some(json!({"strategy": "None", "webhook": null}))
        );
        let none = crd(&json!({"strategy": "None"}));
        assert_eq!(decide(&none, Target::NoneIfOurs(&ours)), None);
    }
}
