//! `check`: read every line of stdin as the record or request its op names, refusing unknown and missing
//! keys, and say "ok" or why not, one line each (the contract test, tests/unit/test_rigrecord.py).

use crate::follow::{
    DrainRequest, DrainedRecord, ExpectRequest, ForgotRecord, TallyRecord, TrialRequest,
};
use crate::io::{parse, split_op, LineReader};
use crate::send::{
    CloseRequest, ClosedRecord, ConnectedRecord, FailedRecord, SendRecord, SendRequest,
};

fn check(line: &str) -> Result<(), String> {
    let (op, body) = split_op(line)?;
    match op.as_str() {
        "send" => parse::<SendRequest>(&body).map(drop),
        "close" => parse::<CloseRequest>(&body).map(drop),
        "trial" => parse::<TrialRequest>(&body).map(drop),
        "expect" => parse::<ExpectRequest>(&body).map(drop),
        "drain" => parse::<DrainRequest>(&body).map(drop),
        // Records carry their op as a field.
        "sent" => parse::<SendRecord>(line).map(drop),
        "closed" => parse::<ClosedRecord>(line).map(drop),
        "connected" => parse::<ConnectedRecord>(line).map(drop),
        "failed" => parse::<FailedRecord>(line).map(drop),
        "tally" => parse::<TallyRecord>(line).map(drop),
        "drained" => parse::<DrainedRecord>(line).map(drop),
        "forgot" => parse::<ForgotRecord>(line).map(drop),
        other => Err(format!("no record or request has op {other:?}")),
    }
}

pub fn main() -> Result<(), String> {
    let mut lines = LineReader::stdin();
    while let Some(line) = lines.next_line() {
        match check(&line) {
            Ok(()) => println!("ok"),
            Err(error) => println!("{error}"),
        }
    }
    Ok(())
}
