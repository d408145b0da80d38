//! The request channel: one JSON object per line on stdin, one record per line on stdout.

use serde::{de::DeserializeOwned, Serialize};
use std::io::Write;

/// Complete lines read from a raw file descriptor without blocking past what poll() said is there.
pub struct LineReader {
    fd: i32,
    buffer: Vec<u8>,
    pub closed: bool,
}

impl LineReader {
    pub fn stdin() -> Self {
        LineReader {
            fd: 0,
            buffer: Vec::new(),
            closed: false,
        }
    }

    pub fn fd(&self) -> i32 {
        self.fd
    }

    /// Read what is there (one read) and return the complete lines it finished.
    pub fn read_available(&mut self) -> Vec<String> {
        let mut chunk = [0u8; 65536];
        // SAFETY: read into a buffer we own, of its length.
        let got = unsafe { libc::read(self.fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if got <= 0 {
            if got == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                self.closed = true;
            }
            return Vec::new();
        }
        self.buffer.extend_from_slice(&chunk[..got as usize]);
        self.take_lines()
    }

    /// Block until one whole line is there (None: stdin closed).
    pub fn next_line(&mut self) -> Option<String> {
        loop {
            if let Some(line) = self.take_lines().into_iter().next() {
                return Some(line);
            }
            if self.closed {
                return None;
            }
            let lines = self.read_available();
            if let Some(first) = lines.into_iter().next() {
                return Some(first);
            }
        }
    }

    fn take_lines(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        while let Some(end) = memchr::memchr(b'\n', &self.buffer) {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line[..line.len() - 1])
                .trim()
                .to_string();
            if !text.is_empty() {
                lines.push(text);
            }
        }
        lines
    }
}

/// A request, refused if it has a key the record does not know or lacks one it needs.
pub fn parse<T: DeserializeOwned>(line: &str) -> Result<T, String> {
    serde_json::from_str(line).map_err(|error| format!("bad request {line:?}: {error}"))
}

/// Write one record as one line and flush it: the Python side waits for it.
pub fn emit<T: Serialize>(record: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, record);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}
