//! Client-side request rates: upstream's `--kube-api-qps` and `--kube-api-burst` (and the work
//! agent's `--hub-kube-api-*`), which a Klusterlet sets in `kubeAPIQPS` and `kubeAPIBurst`. A
//! limited client sends at most `burst` requests in any window of `burst / qps` seconds, so on
//! average `qps` a second with bursts of up to `burst`: client-go's token bucket, as a window.
use std::time::Duration;

/// A request rate: `qps` a second on average, `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Requests a second, at least 1.
    pub qps: u32,
    /// Requests at once, at least 1.
    pub burst: u32,
}

impl Rate {
    /// The rate of upstream's flags: either may be unset (zero or less: client-go's defaults,
    /// 50 and 100, as upstream's agents take them). `None` when both are unset.
    #[must_use]
    pub fn from_flags(qps: f32, burst: i32) -> Option<Self> {
        if qps <= 0.0 && burst <= 0 {
            return None;
        }
        // Rounded up: a rate of 0.5 is not "unlimited", it is at least one a second here.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let qps = if qps > 0.0 {
            qps.ceil() as u32
        } else {
            DEFAULT.qps
        };
        let burst = u32::try_from(burst)
            .ok()
            .filter(|b| *b > 0)
            .unwrap_or(DEFAULT.burst);
        Some(Self {
            qps: qps.max(1),
            burst: burst.max(1),
        })
    }

    /// The larger of two rates, field by field (upstream's Singleton agent takes the larger of
    /// its registration and work settings).
    #[must_use]
    pub fn max(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Self {
                qps: a.qps.max(b.qps),
                burst: a.burst.max(b.burst),
            }),
            (a, b) => a.or(b),
        }
    }

    /// The window: `burst` requests per `burst / qps` seconds.
    #[must_use]
    pub fn window(self) -> (u64, Duration) {
        let per = Duration::from_secs_f64(f64::from(self.burst) / f64::from(self.qps));
        (u64::from(self.burst), per)
    }
}

/// client-go's defaults, which upstream's agents use when a Klusterlet sets neither.
pub const DEFAULT: Rate = Rate {
    qps: 50,
    burst: 100,
};

/// A client from `config`, sending at most `rate` when one is given.
pub fn client(config: kube::Config, rate: Option<Rate>) -> Result<kube::Client, kube::Error> {
    let Some(rate) = rate else {
        return kube::Client::try_from(config);
    };
    let (num, per) = rate.window();
    let builder = kube::client::ClientBuilder::try_from(config)?;
    Ok(builder
        .with_layer(&tower::limit::RateLimitLayer::new(num, per))
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_flags_mean_no_limit_and_one_unset_takes_client_gos_default() {
        assert_eq!(Rate::from_flags(0.0, 0), None);
        assert_eq!(
            Rate::from_flags(20.0, 0),
            Some(Rate {
                qps: 20,
                burst: 100
            })
        );
        assert_eq!(Rate::from_flags(0.5, 3), Some(Rate { qps: 1, burst: 3 }));
        assert_eq!(
            Rate::from_flags(10.0, 40).unwrap().window(),
            (40, Duration::from_secs(4))
        );
    }

    #[test]
    fn the_larger_rate_wins_field_by_field() {
        let a = Rate::from_flags(10.0, 200);
        let b = Rate::from_flags(30.0, 50);
        assert_eq!(
            Rate::max(a, b),
            Some(Rate {
                qps: 30,
                burst: 200
            })
        );
        assert_eq!(Rate::max(None, b), b);
    }
}
