//! Why a reconciliation failed: the binary prints it as "syslogbench-rig reconcile: <this>" and exits 3, and
//! the Python side (syslogbench/rig/compiled.py `call`) quotes it after "syslogbench-rig reconcile failed: ".

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub enum ReconcileError {
    /// Arguments other than none, --check-request or --example.
    Usage,
    ReadRequest(io::Error),
    NotARequest(serde_json::Error),
    Encode(serde_json::Error),
    WriteAnswer(io::Error),
    /// A tail of the tails table that is not "f=F v=V " and its padding of x.
    NotATail {
        tail: String,
    },
    TailLength {
        tail: String,
        length: u32,
    },
    TailTwice {
        tail: String,
    },
    NoMessages,
    /// A sender whose numbers' lengths no tails table has.
    NoTailsTable {
        host: u64,
        sender: u64,
        host_digits: u32,
        sender_digits: u32,
    },
    Proof(regex::Error),
    ProofGroup(usize),
    PerSender(std::num::TryFromIntError),
    BeyondMemory,
    MasksOpen {
        path: String,
        error: io::Error,
    },
    MasksSize(io::Error),
    MasksLength {
        path: String,
        size: u64,
        row: usize,
    },
    MasksRead(io::Error),
    MaskValues {
        index: usize,
    },
    /// An output file (or its directory) that could not be read.
    Read {
        path: PathBuf,
        error: io::Error,
    },
    Create {
        path: String,
        error: io::Error,
    },
    WriteArrived(io::Error),
}

impl ReconcileError {
    /// An output file's read error, for map_err.
    pub fn read(path: &Path) -> impl Fn(io::Error) -> ReconcileError + '_ {
        move |error| ReconcileError::Read {
            path: path.to_path_buf(),
            error,
        }
    }
}

impl fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ReconcileError::*;
        match self {
            Usage => write!(
                f,
                "usage: syslogbench-rig reconcile [--check-request | --example] < request.json"
            ),
            ReadRequest(e) => write!(f, "cannot read the request: {e}"),
            NotARequest(e) => write!(f, "not a reconcile request: {e}"),
            Encode(e) => write!(f, "{e}"),
            WriteAnswer(e) => write!(f, "cannot write the answer: {e}"),
            NotATail { tail } => write!(
                f,
                "tails table: {tail:?} is not \"f=F v=V \" and its padding of x"
            ),
            TailLength { tail, length } => {
                write!(f, "tails table: {tail:?}: a q length of {length}")
            }
            TailTwice { tail } => write!(f, "tails table: {tail:?} given twice"),
            NoMessages => write!(f, "per_sender is 0: every sender sends at least its DONE"),
            NoTailsTable {
                host,
                sender,
                host_digits,
                sender_digits,
            } => write!(
                f,
                "no tails table for host{host}-s{sender}'s digits ({host_digits}, {sender_digits})"
            ),
            Proof(e) => write!(f, "the proof pattern: {e}"),
            ProofGroup(group) => write!(f, "the proof pattern has no group {group}"),
            PerSender(e) => write!(f, "{e}"),
            BeyondMemory => write!(f, "per_sender x senders is beyond memory"),
            MasksOpen { path, error } => write!(f, "the masks file {path}: {error}"),
            MasksSize(e) => write!(f, "{e}"),
            MasksLength { path, size, row } => write!(
                f,
                "the masks file {path}: {size} bytes, not {row} per sender"
            ),
            MasksRead(e) => write!(f, "the masks file: {e}"),
            MaskValues { index } => write!(
                f,
                "the masks file: sender {index}'s mask is not 0 and 1 with index 0 unused"
            ),
            Read { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            Create { path, error } => write!(f, "cannot write {path}: {error}"),
            WriteArrived(e) => write!(f, "cannot write the arrival tables: {e}"),
        }
    }
}

impl std::error::Error for ReconcileError {}
