//! The open-loop schedule, which the sender keeps and the follower times latency against.
//!
//! Message i's own time is i/rate after the start. A paced sender sends in batches on a grid of its own,
//! every `tick` seconds from `start + phase`, and message i is due at the first point of that grid at or
//! after its own time: the batch it goes in. Latency counts from there, so a message's wait for its batch
//! (half a tick on average) is not counted as the daemon's. The senders of a trial get phases
//! spread over one tick (model/capacity/trial.py `phase_s`): on a grid they all shared, four senders woke at the
//! same instants on 2 cores, fell behind and raised every p50 (docs/findings/sender-schedule.md).
//! With tick 0 there is no grid: message i is due at its own time. With rate 0 everything is due at once.

/// A message whose own time is this close after a grid point goes in that point's batch: epoch seconds
/// near 1.8e9 carry about 0.24 us, so an exact comparison would put some on the next point, a tick later.
const SLACK_S: f64 = 1e-6;
/// Without a grid: keeps a look that ends exactly on time from missing its message.
const ON_TIME: f64 = 1e-6;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    pub start: f64,
    /// Messages per second; 0: all due at the start.
    pub rate: f64,
    /// The grid's step; 0: no grid.
    pub tick: f64,
    /// Where this sender's grid starts, after `start` (less than a tick).
    pub phase: f64,
}

impl Schedule {
    fn gridded(&self) -> bool {
        self.rate > 0.0 && self.tick > 0.0
    }

    /// When message `index` is due (epoch seconds).
    pub fn due_at(&self, index: u64) -> f64 {
        if self.rate <= 0.0 {
            return self.start;
        }
        let own = index as f64 / self.rate;
        if !self.gridded() {
            return self.start + own;
        }
        let step = ((own - self.phase - SLACK_S) / self.tick).ceil().max(0.0);
        self.start + self.phase + step * self.tick
    }

    /// How many of `count` messages are due at `at`: those whose batch time has come.
    pub fn due_by(&self, at: f64, count: u64) -> u64 {
        if self.rate <= 0.0 {
            return count;
        }
        let elapsed = at - self.start;
        if !self.gridded() {
            if elapsed < 0.0 {
                return 0;
            }
            return count.min((elapsed * self.rate + ON_TIME) as u64 + 1);
        }
        if elapsed < self.phase - SLACK_S {
            return 0;
        }
        // The last grid point that has come: every message whose own time is at or before it is due.
        let point = self.phase + ((elapsed - self.phase + SLACK_S) / self.tick).floor() * self.tick;
        count.min(((point + SLACK_S) * self.rate) as u64 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(rate: f64) -> Schedule {
        Schedule {
            start: 0.0,
            rate,
            tick: 0.0,
            phase: 0.0,
        }
    }

    #[test]
    fn without_a_grid_the_first_message_is_due_at_zero_and_one_every_interval() {
        assert_eq!(plain(1000.0).due_by(0.0, 10_000), 1);
        assert_eq!(plain(1000.0).due_by(0.0999999, 10_000), 100);
        assert_eq!(plain(1000.0).due_by(0.1, 10_000), 101);
        assert_eq!(plain(1000.0).due_by(100.0, 10_000), 10_000);
        assert_eq!(plain(0.0).due_by(0.0, 7), 7);
        assert_eq!(plain(1000.0).due_by(-1.0, 7), 0);
        assert_eq!(plain(1000.0).due_at(99), 0.099);
    }

    #[test]
    fn on_a_grid_a_message_is_due_at_the_first_grid_point_at_or_after_its_own_time() {
        let grid = Schedule {
            start: 100.0,
            rate: 1000.0,
            tick: 0.005,
            phase: 0.002,
        };
        // Own times 0, 0.001, 0.002 go in the batch at 0.002; 0.003 .. 0.007 in the one at 0.007.
        let at = |i: u64| grid.due_at(i) - 100.0;
        assert!((at(0) - 0.002).abs() < 1e-9, "{}", at(0));
        assert!((at(2) - 0.002).abs() < 1e-9, "{}", at(2));
        assert!((at(3) - 0.007).abs() < 1e-9, "{}", at(3));
        assert!((at(7) - 0.007).abs() < 1e-9, "{}", at(7));
        assert!((at(8) - 0.012).abs() < 1e-9, "{}", at(8));
        assert_eq!(
            grid.due_by(100.0019, 100),
            0,
            "before the sender's first grid point"
        );
        assert_eq!(grid.due_by(100.002, 100), 3);
        assert_eq!(grid.due_by(100.0069, 100), 3);
        assert_eq!(grid.due_by(100.007, 100), 8);
        assert_eq!(grid.due_by(200.0, 100), 100);
    }

    #[test]
    fn every_message_is_due_by_its_own_due_time_and_not_a_grid_point_before() {
        for &(rate, tick, phase) in &[
            (1000.0, 0.005, 0.0),
            (333.3, 0.005, 0.00125),
            (250_000.0, 0.005, 0.00375),
            (50.0, 0.005, 0.0025),
            (7.0, 0.001, 0.0005),
        ] {
            let grid = Schedule {
                start: 1.8e9,
                rate,
                tick,
                phase,
            };
            for index in (0..20_000).step_by(7) {
                let due = grid.due_at(index);
                assert!(grid.due_by(due, u64::MAX) > index, "{rate} {index}");
                assert!(grid.due_by(due - tick, u64::MAX) <= index, "{rate} {index}");
                assert!(
                    due - 1.8e9 >= index as f64 / rate - 1e-6,
                    "due before its own time"
                );
                assert!(
                    due - 1.8e9 < index as f64 / rate + tick + 1e-6,
                    "more than a tick late"
                );
            }
        }
    }
}
