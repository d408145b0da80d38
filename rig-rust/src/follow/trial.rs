//! The trial request: follow one trial until every message sent has arrived, or the give-up time and every
//! report are in, or the host says stop; answer its tally.
//!
//! Each round of the loop waits for the daemon or the host (`wait`), looks for files inotify did not
//! announce (`rescan`), reads what was appended and counts it (`read`), takes the host's requests (`hear`),
//! and asks whether the trial has ended (`ended`).

use super::error::FollowError;
use super::looks::{Looks, PollGap};
use super::output::Output;
use super::records::{ExpectRequest, TallyRecord, TrialRequest};
use super::tally::Tally;
use crate::clock::{cpu_times, now, round};
use crate::io::{parse, split_op, LineReader};
use crate::key::keys;

/// A poll that returned sooner than this found events already waiting: the follower was busy.
const BUSY_S: f64 = 0.0002;
/// Files inotify did not announce (created before their directory was watched) are looked for this often.
const RESCAN_S: f64 = 0.1;

/// Why following a trial ended, as its tally says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    AllArrived,
    GiveUp,
    Stopped,
}

impl Ended {
    fn name(self) -> &'static str {
        match self {
            Ended::AllArrived => "all-arrived",
            Ended::GiveUp => "give-up",
            Ended::Stopped => "stopped",
        }
    }
}

/// When a round's wait began and ended, and whether stdin had something.
struct Woke {
    before: f64,
    at: f64,
    stdin_ready: bool,
}

/// One trial being followed.
struct Trial {
    number: u64,
    give_up: f64,
    ledger_wait: f64,
    tally: Tally,
    looks: Looks,
    polls: PollGap,
    /// What the senders said they sent (the expect request), once they have.
    expected: Option<u64>,
    last_scan: f64,
    cpu0: (f64, f64),
}

/// Follow one trial until every message sent has arrived, or the give-up time and every report are in, or
/// the host says stop.
pub fn trial(
    output: &mut Output,
    requests: &mut LineReader,
    request: TrialRequest,
) -> Result<TallyRecord, FollowError> {
    let mut trial = Trial::start(output, request)?;
    let ended = loop {
        let woke = trial.wait(output, requests);
        trial.rescan(output, woke.at);
        trial.read(output, &woke);
        let stopped = trial.hear(requests, woke.stdin_ready)?;
        if let Some(ended) = trial.ended(stopped || requests.closed) {
            break ended;
        }
    };
    Ok(trial.record(ended))
}

impl Trial {
    /// The output's sample sized for the trial, and nothing counted yet.
    fn start(output: &mut Output, request: TrialRequest) -> Result<Trial, FollowError> {
        let cpu0 = cpu_times();
        let (number, give_up, ledger_wait) =
            (request.trial, request.give_up, request.ledger_wait_s);
        output.sample_for(request.rate * request.senders.len() as f64, request.bound_s);
        let tally = Tally::new(request)?;
        let looks = Looks::new();
        let polls = PollGap::new();
        Ok(Trial {
            number,
            give_up,
            ledger_wait,
            tally,
            looks,
            polls,
            expected: None,
            last_scan: now(),
            cpu0,
        })
    }

    /// Wait for the daemon to write or the host to ask (not at all if a request is already buffered).
    fn wait(&self, output: &mut Output, requests: &LineReader) -> Woke {
        let before = now();
        let timeout = if requests.has_line() {
            0
        } else {
            output.wait_ms(before)
        };
        let stdin_ready = output.wait(requests.fd(), timeout);
        Woke {
            before,
            at: now(),
            stdin_ready,
        }
    }

    /// Follow the files inotify did not announce, once every RESCAN_S.
    fn rescan(&mut self, output: &mut Output, at: f64) {
        if at - self.last_scan > RESCAN_S {
            output.scan();
            self.last_scan = at;
        }
    }

    /// Read what was appended (the files outside the sample too, when their poll is due), count its keys,
    /// and keep how finely this pass and this poll saw the lines.
    fn read(&mut self, output: &mut Output, woke: &Woke) {
        let start = now();
        let polled = output.poll_due(start);
        let tally = &mut self.tally;
        let read = output.read_dirty(&mut |at, sampled, data| {
            for key in keys(data) {
                tally.arrive(key, at, sampled);
            }
        });
        let end = now();
        if read {
            self.looks
                .pass(woke.at - woke.before < BUSY_S, woke.at, start, end);
        }
        if polled {
            self.polls.poll(start, end);
        }
    }

    /// The host's requests that came: expect (what the senders sent) and stop. Whether to stop.
    fn hear(&mut self, requests: &mut LineReader, stdin_ready: bool) -> Result<bool, FollowError> {
        let mut stopped = requests.closed;
        let lines = if stdin_ready {
            requests.read_available()
        } else {
            requests.buffered()
        };
        for line in lines {
            let (op, body) = split_op(&line)?;
            match op.as_str() {
                "expect" => {
                    self.expected = Some(parse::<ExpectRequest>(&body)?.sent.values().sum())
                }
                "stop" => stopped = true,
                other => return Err(FollowError::UnknownOpInTrial(other.into())),
            }
        }
        Ok(stopped)
    }

    /// Whether the trial has ended, and why: the host said stop (or went), every message sent arrived, or
    /// the give-up time came with the senders' reports in (or their wait over).
    fn ended(&self, stopped: bool) -> Option<Ended> {
        if stopped {
            return Some(Ended::Stopped);
        }
        if self
            .expected
            .is_some_and(|sent| self.tally.received >= sent)
        {
            return Some(Ended::AllArrived);
        }
        let at = now();
        if at > self.give_up && (self.expected.is_some() || at > self.give_up + self.ledger_wait) {
            return Some(Ended::GiveUp);
        }
        None
    }

    /// The trial's tally record.
    fn record(mut self, ended: Ended) -> TallyRecord {
        let (user0, system0) = self.cpu0;
        let (user, system) = cpu_times();
        TallyRecord {
            op: "tally".into(),
            trial: self.number,
            histogram_us: self.tally.histogram_us(),
            latency_ms: self.tally.latency_ms(),
            senders: self.tally.counts.clone(),
            stale: self.tally.stale,
            early: self.tally.early,
            looks: self.looks.count,
            look_gap_max_s: round(self.looks.longest, 6),
            look_gap_p99_s: round(self.looks.p99_s(), 6),
            poll_gap_max_s: round(self.polls.longest, 6),
            sampled: self.tally.sampled,
            arrived_per_s: std::mem::take(&mut self.tally.per_second),
            cpu_s: round(user - user0 + system - system0, 4),
            cpu_system_s: round(system - system0, 4),
            ended: ended.name().into(),
        }
    }
}
