//! One TCP relay per Service port: a listener on loopback that the node's NAT rule leads the
//! Service's address to, passing each connection to the next of the port's endpoints.
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use tokio::net::{TcpListener, TcpStream};
use tokio_util::task::AbortOnDropHandle;

/// A running relay; dropping it stops it.
pub struct Relay {
    /// Where it listens (on loopback).
    pub local: SocketAddr,
    targets: Arc<RwLock<Vec<SocketAddr>>>,
    _task: AbortOnDropHandle<()>,
}

impl Relay {
    /// Starts a relay to `targets` on a free loopback port.
    ///
    /// # Errors
    /// No port could be bound.
    pub async fn start(targets: Vec<SocketAddr>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let local = listener.local_addr()?;
        let targets = Arc::new(RwLock::new(targets));
        let task = tokio::spawn(serve(listener, targets.clone()));
        Ok(Self {
            local,
            targets,
            _task: AbortOnDropHandle::new(task),
        })
    }

    /// Leads new connections to `targets` from now on.
    pub fn retarget(&self, targets: Vec<SocketAddr>) {
        *self
            .targets
            .write()
            .expect("never poisoned: no panics under the lock") = targets;
    }
}

async fn serve(listener: TcpListener, targets: Arc<RwLock<Vec<SocketAddr>>>) {
    let next = AtomicUsize::new(0);
    loop {
        let Ok((inbound, peer)) = listener.accept().await else {
            continue;
        };
        let target = {
            let targets = targets
                .read()
                .expect("never poisoned: no panics under the lock");
            if targets.is_empty() {
                None
            } else {
                Some(targets[next.fetch_add(1, Ordering::Relaxed) % targets.len()])
            }
        };
        let Some(target) = target else {
            tracing::debug!(%peer, "no endpoint: connection closed");
            continue; // dropped: the client sees the connection closed, as with no endpoints
        };
        tokio::spawn(pipe(inbound, target));
    }
}

async fn pipe(mut inbound: TcpStream, target: SocketAddr) {
    match TcpStream::connect(target).await {
        Ok(mut outbound) => {
            let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
        }
        Err(e) => tracing::debug!(%target, "connecting to the endpoint: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    #[tokio::test]
    async fn a_connection_reaches_the_endpoint_and_a_retarget_applies_to_the_next() {
        let first = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let second = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let relay = Relay::start(vec![first.local_addr().unwrap()])
            .await
            .unwrap();
        for (endpoint, word) in [(&first, b"one"), (&second, b"two")] {
            let mut client = TcpStream::connect(relay.local).await.unwrap();
            client.write_all(word).await.unwrap();
            let (mut server, _) = endpoint.accept().await.unwrap();
            let mut got = [0u8; 3];
            server.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, word);
            relay.retarget(vec![second.local_addr().unwrap()]);
        }
    }
}
