//! Our image as real pods, on the nodes of a control plane that has them (`scripts/test-pods`
//! starts one, builds the image and runs this binary): `init --image` and `join --image` deploy
//! our operators, hub and agent, a ManifestWork's Deployment really starts, and `unjoin`/`clean`
//! leave nothing behind. Tests run one at a time: they share the hub and the one Klusterlet.
use ocm_test_support as common;

mod fixture;
mod fleet;

mod addon;
mod addon_token;
mod hosted;
mod hosted_addon;
mod hosted_hub;
mod lifecycle;
mod node_down;
mod services;
mod status_report;
mod upgrade;
