//! Reading an output file: blocks of whole lines, a line longer than LONGEST_LINE cut, whatever the reads.

use memchr::{memchr, memrchr};
use std::fs::File;
use std::io::Read;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// A longer line is read as its first LONGEST_LINE bytes and CUT (so that its tail is no sender's).
pub const LONGEST_LINE: usize = 4 << 20;
/// The read size (a request's block_bytes of 0); a request may ask for less (the tests read a byte at a
/// time), never for more.
pub const BLOCK_BYTES: usize = LONGEST_LINE;
pub const CUT: &[u8] = b" [cut: longer than 4 MiB]\n";

/// Calls `each` with blocks of whole lines of the file (each ending at a newline, the last at the file's
/// end, newline or not), reading `size` bytes at a time. A line longer than LONGEST_LINE comes as its first
/// LONGEST_LINE bytes and CUT, whatever the reads. forget: drop each read from the page cache (the output
/// was written by the daemon; what is read here would otherwise be charged to the watcher's memory).
pub fn line_blocks(
    path: &Path,
    size: usize,
    forget: bool,
    mut each: impl FnMut(&[u8]),
) -> std::io::Result<()> {
    let size = if size == 0 {
        BLOCK_BYTES
    } else {
        size.min(LONGEST_LINE)
    };
    let mut file = File::open(path)?;
    let mut data = vec![0u8; size];
    let mut rest: Vec<u8> = Vec::new(); // the line begun in earlier reads
    let (mut skipping, mut offset) = (false, 0i64);
    loop {
        let n = match file.read(&mut data) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if forget {
            // SAFETY: a plain system call on an open descriptor; its result changes no count.
            unsafe {
                libc::posix_fadvise(
                    file.as_raw_fd(),
                    offset,
                    n as i64,
                    libc::POSIX_FADV_DONTNEED,
                )
            };
        }
        offset += n as i64;
        let data = &data[..n];
        let mut start = 0;
        if skipping {
            // the rest of an overlong line, already given as cut
            match memchr(b'\n', data) {
                None => continue,
                Some(i) => (start, skipping) = (i + 1, false),
            }
        }
        let Some(last) = memrchr(b'\n', &data[start..]).map(|i| start + i + 1) else {
            rest.extend_from_slice(&data[start..]);
            if rest.len() > LONGEST_LINE {
                each(&cut(&rest));
                rest.clear();
                skipping = true;
            }
            continue;
        };
        if !rest.is_empty() {
            let first = start + memchr(b'\n', &data[start..]).unwrap_or(0) + 1;
            rest.extend_from_slice(&data[start..first]);
            whole(&rest, &mut each);
            rest.clear();
            start = first;
        }
        if last > start {
            each(&data[start..last]);
        }
        rest.extend_from_slice(&data[last..]);
    }
    if !rest.is_empty() {
        whole(&rest, &mut each);
    }
    Ok(())
}

fn whole(line: &[u8], each: &mut impl FnMut(&[u8])) {
    let content = line.strip_suffix(b"\n").unwrap_or(line);
    if content.len() > LONGEST_LINE {
        each(&cut(line));
    } else {
        each(line);
    }
}

fn cut(line: &[u8]) -> Vec<u8> {
    let mut data = line[..LONGEST_LINE].to_vec();
    data.extend_from_slice(CUT);
    data
}
