//! One answer with every record in it, as the contract test reads them (`reconcile --example`, and
//! `syslogbench-rig examples` with the other roles').

use super::records::{FileCounts, Reconciled, SenderCounts};
use crate::io::with_op;
use std::collections::BTreeMap;

/// The answer as a line of `syslogbench-rig examples`, like the other roles' records: its fields and the op
/// that names it, "reconciled" (the role itself writes the answer alone, without an op).
pub fn examples() -> Vec<serde_json::Value> {
    vec![with_op("reconciled", serde_json::to_value(example())).unwrap()]
}

/// One of each record, as the contract test reads them.
pub fn example() -> Reconciled {
    Reconciled {
        senders: vec![SenderCounts {
            expected: 61,
            received: 60,
            unexpected: 0,
            duplicated: 1,
            truncated: 1,
            done_seen: true,
        }],
        misfiled: 1,
        unknown: 2,
        split_files: 3,
        output_bytes: 6100,
        done_log_lines: 1,
        done_log_extra: 0,
        unprocessed: 0,
        files: vec![FileCounts {
            file: "syslog".into(),
            lines: 62,
            messages: 61,
            duplicated: 1,
            truncated: 1,
            facilities: vec![0, 23],
            severities: vec![7],
        }],
        fanout: BTreeMap::from([("1".into(), 60)]),
        cpu_s: 0.01,
        peak_rss_bytes: 4 << 20,
    }
}
