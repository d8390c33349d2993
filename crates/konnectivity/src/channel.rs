//! The HTTP/2 connection to a proxy server, over TLS with a client certificate, on a byte stream
//! the caller opens (a TCP connection, or a port-forward to the server's pod).
use std::future::Future;
use std::io;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsConnector;
use tonic::transport::{Channel, Endpoint, Uri};

/// Connects to a proxy server through the streams `open` makes (it is called again when the
/// connection has to be made again), speaking TLS as `tls` says (the server's CA and the client's
/// certificate) to a server certificate for `server_name`.
pub async fn connect<F, Fut, S>(
    open: F,
    mut tls: rustls::ClientConfig,
    server_name: ServerName<'static>,
) -> Result<Channel, tonic::transport::Error>
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = io::Result<S>> + Send + 'static,
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let tls = TlsConnector::from(Arc::new(tls));
    let connector = tower::service_fn(move |_: Uri| {
        let (open, tls, server_name) = (open.clone(), tls.clone(), server_name.clone());
        async move {
            let stream = open().await?;
            let stream = tls.connect(server_name, stream).await?;
            Ok::<_, io::Error>(TokioIo::new(stream))
        }
    });
    // The URI only names the connection: `open` decides where it goes.
    Endpoint::from_static("http://konnectivity.invalid")
        .connect_with_connector(connector)
        .await
}
