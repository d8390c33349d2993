//! Kind → resource and scope. CRDs applied in this run are learnt from their spec; everything
//! else comes from one aggregated discovery, fetched on first need and kept for the run.
use std::collections::HashMap;
use std::sync::Mutex;

use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::discovery::{Discovery, Scope};
use tokio::sync::OnceCell;

use super::ObjectErrorKind;

/// Resolves kinds for one cluster.
pub struct Resolver {
    client: Client,
    discovery: OnceCell<Discovery>,
    learnt: Mutex<HashMap<GroupVersionKind, (ApiResource, bool)>>,
}

impl Resolver {
    /// A resolver that has not asked the server anything yet.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self {
            client,
            discovery: OnceCell::new(),
            learnt: Mutex::new(HashMap::new()),
        }
    }

    /// Resource and whether it is namespaced.
    pub async fn resolve(
        &self,
        gvk: &GroupVersionKind,
    ) -> Result<(ApiResource, bool), ObjectErrorKind> {
        if let Some(hit) = self.learnt.lock().expect("resolver lock").get(gvk) {
            return Ok(hit.clone());
        }
        let discovery = self
            .discovery
            .get_or_try_init(|| Discovery::new(self.client.clone()).run_aggregated())
            .await?;
        discovery
            .resolve_gvk(gvk)
            .map(|(ar, caps)| (ar, caps.scope == Scope::Namespaced))
            .ok_or_else(|| ObjectErrorKind::UnknownKind {
                group: gvk.group.clone(),
                version: gvk.version.clone(),
                kind: gvk.kind.clone(),
            })
    }

    /// A dynamic API handle for this kind, in `namespace` when the kind is namespaced.
    pub async fn api_for(
        &self,
        gvk: &GroupVersionKind,
        namespace: Option<&str>,
    ) -> Result<Api<DynamicObject>, ObjectErrorKind> {
        let (ar, namespaced) = self.resolve(gvk).await?;
        if namespaced {
            let ns = namespace.ok_or(ObjectErrorKind::NoNamespace)?;
            Ok(Api::namespaced_with(self.client.clone(), ns, &ar))
        } else {
            Ok(Api::all_with(self.client.clone(), &ar))
        }
    }

    /// Records the kinds a CRD serves, so its custom resources need no new discovery.
    pub fn learn_crd(&self, crd: &DynamicObject) {
        let spec = &crd.data["spec"];
        let group = spec["group"].as_str().unwrap_or_default();
        let kind = spec["names"]["kind"].as_str().unwrap_or_default();
        let plural = spec["names"]["plural"].as_str().unwrap_or_default();
        let namespaced = spec["scope"].as_str() == Some("Namespaced");
        let mut learnt = self.learnt.lock().expect("resolver lock");
        for version in spec["versions"].as_array().into_iter().flatten() {
            let Some(version) = version["name"].as_str() else {
                continue;
            };
            let gvk = GroupVersionKind::gvk(group, version, kind);
            let ar = ApiResource::from_gvk_with_plural(&gvk, plural);
            learnt.insert(gvk, (ar, namespaced));
        }
    }
}
