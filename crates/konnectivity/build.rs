//! Generates the tunnel's gRPC client from the vendored `proto/client.proto`, compiled by protox
//! (pure Rust), so building needs no `protoc`.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/client.proto");
    let descriptors = protox::compile(["proto/client.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .build_server(false)
        .compile_fds(descriptors)?;
    Ok(())
}
