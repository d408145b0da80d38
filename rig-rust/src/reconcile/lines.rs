//! A message line, as the reconciliation reads it: `syslogbench h=H s=S q=Q <tail>`, the first place on a
//! line where that holds (the key as key.rs parses it, for every role), the tail being the rest of the line.

use crate::key::{field, finder, shown, Shown, MARK};
use memchr::memchr;

pub const FACILITIES: usize = 24;
pub const SEVERITIES: usize = 8;

/// A message's key at the start of `text` (just after the mark), then a space and its tail (the rest of
/// `text`).
pub fn message(text: &[u8]) -> Option<(Shown<'_>, &[u8])> {
    let key = shown(text)?;
    Some((key, key.rest.strip_prefix(b" ")?))
}

/// `f=\d+ v=\d+ ` at the start of the tail: (facility, severity, what follows).
pub fn fields(tail: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let (facility, rest) = field(tail, b"f=")?;
    let (severity, rest) = field(rest, b" v=")?;
    Some((facility, severity, rest.strip_prefix(b" ")?))
}

/// The tail is exactly `f=\d+ v=\d+ DONE`.
pub fn is_done_tail(tail: &[u8]) -> bool {
    fields(tail).is_some_and(|(_, _, rest)| rest == b"DONE")
}

/// Every message line of a block, in order: its first whole key and its tail (up to its newline).
pub fn each_key(block: &[u8], mut found: impl FnMut(&Shown, &[u8])) {
    let mut pos = 0;
    while let Some(i) = finder().find(&block[pos..]) {
        let at = pos + i + MARK.len();
        let end = memchr(b'\n', &block[at..]).map_or(block.len(), |j| at + j);
        match message(&block[at..end]) {
            Some((key, tail)) => {
                found(&key, tail);
                pos = end;
            }
            None => pos = pos + i + 1,
        }
    }
}
