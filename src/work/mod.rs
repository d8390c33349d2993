//! `create work`'s side of ManifestWorks: [`manifests`] reads and validates the files a work
//! wraps, [`publish`] plans the ManifestWorks and writes them into the clusters' namespaces on
//! the hub. The agent that applies them is [`crate::agent::work`].
pub mod manifests;
pub mod publish;
