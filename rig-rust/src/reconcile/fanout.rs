//! A user's config: every regular file under the log directory, each counted on its own, and the files
//! each message landed in (the fan-out).

use super::blocks::line_blocks;
use super::counter::Counter;
use super::done_log::DONE_LOG;
use super::error::ReconcileError;
use super::lines::{fields, message, FACILITIES, SEVERITIES};
use super::masks::Masks;
use super::records::{FileCounts, Reconciled, Request, SenderCounts};
use super::tally::{arrivals, copies};
use crate::key::{finder, number, MARK};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Every regular file under dir (symbolic links to one included, into a directory not followed), in path
/// order, but our own done.log when it is empty.
pub fn output_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return; // as os.walk: a directory it cannot list holds nothing
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => walk(&path, found),
                Ok(_) => {
                    if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                        found.push(path);
                    }
                }
                Err(_) => {}
            }
        }
    }
    let mut found = Vec::new();
    if dir.exists() {
        walk(dir, &mut found);
    }
    let done = dir.join(DONE_LOG);
    found.retain(|path| !(*path == done && std::fs::metadata(path).is_ok_and(|m| m.len() == 0)));
    found.sort();
    found
}

pub fn fanout(request: &Request) -> Result<Reconciled, ReconcileError> {
    let mut counter = Counter::new(request)?;
    let dir = Path::new(&request.log_dir);
    let mut landed = Landed::new(request.senders.len(), counter.row());
    let mut answer = Reconciled::blank();
    for path in output_files(dir) {
        let mut file = count_file(request, dir, &path, &mut counter)?;
        answer.output_bytes += std::fs::metadata(&path)
            .map_err(ReconcileError::read(&path))?
            .len();
        answer.unknown += counter.unknown;
        landed.add(&mut counter, &mut file);
        answer.files.push(file);
    }
    answer.split_files = answer.files.len() as u64;
    let mut spread = Spread::default();
    let mut masks = Masks::open(request)?;
    let mut tables = ArrivalTables::create(request)?;
    let mut arrived = vec![0u8; landed.row];
    for index in 0..request.senders.len() {
        let files = landed.files(index);
        for (a, &n) in arrived.iter_mut().zip(files) {
            *a = u8::from(n != 0);
        }
        let (expected, received, unexpected) = arrivals(&arrived, masks.get(index)?);
        let done_seen = arrived[landed.row - 1] == 1;
        answer.senders.push(SenderCounts {
            expected,
            received,
            unexpected,
            duplicated: landed.duplicated[index],
            truncated: landed.truncated[index],
            done_seen,
        });
        answer.done_log_lines += u64::from(done_seen);
        spread.add(files);
        if expected > received {
            tables.write(&arrived)?;
        }
    }
    answer.fanout = spread.table();
    Ok(answer)
}

/// One file read whole into the counter (cleared first): its lines and the facilities and severities its
/// messages show; its messages' counts are the counter's.
fn count_file(
    request: &Request,
    dir: &Path,
    path: &Path,
    counter: &mut Counter,
) -> Result<FileCounts, ReconcileError> {
    counter.clear();
    let (mut lines, mut facilities, mut severities) =
        (0u64, [false; FACILITIES], [false; SEVERITIES]);
    line_blocks(path, request.block_bytes, request.forget, |block| {
        lines += memchr::memchr_iter(b'\n', block).count() as u64;
        counter.add(block);
        seen_fields(block, &mut facilities, &mut severities);
    })
    .map_err(ReconcileError::read(path))?;
    Ok(FileCounts {
        file: path
            .strip_prefix(dir)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned(),
        lines,
        messages: 0,
        duplicated: 0,
        truncated: 0,
        facilities: (0..FACILITIES as u32)
            .filter(|&f| facilities[f as usize])
            .collect(),
        severities: (0..SEVERITIES as u32)
            .filter(|&v| severities[v as usize])
            .collect(),
    })
}

