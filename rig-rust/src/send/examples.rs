//! One example of every record and request of the sender, for the contract test (`syslogbench-rig examples`).

use super::records::{
    CloseRequest, ClosedRecord, ConnectedRecord, FailedRecord, SendRecord, SendRequest,
};
use crate::io::with_op;
use crate::templates::Templates;

/// One example of every record, for the contract test (syslogbench/model/rigrecord.py reads them strictly).
pub fn examples() -> Vec<serde_json::Value> {
    // A trial's request: its messages made from templates (a run's names a file and its offsets instead).
    let request = SendRequest {
        file: String::new(),
        ends: None,
        templates: Some(Templates {
            lines: vec![
                "<13>Nov 27 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=3000000001 f=1 v=5 x\n"
                    .into(),
            ],
            index_at: vec![59],
            stream_seed: 1_234_567_890_123,
        }),
        count: 1000,
        rate: 250.0,
        start: 1.8e9,
        give_up: Some(1.8e9 + 7.0),
        tick_s: 0.005,
        phase_s: 0.00125,
    };
    let record = SendRecord {
        op: "sent".into(),
        intended: 1000,
        sent: 1000,
        bytes: 120_000,
        pace_s: 3.996,
        cpu_s: 0.01,
        cpu_system_s: 0.006,
        batches: 800,
        behind_max_s: 0.0004,
        behind_end_s: 0.0001,
        oversleep_max_s: 0.0002,
        last_at: 1.8e9 + 3.996,
        status: "ok".into(),
    };
    let closed = ClosedRecord {
        op: "closed".into(),
        left_bytes: 0,
        drain_s: 0.01,
        cpu_s: 0.2,
        peer_closed: Some(true),
    };
    let connected = ConnectedRecord {
        op: "connected".into(),
        transport: "tls".into(),
        tls_version: Some("TLSv1.3".into()),
        tls_cipher: Some("TLS13_AES_256_GCM_SHA384".into()),
    };
    let failed = FailedRecord {
        op: "failed".into(),
        error: "send: Connection reset by peer".into(),
    };
    let close = CloseRequest {
        drain_timeout_s: 120.0,
    };
    [
        with_op("send", serde_json::to_value(request)),
        with_op("close", serde_json::to_value(close)),
        serde_json::to_value(record),
        serde_json::to_value(closed),
        serde_json::to_value(connected),
        serde_json::to_value(failed),
    ]
    .into_iter()
    .map(Result::unwrap)
    .collect()
}
