//! `check`: read every line of stdin as the record or request its op names, refusing unknown and missing
//! keys, and say "ok" or why not, one line each (the contract test, tests/unit/test_rigrecord.py).

use crate::follow::{
    DrainRequest, DrainedRecord, ExpectRequest, ForgotRecord, TallyRecord, TrialRequest,
};
use crate::io::{parse, split_op, BadRequest, LineReader};
use crate::send::{
    CloseRequest, ClosedRecord, ConnectedRecord, FailedRecord, SendRecord, SendRequest,
};

/// Why a line is not the record or request it says it is.
#[derive(Debug)]
pub enum CheckError {
    Bad(BadRequest),
    NoSuchOp(String),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Bad(error) => write!(f, "{error}"),
            CheckError::NoSuchOp(op) => write!(f, "no record or request has op {op:?}"),
        }
    }
}

impl std::error::Error for CheckError {}

impl From<BadRequest> for CheckError {
    fn from(error: BadRequest) -> Self {
        CheckError::Bad(error)
    }
}

fn check(line: &str) -> Result<(), CheckError> {
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
        other => return Err(CheckError::NoSuchOp(other.into())),
    }
    .map_err(CheckError::Bad)
}

/// Every line checked, its answer on stdout; it ends when stdin does.
pub fn main() {
    let mut lines = LineReader::stdin();
    while let Some(line) = lines.next_line() {
        match check(&line) {
            Ok(()) => println!("ok"),
            Err(error) => println!("{error}"),
        }
    }
}
