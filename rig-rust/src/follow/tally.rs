//! Counting one trial's arrivals: per sender, received, late, duplicated (or copies); lines of other trials
//! (stale); and the latency of the sample's messages, in an HdrHistogram.

use super::error::FollowError;
use super::records::{LatencyMs, SenderTally, TrialRequest};
use crate::key::{trial_of, Key};
use crate::schedule::Schedule;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// Latencies in microseconds, to 3 significant digits, up to an hour (model/capacity/trial.py LATENCY_DIGITS).
pub const HIGHEST_US: u64 = 3_600_000_000;
pub const DIGITS: u8 = 3;
/// The seconds of a trial counted one by one in arrived_per_s (the daemon's supervisor stops it after 7,200 s);
/// later ones count in the last.
const PER_SECOND_MAX: usize = 7_200;

/// One trial's arrivals: per sender, which indexes arrived, and how late.
pub struct Tally {
    request: TrialRequest,
    /// (host, sender) to the sender's place, sorted: a binary search per line, where SipHash cost 7% of
    /// the follower's CPU (perf, behind syslog-ng at 160,000 msg/s).
    index: Vec<((u64, u64), usize)>,
    schedules: Vec<Schedule>,
    seen: Vec<Vec<u8>>,
    pub(super) counts: Vec<SenderTally>,
    pub stale: u64,
    pub early: u64,
    pub received: u64,
    pub sampled: u64,
    pub per_second: Vec<u64>,
    pub(super) latency: Histogram<u64>,
}

impl Tally {
    pub fn new(request: TrialRequest) -> Result<Tally, FollowError> {
        let mut index = Vec::new();
        for (k, name) in request.senders.iter().enumerate() {
            index.push((sender_numbers(name)?, k));
        }
        index.sort_unstable();
        if let Some(pair) = index.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(FollowError::NamedTwice(request.senders[pair[1].1].clone()));
        }
        if request.phases_s.len() != request.senders.len() {
            return Err(FollowError::Phases {
                phases: request.phases_s.len(),
                senders: request.senders.len(),
            });
        }
        let schedules = request
            .phases_s
            .iter()
            .map(|&phase| Schedule {
                start: request.start,
                rate: request.rate,
                tick: request.tick_s,
                phase,
            })
            .collect();
        let size = request.messages as usize;
        Ok(Tally {
            seen: vec![vec![0u8; size]; request.senders.len()],
            counts: request
                .senders
                .iter()
                .map(|id| SenderTally {
                    id: id.clone(),
                    received: 0,
                    late: 0,
                    duplicated: 0,
                    copies: 0,
                })
                .collect(),
            index,
            schedules,
            stale: 0,
            early: 0,
            received: 0,
            sampled: 0,
            per_second: Vec::new(),
            latency: Histogram::new_with_bounds(1, HIGHEST_US, DIGITS)
                .map_err(FollowError::Histogram)?,
            request,
        })
    }

    /// A message seen at `seen_at`; its latency is recorded if it is in the sample.
    pub fn arrive(&mut self, key: Key, seen_at: f64, sampled: bool) {
        let (trial, index) = trial_of(key.seq);
        let Ok(place) = self
            .index
            .binary_search_by_key(&(key.host, key.sender), |&(numbers, _)| numbers)
        else {
            self.stale += 1;
            return;
        };
        let who = self.index[place].1;
        if trial != self.request.trial || index >= self.request.messages {
            self.stale += 1;
            return;
        }
        let flag = &mut self.seen[who][index as usize];
        let count = &mut self.counts[who];
        if *flag != 0 {
            if self.request.copies {
                count.copies += 1;
            } else {
                count.duplicated += 1;
            }
            return;
        }
        *flag = 1;
        count.received += 1;
        self.received += 1;
        let latency = seen_at - self.schedules[who].due_at(index);
        if latency > self.request.bound_s {
            count.late += 1;
        }
        self.count_second(seen_at);
        let us = (latency * 1e6).round();
        if us < 1.0 {
            self.early += (latency < 0.0) as u64;
        }
        if !sampled {
            return;
        }
        self.sampled += 1;
        self.latency
            .saturating_record((us.max(1.0) as u64).min(HIGHEST_US));
    }

    fn count_second(&mut self, seen_at: f64) {
        let second = ((seen_at - self.request.start).max(0.0) as usize).min(PER_SECOND_MAX - 1);
        if second >= self.per_second.len() {
            self.per_second.resize(second + 1, 0);
        }
        self.per_second[second] += 1;
    }

    pub(super) fn histogram_us(&self) -> BTreeMap<String, u64> {
        self.latency
            .iter_recorded()
            .map(|v| {
                (
                    self.latency
                        .median_equivalent(v.value_iterated_to())
                        .to_string(),
                    v.count_at_value(),
                )
            })
            .collect()
    }

    pub(super) fn latency_ms(&self) -> LatencyMs {
        let at = |q: f64| {
            (!self.latency.is_empty()).then(|| self.latency.value_at_quantile(q) as f64 / 1000.0)
        };
        LatencyMs {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            p999: at(0.999),
            max: (!self.latency.is_empty()).then(|| self.latency.max() as f64 / 1000.0),
        }
    }
}

/// "host3-s12" -> (3, 12).
fn sender_numbers(name: &str) -> Result<(u64, u64), FollowError> {
    let bad = || FollowError::NotASender(name.into());
    let (host, sender) = name
        .strip_prefix("host")
        .and_then(|r| r.split_once("-s"))
        .ok_or_else(bad)?;
    Ok((
        host.parse().map_err(|_| bad())?,
        sender.parse().map_err(|_| bad())?,
    ))
}
