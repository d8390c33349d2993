//! Generates the CloudEvents gRPC service (server and client) from the vendored
//! `proto/cloudevent.proto`, compiled by protox (pure Rust), so building needs no `protoc`.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/cloudevent.proto");
    let descriptors = protox::compile(["proto/cloudevent.proto"], ["proto"])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
