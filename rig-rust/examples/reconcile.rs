//! The reconcile role in process: one of our own configs' outputs (a split file and done.log) from two
//! senders of three messages and a DONE each, in which one message is lost, one came twice and one was
//! cut, counted against the senders. Prints the answer, and each sender's counts.
//!
//! `cargo run --release --example reconcile`

use std::collections::BTreeMap;
use syslogbench_rig::reconcile::{reconcile, Mode, Request, TailTable};

/// A message as our senders write it (model/messages.py): q zero-padded to 7 digits, then its tail.
fn line(sender: u64, seq: u64, tail: &str) -> String {
    format!("Nov 27 10:00:00 host1 bench[{sender}]: syslogbench h=1 s={sender} q={seq:07} {tail}\n")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!(
        "syslogbench-rig-example-reconcile-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir)?;
    let whole = "f=1 v=5 xxxxxxxx";
    let done = "f=1 v=5 DONE";
    let split = [
        line(1, 1, whole),
        line(1, 2, whole),
        line(1, 3, "f=1 v=5 xxx"), // cut: truncated
        line(1, 4, done),
        line(2, 1, whole), // 2 is lost
        line(2, 3, whole),
        line(2, 3, whole), // twice: duplicated
        line(2, 4, done),
    ]
    .concat();
    std::fs::write(dir.join("test.example.facility.1.severity.5.log"), split)?;
    std::fs::write(dir.join("done.log"), line(1, 4, done) + &line(2, 4, done))?;

    let request = Request {
        mode: Mode::Split,
        log_dir: dir.to_string_lossy().into_owned(),
        senders: vec![[1, 1], [1, 2]],
        per_sender: 4,
        // What Python derives from messages.padding: the tail that ends an ordinary message whole, and the
        // lengths of q it does so with.
        tails: vec![TailTable {
            host_digits: 1,
            sender_digits: 1,
            whole: BTreeMap::from([(whole.to_string(), vec![7])]),
        }],
        masks: None,
        proof: None,
        forget: false,
        block_bytes: 0,
        arrived_out: None,
    };
    let answer = reconcile(&request)?;
    println!("{}", serde_json::to_string(&answer)?);
    for (sender, counts) in request.senders.iter().zip(&answer.senders) {
        println!(
            "host{}-s{}: {} of {} received, {} duplicated, {} truncated, DONE seen: {}",
            sender[0],
            sender[1],
            counts.received,
            counts.expected,
            counts.duplicated,
            counts.truncated,
            counts.done_seen
        );
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
