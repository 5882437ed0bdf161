//! A per-pane token bucket for notifications ([`RateLimiter`]): a flood becomes a few
//! notifications plus one "N more notifications" count.
//!
//! It must not read a clock: every call takes `now`.

use std::time::{Duration, Instant};

/// The shape of a pane's notification budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitConfig {
    /// How many notifications may pass at once after a quiet spell.
    pub burst: u32,
    /// One more notification is allowed per this much time, up to `burst`.
    pub refill_every: Duration,
    /// A summary of suppressed notifications is due once none was suppressed for this long…
    pub quiet_before_summary: Duration,
    /// …or, during a flood that does not stop, this long after the first one it counts.
    pub max_summary_delay: Duration,
}

impl Default for RateLimitConfig {
    /// Burst 5, one more every 2 s, a summary after 2 s of quiet or every 5 s of flood.
    fn default() -> Self {
        Self {
            burst: 5,
            refill_every: Duration::from_secs(2),
            quiet_before_summary: Duration::from_secs(2),
            max_summary_delay: Duration::from_secs(5),
        }
    }
}

/// Whether a notification may be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Show it.
    Allow,
    /// Do not show it; it is counted for the next summary.
    Suppress,
}

/// A per-pane token bucket for notifications. Suppressed ones are counted, and
/// [`RateLimiter::take_suppressed_summary`] hands the count out once, so the caller can show
/// one "N more notifications" instead of N.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    config: RateLimitConfig,
    tokens: u32,
    /// The time from which the next token is earned; `None` before the first admit.
    refill_from: Option<Instant>,
    suppressed: u64,
    first_suppressed_at: Option<Instant>,
    last_suppressed_at: Option<Instant>,
}

impl Default for RateLimiter {
    fn default() -> Self {
        Self::new(RateLimitConfig::default())
    }
}

impl RateLimiter {
    /// A limiter with a full bucket.
    pub fn new(config: RateLimitConfig) -> Self {
        Self {
            config,
            tokens: config.burst,
            refill_from: None,
            suppressed: 0,
            first_suppressed_at: None,
            last_suppressed_at: None,
        }
    }

    /// Takes a token if there is one; otherwise counts the notification as suppressed.
    pub fn admit(&mut self, now: Instant) -> Admission {
        self.refill(now);
        if self.tokens > 0 {
            self.tokens -= 1;
            return Admission::Allow;
        }
        self.suppressed = self.suppressed.saturating_add(1);
        self.first_suppressed_at.get_or_insert(now);
        self.last_suppressed_at = Some(now);
        Admission::Suppress
    }

    /// How many notifications were suppressed since the last summary.
    pub fn suppressed(&self) -> u64 {
        self.suppressed
    }

    /// When [`RateLimiter::take_suppressed_summary`] will next yield, if anything is counted;
    /// the caller schedules a wake-up for it so a summary is not left behind after a flood.
    pub fn next_summary_due(&self) -> Option<Instant> {
        if self.suppressed == 0 {
            return None;
        }
        let quiet = self.last_suppressed_at?.checked_add(self.config.quiet_before_summary);
        let longest = self.first_suppressed_at?.checked_add(self.config.max_summary_delay);
        match (quiet, longest) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The number of suppressed notifications, once the flood has been quiet for
    /// `quiet_before_summary` or its first suppressed notification is `max_summary_delay`
    /// old; the count then starts again from zero.
    pub fn take_suppressed_summary(&mut self, now: Instant) -> Option<u64> {
        if now < self.next_summary_due()? {
            return None;
        }
        let count = std::mem::take(&mut self.suppressed);
        self.first_suppressed_at = None;
        self.last_suppressed_at = None;
        Some(count)
    }

    fn refill(&mut self, now: Instant) {
        let from = *self.refill_from.get_or_insert(now);
        if self.tokens >= self.config.burst {
            self.refill_from = Some(now);
            return;
        }
        let step = self.config.refill_every.as_nanos().max(1);
        let earned = now.saturating_duration_since(from).as_nanos() / step;
        if earned == 0 {
            return;
        }
        let missing = u128::from(self.config.burst - self.tokens);
        if earned >= missing {
            self.tokens = self.config.burst;
            self.refill_from = Some(now);
        } else {
            // earned < missing <= u32::MAX, so the conversion is lossless.
            let earned = earned as u32;
            self.tokens += earned;
            self.refill_from = from.checked_add(self.config.refill_every.saturating_mul(earned));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limiter_refills_one_token_per_interval() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut limiter = RateLimiter::default();
        for _ in 0..5 {
            assert_eq!(limiter.admit(at(0)), Admission::Allow);
        }
        assert_eq!(limiter.admit(at(0)), Admission::Suppress);
        assert_eq!(limiter.admit(at(1999)), Admission::Suppress);
        assert_eq!(limiter.admit(at(2000)), Admission::Allow);
        assert_eq!(limiter.admit(at(2001)), Admission::Suppress);
        // Three intervals later, three tokens (not counting the partial time used above).
        let allowed = (0..10).filter(|_| limiter.admit(at(8000)) == Admission::Allow).count();
        assert_eq!(allowed, 3);
        // A long quiet spell refills only up to the burst.
        let allowed = (0..10).filter(|_| limiter.admit(at(600_000)) == Admission::Allow).count();
        assert_eq!(allowed, 5);
        // Time going backwards never panics or mints tokens.
        assert_eq!(limiter.admit(at(0)), Admission::Suppress);
    }
}
