//! The open-loop schedule that a sender keeps and the follower measures latency against.
//!
//! A sender wakes once per tick and sends what is due, so its load is one batch per tick. The schedule says
//! so: message i is due at the first tick at or after start + i/rate. Latency is then measured from the
//! tick the message went out on, and a message does not count up to a tick of the sender's own holding as
//! the daemon's latency. A sender that falls behind still sends all that is due at once and never stretches
//! the schedule.

/// Slack for floating point at a tick's edge (a message exactly on a tick is due on it).
const EDGE: f64 = 1e-9;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Epoch seconds of message 0.
    pub start: f64,
    /// Messages per second; 0: all due at the start (a run's burst).
    pub rate: f64,
    /// Seconds between two batches; 0: every message on its own time.
    pub tick: f64,
}

impl Schedule {
    /// The tick message `index` is due on, counted from the start.
    fn tick_of(&self, index: u64) -> f64 {
        let offset = index as f64 / self.rate;
        if self.tick <= 0.0 {
            return offset;
        }
        (offset / self.tick - EDGE).ceil().max(0.0)
    }

    /// When message `index` is due, in epoch seconds.
    pub fn intended(&self, index: u64) -> f64 {
        if self.rate <= 0.0 {
            self.start
        } else if self.tick <= 0.0 {
            self.start + self.tick_of(index)
        } else {
            self.start + self.tick_of(index) * self.tick
        }
    }

    /// How many of `count` messages are due at `at`: the first at the start, then by the schedule.
    pub fn due(&self, at: f64, count: u64) -> u64 {
        if self.rate <= 0.0 {
            return count;
        }
        let elapsed = at - self.start;
        if elapsed < 0.0 {
            return 0;
        }
        // An estimate from the rate, then moved to agree exactly with `intended`.
        let mut due = count.min((elapsed * self.rate + 1e-6) as u64 + 1);
        while due < count && self.intended(due) <= at + EDGE {
            due += 1;
        }
        while due > 0 && self.intended(due - 1) > at + EDGE {
            due -= 1;
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every(rate: f64, tick: f64) -> Schedule {
        Schedule {
            start: 100.0,
            rate,
            tick,
        }
    }

    #[test]
    fn without_a_tick_the_first_message_is_due_at_the_start_and_then_one_every_interval() {
        let plain = every(1000.0, 0.0);
        assert_eq!(plain.due(100.0, 10_000), 1);
        assert_eq!(plain.due(100.0999999, 10_000), 100);
        assert_eq!(plain.due(100.1, 10_000), 101);
        assert_eq!(plain.due(200.0, 10_000), 10_000);
        assert_eq!(plain.due(99.0, 7), 0);
        assert_eq!(every(0.0, 0.005).due(100.0, 7), 7);
    }

    #[test]
    fn with_a_tick_a_message_is_due_on_the_first_tick_at_or_after_its_time() {
        let ticked = every(25_000.0, 0.005); // 125 messages a tick
        assert_eq!(ticked.intended(0), 100.0);
        assert!((ticked.intended(1) - 100.005).abs() < 1e-9);
        assert!((ticked.intended(125) - 100.005).abs() < 1e-9);
        assert!((ticked.intended(126) - 100.010).abs() < 1e-9);
        assert_eq!(ticked.due(100.0, 1_000), 1);
        assert_eq!(ticked.due(100.0049, 1_000), 1);
        assert_eq!(ticked.due(100.005, 1_000), 126);
        assert_eq!(ticked.due(100.0099, 1_000), 126);
        assert_eq!(ticked.due(100.010, 1_000), 251);
    }

    #[test]
    fn a_slow_rate_keeps_its_own_times_when_they_fall_on_ticks() {
        let slow = every(25.0, 0.005); // one every 40 ms: every time is a tick
        for index in 0..100 {
            assert!((slow.intended(index) - (100.0 + index as f64 * 0.04)).abs() < 1e-9);
        }
    }

    #[test]
    fn due_and_intended_agree_everywhere() {
        for (rate, tick) in [(333.0, 0.005), (7_919.0, 0.001), (1e6, 0.005), (3.0, 0.0)] {
            let schedule = every(rate, tick);
            for index in 0..5_000u64 {
                let at = schedule.intended(index);
                assert!(schedule.due(at, u64::MAX) > index, "{rate} {tick} {index}");
                assert!(
                    schedule.due(at - 1e-6, u64::MAX) <= index,
                    "{rate} {tick} {index}"
                );
            }
        }
    }
}
