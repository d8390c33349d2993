//! One tunnelled TCP connection: DIAL_REQ, DIAL_RSP, then DATA both ways until a CLOSE.
use std::hash::{BuildHasher as _, RandomState};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tonic::transport::Channel;

use crate::proto::packet::Payload;
use crate::proto::proxy_service_client::ProxyServiceClient;
use crate::proto::{CloseRequest, Data, DialRequest, Packet, PacketType};

/// How long a dial may wait for the agent's answer, as the Go client's default.
const DIAL_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a closing connection waits for the server's CLOSE_RSP.
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// How many bytes one DATA packet carries at most, and the buffer between the caller and the tunnel.
const CHUNK: usize = 32 * 1024;

/// Why a dial failed.
#[derive(Debug, thiserror::Error)]
pub enum DialError {
    /// The proxy server refused the stream (TLS, authorisation, or it is down).
    #[error("the proxy server refused the tunnel: {0}")]
    Grpc(#[from] tonic::Status),
    /// The server or the agent could not reach the address (no agent for its host, connection refused).
    #[error("dialling {address} through the proxy failed: {reason}")]
    Refused {
        /// The address asked for.
        address: String,
        /// The server's or agent's reason.
        reason: String,
    },
    /// The stream ended, or the server closed the dial, before an answer.
    #[error("the proxy server closed the dial to {0} before answering")]
    Closed(String),
    /// No answer within the dial timeout.
    #[error("no answer from the proxy server within {}s dialling {address}", .timeout.as_secs())]
    Timeout {
        /// The address asked for.
        address: String,
        /// The timeout.
        timeout: Duration,
    },
}

/// Dials TCP addresses through a proxy server.
#[derive(Clone, Debug)]
pub struct Client {
    grpc: ProxyServiceClient<Channel>,
    dial_timeout: Duration,
}

impl Client {
    /// A client on `channel` (see [`crate::connect`]).
    #[must_use]
    pub fn new(channel: Channel) -> Self {
        Self {
            grpc: ProxyServiceClient::new(channel),
            dial_timeout: DIAL_TIMEOUT,
        }
    }

    /// The same client with another dial timeout.
    #[must_use]
    pub fn with_dial_timeout(self, dial_timeout: Duration) -> Self {
        Self {
            dial_timeout,
            ..self
        }
    }

    /// Opens a TCP connection to `address` (`host:port`) through the proxy server. The stream
    /// ends (EOF) when the far side closes; dropping it, or shutting down its write side, closes
    /// the connection (the protocol has no half-close: data already sent still arrives).
    pub async fn dial(&self, address: &str) -> Result<DuplexStream, DialError> {
        let random = dial_id();
        let (outbound, requests) = mpsc::channel(16);
        outbound
            .send(packet(
                PacketType::DialReq,
                Payload::DialRequest(DialRequest {
                    protocol: "tcp".into(),
                    address: address.into(),
                    random,
                }),
            ))
            .await
            .expect("the receiver is alive until the call below takes it");
        let mut grpc = self.grpc.clone();
        let answer = async {
            let mut inbound = grpc
                .proxy(ReceiverStream::new(requests))
                .await?
                .into_inner();
            let connect_id = await_dial_response(&mut inbound, address, random).await?;
            Ok::<_, DialError>((inbound, connect_id))
        };
        let Ok(answer) = tokio::time::timeout(self.dial_timeout, answer).await else {
            // Dropping the call resets its stream: the server gives up the pending dial with it
            // (the Go client sends DIAL_CLS on a stream it keeps; this one is gone).
            return Err(DialError::Timeout {
                address: address.into(),
                timeout: self.dial_timeout,
            });
        };
        let (inbound, connect_id) = answer?;
        let (caller, ours) = tokio::io::duplex(CHUNK);
        let (from_caller, to_caller) = tokio::io::split(ours);
        tokio::spawn(relay(connect_id, from_caller, to_caller, outbound, inbound));
        Ok(caller)
    }
}

async fn await_dial_response(
    inbound: &mut Streaming<Packet>,
    address: &str,
    random: i64,
) -> Result<i64, DialError> {
    while let Some(packet) = inbound.message().await? {
        match packet.payload {
            Some(Payload::DialResponse(response)) if response.random == random => {
                return if response.error.is_empty() {
                    Ok(response.connect_id)
                } else {
                    Err(DialError::Refused {
                        address: address.into(),
                        reason: response.error,
                    })
                };
            }
            Some(Payload::CloseDial(close)) if close.random == random => break,
            _ => {}
        }
    }
    Err(DialError::Closed(address.into()))
}

/// Moves bytes between the caller's stream and the tunnel until either side closes.
async fn relay(
    connect_id: i64,
    mut from_caller: ReadHalf<DuplexStream>,
    mut to_caller: WriteHalf<DuplexStream>,
    outbound: mpsc::Sender<Packet>,
    mut inbound: Streaming<Packet>,
) {
    let mut buffer = vec![0; CHUNK];
    loop {
        tokio::select! {
            read = from_caller.read(&mut buffer) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let data = Data { connect_id, error: String::new(), data: buffer[..n].to_vec() };
                    if outbound.send(packet(PacketType::Data, Payload::Data(data))).await.is_err() {
                        return;
                    }
                }
            },
            received = inbound.message() => match received {
                Ok(Some(Packet { payload: Some(Payload::Data(data)), .. })) if data.connect_id == connect_id => {
                    if !data.error.is_empty() {
                        tracing::debug!(connect_id, error = %data.error, "the tunnelled connection failed");
                        break;
                    }
                    if to_caller.write_all(&data.data).await.is_err() {
                        break;
                    }
                }
                // CLOSE_RSP: the far side closed; the server ends the stream after it.
                Ok(Some(Packet { payload: Some(Payload::CloseResponse(_)), .. }) | None) | Err(_) => return,
                Ok(Some(_)) => {}
            },
        }
    }
    // The caller is done: close the far side, and give the server a moment to answer before the
    // stream goes (it closes the agent's connection either way).
    let close = CloseRequest { connect_id };
    if outbound
        .send(packet(PacketType::CloseReq, Payload::CloseRequest(close)))
        .await
        .is_ok()
    {
        // Data already on its way still reaches the caller, who may be reading after shutting
        // down its write side.
        let closed = async {
            while let Ok(Some(packet)) = inbound.message().await {
                match packet.payload {
                    Some(Payload::CloseResponse(_)) => break,
                    Some(Payload::Data(data)) if data.connect_id == connect_id => {
                        let _ = to_caller.write_all(&data.data).await;
                    }
                    _ => {}
                }
            }
        };
        let _ = tokio::time::timeout(CLOSE_WAIT, closed).await;
    }
}

fn packet(kind: PacketType, payload: Payload) -> Packet {
    Packet {
        r#type: kind.into(),
        payload: Some(payload),
    }
}

/// A dial's random id: non-negative, as the Go client's `rand.Int63()`.
fn dial_id() -> i64 {
    let bits = RandomState::new().hash_one(std::time::SystemTime::now());
    i64::try_from(bits >> 1).expect("63 bits fit")
}
