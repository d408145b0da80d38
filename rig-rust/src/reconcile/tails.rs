//! The whole tails: what an ordinary message carries after its key when it arrived as it was sent.

use super::error::ReconcileError;
use super::lines::{fields, FACILITIES, SEVERITIES};
use super::records::TailTable;
use crate::key::plain;

/// One TailTable, indexed by PRI (facility x 8 + severity): (padding length, the q lengths it is whole with).
pub struct Tails {
    pub by_pri: Vec<Vec<(usize, u64)>>,
}

impl Tails {
    pub fn new(table: &TailTable) -> Result<Self, ReconcileError> {
        let mut by_pri = vec![Vec::new(); FACILITIES * SEVERITIES];
        for (tail, lengths) in &table.whole {
            let bad = || ReconcileError::NotATail { tail: tail.clone() };
            let (facility, severity, padding) = fields(tail.as_bytes()).ok_or_else(bad)?;
            let (facility, severity) = (
                plain(facility).ok_or_else(bad)?,
                plain(severity).ok_or_else(bad)?,
            );
            if facility as usize >= FACILITIES || severity as usize >= SEVERITIES {
                return Err(bad());
            }
            if padding.is_empty() || padding.iter().any(|&b| b != b'x') {
                return Err(bad());
            }
            let mut mask = 0u64;
            for &length in lengths {
                if !(1..64).contains(&length) {
                    return Err(ReconcileError::TailLength {
                        tail: tail.clone(),
                        length,
                    });
                }
                mask |= 1 << length;
            }
            let slot = &mut by_pri[facility as usize * SEVERITIES + severity as usize];
            if slot.iter().any(|&(size, _)| size == padding.len()) {
                return Err(ReconcileError::TailTwice { tail: tail.clone() });
            }
            slot.push((padding.len(), mask));
        }
        Ok(Tails { by_pri })
    }

    /// The q lengths with which an ordinary message's tail is whole (0: none).
    pub fn lengths(&self, tail: &[u8], xs: &[u8]) -> u64 {
        let Some((facility, severity, padding)) = fields(tail) else {
            return 0;
        };
        let (Some(facility), Some(severity)) = (plain(facility), plain(severity)) else {
            return 0;
        };
        if facility as usize >= FACILITIES || severity as usize >= SEVERITIES {
            return 0;
        }
        for &(size, mask) in &self.by_pri[facility as usize * SEVERITIES + severity as usize] {
            if padding.len() == size && xs.get(..size) == Some(padding) {
                return mask;
            }
        }
        0
    }

    /// The longest padding of any entry.
    pub fn longest(&self) -> Option<usize> {
        self.by_pri.iter().flatten().map(|&(size, _)| size).max()
    }
}
