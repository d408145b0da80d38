//! `send`: the open-loop sender of one sender id, over a socket the Python rig connected.
//!
//! One code path for a run's burst (rate 0: everything due at once) and a paced trial: message i is due at
//! start + i/rate; a sender behind its schedule sends all that is due at once and never stretches the
//! schedule. Its lag is looked at every batch, not only at the last message, and goes into the record with
//! its CPU seconds and its oversleeps, so that a sender-bound trial can be told from a slow daemon.
//!
//! - args.rs: the command line; records.rs: the requests and records; examples.rs: one of each;
//! - link.rs: the socket and how messages go out on it (TCP, UDP, TLS); tls.rs: the TLS session;
//! - request.rs: one send request, its messages and its record; run.rs: the open loop and its pacing;
//! - close.rs: closing, and draining the send queue; error.rs: why a sender failed.

mod args;
mod close;
mod error;
mod examples;
mod link;
mod records;
mod request;
mod run;
#[cfg(test)]
mod tests;
mod tls;

pub use close::close;
pub use error::SendError;
pub use examples::examples;
pub use link::Link;
pub use records::{
    CloseRequest, ClosedRecord, ConnectedRecord, FailedRecord, SendRecord, SendRequest,
};
pub use request::send;

use crate::io::{emit, parse, split_op, LineReader};
use args::Args;
use link::{set_send_timeout, SEND_LOOK};
use tls::Tls;

pub fn main(argv: &[String]) -> Result<(), SendError> {
    let args = Args::parse(argv)?;
    set_send_timeout(args.fd, SEND_LOOK)?;
    let tls = if args.transport == "tls" {
        let ca = args.ca.as_deref().ok_or(SendError::NoCa)?;
        match Tls::connect(args.fd, ca, &args.server_name) {
            Ok(tls) => Some(tls),
            Err(error) => return fail(error.into()),
        }
    } else {
        None
    };
    emit(&ConnectedRecord {
        op: "connected".into(),
        transport: args.transport.clone(),
        tls_version: tls.as_ref().map(|t| t.version()),
        tls_cipher: tls.as_ref().map(|t| t.cipher()),
    });
    let mut link = Link {
        fd: args.fd,
        udp: args.transport == "udp",
        tls,
    };
    let mut requests = LineReader::stdin();
    while let Some(line) = requests.next_line() {
        let (op, body) = split_op(&line)?;
        match op.as_str() {
            "send" => match send(&mut link, &parse(&body)?) {
                Ok(record) => emit(&record),
                Err(error) => return fail(error),
            },
            "close" => {
                emit(&close(&mut link, &parse(&body)?));
                return Ok(());
            }
            other => return Err(SendError::UnknownOp(other.into())),
        }
    }
    Ok(())
}

/// Tell Python why (a failed record), then end with the same error.
fn fail(error: SendError) -> Result<(), SendError> {
    emit(&FailedRecord {
        op: "failed".into(),
        error: error.to_string(),
    });
    Err(error)
}
