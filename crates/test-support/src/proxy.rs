//! A TCP proxy to the hub that can be taken down and brought back: an outage of the hub for the
//! clients that go through it, while the shared hub apiserver stays up for the other tests.
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// A TCP proxy to the hub that can be taken down and brought back on the same port.
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    upstream: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Listens on a free port of 127.0.0.1 and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        Self {
            addr,
            upstream,
            task: Some(tokio::spawn(serve(listener, upstream))),
        }
    }

    /// Closes the port and every open connection: the hub is unreachable.
    pub fn down(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }

    /// Listens again on the same port.
    pub async fn up(&mut self) {
        let listener = TcpListener::bind(self.addr).await.unwrap();
        self.task = Some(tokio::spawn(serve(listener, self.upstream)));
    }
}

async fn serve(listener: TcpListener, upstream: SocketAddr) {
    // Dropped with the task: aborts every connection.
    let mut connections = JoinSet::new();
    loop {
        let Ok((mut inbound, _)) = listener.accept().await else {
            continue;
        };
        connections.spawn(async move {
            if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}

/// The test hub's CA (base64, as in its kubeconfig) and address.
#[must_use]
pub fn hub_addr() -> (String, SocketAddr) {
    let (server, ca) = super::server_and_ca(&super::env().hub);
    let authority = server.trim_start_matches("https://").trim_end_matches('/');
    (
        ca,
        authority
            .parse()
            .expect("the test hub listens on an IP:port"),
    )
}
