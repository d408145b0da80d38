//! A run's final reconciliation: every output line counted against the senders, by sequence number.
//!
//! It replaces syslogbench/rig/reconcile.py and the counting half of syslogbench/rig/fanout.py, and counts
//! exactly as they did. Python prepares what needs the model (syslogbench/rig/reconcile.py `request`): the
//! senders, the whole tails of their messages (from messages.padding), the filter masks (a file), the proof
//! pattern. This role reads the files and answers with one `Reconciled` record; Python joins it with the
//! ledgers. Both records refuse unknown keys, here and in syslogbench/model/rigrecord.py.
//!
//! A message line is `syslogbench h=H s=S q=Q <tail>`: the first place on a line where that holds, the tail
//! being the rest of the line. It counts as received only when its tail is what the sender sent there: the
//! " f=F v=V " fields and the padding (or DONE for the last sequence number); anything else with a known key is
//! truncated. Memory: one byte per sequence number per sender (occurrences, saturating at 255), and the
//! reads (`BLOCK_BYTES`, a longer line cut at `LONGEST_LINE`).
//!
//! - records.rs: the request and the answer; examples.rs: an answer with every record in it;
//! - blocks.rs: reading a file as blocks of whole lines; lines.rs: a message line's key, tail and fields;
//! - tails.rs: the whole tails; counter.rs: counting message lines; tally.rs: occurrences per sender;
//!   masks.rs: the filter's masks;
//! - split.rs and done_log.rs: our own configs; fanout.rs: a user's config;
//! - error.rs: why it failed.

mod blocks;
mod counter;
mod done_log;
mod error;
mod examples;
mod fanout;
mod lines;
mod masks;
mod records;
mod split;
mod tails;
mod tally;
#[cfg(test)]
mod tests;

pub use error::ReconcileError;
pub use examples::examples;
pub use records::{FileCounts, Mode, Proof, Reconciled, Request, SenderCounts, TailTable};

use counter::Counter;
use examples::example;
use serde::Serialize;
use std::io::{Read, Write};

pub fn main(args: &[String]) -> Result<(), ReconcileError> {
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => {
            let request = read_request()?;
            let answer = reconcile(&request)?;
            emit(&answer)
        }
        ["--check-request"] => {
            let request = read_request()?;
            Counter::new(&request)?; // the tables and the proof are valid too
            emit(&request)
        }
        ["--example"] => emit(&example()),
        _ => Err(ReconcileError::Usage),
    }
}

fn read_request() -> Result<Request, ReconcileError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(ReconcileError::ReadRequest)?;
    serde_json::from_str(&text).map_err(ReconcileError::NotARequest)
}

fn emit<T: Serialize>(record: &T) -> Result<(), ReconcileError> {
    let mut out = serde_json::to_vec(record).map_err(ReconcileError::Encode)?;
    out.push(b'\n');
    std::io::stdout()
        .write_all(&out)
        .map_err(ReconcileError::WriteAnswer)
}

/// The request's output counted, as its mode says, with what counting it took.
pub fn reconcile(request: &Request) -> Result<Reconciled, ReconcileError> {
    let mut answer = match request.mode {
        Mode::Split => split::split(request)?,
        Mode::Fanout => fanout::fanout(request)?,
    };
    (answer.cpu_s, answer.peak_rss_bytes) = usage();
    Ok(answer)
}

/// This process's CPU seconds so far, and its peak resident memory.
fn usage() -> (f64, u64) {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    ((cpu * 1e6).round() / 1e6, peak_rss())
}

/// This program's peak resident memory: VmHWM, which starts anew at exec (getrusage's ru_maxrss keeps the
/// peak of the process image before exec, e.g. the Python that started the rig).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}
