//! Carries out the ClusterProfile controller's [`Action`]s.
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt as _};
use serde_json::{Value, json};

use super::decide::Action;
use ocm_api::inventory::ClusterProfile;

/// Status fields this hub writes: sent as `null` when empty, so a merge patch clears them.
const WRITTEN: &[&str] = &["conditions", "version", "properties", "accessProviders"];

/// Carries out `action`. A profile created meanwhile by someone else, or gone already, is not an
/// error; neither is a namespace being deleted (its profiles go with it).
pub async fn apply(client: &Client, action: &Action) -> Result<(), kube::Error> {
    match action {
        Action::Create(profile) => {
            let namespace = profile.namespace().unwrap_or_default();
            let api: Api<ClusterProfile> = Api::namespaced(client.clone(), &namespace);
            match api.create(&PostParams::default(), &**profile).await {
                Ok(_) => {
                    tracing::info!(%namespace, name = %profile.name_any(), "created ClusterProfile");
                    Ok(())
                }
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
                Err(kube::Error::Api(s)) if s.code == 403 && s.message.contains("terminat") => {
                    Ok(())
                }
                Err(e) => Err(e),
            }
        }
        Action::Delete { namespace, name } => {
            let api: Api<ClusterProfile> = Api::namespaced(client.clone(), namespace);
            match api.delete(name, &DeleteParams::default()).await {
                Ok(_) => {
                    tracing::info!(%namespace, %name, "deleted ClusterProfile");
                    Ok(())
                }
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
                Err(e) => Err(e),
            }
        }
        Action::Status {
            namespace,
            name,
            status,
        } => {
            let mut status = serde_json::to_value(status).expect("a serialisable status");
            for key in WRITTEN {
                status
                    .as_object_mut()
                    .map(|o| o.entry(*key).or_insert(Value::Null));
            }
            let api: Api<ClusterProfile> = Api::namespaced(client.clone(), namespace);
            let patch = Patch::Merge(json!({ "status": status }));
            ignore_gone(
                api.patch_status(name, &PatchParams::default(), &patch)
                    .await,
            )
        }
        Action::Labels {
            namespace,
            name,
            labels,
        } => {
            let api: Api<ClusterProfile> = Api::namespaced(client.clone(), namespace);
            let patch = Patch::Merge(json!({ "metadata": { "labels": labels } }));
            ignore_gone(api.patch(name, &PatchParams::default(), &patch).await)
        }
    }
}

fn ignore_gone<T>(result: Result<T, kube::Error>) -> Result<(), kube::Error> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}
