//! The request channel: one JSON object per line on stdin, one record per line on stdout.

use serde::{de::DeserializeOwned, Deserialize, Deserializer, Serialize};
use std::io::Write;

/// Complete lines read from a raw file descriptor without blocking past what poll() said is there.
pub struct LineReader {
    fd: i32,
    buffer: Vec<u8>,
    pub closed: bool,
}

impl LineReader {
    pub fn stdin() -> Self {
        LineReader::on(0)
    }

    /// Lines from any descriptor (a pipe in the examples and tests).
    pub fn on(fd: i32) -> Self {
        LineReader {
            fd,
            buffer: Vec::new(),
            closed: false,
        }
    }

    pub fn fd(&self) -> i32 {
        self.fd
    }

    /// Read what is there (one read) and return every complete line buffered.
    pub fn read_available(&mut self) -> Vec<String> {
        self.fill();
        self.buffered()
    }

    /// Every complete line already read (two requests can come in one read: the second waits here, and a
    /// poll() on the descriptor would not show it).
    pub fn buffered(&mut self) -> Vec<String> {
        std::iter::from_fn(|| self.take_line()).collect()
    }

    pub fn has_line(&self) -> bool {
        memchr::memchr(b'\n', &self.buffer).is_some()
    }

    /// Block until one whole line is there (None: stdin closed).
    pub fn next_line(&mut self) -> Option<String> {
        loop {
            if let Some(line) = self.take_line() {
                return Some(line);
            }
            if self.closed {
                return None;
            }
            self.fill();
        }
    }

    /// One read(2) into the buffer; end of input or an error marks the reader closed.
    fn fill(&mut self) {
        let mut chunk = [0u8; 65536];
        // SAFETY: read into a buffer we own, of its length.
        let got = unsafe { libc::read(self.fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if got > 0 {
            self.buffer.extend_from_slice(&chunk[..got as usize]);
        } else if got == 0
            || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            self.closed = true;
        }
    }

    /// The first whole, non-empty line of the buffer, taken out of it.
    fn take_line(&mut self) -> Option<String> {
        while let Some(end) = memchr::memchr(b'\n', &self.buffer) {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line[..line.len() - 1])
                .trim()
                .to_string();
            if !text.is_empty() {
                return Some(text);
            }
        }
        None
    }
}

/// A line that is not the request (or record) it should be: not JSON, a key the record does not know, or
/// one it needs missing.
#[derive(Debug)]
pub struct BadRequest {
    pub line: String,
    pub error: serde_json::Error,
}

impl std::fmt::Display for BadRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bad request {:?}: {}", self.line, self.error)
    }
}

impl std::error::Error for BadRequest {}

/// A request, refused if it has a key the record does not know or lacks one it needs.
pub fn parse<T: DeserializeOwned>(line: &str) -> Result<T, BadRequest> {
    serde_json::from_str(line).map_err(|error| BadRequest {
        line: line.to_string(),
        error,
    })
}

/// Write one record as one line and flush it: the Python side waits for it.
pub fn emit<T: Serialize>(record: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, record);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// A request as the Python rig writes it: its fields and the op that names it.
pub fn with_op(
    op: &str,
    value: Result<serde_json::Value, serde_json::Error>,
) -> Result<serde_json::Value, serde_json::Error> {
    let mut value = value?;
    if let Some(map) = value.as_object_mut() {
        map.insert("op".into(), op.into());
    }
    Ok(value)
}

/// A line's op, and the rest of it as the request's own fields.
pub fn split_op(line: &str) -> Result<(String, String), BadRequest> {
    let mut value: serde_json::Value = parse(line)?;
    let op = value
        .get("op")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    if let Some(map) = value.as_object_mut() {
        map.remove("op");
    }
    Ok((op, value.to_string()))
}

/// An Option field that must be there all the same (null for None): serde would take a missing one as
/// None, and the records refuse a missing key on both sides.
pub fn required<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_request_read_with_the_first_is_kept_and_said_to_be_there() {
        let mut ends = [0i32; 2];
        // SAFETY: a pipe into an array we own.
        assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
        let both = b"{\"op\":\"trial\"}\n{\"op\":\"expect\"}\n";
        // SAFETY: write our bytes into the pipe's write end, then close it.
        unsafe {
            libc::write(ends[1], both.as_ptr().cast(), both.len());
            libc::close(ends[1]);
        }
        let mut reader = LineReader::on(ends[0]);
        assert_eq!(reader.next_line().as_deref(), Some("{\"op\":\"trial\"}"));
        assert!(
            reader.has_line(),
            "the expect request came in the same read"
        );
        assert_eq!(reader.buffered(), vec!["{\"op\":\"expect\"}".to_string()]);
        assert!(!reader.has_line());
        // SAFETY: close the read end we own.
        unsafe { libc::close(ends[0]) };
    }
}
