//! A client of apiserver-network-proxy's gRPC tunnel (Konnectivity): the transport cluster-proxy
//! uses to reach a managed cluster from the hub with no inbound route to it.
//!
//! A proxy server on the hub holds connections that agents on managed clusters opened to it; a
//! client asks the server, over gRPC (`ProxyService/Proxy`, `proto/client.proto`), to dial an
//! address, and the server picks the agent whose identifiers match the address's host (cluster-proxy
//! gives each cluster's agent `host=<cluster name>`) and relays the bytes. As the Go
//! konnectivity-client's single-use tunnel, each [`Client::dial`] is one `Proxy` stream carrying
//! one TCP connection; many streams share one HTTP/2 connection to the server.
//!
//! ```no_run
//! # async fn example(tls: rustls::ClientConfig) -> Result<(), Box<dyn std::error::Error>> {
//! use rustls::pki_types::ServerName;
//! let channel = konnectivity::connect(
//!     || tokio::net::TcpStream::connect("127.0.0.1:8090"),
//!     tls,
//!     ServerName::try_from("localhost")?,
//! )
//! .await?;
//! let client = konnectivity::Client::new(channel);
//! let stream = client.dial("cluster1:443").await?; // AsyncRead + AsyncWrite to cluster1's API server
//! # drop(stream); Ok(()) }
//! ```
mod channel;
mod dial;

pub use channel::connect;
pub use dial::{Client, DialError};

/// The protocol's messages and the generated gRPC client.
#[allow(missing_docs, clippy::pedantic)]
pub mod proto {
    // The .proto declares no package: its service is `/ProxyService/Proxy`.
    tonic::include_proto!("_");
}
