//! Why a follower failed: the binary prints it as "syslogbench-rig follow: <this>" and exits 3.

use crate::io::BadRequest;
use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum FollowError {
    DirNeedsPath,
    UnknownArgument(String),
    Usage,
    Inotify(std::io::Error),
    /// A directory inotify could not watch for new files.
    Watch {
        directory: PathBuf,
        error: std::io::Error,
    },
    Request(BadRequest),
    UnknownOp(String),
    /// An op other than expect and stop while a trial is followed.
    UnknownOpInTrial(String),
    NamedTwice(String),
    Phases {
        phases: usize,
        senders: usize,
    },
    NotASender(String),
    Histogram(hdrhistogram::CreationError),
}

impl fmt::Display for FollowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FollowError::*;
        match self {
            DirNeedsPath => write!(f, "--dir needs a path"),
            UnknownArgument(word) => write!(f, "unknown argument {word}"),
            Usage => write!(f, "follow needs --dir PATH"),
            Inotify(error) => write!(f, "inotify: {error}"),
            Watch { directory, error } => {
                write!(f, "inotify on {}: {error}", directory.display())
            }
            Request(error) => write!(f, "{error}"),
            UnknownOp(op) => write!(f, "unknown op {op:?}"),
            UnknownOpInTrial(op) => write!(f, "unknown op {op:?} during a trial"),
            NamedTwice(name) => write!(f, "sender {name:?} is named twice"),
            Phases { phases, senders } => write!(f, "{phases} phases for {senders} senders"),
            NotASender(name) => write!(f, "{name:?} is not a sender id like host1-s1"),
            Histogram(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for FollowError {}

impl From<BadRequest> for FollowError {
    fn from(error: BadRequest) -> Self {
        FollowError::Request(error)
    }
}
