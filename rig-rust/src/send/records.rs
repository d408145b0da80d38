//! The sender's records: the requests Python writes on its stdin (send, close) and what it answers on
//! stdout (connected, sent, closed, failed). syslogbench/model/rigrecord.py defines each again; both sides
//! refuse a key the other does not know.

use crate::io::required;
use crate::schedule::Schedule;
use crate::templates::Templates;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SendRequest {
    /// The rendered messages ("" when they are made from templates).
    pub file: String,
    /// Each message's end offset (little-endian u64s); None: a burst of the whole file (a run over TCP).
    #[serde(deserialize_with = "required")]
    pub ends: Option<String>,
    /// A trial's messages made at send time (templates.rs), in place of a file.
    #[serde(deserialize_with = "required")]
    pub templates: Option<Templates>,
    pub count: u64,
    /// Messages per second for this sender; 0: all due at once.
    pub rate: f64,
    /// The common start, in epoch seconds.
    pub start: f64,
    /// After this (epoch seconds) the sender stops: what is left is unsent. None: no give-up time.
    #[serde(deserialize_with = "required")]
    pub give_up: Option<f64>,
    /// The sender's batches go every tick_s on a grid from start + phase_s (schedule.rs); 0: no grid.
    pub tick_s: f64,
    pub phase_s: f64,
}

impl SendRequest {
    pub fn schedule(&self) -> Schedule {
        Schedule {
            start: self.start,
            rate: self.rate,
            tick: self.tick_s,
            phase: self.phase_s,
        }
    }
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CloseRequest {
    pub drain_timeout_s: f64,
}

/// What one send request did: the sender's ledger for its messages.
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SendRecord {
    pub op: String,
    pub intended: u64,
    /// Messages whose every byte was handed to the kernel.
    pub sent: u64,
    /// Bytes handed to the kernel (plaintext over TLS).
    pub bytes: u64,
    /// From the start to the last message handed over.
    pub pace_s: f64,
    /// This process's CPU over the request.
    pub cpu_s: f64,
    /// Of it, the kernel's (system time).
    pub cpu_system_s: f64,
    pub batches: u64,
    /// The largest lag of a batch behind its schedule: when it was handed over, minus when its last
    /// message was due (0 for a burst).
    pub behind_max_s: f64,
    /// The lag of the last batch.
    pub behind_end_s: f64,
    /// The longest a sleep ran past its wake time: the sender's own scheduling, not the daemon.
    pub oversleep_max_s: f64,
    /// When the last message was handed over (epoch seconds).
    pub last_at: f64,
    pub status: String,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClosedRecord {
    pub op: String,
    /// Bytes still unacknowledged when the drain gave up (0: the peer has every byte).
    pub left_bytes: u64,
    pub drain_s: f64,
    /// This process's CPU over its whole life.
    pub cpu_s: f64,
    /// TLS: whether the daemon answered our close_notify by closing. None over TCP and UDP.
    #[serde(deserialize_with = "required")]
    pub peer_closed: Option<bool>,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConnectedRecord {
    pub op: String,
    pub transport: String,
    #[serde(deserialize_with = "required")]
    pub tls_version: Option<String>,
    #[serde(deserialize_with = "required")]
    pub tls_cipher: Option<String>,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FailedRecord {
    pub op: String,
    pub error: String,
}
