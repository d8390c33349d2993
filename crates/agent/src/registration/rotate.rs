//! When to rotate: the certificate's validity, and when to rotate it (less than 20 % of its
//! lifetime left, by default). Pure arithmetic on seconds.
use std::time::Duration;

/// Rotate when less than this fraction of the lifetime remains (upstream rotates at 20–25 %).
pub const DEFAULT_THRESHOLD: f64 = 0.2;
/// How long certificates are asked to last and when they are renewed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Renewal {
    /// `expirationSeconds` of the CSRs (the signer's default when `None`; 600 is the minimum).
    pub expiration_seconds: Option<i32>,
    /// Renew when less than this fraction of the lifetime remains.
    pub threshold: f64,
}

impl Default for Renewal {
    fn default() -> Self {
        Self {
            expiration_seconds: None,
            threshold: DEFAULT_THRESHOLD,
        }
    }
}

/// Never rotate more often than this, whatever the threshold says.
pub const MIN_ROTATION_INTERVAL: Duration = Duration::from_secs(5);

/// A certificate's validity window, in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    /// Not valid before.
    pub not_before: i64,
    /// Not valid after.
    pub not_after: i64,
}

/// The validity of the first certificate of a PEM bundle.
pub fn validity(pem: &[u8]) -> Result<Validity, String> {
    let der = ocm_runtime::pki::certificates_der(pem)
        .map_err(|e| e.to_string())?
        .remove(0);
    let (_, cert) = x509_parser::parse_x509_certificate(&der)
        .map_err(|e| format!("invalid certificate: {e}"))?;
    Ok(Validity {
        not_before: cert.validity().not_before.timestamp(),
        not_after: cert.validity().not_after.timestamp(),
    })
}

/// The Unix time at which to rotate: when `threshold` of the lifetime remains.
#[must_use]
pub fn rotation_due(validity: Validity, threshold: f64) -> i64 {
    let lifetime = (validity.not_after - validity.not_before).max(0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let remaining = (lifetime as f64 * threshold).ceil() as i64;
    validity.not_after - remaining
}

/// How long from `now` until rotation is due (at least [`MIN_ROTATION_INTERVAL`], so a
/// certificate that is due at once does not spin).
#[must_use]
pub fn rotation_delay(validity: Validity, threshold: f64, now: i64) -> Duration {
    let secs = u64::try_from(rotation_due(validity, threshold) - now).unwrap_or(0);
    Duration::from_secs(secs).max(MIN_ROTATION_INTERVAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Validity = Validity {
        not_before: 1000,
        not_after: 1000 + 86_400,
    };

    #[test]
    fn rotates_at_twenty_percent_remaining() {
        assert_eq!(rotation_due(DAY, 0.2), 1000 + 86_400 - 17_280);
        assert_eq!(
            rotation_delay(DAY, 0.2, 1000),
            Duration::from_secs(86_400 - 17_280)
        );
    }

    #[test]
    fn a_high_threshold_rotates_soon_but_not_in_a_loop() {
        let ten_min = Validity {
            not_before: 0,
            not_after: 600,
        };
        assert_eq!(rotation_due(ten_min, 0.99), 6);
        assert_eq!(rotation_delay(ten_min, 0.99, 1), Duration::from_secs(5));
        // Past due: the minimum interval, never zero.
        assert_eq!(rotation_delay(ten_min, 0.99, 500), MIN_ROTATION_INTERVAL);
    }

    #[test]
    fn validity_of_a_real_certificate() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.not_before = rcgen::date_time_ymd(2030, 1, 1);
        params.not_after = rcgen::date_time_ymd(2030, 1, 2);
        let pem = params.self_signed(&key).unwrap().pem();
        let v = validity(pem.as_bytes()).unwrap();
        assert_eq!(v.not_after - v.not_before, 86_400);
        assert!(validity(b"nope").is_err());
    }
}
