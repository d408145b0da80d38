//! The latency's sample: which files wake the follower on inotify when the daemon writes them, and the
//! poll of every other file once a poll interval.

use super::output::Output;

/// The longest wait in poll(): a look at the clock for the give-up time, and a rescan for new files.
pub const POLL_MS: i32 = 20;
/// Lines per second the follower takes on inotify, for the latency's sample; above it, a share of the files.
/// Nearly every one is a wake-up, and the follower's CPU in a trial is mostly its context switches (perf:
/// 80% in finish_task_switch behind syslog-ng at 80,000 msg/s): 1,000 a second keep 10,000 latencies in a
/// 10 s trial (100 above its p99) for half the wake-ups of 2,000 (docs/findings/follower-looks.md).
pub const SAMPLE_LINES_S: f64 = 1_000.0;
/// The poll interval of the files outside the sample, as a share of LATENCY_BOUND, and its limits: 80 ms
/// with the default bound, so that a line waits under a tenth of it (flagged above) and the follower reads
/// each of 188 files 12.5 times a second rather than 25 (a quarter of its CPU behind syslog-ng at 80,000
/// msg/s, docs/findings/follower-looks.md).
const POLL_SHARE: f64 = 0.08;
const POLL_MIN_S: f64 = 0.001;
pub const POLL_MAX_S: f64 = 0.080;

impl Output {
    fn in_sample(&self, slot: usize) -> bool {
        self.files[slot]
            .pri
            .is_none_or(|pri| pri % self.sample_every == 0)
    }

    /// Watch the file's writes if it is in the sample, else stop watching them.
    pub(super) fn arm(&mut self, slot: usize) {
        match (self.in_sample(slot), self.files[slot].watch) {
            (true, None) => {
                // A file that cannot be watched (gone) is polled instead.
                if let Ok(wd) = self.add_watch(&self.files[slot].path, libc::IN_MODIFY) {
                    self.files[slot].watch = Some(wd);
                    self.by_watch.insert(wd, slot);
                }
            }
            (false, Some(wd)) => {
                // SAFETY: removing a watch of our own descriptor.
                unsafe { libc::inotify_rm_watch(self.inotify, wd) };
                self.files[slot].watch = None;
                self.by_watch.remove(&wd);
            }
            _ => {}
        }
    }

    /// Size the latency's sample for a trial of `lines_s` lines a second and a latency bound of `bound_s`.
    pub fn sample_for(&mut self, lines_s: f64, bound_s: f64) {
        self.sample_every = (lines_s / SAMPLE_LINES_S).ceil().max(1.0) as u64;
        self.poll_s = (bound_s * POLL_SHARE).clamp(POLL_MIN_S, POLL_MAX_S);
        for slot in 0..self.files.len() {
            self.arm(slot);
        }
    }

    /// Mark every file outside the sample when a poll interval has passed since the last poll; whether it had.
    pub fn poll_due(&mut self, at: f64) -> bool {
        if at - self.last_poll < self.poll_s {
            return false;
        }
        self.last_poll = at;
        for slot in 0..self.files.len() {
            if self.files[slot].watch.is_none() {
                self.mark(slot);
            }
        }
        true
    }

    /// Milliseconds poll() may wait: at most POLL_MS, and not past the next poll of unwatched files.
    pub fn wait_ms(&self, at: f64) -> i32 {
        if self.by_watch.len() == self.files.len() {
            return POLL_MS; // every file watched: nothing to poll
        }
        (((self.last_poll + self.poll_s - at) * 1000.0).ceil() as i32).clamp(0, POLL_MS)
    }
}
