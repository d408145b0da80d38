//! The open loop: message i goes at its due time (schedule.rs), whatever the daemon did to the ones before,
//! and the pacing kept while it runs: each batch's lag behind the schedule, and each sleep's oversleep.

use super::error::SendError;
use crate::clock::{now, sleep_until};
use crate::schedule::Schedule;

/// The schedule's bookkeeping: what a batch's lag and a sleep's oversleep were, at most.
#[derive(Default, Debug, PartialEq)]
pub struct Pacing {
    pub batches: u64,
    pub behind_max: f64,
    pub behind_end: f64,
    pub oversleep_max: f64,
}

impl Pacing {
    /// A batch ending with message `last` was handed over at `at`.
    pub fn batch(&mut self, schedule: &Schedule, last: u64, at: f64) {
        let lag = if schedule.rate > 0.0 {
            (at - schedule.due_at(last)).max(0.0)
        } else {
            0.0
        };
        self.batches += 1;
        self.behind_max = self.behind_max.max(lag);
        self.behind_end = lag;
    }
}

/// The clock a schedule is kept by: the real one, or a test's.
pub trait Clock {
    fn now(&mut self) -> f64;
    fn sleep_until(&mut self, until: f64);
}

pub struct RealClock;

impl Clock for RealClock {
    fn now(&mut self) -> f64 {
        now()
    }

    fn sleep_until(&mut self, until: f64) {
        sleep_until(until)
    }
}

/// What an open loop did: messages handed over, when the last one was, and its pacing.
#[derive(Debug, PartialEq)]
pub struct Sent {
    pub sent: u64,
    pub last_at: f64,
    pub pacing: Pacing,
}

/// Send messages [0, count) open loop, each at its due time (schedule.rs). A sender behind its schedule
/// sends all that is due at once, and stays behind: the schedule never stretches. Stops at give_up (what
/// is left is unsent). `send_range(first, last)` hands over [first, last) and returns how many are now
/// wholly handed over (fewer only when the give-up time came while it was blocked).
pub fn open_loop(
    clock: &mut dyn Clock,
    count: u64,
    schedule: &Schedule,
    give_up: Option<f64>,
    send_range: &mut dyn FnMut(u64, u64) -> Result<u64, SendError>,
) -> Result<Sent, SendError> {
    let mut pacing = Pacing::default();
    let (mut sent, mut last_at) = (0u64, schedule.start);
    clock.sleep_until(schedule.start);
    while sent < count {
        let at = clock.now();
        if give_up.is_some_and(|limit| at > limit) {
            break;
        }
        let target = schedule.due_by(at, count);
        if target > sent {
            let upto = send_range(sent, target)?;
            last_at = clock.now();
            if upto > sent {
                pacing.batch(schedule, upto - 1, last_at);
            }
            sent = upto;
            if upto < target {
                break; // the give-up time came while blocked
            }
        }
        // Behind: the next round at once. On time: sleep until the next message's batch is due.
        if sent < count && schedule.rate > 0.0 {
            let at = clock.now();
            let wake = schedule.due_at(sent);
            if wake > at {
                clock.sleep_until(wake); // descheduled since `at`: it does not sleep at all
                pacing.oversleep_max = pacing.oversleep_max.max(clock.now() - wake);
            }
        }
    }
    Ok(Sent {
        sent,
        last_at,
        pacing,
    })
}
