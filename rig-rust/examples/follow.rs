//! The follow role in process: a thread writes trial 2's messages of two senders into an output file on
//! their schedule (500 a second each, for a second), as a daemon would; the follower follows the trial
//! until the host's expect request (written into a pipe, as the Python rig writes it on stdin) says every
//! message has arrived. Prints the tally record.
//!
//! `cargo run --release --example follow`

use std::io::Write;
use syslogbench_rig::clock::{now, sleep_until};
use syslogbench_rig::follow::{trial, Output, TrialRequest};
use syslogbench_rig::io::LineReader;
use syslogbench_rig::key::TRIAL_SEQ_SPAN;

const TRIAL: u64 = 2;
const MESSAGES: u64 = 500;
const RATE: f64 = 500.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!(
        "syslogbench-rig-example-follow-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("test.example.all.log");
    std::fs::write(&path, b"")?;
    let mut output = Output::new(&dir, false)?;
    output.skip_to_end();

    let start = now() + 0.1;
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || -> std::io::Result<()> {
            let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
            for index in 0..MESSAGES {
                sleep_until(start + index as f64 / RATE);
                let seq = TRIAL * TRIAL_SEQ_SPAN + index + 1;
                for sender in [1, 2] {
                    writeln!(file, "Nov 27 10:00:00 host1 bench[{sender}]: syslogbench h=1 s={sender} q={seq} f=1 v=5 xxxx")?;
                }
            }
            Ok(())
        })
    };

    // The host's side: what each sender says it sent, on the follower's request channel.
    let mut ends = [0i32; 2];
    // SAFETY: a pipe into an array we own.
    if unsafe { libc::pipe(ends.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    let expect = format!(
        "{{\"op\":\"expect\",\"sent\":{{\"host1-s1\":{MESSAGES},\"host1-s2\":{MESSAGES}}}}}\n"
    );
    // SAFETY: our bytes into the pipe's write end.
    unsafe { libc::write(ends[1], expect.as_ptr().cast(), expect.len()) };
    let mut requests = LineReader::on(ends[0]);

    let request = TrialRequest {
        trial: TRIAL,
        rate: RATE,
        messages: MESSAGES,
        start,
        bound_s: 0.5,
        give_up: start + 10.0,
        ledger_wait_s: 5.0,
        senders: vec!["host1-s1".into(), "host1-s2".into()],
        tick_s: 0.0,
        phases_s: vec![0.0, 0.0],
        copies: false,
    };
    let tally = trial(&mut output, &mut requests, request)?;
    writer.join().expect("the writer thread")?;
    println!("{}", serde_json::to_string(&tally)?);
    let received: Vec<u64> = tally.senders.iter().map(|s| s.received).collect();
    println!(
        "ended: {}; received {received:?}, {} late; latency p50 {:?} ms, p99 {:?} ms over {} sampled",
        tally.ended,
        tally.senders.iter().map(|s| s.late).sum::<u64>(),
        tally.latency_ms.p50,
        tally.latency_ms.p99,
        tally.sampled
    );
    // SAFETY: closing the pipe this example opened.
    unsafe {
        libc::close(ends[0]);
        libc::close(ends[1]);
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
