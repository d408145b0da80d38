//! syslogbench's compiled rig: the hot path of a run and of a capacity trial.
//!
//! One binary, three roles, each driven by the Python rig (syslogbench/rig) over stdin and stdout with one
//! JSON record per line (the records are in `record.rs`, and in syslogbench/model/rigrecord.py):
//! - `send`: the open-loop sender (TCP, UDP, TLS), burst or paced;
//! - `follow`: the output follower of a capacity trial (latency in an HdrHistogram);
//! - `reconcile`: a run's final count of every output line against the senders' ledgers.

mod reconcile;

use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!(
        "usage: syslogbench-rig send | follow | reconcile  (one JSON request per line on stdin)"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let role = std::env::args().nth(1).unwrap_or_default();
    let result = match role.as_str() {
        "reconcile" => reconcile::main(),
        _ => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("syslogbench-rig {role}: {error}");
            ExitCode::from(3)
        }
    }
}
