//! One example of every record and request of the follower, for the contract test (`syslogbench-rig examples`).

use super::records::{
    DrainRequest, DrainedRecord, ExpectRequest, ForgotRecord, LatencyMs, SenderTally, TallyRecord,
    TrialRequest,
};
use crate::io::with_op;
use std::collections::BTreeMap;

/// One example of every record, for the contract test (syslogbench/model/rigrecord.py reads them strictly).
pub fn examples() -> Vec<serde_json::Value> {
    let trial = TrialRequest {
        trial: 3,
        rate: 250.0,
        messages: 1000,
        start: 1.8e9,
        bound_s: 1.0,
        give_up: 1.8e9 + 7.0,
        ledger_wait_s: 30.0,
        senders: vec!["host1-s1".into(), "host1-s2".into()],
        tick_s: 0.005,
        phases_s: vec![0.0, 0.0025],
        copies: false,
    };
    let expect = ExpectRequest {
        sent: BTreeMap::from([("host1-s1".into(), 1000), ("host1-s2".into(), 990)]),
    };
    let drain = DrainRequest {
        quiet_s: 0.5,
        max_s: 60.0,
    };
    let tally = TallyRecord {
        op: "tally".into(),
        trial: 3,
        senders: vec![SenderTally {
            id: "host1-s1".into(),
            received: 1000,
            late: 2,
            duplicated: 0,
            copies: 0,
        }],
        stale: 0,
        early: 0,
        histogram_us: BTreeMap::from([("1000".into(), 998), ("1500000".into(), 2)]),
        latency_ms: LatencyMs {
            p50: Some(1.0),
            p90: Some(1.0),
            p99: Some(1.0),
            p999: Some(1500.0),
            max: Some(1500.0),
        },
        looks: 800,
        look_gap_max_s: 0.0004,
        look_gap_p99_s: 0.0002,
        poll_gap_max_s: 0.011,
        sampled: 125,
        arrived_per_s: vec![600, 400],
        cpu_s: 0.01,
        cpu_system_s: 0.004,
        ended: "all-arrived".into(),
    };
    let drained = DrainedRecord {
        op: "drained".into(),
        stale: 12,
        waited_s: 0.5,
        cpu_s: 0.001,
    };
    let forgot = ForgotRecord {
        op: "forgot".into(),
        files: 192,
    };
    [
        with_op("trial", serde_json::to_value(trial)),
        with_op("expect", serde_json::to_value(expect)),
        with_op("drain", serde_json::to_value(drain)),
        serde_json::to_value(tally),
        serde_json::to_value(drained),
        serde_json::to_value(forgot),
    ]
    .into_iter()
    .map(Result::unwrap)
    .collect()
}
