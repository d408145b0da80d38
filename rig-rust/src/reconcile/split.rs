//! Our own configs: the split files (test.D.facility.F.severity.V.log), the plain file (test.D.all.log) and
//! done.log, every line counted once, a split file's lines also checked for being in the right file.

use super::blocks::line_blocks;
use super::counter::Counter;
use super::done_log::{read_done_log, DoneLog, DONE_LOG};
use super::error::ReconcileError;
use super::masks::Masks;
use super::records::{Reconciled, Request, SenderCounts};
use super::tally::{arrivals, copies};
use memchr::memmem;
use std::path::{Path, PathBuf};

/// What a file name says: a split file's facility and severity (as numbers without leading zeros), or the
/// plain file (None inside), or neither (None).
#[allow(clippy::option_option)]
pub fn output_kind(name: &str) -> Option<Option<(String, String)>> {
    // Python's `$` also matches before a final newline.
    let name = name.strip_suffix('\n').unwrap_or(name);
    let rest = name.strip_prefix("test.")?.strip_suffix(".log")?;
    let dot = rest.find('.')?;
    let (daemon, rest) = (&rest[..dot], &rest[dot..]);
    if daemon.is_empty()
        || !daemon
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return None;
    }
    if rest == ".all" {
        return Some(None);
    }
    let rest = rest.strip_prefix(".facility.")?;
    let (facility, severity) = rest.split_once(".severity.")?;
    let plain = |n: &str| -> Option<String> {
        (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then(|| {
            let trimmed = n.trim_start_matches('0');
            if trimmed.is_empty() { "0" } else { trimmed }.to_string()
        })
    };
    Some(Some((plain(facility)?, plain(severity)?)))
}

pub fn split(request: &Request) -> Result<Reconciled, ReconcileError> {
    let mut counter = Counter::new(request)?;
    let dir = Path::new(&request.log_dir);
    let mut answer = Reconciled::blank();
    for path in listing(dir)? {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Some(kind) = output_kind(&name) else {
            continue;
        };
        answer.output_bytes += std::fs::metadata(&path)
            .map_err(ReconcileError::read(&path))?
            .len();
        match kind {
            Some((facility, severity)) => {
                answer.split_files += 1;
                answer.misfiled += split_file(request, &path, &facility, &severity, &mut counter)?;
            }
            None => answer.unprocessed += plain_file(request, &path, &mut counter)?,
        }
    }
    let done = read_done_log(&dir.join(DONE_LOG), request.block_bytes)?;
    (answer.done_log_lines, answer.done_log_extra) = (done.lines, done.extra);
    answer.senders = senders(request, &mut counter, &done)?;
    answer.unknown = counter.unknown;
    Ok(answer)
}

/// The directory's entries, in path order (none if it is not there).
fn listing(dir: &Path) -> Result<Vec<PathBuf>, ReconcileError> {
    let mut names: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(ReconcileError::read(dir))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(ReconcileError::read(dir)(e)),
    };
    names.sort();
    Ok(names)
}

/// A split file counted: its lines in the wrong file (misfiled).
fn split_file(
    request: &Request,
    path: &Path,
    facility: &str,
    severity: &str,
    counter: &mut Counter,
) -> Result<i64, ReconcileError> {
    // Every correctly filed line carries exactly one " f=F v=V " token; a line cut before it cannot say
    // where it belongs (truncated, not misfiled).
    let token = format!(" f={facility} v={severity} ");
    let token = memmem::Finder::new(token.as_bytes());
    let mut misfiled = 0i64;
    line_blocks(path, request.block_bytes, request.forget, |block| {
        let (_, shown) = counter.add(block);
        misfiled += shown - token.find_iter(block).count() as i64;
    })
    .map_err(ReconcileError::read(path))?;
    Ok(misfiled)
}

/// The plain file counted: its message lines without the proof (unprocessed).
fn plain_file(
    request: &Request,
    path: &Path,
    counter: &mut Counter,
) -> Result<i64, ReconcileError> {
    let mut unproven = 0i64;
    line_blocks(path, request.block_bytes, request.forget, |block| {
        let (lines, _) = counter.add(block);
        if counter.proof.is_some() {
            unproven += lines as i64 - counter.proven(block);
        }
    })
    .map_err(ReconcileError::read(path))?;
    Ok(unproven)
}

/// Each sender's counts over every file, against its mask, and whether done.log has its DONE.
fn senders(
    request: &Request,
    counter: &mut Counter,
    done: &DoneLog,
) -> Result<Vec<SenderCounts>, ReconcileError> {
    let mut masks = Masks::open(request)?;
    let mut senders = Vec::with_capacity(request.senders.len());
    for (index, s) in request.senders.iter().enumerate() {
        let truncated = counter.cut[index];
        let counts = counter.counts(index);
        let (expected, received, unexpected) = arrivals(counts, masks.get(index)?);
        senders.push(SenderCounts {
            expected,
            received,
            unexpected,
            duplicated: copies(counts) - received - unexpected,
            truncated,
            done_seen: done.senders.contains(&(s[0], s[1])),
        });
    }
    Ok(senders)
}
