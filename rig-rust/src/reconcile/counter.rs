//! Counting message lines: each one's sender (by its key), whole or cut (by its tail), and the proof.

use super::error::ReconcileError;
use super::lines::{each_key, fields, is_done_tail};
use super::records::Request;
use super::tails::Tails;
use super::tally::Tally;
use std::collections::HashMap;

/// The senders' keys: a dense table where the numbers are small (every run's), else a map.
enum Lookup {
    Dense { width: u64, table: Vec<u32> },
    Map(HashMap<(u64, u64), u32>),
}

impl Lookup {
    fn new(senders: &[[u64; 2]]) -> Self {
        let width = senders.iter().map(|s| s[1]).max().unwrap_or(0) + 1;
        let height = senders.iter().map(|s| s[0]).max().unwrap_or(0) + 1;
        match width.checked_mul(height) {
            Some(size) if size <= 1 << 22 => {
                let mut table = vec![u32::MAX; size as usize];
                for (i, s) in senders.iter().enumerate() {
                    table[(s[0] * width + s[1]) as usize] = i as u32;
                }
                Lookup::Dense { width, table }
            }
            _ => Lookup::Map(
                senders
                    .iter()
                    .enumerate()
                    .map(|(i, s)| ((s[0], s[1]), i as u32))
                    .collect(),
            ),
        }
    }

    fn get(&self, host: u64, sender: u64) -> Option<usize> {
        match self {
            Lookup::Dense { width, table } => {
                if sender >= *width {
                    return None;
                }
                let index = host.checked_mul(*width)?.checked_add(sender)?;
                table
                    .get(index as usize)
                    .filter(|&&i| i != u32::MAX)
                    .map(|&i| i as usize)
            }
            Lookup::Map(map) => map.get(&(host, sender)).map(|&i| i as usize),
        }
    }
}

/// The proof pattern, compiled, and the two groups that must be equal.
type Compiled = (regex::bytes::Regex, Option<[usize; 2]>);

/// Occurrences of every sequence number of every sender in whole lines (saturating at 255), each sender's
/// lines that arrived cut or mangled, and the lines of no sender.
pub struct Counter {
    per_sender: u64,
    lookup: Lookup,
    tails: Vec<Tails>,
    tails_of: Vec<usize>,
    xs: Vec<u8>,
    pub proof: Option<Compiled>,
    tally: Tally,
    row_buf: Vec<u8>,
    pub cut: Vec<u64>,
    pub unknown: u64,
}

impl Counter {
    pub fn new(request: &Request) -> Result<Self, ReconcileError> {
        if request.per_sender == 0 {
            return Err(ReconcileError::NoMessages);
        }
        let tails = request
            .tails
            .iter()
            .map(Tails::new)
            .collect::<Result<Vec<_>, _>>()?;
        let tails_of = tables_of(request)?;
        let longest = tails.iter().filter_map(Tails::longest).max();
        let proof = request.proof.as_ref().map(compile).transpose()?;
        let row = usize::try_from(request.per_sender + 1).map_err(ReconcileError::PerSender)?;
        let tally = Tally::new(row, request.senders.len()).ok_or(ReconcileError::BeyondMemory)?;
        Ok(Counter {
            per_sender: request.per_sender,
            lookup: Lookup::new(&request.senders),
            tails,
            tails_of,
            xs: vec![b'x'; longest.unwrap_or(0)],
            proof,
            tally,
            row_buf: Vec::new(),
            cut: vec![0; request.senders.len()],
            unknown: 0,
        })
    }

    /// The bytes of a sender's row: one per sequence number, index 0 unused.
    pub fn row(&self) -> usize {
        self.per_sender as usize + 1
    }

    /// Counts every message line of a block of whole lines: (message lines, those that still show their
    /// facility and severity).
    pub fn add(&mut self, block: &[u8]) -> (u64, i64) {
        let (mut lines, mut shown) = (0u64, 0i64);
        each_key(block, |key, tail| {
            lines += 1;
            shown += 1;
            let sender = key
                .key()
                .and_then(|k| Some((self.lookup.get(k.host, k.sender)?, k.seq)));
            let Some((index, number)) =
                sender.filter(|&(_, number)| (1..=self.per_sender).contains(&number))
            else {
                self.unknown += 1;
                shown -= i64::from(fields(tail).is_none());
                return;
            };
            let whole = if number == self.per_sender {
                is_done_tail(tail)
            } else {
                let mask = self.tails[self.tails_of[index]].lengths(tail, &self.xs);
                key.seq.len() < 64 && mask >> key.seq.len() & 1 == 1
            };
            if whole {
                self.tally.add(index, number as usize);
            } else {
                self.cut[index] += 1;
                shown -= i64::from(fields(tail).is_none());
            }
        });
        (lines, shown)
    }

    /// Matches of the proof in a block (0 without one).
    pub fn proven(&self, block: &[u8]) -> i64 {
        match &self.proof {
            None => 0,
            Some((pattern, None)) => pattern.find_iter(block).count() as i64,
            Some((pattern, Some([a, b]))) => pattern
                .captures_iter(block)
                .filter(|c| c.get(*a).map(|m| m.as_bytes()) == c.get(*b).map(|m| m.as_bytes()))
                .count() as i64,
        }
    }

    /// A sender's occurrences of each sequence number (index 0 unused), one sender's at a time.
    pub fn counts(&mut self, index: usize) -> &[u8] {
        self.tally.row(index, &mut self.row_buf);
        &self.row_buf
    }

    pub fn clear(&mut self) {
        self.tally.clear();
        self.cut.fill(0);
        self.unknown = 0;
    }
}

/// Each sender's tails table: the one for the lengths of its numbers.
fn tables_of(request: &Request) -> Result<Vec<usize>, ReconcileError> {
    let mut tails_of = Vec::with_capacity(request.senders.len());
    for s in &request.senders {
        let (host, sender) = (s[0].to_string().len() as u32, s[1].to_string().len() as u32);
        let table = request
            .tails
            .iter()
            .position(|t| (t.host_digits, t.sender_digits) == (host, sender))
            .ok_or(ReconcileError::NoTailsTable {
                host: s[0],
                sender: s[1],
                host_digits: host,
                sender_digits: sender,
            })?;
        tails_of.push(table);
    }
    Ok(tails_of)
}

/// The proof pattern as a byte regex (no Unicode classes), its equal groups checked.
fn compile(proof: &super::records::Proof) -> Result<Compiled, ReconcileError> {
    let pattern = regex::bytes::RegexBuilder::new(&proof.source)
        .unicode(false)
        .build()
        .map_err(ReconcileError::Proof)?;
    if let Some([a, b]) = proof.same {
        if a.max(b) >= pattern.captures_len() {
            return Err(ReconcileError::ProofGroup(a.max(b)));
        }
    }
    Ok((pattern, proof.same))
}
