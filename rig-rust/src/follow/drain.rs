//! The drain request: before a trial, read until the output is quiet; every line is an earlier trial's.

use super::output::Output;
use super::records::{DrainRequest, DrainedRecord};
use crate::clock::{cpu_seconds, now, round};
use crate::key::keys;

/// Read until no line has arrived for quiet_s (at most max_s): every line is an earlier trial's. One look
/// at every file comes first: when it finds nothing, every byte was written before the follower last read
/// one, so the quiet began then, not now (between trials the pause, and other searches' turns, have
/// usually been quiet for longer than quiet_s: no wait at all).
pub fn drain(output: &mut Output, request: &DrainRequest) -> DrainedRecord {
    let (began, cpu0) = (now(), cpu_seconds());
    let mut stale = 0u64;
    output.scan();
    output.read_dirty(&mut |_, _, data| stale += keys(data).count() as u64);
    let mut last = output.last_data_at.min(began);
    while now() - last < request.quiet_s && now() - began < request.max_s {
        output.wait(-1, 10);
        output.poll_due(now());
        let mut found = 0u64;
        output.read_dirty(&mut |_, _, data| found += keys(data).count() as u64);
        if found > 0 {
            stale += found;
            last = now();
        }
    }
    DrainedRecord {
        op: "drained".into(),
        stale,
        waited_s: round(now() - began, 3),
        cpu_s: round(cpu_seconds() - cpu0, 4),
    }
}
