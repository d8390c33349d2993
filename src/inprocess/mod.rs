//! In-process mode: the operators, hub controllers and agents that upstream runs as images,
//! composed and run inside this process (`init --in-process`, `join --in-process`, `clusteradm
//! operator hub|klusterlet`). This is the composition root: it is the only module that knows
//! which loops run together, and it starts them under one shutdown token and, where two
//! processes could run the same loops, one leader-election lease.
pub mod hub;
pub mod klusterlet;
