//! Occurrences of each sequence number of each sender, in as little memory as the run allows, and what a
//! sender's row of them says: expected, received, unexpected, copies.

use std::collections::HashMap;

/// Occurrences of each sequence number of each sender, saturating at 255: one bit each (arrived or not) and
/// a map of the numbers that arrived more than once, while there are few of those (the usual run: the bits
/// stay in the CPU's cache where a byte each would not); a byte each once the map passes `limit`. Memory: an
/// eighth of a byte per number, at most one byte and a few hundredths while it turns into bytes (a sender at
/// a time, each sender's bits freed as its bytes are filled).
pub struct Tally {
    row: usize,
    pub(super) seen: Vec<Vec<u64>>,
    pub(super) more: HashMap<usize, u8>,
    pub(super) dense: Vec<Vec<u8>>,
    limit: usize,
}

impl Tally {
    pub fn new(row: usize, senders: usize) -> Option<Self> {
        let words = row.div_ceil(64);
        words.checked_mul(64)?.checked_mul(senders.max(1))?;
        Some(Tally {
            row,
            seen: vec![vec![0; words]; senders],
            more: HashMap::new(),
            dense: Vec::new(),
            limit: (row * senders / 1024).max(1 << 16),
        })
    }

    #[inline]
    pub fn add(&mut self, index: usize, number: usize) {
        if !self.dense.is_empty() {
            let count = &mut self.dense[index][number];
            *count = count.saturating_add(1);
            return;
        }
        let (word, bit) = (&mut self.seen[index][number >> 6], 1u64 << (number & 63));
        if *word & bit == 0 {
            *word |= bit;
            return;
        }
        let count = self.more.entry(index * self.row + number).or_insert(1);
        *count = count.saturating_add(1);
        if self.more.len() > self.limit {
            self.densify();
        }
    }

    fn densify(&mut self) {
        let mut dense = Vec::with_capacity(self.seen.len());
        for (index, bits) in self.seen.iter_mut().enumerate() {
            let mut row = vec![0u8; self.row];
            expand(bits, &mut row);
            *bits = Vec::new();
            let base = index * self.row;
            self.more.retain(|&at, &mut count| {
                let mine = (base..base + self.row).contains(&at);
                if mine {
                    row[at - base] = count;
                }
                !mine
            });
            dense.push(row);
        }
        (self.seen, self.more, self.dense) = (Vec::new(), HashMap::new(), dense);
    }

    /// One sender's occurrences (row bytes, index 0 unused) into out.
    pub fn row(&self, index: usize, out: &mut Vec<u8>) {
        out.clear();
        if !self.dense.is_empty() {
            out.extend_from_slice(&self.dense[index]);
            return;
        }
        out.resize(self.row, 0);
        expand(&self.seen[index], out);
        let base = index * self.row;
        for (&at, &count) in &self.more {
            if (base..base + self.row).contains(&at) {
                out[at - base] = count;
            }
        }
    }

    pub fn clear(&mut self) {
        self.seen.iter_mut().for_each(|bits| bits.fill(0));
        self.more.clear();
        self.dense.iter_mut().for_each(|row| row.fill(0));
    }
}

/// 1 at each set bit's place in out.
fn expand(bits: &[u64], out: &mut [u8]) {
    for (w, &word) in bits.iter().enumerate() {
        let mut rest = word;
        while rest != 0 {
            out[w * 64 + rest.trailing_zeros() as usize] = 1;
            rest &= rest - 1;
        }
    }
}

/// (expected, expected that arrived, not expected that arrived) over sequence numbers 1..; counts[0] is 0.
pub fn arrivals(counts: &[u8], mask: Option<&[u8]>) -> (u64, u64, u64) {
    match mask {
        None => {
            let expected = counts.len() as u64 - 1;
            (
                expected,
                counts.iter().filter(|&&c| c != 0).count() as u64,
                0,
            )
        }
        Some(mask) => {
            let (mut expected, mut hits, mut arrived) = (0u64, 0u64, 0u64);
            for (&c, &m) in counts.iter().zip(mask) {
                expected += u64::from(m);
                arrived += u64::from(c != 0);
                hits += u64::from(c != 0 && m == 1);
            }
            (expected, hits, arrived - hits)
        }
    }
}

/// Every occurrence in a row: the copies of its messages, first sightings included.
pub fn copies(counts: &[u8]) -> u64 {
    counts.iter().map(|&c| u64::from(c)).sum()
}