/// Over every file so far: how many files hold each message of each sender (saturating), and each
/// sender's copies beyond the first within a file and its cut lines.
struct Landed {
    row: usize,
    files_with: Vec<u8>,
    duplicated: Vec<u64>,
    truncated: Vec<u64>,
}

impl Landed {
    fn new(senders: usize, row: usize) -> Landed {
        Landed {
            row,
            files_with: vec![0u8; senders * row],
            duplicated: vec![0u64; senders],
            truncated: vec![0u64; senders],
        }
    }

    /// What the counter counted in one file, into the file's counts and every sender's.
    fn add(&mut self, counter: &mut Counter, file: &mut FileCounts) {
        let row = self.row;
        for index in 0..self.duplicated.len() {
            let cut = counter.cut[index];
            let counts = counter.counts(index);
            let (total, distinct) = (
                copies(counts),
                counts.iter().filter(|&&c| c != 0).count() as u64,
            );
            file.messages += total;
            file.duplicated += total - distinct;
            self.duplicated[index] += total - distinct;
            file.truncated += cut;
            self.truncated[index] += cut;
            if distinct > 0 {
                for (files, &c) in self.files_with[index * row..(index + 1) * row]
                    .iter_mut()
                    .zip(counts)
                {
                    *files = files.saturating_add(u8::from(c != 0));
                }
            }
        }
    }

    /// How many files hold each of a sender's messages (index 0 unused).
    fn files(&self, index: usize) -> &[u8] {
        &self.files_with[index * self.row..(index + 1) * self.row]
    }
}

/// Messages by the number of files they are in.
struct Spread {
    counts: [u64; 256],
    most: usize,
}

impl Default for Spread {
    fn default() -> Spread {
        Spread {
            counts: [0; 256],
            most: 0,
        }
    }
}

impl Spread {
    /// A sender's messages, as the files holding each (index 0 unused).
    fn add(&mut self, files: &[u8]) {
        for &n in &files[1..] {
            self.counts[n as usize] += 1;
        }
        self.most = self
            .most
            .max(files.iter().copied().max().unwrap_or(0) as usize);
    }

    /// Number of files -> messages found in that many, from 1 to the most.
    fn table(&self) -> BTreeMap<String, u64> {
        (1..=self.most)
            .map(|n| (n.to_string(), self.counts[n]))
            .collect()
    }
}

/// The arrival tables of the senders with a lost message, where the request asks for them.
struct ArrivalTables(Option<File>);

impl ArrivalTables {
    fn create(request: &Request) -> Result<ArrivalTables, ReconcileError> {
        match &request.arrived_out {
            Some(path) => File::create(path)
                .map(|file| ArrivalTables(Some(file)))
                .map_err(|error| ReconcileError::Create {
                    path: path.clone(),
                    error,
                }),
            None => Ok(ArrivalTables(None)),
        }
    }

    fn write(&mut self, arrived: &[u8]) -> Result<(), ReconcileError> {
        match &mut self.0 {
            Some(out) => out.write_all(arrived).map_err(ReconcileError::WriteArrived),
            None => Ok(()),
        }
    }
}

/// `syslogbench h=\d+ s=\d+ q=\d+ f=(\d+) v=(\d+) ` anywhere (as Python's findall: one match after another):
/// the facilities and severities below 24 and 8 that our lines show.
fn seen_fields(block: &[u8], facilities: &mut [bool], severities: &mut [bool]) {
    let mut pos = 0;
    while let Some(i) = finder().find(&block[pos..]) {
        let at = pos + i + MARK.len();
        match message(&block[at..]).and_then(|(_, tail)| fields(tail)) {
            Some((facility, severity, after)) => {
                if let Some(f) = number(facility).filter(|&f| f < FACILITIES as u64) {
                    facilities[f as usize] = true;
                }
                if let Some(v) = number(severity).filter(|&v| v < SEVERITIES as u64) {
                    severities[v as usize] = true;
                }
                pos = block.len() - after.len();
            }
            None => pos += i + 1,
        }
    }
}
