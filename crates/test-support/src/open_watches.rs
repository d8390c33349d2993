//! A client that counts the watches it holds open, per resource, and the most it ever held at
//! once: how a test proves the hub opens one watch per kind, whatever the number of controllers
//! reading it.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use http_body_util::BodyExt as _;
use kube::Client;

/// Open watches per resource (`managedclusters`, `certificatesigningrequests`, ...).
#[derive(Default)]
pub struct OpenWatches {
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    open: BTreeMap<String, usize>,
    most: BTreeMap<String, usize>,
}

impl OpenWatches {
    /// Resources with a watch open now.
    pub fn open(&self) -> BTreeMap<String, usize> {
        let counts = self.counts.lock().unwrap();
        counts
            .open
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(r, n)| (r.clone(), *n))
            .collect()
    }

    /// The most watches of each resource ever open at once.
    pub fn most(&self) -> BTreeMap<String, usize> {
        self.counts.lock().unwrap().most.clone()
    }

    fn opened(self: &Arc<Self>, resource: String) -> Closes {
        let mut counts = self.counts.lock().unwrap();
        let open = counts.open.entry(resource.clone()).or_default();
        *open += 1;
        let now = *open;
        let most = counts.most.entry(resource.clone()).or_default();
        *most = (*most).max(now);
        Closes {
            watches: self.clone(),
            resource,
        }
    }
}

/// Counts its watch closed when dropped (with the response body it travels in).
struct Closes {
    watches: Arc<OpenWatches>,
    resource: String,
}

impl Drop for Closes {
    fn drop(&mut self) {
        let mut counts = self.watches.counts.lock().unwrap();
        if let Some(n) = counts.open.get_mut(&self.resource) {
            *n -= 1;
        }
    }
}

/// `inner`, counting the watches it opens into `watches`.
pub fn counting(inner: Client, watches: Arc<OpenWatches>) -> Client {
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let (inner, watches) = (inner.clone(), watches.clone());
        async move {
            let uri = req.uri();
            let is_watch = uri
                .query()
                .is_some_and(|q| q.split('&').any(|p| p == "watch=true"));
            let resource = uri
                .path()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string();
            let response = inner.send(req).await?;
            let closes = is_watch.then(|| watches.opened(resource));
            Ok::<_, kube::Error>(response.map(move |body| {
                body.map_frame(move |frame| {
                    let _held = &closes;
                    frame
                })
            }))
        }
    });
    Client::new(service, "default")
}
