//! `follow`: the output follower of a capacity run. It reads only what was appended (whole lines), parses
//! each line's key once, and counts per sender and per trial: received, late, duplicated (or copies), and
//! lines of other trials (stale). Latency, from each message's intended send time to the moment its bytes
//! were read, goes into an HdrHistogram.
//!
//! It wakes on inotify when the daemon writes to a file of the latency sample, and looks at every other
//! file once a poll interval. A daemon that writes its 192 split files a line at a time (syslog-ng, rsyslog)
//! makes one inotify event per line, and nearly every one wakes the follower (about 13 us here): above
//! SAMPLE_LINES_S the follower watches only one split file in K (by facility x 8 + severity, which every
//! sender draws uniformly at random, so the sample is a uniform one of the messages), and reads the others
//! every poll interval, which decides late-or-not to within that interval but gives no latency figure.
//!
//! - args.rs: the command line; records.rs: the requests and records; examples.rs: one of each;
//! - output.rs: the files followed and what was appended to them; names.rs: which files are outputs;
//!   sample.rs: which files wake the follower, and the poll of the others; events.rs: inotify and the wait;
//! - trial.rs: following one trial; tally.rs: counting its arrivals; looks.rs: how finely they were seen;
//! - drain.rs: reading until the output is quiet; error.rs: why a follower failed.

mod args;
mod drain;
mod error;
mod events;
mod examples;
mod looks;
mod names;
mod output;
mod records;
mod sample;
mod tally;
#[cfg(test)]
mod tests;
mod trial;

pub use drain::drain;
pub use error::FollowError;
pub use examples::examples;
pub use output::Output;
pub use records::{
    DrainRequest, DrainedRecord, ExpectRequest, ForgotRecord, TallyRecord, TrialRequest,
};
pub use trial::trial;

use crate::io::{emit, parse, split_op, LineReader};
use args::Args;

pub fn main(argv: &[String]) -> Result<(), FollowError> {
    let args = Args::parse(argv)?;
    let mut output = Output::new(&args.directory, args.everywhere)?;
    output.skip_to_end();
    let mut requests = LineReader::stdin();
    emit(&serde_json::json!({"op": "following"}));
    while let Some(line) = requests.next_line() {
        let (op, body) = split_op(&line)?;
        match op.as_str() {
            "trial" => emit(&trial(&mut output, &mut requests, parse(&body)?)?),
            "drain" => emit(&drain(&mut output, &parse(&body)?)),
            "forget" => emit(&ForgotRecord {
                op: "forgot".into(),
                files: output.forget(),
            }),
            "end" => return Ok(()),
            other => return Err(FollowError::UnknownOp(other.into())),
        }
    }
    Ok(())
}
