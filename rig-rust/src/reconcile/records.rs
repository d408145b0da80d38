//! The reconcile role's records: the request Python writes (syslogbench/rig/reconcile.py `request`) and the
//! answer, `Reconciled`. Both refuse unknown keys, here and in syslogbench/model/rigrecord.py.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What to reconcile (written by syslogbench/rig/reconcile.py, one JSON object on stdin). Every key is
/// required, those that may be null too (`Option::deserialize`: serde would read a missing one as null).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// "split": our own configs (split files test.D.facility.F.severity.V.log, the plain test.D.all.log,
    /// done.log); "fanout": a user's config, every regular file under log_dir, each counted on its own.
    pub mode: Mode,
    pub log_dir: String,
    /// [host, sender] of every expected sender, in the order of the answer's senders.
    pub senders: Vec<[u64; 2]>,
    /// Sequence numbers 1..=per_sender, the DONE last.
    pub per_sender: u64,
    /// The whole tails, one table per (host digits, sender digits) of the senders.
    pub tails: Vec<TailTable>,
    /// A file of per_sender + 1 bytes per sender, in order: 1 where the number must arrive (index 0 unused);
    /// null: every number must.
    #[serde(deserialize_with = "Option::deserialize")]
    pub masks: Option<String>,
    /// What every message line of a plain file must match besides its key; null: nothing.
    #[serde(deserialize_with = "Option::deserialize")]
    pub proof: Option<Proof>,
    /// Drop each read from the page cache (posix_fadvise DONTNEED).
    pub forget: bool,
    pub block_bytes: usize,
    /// fanout: the file to write, for each sender with a lost message (in order), its arrival table
    /// (per_sender + 1 bytes, 1 where the message is in some file), from which Python names the lost PRIs.
    #[serde(deserialize_with = "Option::deserialize")]
    pub arrived_out: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Split,
    Fanout,
}

/// Every tail that ends an ordinary message of senders whose numbers have these lengths whole: the tail
/// ("f=F v=V " and the padding) -> the lengths of q with which it does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TailTable {
    pub host_digits: u32,
    pub sender_digits: u32,
    pub whole: BTreeMap<String, Vec<u32>>,
}

/// A regular expression over bytes (no Unicode classes), counted per block as Python's findall would; `same`:
/// two groups that must be equal (what a backreference said in Python's pattern).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proof {
    pub source: String,
    #[serde(deserialize_with = "Option::deserialize")]
    pub same: Option<[usize; 2]>,
}

/// The answer: one JSON object on stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reconciled {
    pub senders: Vec<SenderCounts>,
    /// Lines in the wrong split file (split mode; 0 in fanout).
    pub misfiled: i64,
    pub unknown: u64,
    /// Split files read (fanout: every file read).
    pub split_files: u64,
    pub output_bytes: u64,
    /// done.log's DONE lines and other lines (fanout: every sender whose DONE arrived, and 0).
    pub done_log_lines: u64,
    pub done_log_extra: u64,
    /// Message lines of the plain file without the proof.
    pub unprocessed: i64,
    /// fanout: each file, in path order (empty in split mode).
    pub files: Vec<FileCounts>,
    /// fanout: number of files -> messages found in that many, from 1 to the most (empty in split mode).
    pub fanout: BTreeMap<String, u64>,
    /// What this reconciliation took: CPU seconds and peak resident memory.
    pub cpu_s: f64,
    pub peak_rss_bytes: u64,
}

impl Reconciled {
    /// Nothing counted yet.
    pub fn blank() -> Reconciled {
        Reconciled {
            senders: Vec::new(),
            misfiled: 0,
            unknown: 0,
            split_files: 0,
            output_bytes: 0,
            done_log_lines: 0,
            done_log_extra: 0,
            unprocessed: 0,
            files: Vec::new(),
            fanout: BTreeMap::new(),
            cpu_s: 0.0,
            peak_rss_bytes: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SenderCounts {
    pub expected: u64,
    pub received: u64,
    pub unexpected: u64,
    pub duplicated: u64,
    pub truncated: u64,
    pub done_seen: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileCounts {
    pub file: String,
    pub lines: u64,
    pub messages: u64,
    pub duplicated: u64,
    pub truncated: u64,
    /// The facility and severity numbers our messages in it show (below 24 and 8), ascending.
    pub facilities: Vec<u32>,
    pub severities: Vec<u32>,
}
