//! The filter's masks: which of each sender's sequence numbers must arrive (a file Python wrote).

use super::error::ReconcileError;
use super::records::Request;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// Each sender's mask in turn, from the masks file (one sender's at a time in memory).
pub struct Masks {
    file: Option<File>,
    row: usize,
    data: Vec<u8>,
}

impl Masks {
    pub fn open(request: &Request) -> Result<Self, ReconcileError> {
        let row = request.per_sender as usize + 1;
        let file = match &request.masks {
            None => None,
            Some(path) => {
                let file = File::open(path).map_err(|error| ReconcileError::MasksOpen {
                    path: path.clone(),
                    error,
                })?;
                let size = file.metadata().map_err(ReconcileError::MasksSize)?.len();
                if size != (row * request.senders.len()) as u64 {
                    return Err(ReconcileError::MasksLength {
                        path: path.clone(),
                        size,
                        row,
                    });
                }
                Some(file)
            }
        };
        let data = vec![0; if file.is_some() { row } else { 0 }];
        Ok(Masks { file, row, data })
    }

    /// Sender `index`'s mask (None: every number must arrive).
    pub fn get(&mut self, index: usize) -> Result<Option<&[u8]>, ReconcileError> {
        let Some(file) = &mut self.file else {
            return Ok(None);
        };
        file.seek(SeekFrom::Start((index * self.row) as u64))
            .and_then(|_| file.read_exact(&mut self.data))
            .map_err(ReconcileError::MasksRead)?;
        if self.data[0] != 0 || self.data.iter().any(|&m| m > 1) {
            return Err(ReconcileError::MaskValues { index });
        }
        Ok(Some(&self.data))
    }
}
