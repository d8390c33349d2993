//! Integration tests that install and remove hub- and cluster-wide singletons: the
//! ClusterManager and its operator (whose cleanup deletes the hub CRDs), `clean`, and the
//! klusterlet (`join`/`unjoin`, whose cleanup deletes the managed CRDs). Removing a CRD deletes
//! every object of its kind, so these run in their own test binary — cargo runs test binaries
//! one after another — and one test at a time (`scripts/test` passes `--test-threads=1`), never
//! beside the tests in `tests/it` that use those CRDs.
#[path = "../it/common/mod.rs"]
mod common;

#[path = "../it/registration/fixture.rs"]
#[allow(dead_code)] // shared with tests/it, which uses all of it
mod registration_fixture;

mod clean;
mod hub_restart;
mod join;
mod operator_hub;
