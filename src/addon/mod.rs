//! `addon create`'s side of add-ons: a template add-on defined from files ([`define`]). The hub
//! controllers that run it are [`crate::hub::addon`].
pub mod define;
