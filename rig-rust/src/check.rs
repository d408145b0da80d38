//! `check`: read every line of stdin as the record or request its op names, refusing unknown and missing
//! keys, and say "ok" or why not, one line each (the contract test, tests/unit/test_rigrecord.py); and
//! `examples`, one of each for every role, as that test reads them.

use crate::follow::{
    DrainRequest, DrainedRecord, ExpectRequest, ForgotRecord, TallyRecord, TrialRequest,
};
use crate::io::{parse, split_op, BadRequest, LineReader};
use crate::reconcile::Reconciled;
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
        // The reconcile role's answer has no op of its own: its example's line names it "reconciled".
        "reconciled" => parse::<Reconciled>(&body).map(drop),
        other => return Err(CheckError::NoSuchOp(other.into())),
    }
    .map_err(CheckError::Bad)
}

/// One example of every record and request of every role (send, follow, reconcile), each with its op: what
/// `syslogbench-rig examples` prints, one per line.
pub fn examples() -> Vec<serde_json::Value> {
    crate::send::examples()
        .into_iter()
        .chain(crate::follow::examples())
        .chain(crate::reconcile::examples())
        .collect()
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

#[cfg(test)]
mod tests {
    use super::{check, examples, CheckError};

    fn ops() -> Vec<String> {
        let op = |example: &serde_json::Value| example["op"].as_str().unwrap_or("").to_string();
        examples().iter().map(op).collect()
    }

    #[test]
    fn examples_cover_every_role_once_each() {
        let send = ["send", "close", "sent", "closed", "connected", "failed"];
        let follow = ["trial", "expect", "drain", "tally", "drained", "forgot"];
        let reconcile = ["reconciled"];
        assert_eq!(ops(), [&send[..], &follow, &reconcile].concat());
    }

    #[test]
    fn every_example_reads_strictly_as_its_op_says() {
        for example in examples() {
            let line = example.to_string();
            assert!(check(&line).is_ok(), "{line}: {:?}", check(&line));
            let mut surplus = example.clone();
            surplus["surplus"] = 1.into();
            let refused = check(&surplus.to_string()).unwrap_err().to_string();
            assert!(refused.contains("unknown field `surplus`"), "{refused}");
        }
    }

    #[test]
    fn an_op_no_role_has_is_refused() {
        assert!(matches!(
            check("{\"op\":\"reconcile\"}"),
            Err(CheckError::NoSuchOp(op)) if op == "reconcile"
        ));
    }
}
