//! How `join` reaches a hub it does not trust yet: find and verify the hub CA
//! ([`discovery`], with kubeadm's JWS check in [`jws`]), build the bootstrap kubeconfig
//! ([`bootstrap`]) and check, with that credential, that the hub accepts it ([`hub`]) — all
//! before anything changes on the managed cluster.
pub mod bootstrap;
pub mod discovery;
pub mod hub;
pub mod jws;
pub mod peer;
pub mod trust;
