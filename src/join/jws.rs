//! Bootstrap-token discovery, as kubeadm does it: the hub's bootstrap-signer adds to
//! `kube-public/cluster-info` one detached JWS per signing bootstrap token
//! (`jws-kubeconfig-<token-id>`), an HS256 MAC of the `kubeconfig` value keyed by the token's
//! secret half. Whoever holds the token can check that the document (and so the CA in it) came
//! from the hub that issued the token, without trusting the TLS connection it arrived on.
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;

/// Why a detached JWS does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Not `<header>..<signature>`.
    #[error("not a detached JWS (expected <header>..<signature>)")]
    Malformed,
    /// The header is not base64url JSON.
    #[error("the JWS header is not base64url-encoded JSON")]
    BadHeader,
    /// Another algorithm than HS256.
    #[error("the JWS uses algorithm {0:?}, expected HS256")]
    Algorithm(String),
    /// Signed for another token id.
    #[error("the JWS was signed for token id {found:?}, not {expected:?}")]
    KeyId {
        /// The token id of the given token.
        expected: String,
        /// The `kid` in the header.
        found: String,
    },
    /// The MAC does not match: the document was not signed with this token.
    #[error("the signature does not match: cluster-info was not signed with this token")]
    Mismatch,
}

/// A bootstrap token `<id>.<secret>` split in its halves, when `token` has that shape
/// (`[a-z0-9]{6}.[a-z0-9]{16}`).
#[must_use]
pub fn split_bootstrap_token(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let ok = |s: &str, n: usize| {
        s.len() == n
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    (ok(id, 6) && ok(secret, 16)).then_some((id, secret))
}

/// Verifies a detached JWS (`<header>..<signature>`) over `payload`, made with key id `token_id`
/// and key `token_secret`. The MAC comparison is constant-time.
pub fn verify_detached(
    jws: &str,
    payload: &[u8],
    token_id: &str,
    token_secret: &str,
) -> Result<(), Error> {
    let mut parts = jws.trim().split('.');
    let (Some(header_b64), Some(""), Some(signature_b64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Error::Malformed);
    };
    let header: serde_json::Value = URL_SAFE_NO_PAD
        .decode(header_b64)
        .ok()
        .and_then(|h| serde_json::from_slice(&h).ok())
        .ok_or(Error::BadHeader)?;
    let alg = header["alg"].as_str().unwrap_or_default();
    if alg != "HS256" {
        return Err(Error::Algorithm(alg.to_string()));
    }
    let kid = header["kid"].as_str().unwrap_or_default();
    if kid != token_id {
        return Err(Error::KeyId {
            expected: token_id.to_string(),
            found: kid.to_string(),
        });
    }
    let signature = URL_SAFE_NO_PAD
        .decode(signature_b64)
        .map_err(|_| Error::Malformed)?;
    let signing_input = format!("{header_b64}.{}", URL_SAFE_NO_PAD.encode(payload));
    let key = hmac::Key::new(hmac::HMAC_SHA256, token_secret.as_bytes());
    hmac::verify(&key, signing_input.as_bytes(), &signature).map_err(|_| Error::Mismatch)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Computed independently (Python hmac/hashlib) for header {"alg":"HS256","kid":"abcdef"},
    // key "0123456789abcdef" and the payload below.
    const PAYLOAD: &[u8] = b"apiVersion: v1\nkind: Config\n";
    const JWS: &str =
        "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..vH_kT4yiol-nrAWgjfCYqvum5wsKETXe0S7OOp1VgnE";

    #[test]
    fn a_known_vector_verifies() {
        assert_eq!(
            verify_detached(JWS, PAYLOAD, "abcdef", "0123456789abcdef"),
            Ok(())
        );
    }

    #[test]
    fn wrong_secret_payload_or_id_fail() {
        assert_eq!(
            verify_detached(JWS, PAYLOAD, "abcdef", "0123456789abcdeX"),
            Err(Error::Mismatch)
        );
        assert_eq!(
            verify_detached(
                JWS,
                b"apiVersion: v1\nkind: Other\n",
                "abcdef",
                "0123456789abcdef"
            ),
            Err(Error::Mismatch)
        );
        assert!(matches!(
            verify_detached(JWS, PAYLOAD, "zzzzzz", "0123456789abcdef"),
            Err(Error::KeyId { .. })
        ));
    }

    #[test]
    fn malformed_and_other_algorithms_are_rejected() {
        assert_eq!(
            verify_detached("a.b.c", PAYLOAD, "abcdef", "x"),
            Err(Error::Malformed)
        );
        assert_eq!(
            verify_detached("!!..abc", PAYLOAD, "abcdef", "x"),
            Err(Error::BadHeader)
        );
        let none = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","kid":"abcdef"}"#);
        assert_eq!(
            verify_detached(&format!("{none}.."), PAYLOAD, "abcdef", "x"),
            Err(Error::Algorithm("none".into()))
        );
    }

    #[test]
    fn bootstrap_token_shape() {
        assert_eq!(
            split_bootstrap_token("abcdef.0123456789abcdef"),
            Some(("abcdef", "0123456789abcdef"))
        );
        assert_eq!(split_bootstrap_token("eyJhbGciOi.JSUzI1NiIs.x"), None);
        assert_eq!(split_bootstrap_token("ABCDEF.0123456789abcdef"), None);
    }
}
