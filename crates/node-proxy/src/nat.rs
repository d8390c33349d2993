//! The node's NAT chain: each Service port's address, from the node's pods, to its relay on
//! loopback. The chain is this node's alone (the plane's chain jumps to it), rewritten whole by
//! `iptables-restore --noflush`, which replaces that chain and touches no other.
use std::net::{IpAddr, SocketAddr};

use anyhow::Context as _;
use tokio::io::AsyncWriteExt as _;

use crate::table::Frontend;

/// The `iptables-restore` input that makes `chain` lead each frontend to its relay: a Service's
/// address from `source` (the node's pod subnet) only, a node port on `node_ip` from anywhere
/// the plane leads to this chain (every node's pods, and this machine).
#[must_use]
pub fn rules(
    chain: &str,
    source: &str,
    node_ip: IpAddr,
    relays: &[(Frontend, SocketAddr)],
) -> String {
    let lines = relays.iter().map(|((ip, port), local)| {
        let from = if *ip == node_ip {
            String::new()
        } else {
            format!("-s {source} ")
        };
        format!("-A {chain} {from}-d {ip}/32 -p tcp -m tcp --dport {port} -j DNAT --to-destination {local}\n")
    });
    format!(
        "*nat\n:{chain} - [0:0]\n{}COMMIT\n",
        lines.collect::<String>()
    )
}

/// Writes `rules` into the kernel.
///
/// # Errors
/// `iptables-restore` could not run or refused them.
pub async fn apply(rules: &str) -> anyhow::Result<()> {
    let mut child = tokio::process::Command::new("iptables-restore")
        // Waits for the lock the kubelet and the CNI plugins take too, rather than failing.
        .args(["--noflush", "--wait"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("running iptables-restore")?;
    child
        .stdin
        .take()
        .context("iptables-restore's stdin")?
        .write_all(rules.as_bytes())
        .await?;
    let out = child.wait_with_output().await?;
    anyhow::ensure!(
        out.status.success(),
        "iptables-restore: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_frontend_is_led_from_the_node_subnet_to_its_relay() {
        let relays = [
            (
                ("10.96.0.10".parse().unwrap(), 443),
                "127.0.0.1:40000".parse().unwrap(),
            ),
            (
                ("10.216.0.1".parse().unwrap(), 30443),
                "127.0.0.1:40000".parse().unwrap(),
            ),
        ];
        assert_eq!(
            rules(
                "SVC",
                "10.216.0.0/24",
                "10.216.0.1".parse().unwrap(),
                &relays
            ),
            "*nat\n:SVC - [0:0]\n-A SVC -s 10.216.0.0/24 -d 10.96.0.10/32 -p tcp -m tcp --dport 443 -j DNAT --to-destination 127.0.0.1:40000\n\
             -A SVC -d 10.216.0.1/32 -p tcp -m tcp --dport 30443 -j DNAT --to-destination 127.0.0.1:40000\nCOMMIT\n",
            "a node port from anywhere"
        );
    }
}
