//! done.log: where our own configs write every sender's DONE, and nothing else.

use super::blocks::line_blocks;
use super::error::ReconcileError;
use super::lines::{fields, message};
use crate::key::{finder, MARK};
use std::collections::HashSet;
use std::path::Path;

pub const DONE_LOG: &str = "done.log";

pub struct DoneLog {
    pub senders: HashSet<(u64, u64)>,
    pub lines: u64,
    pub extra: u64,
}

/// done.log: the senders whose DONE is in it, its DONE lines, and its other lines (lines as Python's
/// bytes.splitlines gives them: \n, \r\n and \r end one).
pub fn read_done_log(path: &Path, block_bytes: usize) -> Result<DoneLog, ReconcileError> {
    let mut done = DoneLog {
        senders: Default::default(),
        lines: 0,
        extra: 0,
    };
    if !path.exists() {
        return Ok(done);
    }
    line_blocks(path, block_bytes, false, |block| {
        for line in splitlines(block) {
            match done_of(line) {
                Some(sender) => {
                    done.lines += 1;
                    if let Some(sender) = sender {
                        done.senders.insert(sender);
                    }
                }
                None => done.extra += 1,
            }
        }
    })
    .map_err(ReconcileError::read(path))?;
    Ok(done)
}

fn splitlines(block: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = block;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match rest.get(end) {
            Some(b'\r') if rest.get(end + 1) == Some(&b'\n') => 2,
            Some(_) => 1,
            None => 0,
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// `syslogbench h=(\d+) s=(\d+) q=(\d+) f=\d+ v=\d+ DONE` anywhere in the line: Some(its sender, None where
/// the numbers are no sender's: key.rs), or None.
#[allow(clippy::option_option)]
fn done_of(line: &[u8]) -> Option<Option<(u64, u64)>> {
    let mut pos = 0;
    while let Some(i) = finder().find(&line[pos..]) {
        let at = pos + i + MARK.len();
        if let Some((key, tail)) = message(&line[at..]) {
            if fields(tail).is_some_and(|(_, _, rest)| rest.starts_with(b"DONE")) {
                return Some(key.sender());
            }
        }
        pos += i + 1;
    }
    None
}
