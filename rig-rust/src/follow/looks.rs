//! How finely the follower saw the daemon's lines: the gap a line could wait between being written and
//! being read, pass by pass (the latency's resolution), and between two polls of the files outside the
//! sample (how finely late was told from on time there).

use super::tally::{DIGITS, HIGHEST_US};
use crate::clock::now;
use hdrhistogram::Histogram;

/// The passes' resolution: how long a line could wait between being written and being read.
pub struct Looks {
    pub count: u64,
    pub(super) previous_start: f64,
    gaps: Histogram<u64>,
    pub longest: f64,
}

impl Looks {
    pub fn new() -> Looks {
        Looks {
            count: 0,
            previous_start: now(),
            gaps: Histogram::new_with_bounds(1, HIGHEST_US, DIGITS).unwrap(),
            longest: 0.0,
        }
    }

    /// A pass began reading at `start` and ended at `end`. If the wait before it returned at once (busy),
    /// a line may have been written just after the previous pass began; else, just before this one woke.
    pub fn pass(&mut self, busy: bool, woke: f64, start: f64, end: f64) {
        let since = if busy { self.previous_start } else { woke };
        let gap = (end - since).max(0.0);
        self.previous_start = start;
        self.count += 1;
        self.longest = self.longest.max(gap);
        self.gaps
            .saturating_record(((gap * 1e6) as u64).clamp(1, HIGHEST_US));
    }

    pub fn p99_s(&self) -> f64 {
        if self.gaps.is_empty() {
            0.0
        } else {
            self.gaps.value_at_quantile(0.99) as f64 / 1e6
        }
    }
}

/// The longest a line in a file outside the sample could wait before a poll read it.
pub struct PollGap {
    pub longest: f64,
    previous: f64,
}

impl PollGap {
    pub fn new() -> PollGap {
        PollGap {
            longest: 0.0,
            previous: now(),
        }
    }

    /// A poll began at `start` and its read ended at `end`: a line written just after the previous poll
    /// began waited until this one's read.
    pub fn poll(&mut self, start: f64, end: f64) {
        self.longest = self.longest.max(end - self.previous);
        self.previous = start;
    }
}
