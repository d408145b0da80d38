//! The follower's records: the requests Python writes on its stdin (trial, expect, drain; forget, stop and
//! end have no fields) and what it answers (following, tally, drained, forgot). syslogbench/model/rigrecord.py
//! defines each again; both sides refuse a key the other does not know.

use crate::io::required;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrialRequest {
    pub trial: u64,
    /// Messages per second of each sender.
    pub rate: f64,
    /// Messages of each sender.
    pub messages: u64,
    pub start: f64,
    pub bound_s: f64,
    pub give_up: f64,
    /// After the give-up time, how long the senders' reports (expect) may still take.
    pub ledger_wait_s: f64,
    pub senders: Vec<String>,
    /// The senders' grid (schedule.rs): its step, and each sender's phase, in the order of `senders`.
    pub tick_s: f64,
    pub phases_s: Vec<f64>,
    /// A message seen again is a copy (a user's config writes some to several files), not a duplicate.
    pub copies: bool,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExpectRequest {
    /// What each sender says it sent: the trial ends once all of it has arrived.
    pub sent: BTreeMap<String, u64>,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DrainRequest {
    pub quiet_s: f64,
    pub max_s: f64,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SenderTally {
    pub id: String,
    pub received: u64,
    pub late: u64,
    pub duplicated: u64,
    pub copies: u64,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LatencyMs {
    #[serde(deserialize_with = "required")]
    pub p50: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub p90: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub p99: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub p999: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub max: Option<f64>,
}

/// One trial's arrivals, as the follower saw them.
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TallyRecord {
    pub op: String,
    pub trial: u64,
    pub senders: Vec<SenderTally>,
    /// Lines of other trials, and lines whose index is out of the trial's range.
    pub stale: u64,
    /// Messages seen before their intended time (clocks apart): recorded at 1 us, and counted here.
    pub early: u64,
    /// {latency in us, at the histogram's precision: count}: the host merges trials by adding them.
    pub histogram_us: BTreeMap<String, u64>,
    pub latency_ms: LatencyMs,
    /// Passes over the output that read something.
    pub looks: u64,
    /// The longest a line could wait between being written and being read, and its 99th percentile over
    /// the passes: the latency's resolution.
    pub look_gap_max_s: f64,
    pub look_gap_p99_s: f64,
    /// The longest a line in a file outside the latency's sample could wait before it was read (0: every
    /// file was in the sample): how finely late was told from on time there.
    pub poll_gap_max_s: f64,
    /// Received messages whose latency is in the histogram (those in the sample's files).
    pub sampled: u64,
    /// Messages received in each second from the trial's start (the first sighting of each): when the
    /// daemon fell behind in a trial that failed, and what it wrote after.
    pub arrived_per_s: Vec<u64>,
    /// The follower's own CPU over the trial.
    pub cpu_s: f64,
    /// Of it, the kernel's (system time): its reads and wake-ups.
    pub cpu_system_s: f64,
    /// Why the trial's following ended: "all-arrived", "give-up", or "stopped".
    pub ended: String,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DrainedRecord {
    pub op: String,
    pub stale: u64,
    pub waited_s: f64,
    pub cpu_s: f64,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ForgotRecord {
    pub op: String,
    pub files: u64,
}
