//! The send role in process: 2,000 messages made from one template (as a capacity trial's are), paced at
//! 10,000 a second on a 5 ms grid, over a Unix socket pair to a thread that reads them; then the close,
//! which waits until the reader has every byte. Prints the sent and closed records, and what the reader got.
//!
//! `cargo run --release --example send`

use std::io::{BufRead, BufReader};
use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixStream;
use syslogbench_rig::clock::now;
use syslogbench_rig::send::{close, send, CloseRequest, Link, SendRequest};
use syslogbench_rig::templates::Templates;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (ours, theirs) = UnixStream::pair()?;
    let reader = std::thread::spawn(move || {
        BufReader::new(theirs)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<String>>()
    });
    // Trial 3's message of index 0: its nine index digits follow "q=3".
    let line =
        "<13>Nov 27 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=3000000001 f=1 v=5 xxxx\n";
    let index_at = (line.find("q=3").expect("a key") + 3) as u64;
    let start = now() + 0.05;
    let request = SendRequest {
        file: String::new(),
        ends: None,
        templates: Some(Templates {
            lines: vec![line.into()],
            index_at: vec![index_at],
            stream_seed: 7,
        }),
        count: 2000,
        rate: 10_000.0,
        start,
        give_up: Some(start + 10.0),
        tick_s: 0.005,
        phase_s: 0.0,
    };
    let mut link = Link {
        fd: ours.into_raw_fd(),
        udp: false,
        tls: None,
    };
    let sent = send(&mut link, &request)?;
    println!("{}", serde_json::to_string(&sent)?);
    let closed = close(
        &mut link,
        &CloseRequest {
            drain_timeout_s: 5.0,
        },
    );
    println!("{}", serde_json::to_string(&closed)?);
    let lines = reader.join().expect("the reader thread");
    println!(
        "the reader got {} lines; the last: {}",
        lines.len(),
        lines.last().map_or("none", String::as_str)
    );
    Ok(())
}
