//! syslogbench's compiled rig: the hot path of a run and of a capacity trial.
//!
//! One binary, three roles, each driven by the Python rig (syslogbench/rig) over stdin and stdout with one
//! JSON record per line (each role's records are in its module; syslogbench/model/rigrecord.py reads them):
//! - `send`: the open-loop sender (TCP, UDP, TLS), burst or paced;
//! - `follow`: the output follower of a capacity trial (latency in an HdrHistogram);
//! - `reconcile`: a run's final count of every output line against the senders' ledgers.
//!
//! `examples` prints one example of every record of the three roles, one JSON object per line with its op, and
//! `check` reads records strictly, for the contract test (tests/unit/test_rigrecord.py). The roles are the library's (lib.rs), one module folder each.

use std::process::ExitCode;
use syslogbench_rig::{check, follow, reconcile, send};

fn usage() -> ExitCode {
    eprintln!("usage: syslogbench-rig send|follow|reconcile|examples|check [ARGS]  (requests: one JSON object per line on stdin)");
    ExitCode::from(2)
}

/// The role's exit: 0, or its error on stderr as "syslogbench-rig ROLE: why" and 3 (syslogbench/rig/compiled.py
/// quotes that line).
fn finish<E: std::fmt::Display>(role: &str, result: Result<(), E>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("syslogbench-rig {role}: {error}");
            ExitCode::from(3)
        }
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let role = argv.get(1).cloned().unwrap_or_default();
    let rest = argv.get(2..).unwrap_or(&[]);
    match role.as_str() {
        "send" => finish(&role, send::main(rest)),
        "follow" => finish(&role, follow::main(rest)),
        "reconcile" => finish(&role, reconcile::main(rest)),
        "examples" => {
            for example in check::examples() {
                println!("{example}");
            }
            ExitCode::SUCCESS
        }
        "check" => {
            check::main();
            ExitCode::SUCCESS
        }
        _ => usage(),
    }
}
