//! A run's final reconciliation: every output line counted against the senders, by sequence number.
//!
//! It replaces syslogbench/rig/reconcile.py and the counting half of syslogbench/rig/fanout.py, and counts
//! exactly as they did. Python prepares what needs the model (syslogbench/rig/reconcile.py `request`): the
//! senders, the whole tails of their messages (from messages.padding), the filter masks (a file), the proof
//! pattern. This role reads the files and answers with one `Reconciled` record; Python joins it with the
//! ledgers. Both records refuse unknown keys, here and in syslogbench/model/rigrecord.py.
//!
//! A message line is `syslogbench h=H s=S q=Q <tail>`: the first place on a line where that holds, the tail
//! being the rest of the line. It counts as received only when its tail is what the sender sent there: the
//! " f=F v=V " fields and the padding (or DONE for the last sequence number); anything else with a known key is
//! truncated. Memory: one byte per sequence number per sender (occurrences, saturating at 255), and the
//! reads (`BLOCK_BYTES`, a longer line cut at `LONGEST_LINE`).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use memchr::{memchr, memmem, memrchr};
use serde::{Deserialize, Serialize};

/// A longer line is read as its first LONGEST_LINE bytes and CUT (so that its tail is no sender's).
pub const LONGEST_LINE: usize = 4 << 20;
/// The read size (a request's block_bytes of 0); a request may ask for less (the tests read a byte at a
/// time), never for more.
pub const BLOCK_BYTES: usize = LONGEST_LINE;
pub const CUT: &[u8] = b" [cut: longer than 4 MiB]\n";
const KEY: &[u8] = b"syslogbench h=";
const DONE_LOG: &str = "done.log";
const FACILITIES: usize = 24;
const SEVERITIES: usize = 8;

// -- the records -----------------------------------------------------------------------------------------

/// What to reconcile (written by syslogbench/rig/reconcile.py, one JSON object on stdin). Every key is
/// required, those that may be null too (`Option::deserialize`: serde would read a missing one as null).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// "split": our own configs (split files test.D.facility.F.severity.V.log, the plain test.D.all.log,
    /// done.log); "fanout": a user's config, every regular file under log_dir, each counted on its own.
    pub mode: Mode,
    pub log_dir: String,
    /// [host, sender] of every expected sender, in the order of the answer's senders.
    pub senders: Vec<[u64; 2]>,
    /// Sequence numbers 1..=per_sender, the DONE last.
    pub per_sender: u64,
    /// The whole tails, one table per (host digits, sender digits) of the senders.
    pub tails: Vec<TailTable>,
    /// A file of per_sender + 1 bytes per sender, in order: 1 where the number must arrive (index 0 unused);
    /// null: every number must.
    #[serde(deserialize_with = "Option::deserialize")]
    pub masks: Option<String>,
    /// What every message line of a plain file must match besides its key; null: nothing.
    #[serde(deserialize_with = "Option::deserialize")]
    pub proof: Option<Proof>,
    /// Drop each read from the page cache (posix_fadvise DONTNEED).
    pub forget: bool,
    pub block_bytes: usize,
    /// fanout: the file to write, for each sender with a lost message (in order), its arrival table
    /// (per_sender + 1 bytes, 1 where the message is in some file), from which Python names the lost PRIs.
    #[serde(deserialize_with = "Option::deserialize")]
    pub arrived_out: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Split,
    Fanout,
}

/// Every tail that ends an ordinary message of senders whose numbers have these lengths whole: the tail
/// ("f=F v=V " and the padding) -> the lengths of q with which it does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TailTable {
    pub host_digits: u32,
    pub sender_digits: u32,
    pub whole: BTreeMap<String, Vec<u32>>,
}

/// A regular expression over bytes (no Unicode classes), counted per block as Python's findall would; `same`:
/// two groups that must be equal (what a backreference said in Python's pattern).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proof {
    pub source: String,
    #[serde(deserialize_with = "Option::deserialize")]
    pub same: Option<[usize; 2]>,
}

/// The answer: one JSON object on stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reconciled {
    pub senders: Vec<SenderCounts>,
    /// Lines in the wrong split file (split mode; 0 in fanout).
    pub misfiled: i64,
    pub unknown: u64,
    /// Split files read (fanout: every file read).
    pub split_files: u64,
    pub output_bytes: u64,
    /// done.log's DONE lines and other lines (fanout: every sender whose DONE arrived, and 0).
    pub done_log_lines: u64,
    pub done_log_extra: u64,
    /// Message lines of the plain file without the proof.
    pub unprocessed: i64,
    /// fanout: each file, in path order (empty in split mode).
    pub files: Vec<FileCounts>,
    /// fanout: number of files -> messages found in that many, from 1 to the most (empty in split mode).
    pub fanout: BTreeMap<String, u64>,
    /// What this reconciliation took: CPU seconds and peak resident memory.
    pub cpu_s: f64,
    pub peak_rss_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SenderCounts {
    pub expected: u64,
    pub received: u64,
    pub unexpected: u64,
    pub duplicated: u64,
    pub truncated: u64,
    pub done_seen: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileCounts {
    pub file: String,
    pub lines: u64,
    pub messages: u64,
    pub duplicated: u64,
    pub truncated: u64,
    /// The facility and severity numbers our messages in it show (below 24 and 8), ascending.
    pub facilities: Vec<u32>,
    pub severities: Vec<u32>,
}

// -- the role --------------------------------------------------------------------------------------------

pub fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(2).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => {
            let request = read_request()?;
            let answer = reconcile(&request)?;
            emit(&answer)
        }
        ["--check-request"] => {
            let request = read_request()?;
            Counter::new(&request)?; // the tables and the proof are valid too
            emit(&request)
        }
        ["--example"] => emit(&example()),
        _ => Err(
            "usage: syslogbench-rig reconcile [--check-request | --example] < request.json".into(),
        ),
    }
}

fn read_request() -> Result<Request, String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the request: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("not a reconcile request: {e}"))
}

fn emit<T: Serialize>(record: &T) -> Result<(), String> {
    let mut out = serde_json::to_vec(record).map_err(|e| e.to_string())?;
    out.push(b'\n');
    std::io::stdout()
        .write_all(&out)
        .map_err(|e| format!("cannot write the answer: {e}"))
}

/// One of each record, as the contract test reads them.
pub fn example() -> Reconciled {
    Reconciled {
        senders: vec![SenderCounts {
            expected: 61,
            received: 60,
            unexpected: 0,
            duplicated: 1,
            truncated: 1,
            done_seen: true,
        }],
        misfiled: 1,
        unknown: 2,
        split_files: 3,
        output_bytes: 6100,
        done_log_lines: 1,
        done_log_extra: 0,
        unprocessed: 0,
        files: vec![FileCounts {
            file: "syslog".into(),
            lines: 62,
            messages: 61,
            duplicated: 1,
            truncated: 1,
            facilities: vec![0, 23],
            severities: vec![7],
        }],
        fanout: BTreeMap::from([("1".into(), 60)]),
        cpu_s: 0.01,
        peak_rss_bytes: 4 << 20,
    }
}

// -- reading: blocks of whole lines ----------------------------------------------------------------------

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

// -- parsing ---------------------------------------------------------------------------------------------

fn digits(data: &[u8]) -> usize {
    data.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// A number with no leading zero (as Python's "%d" writes it); None: not one, or beyond u64.
fn canonical(text: &[u8]) -> Option<u64> {
    if text.is_empty() || (text.len() > 1 && text[0] == b'0') {
        return None;
    }
    number(text)
}

/// Any run of digits as a number (leading zeros allowed, as Python's int()); None beyond u64.
fn number(text: &[u8]) -> Option<u64> {
    text.iter().try_fold(0u64, |n, &b| {
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// `text` starts with `word` and then one or more digits: (the digits, what follows).
fn field<'a>(text: &'a [u8], word: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let after = text.strip_prefix(word)?;
    let n = digits(after);
    (n > 0).then(|| after.split_at(n))
}

/// A message line's host, sender and q digits, and its tail.
pub type Key<'a> = (&'a [u8], &'a [u8], &'a [u8], &'a [u8]);

/// A message line's key at the start of `text` (just after "syslogbench h="): `\d+ s=\d+ q=\d+ ` and the rest
/// of the line. (host, sender, q, tail)
pub fn parse_key(text: &[u8]) -> Option<Key<'_>> {
    let n = digits(text);
    if n == 0 {
        return None;
    }
    let (host, rest) = text.split_at(n);
    let (sender, rest) = field(rest, b" s=")?;
    let (seq, rest) = field(rest, b" q=")?;
    let tail = rest.strip_prefix(b" ")?;
    Some((host, sender, seq, tail))
}

/// `f=\d+ v=\d+ ` at the start of the tail: (facility, severity, what follows).
fn fields(tail: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let (facility, rest) = field(tail, b"f=")?;
    let (severity, rest) = field(rest, b" v=")?;
    Some((facility, severity, rest.strip_prefix(b" ")?))
}

/// The tail is exactly `f=\d+ v=\d+ DONE`.
pub fn is_done_tail(tail: &[u8]) -> bool {
    fields(tail).is_some_and(|(_, _, rest)| rest == b"DONE")
}

/// Occurrences of the key in a line (up to its newline), and the first whole key's (host, sender, q, tail).
fn each_key(
    block: &[u8],
    finder: &memmem::Finder,
    mut found: impl FnMut(&[u8], &[u8], &[u8], &[u8]),
) {
    let mut pos = 0;
    while let Some(i) = finder.find(&block[pos..]) {
        let at = pos + i + KEY.len();
        let end = memchr(b'\n', &block[at..]).map_or(block.len(), |j| at + j);
        match parse_key(&block[at..end]) {
            Some((host, sender, seq, tail)) => {
                found(host, sender, seq, tail);
                pos = end;
            }
            None => pos = pos + i + 1,
        }
    }
}

// -- the whole tails -------------------------------------------------------------------------------------

/// One TailTable, indexed by PRI (facility x 8 + severity): (padding length, the q lengths it is whole with).
struct Tails {
    by_pri: Vec<Vec<(usize, u64)>>,
}

impl Tails {
    fn new(table: &TailTable) -> Result<Self, String> {
        let mut by_pri = vec![Vec::new(); FACILITIES * SEVERITIES];
        for (tail, lengths) in &table.whole {
            let bad = || format!("tails table: {tail:?} is not \"f=F v=V \" and its padding of x");
            let (facility, severity, padding) = fields(tail.as_bytes()).ok_or_else(bad)?;
            let (facility, severity) = (
                canonical(facility).ok_or_else(bad)?,
                canonical(severity).ok_or_else(bad)?,
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
                    return Err(format!("tails table: {tail:?}: a q length of {length}"));
                }
                mask |= 1 << length;
            }
            let slot = &mut by_pri[facility as usize * SEVERITIES + severity as usize];
            if slot.iter().any(|&(size, _)| size == padding.len()) {
                return Err(format!("tails table: {tail:?} given twice"));
            }
            slot.push((padding.len(), mask));
        }
        Ok(Tails { by_pri })
    }

    /// The q lengths with which an ordinary message's tail is whole (0: none).
    fn lengths(&self, tail: &[u8], xs: &[u8]) -> u64 {
        let Some((facility, severity, padding)) = fields(tail) else {
            return 0;
        };
        let (Some(facility), Some(severity)) = (canonical(facility), canonical(severity)) else {
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
}

// -- counting --------------------------------------------------------------------------------------------

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

/// Occurrences of every sequence number of every sender in whole lines (saturating at 255), each sender's
/// lines that arrived cut or mangled, and the lines of no sender.
pub struct Counter {
    per_sender: u64,
    lookup: Lookup,
    tails: Vec<Tails>,
    tails_of: Vec<usize>,
    xs: Vec<u8>,
    finder: memmem::Finder<'static>,
    proof: Option<(regex::bytes::Regex, Option<[usize; 2]>)>,
    tally: Tally,
    row_buf: Vec<u8>,
    cut: Vec<u64>,
    unknown: u64,
}

impl Counter {
    pub fn new(request: &Request) -> Result<Self, String> {
        if request.per_sender == 0 {
            return Err("per_sender is 0: every sender sends at least its DONE".into());
        }
        let tails = request
            .tails
            .iter()
            .map(Tails::new)
            .collect::<Result<Vec<_>, _>>()?;
        let mut tails_of = Vec::with_capacity(request.senders.len());
        for s in &request.senders {
            let (host, sender) = (s[0].to_string().len() as u32, s[1].to_string().len() as u32);
            let table = request
                .tails
                .iter()
                .position(|t| (t.host_digits, t.sender_digits) == (host, sender))
                .ok_or_else(|| {
                    format!(
                        "no tails table for host{}-s{}'s digits ({host}, {sender})",
                        s[0], s[1]
                    )
                })?;
            tails_of.push(table);
        }
        let longest = tails
            .iter()
            .flat_map(|t| t.by_pri.iter().flatten().map(|&(size, _)| size))
            .max();
        let proof = match &request.proof {
            None => None,
            Some(proof) => {
                let pattern = regex::bytes::RegexBuilder::new(&proof.source)
                    .unicode(false)
                    .build()
                    .map_err(|e| format!("the proof pattern: {e}"))?;
                if let Some([a, b]) = proof.same {
                    if a.max(b) >= pattern.captures_len() {
                        return Err(format!("the proof pattern has no group {}", a.max(b)));
                    }
                }
                Some((pattern, proof.same))
            }
        };
        let row = usize::try_from(request.per_sender + 1).map_err(|e| e.to_string())?;
        let tally = Tally::new(row, request.senders.len())
            .ok_or("per_sender x senders is beyond memory")?;
        Ok(Counter {
            per_sender: request.per_sender,
            lookup: Lookup::new(&request.senders),
            tails,
            tails_of,
            xs: vec![b'x'; longest.unwrap_or(0)],
            finder: memmem::Finder::new(KEY),
            proof,
            tally,
            row_buf: Vec::new(),
            cut: vec![0; request.senders.len()],
            unknown: 0,
        })
    }

    fn row(&self) -> usize {
        self.per_sender as usize + 1
    }

    /// Counts every message line of a block of whole lines: (message lines, those that still show their
    /// facility and severity).
    pub fn add(&mut self, block: &[u8]) -> (u64, i64) {
        let (mut lines, mut shown) = (0u64, 0i64);
        let finder = self.finder.clone();
        each_key(block, &finder, |host, sender, seq, tail| {
            lines += 1;
            shown += 1;
            let index = match (canonical(host), canonical(sender)) {
                (Some(h), Some(s)) => self.lookup.get(h, s),
                _ => None,
            };
            let number = number(seq).unwrap_or(0);
            let Some(index) = index.filter(|_| (1..=self.per_sender).contains(&number)) else {
                self.unknown += 1;
                shown -= i64::from(fields(tail).is_none());
                return;
            };
            let whole = if number == self.per_sender {
                is_done_tail(tail)
            } else {
                let mask = self.tails[self.tails_of[index]].lengths(tail, &self.xs);
                seq.len() < 64 && mask >> seq.len() & 1 == 1
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
    fn proven(&self, block: &[u8]) -> i64 {
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
    fn counts(&mut self, index: usize) -> &[u8] {
        self.tally.row(index, &mut self.row_buf);
        &self.row_buf
    }

    fn clear(&mut self) {
        self.tally.clear();
        self.cut.fill(0);
        self.unknown = 0;
    }
}

/// Occurrences of each sequence number of each sender, saturating at 255: one bit each (arrived or not) and
/// a map of the numbers that arrived more than once, while there are few of those (the usual run: the bits
/// stay in the CPU's cache where a byte each would not); a byte each once the map passes `limit`. Memory: an
/// eighth of a byte per number, at most one byte and a few hundredths while it turns into bytes (a sender at
/// a time, each sender's bits freed as its bytes are filled).
pub struct Tally {
    row: usize,
    seen: Vec<Vec<u64>>,
    more: HashMap<usize, u8>,
    dense: Vec<Vec<u8>>,
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

fn copies(counts: &[u8]) -> u64 {
    counts.iter().map(|&c| u64::from(c)).sum()
}

/// Each sender's mask in turn, from the masks file (one sender's at a time in memory).
struct Masks {
    file: Option<File>,
    row: usize,
    data: Vec<u8>,
}

impl Masks {
    fn open(request: &Request) -> Result<Self, String> {
        let row = request.per_sender as usize + 1;
        let file = match &request.masks {
            None => None,
            Some(path) => {
                let file = File::open(path).map_err(|e| format!("the masks file {path}: {e}"))?;
                let size = file.metadata().map_err(|e| e.to_string())?.len();
                if size != (row * request.senders.len()) as u64 {
                    return Err(format!(
                        "the masks file {path}: {size} bytes, not {row} per sender"
                    ));
                }
                Some(file)
            }
        };
        let data = vec![0; if file.is_some() { row } else { 0 }];
        Ok(Masks { file, row, data })
    }

    fn get(&mut self, index: usize) -> Result<Option<&[u8]>, String> {
        let Some(file) = &mut self.file else {
            return Ok(None);
        };
        file.seek(SeekFrom::Start((index * self.row) as u64))
            .and_then(|_| file.read_exact(&mut self.data))
            .map_err(|e| format!("the masks file: {e}"))?;
        if self.data[0] != 0 || self.data.iter().any(|&m| m > 1) {
            return Err(format!(
                "the masks file: sender {index}'s mask is not 0 and 1 with index 0 unused"
            ));
        }
        Ok(Some(&self.data))
    }
}

fn usage() -> (f64, u64) {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    ((cpu * 1e6).round() / 1e6, peak_rss())
}

/// This program's peak resident memory: VmHWM, which starts anew at exec (getrusage's ru_maxrss keeps the
/// peak of the process image before exec, e.g. the Python that started the rig).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

pub fn reconcile(request: &Request) -> Result<Reconciled, String> {
    let mut answer = match request.mode {
        Mode::Split => split(request)?,
        Mode::Fanout => fanout(request)?,
    };
    (answer.cpu_s, answer.peak_rss_bytes) = usage();
    Ok(answer)
}

fn blank(senders: Vec<SenderCounts>) -> Reconciled {
    Reconciled {
        senders,
        misfiled: 0,
        unknown: 0,
        split_files: 0,
        output_bytes: 0,
        done_log_lines: 0,
        done_log_extra: 0,
        unprocessed: 0,
        files: Vec::new(),
        fanout: BTreeMap::new(),
        cpu_s: 0.0,
        peak_rss_bytes: 0,
    }
}

fn read_error(path: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("cannot read {}: {e}", path.display())
}

// -- our own configs: split files, the plain file, done.log ---------------------------------------------

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

fn split(request: &Request) -> Result<Reconciled, String> {
    let mut counter = Counter::new(request)?;
    let dir = Path::new(&request.log_dir);
    let mut answer = blank(Vec::new());
    let mut names: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(read_error(dir))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(read_error(dir)(e)),
    };
    names.sort();
    for path in names {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Some(kind) = output_kind(&name) else {
            continue;
        };
        answer.output_bytes += std::fs::metadata(&path).map_err(read_error(&path))?.len();
        match kind {
            Some((facility, severity)) => {
                answer.split_files += 1;
                // Every correctly filed line carries exactly one " f=F v=V " token; a line cut before it
                // cannot say where it belongs (truncated, not misfiled).
                let token = format!(" f={facility} v={severity} ");
                let token = memmem::Finder::new(token.as_bytes());
                let mut misfiled = 0i64;
                line_blocks(&path, request.block_bytes, request.forget, |block| {
                    let (_, shown) = counter.add(block);
                    misfiled += shown - token.find_iter(block).count() as i64;
                })
                .map_err(read_error(&path))?;
                answer.misfiled += misfiled;
            }
            None => {
                let mut unproven = 0i64;
                line_blocks(&path, request.block_bytes, request.forget, |block| {
                    let (lines, _) = counter.add(block);
                    if counter.proof.is_some() {
                        unproven += lines as i64 - counter.proven(block);
                    }
                })
                .map_err(read_error(&path))?;
                answer.unprocessed += unproven;
            }
        }
    }
    let done = read_done_log(&dir.join(DONE_LOG), request.block_bytes)?;
    (answer.done_log_lines, answer.done_log_extra) = (done.lines, done.extra);
    let mut masks = Masks::open(request)?;
    for (index, s) in request.senders.iter().enumerate() {
        let counts = counter.counts(index);
        let (expected, received, unexpected) = arrivals(counts, masks.get(index)?);
        answer.senders.push(SenderCounts {
            expected,
            received,
            unexpected,
            duplicated: copies(counts) - received - unexpected,
            truncated: counter.cut[index],
            done_seen: done.senders.contains(&(u128::from(s[0]), u128::from(s[1]))),
        });
    }
    answer.unknown = counter.unknown;
    Ok(answer)
}

pub struct DoneLog {
    pub senders: std::collections::HashSet<(u128, u128)>,
    pub lines: u64,
    pub extra: u64,
}

/// done.log: the senders whose DONE is in it (by number, as Python's int() reads them), its DONE lines, and
/// its other lines (lines as Python's bytes.splitlines gives them: \n, \r\n and \r end one).
pub fn read_done_log(path: &Path, block_bytes: usize) -> Result<DoneLog, String> {
    let mut done = DoneLog {
        senders: Default::default(),
        lines: 0,
        extra: 0,
    };
    if !path.exists() {
        return Ok(done);
    }
    let finder = memmem::Finder::new(KEY);
    line_blocks(path, block_bytes, false, |block| {
        for line in splitlines(block) {
            match done_of(line, &finder) {
                Some(sender) => {
                    done.lines += 1;
                    if let Some(sender) = sender {
                        done.senders.insert(sender);
                    }
                }
                None => done.extra += 1,
            }
        }
    })
    .map_err(read_error(path))?;
    Ok(done)
}

fn splitlines(block: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = block;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match rest.get(end) {
            Some(b'\r') if rest.get(end + 1) == Some(&b'\n') => 2,
            Some(_) => 1,
            None => 0,
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// `syslogbench h=(\d+) s=(\d+) q=(\d+) f=\d+ v=\d+ DONE` anywhere in the line: Some(its sender, None where
/// the numbers are beyond any sender's), or None.
#[allow(clippy::option_option)]
fn done_of(line: &[u8], finder: &memmem::Finder) -> Option<Option<(u128, u128)>> {
    let mut pos = 0;
    while let Some(i) = finder.find(&line[pos..]) {
        let at = pos + i + KEY.len();
        if let Some((host, sender, _, tail)) = parse_key(&line[at..]) {
            if fields(tail).is_some_and(|(_, _, rest)| rest.starts_with(b"DONE")) {
                let big = |d: &[u8]| {
                    d.iter().try_fold(0u128, |n, &b| {
                        n.checked_mul(10)?.checked_add(u128::from(b - b'0'))
                    })
                };
                return Some(big(host).zip(big(sender)));
            }
        }
        pos += i + 1;
    }
    None
}

// -- a user's config: every file, and the files each message landed in ------------------------------------

/// Every regular file under dir (symbolic links to one included, into a directory not followed), in path
/// order, but our own done.log when it is empty.
pub fn output_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
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
    Ok(found)
}

fn fanout(request: &Request) -> Result<Reconciled, String> {
    let mut counter = Counter::new(request)?;
    let dir = Path::new(&request.log_dir);
    let senders = request.senders.len();
    let row = counter.row();
    let mut files_with = vec![0u8; senders * row]; // the files holding each message (saturating)
    let (mut duplicated, mut truncated) = (vec![0u64; senders], vec![0u64; senders]);
    let mut answer = blank(Vec::new());
    let finder = memmem::Finder::new(KEY);
    for path in output_files(dir)? {
        counter.clear();
        let (mut lines, mut facilities, mut severities) =
            (0u64, [false; FACILITIES], [false; SEVERITIES]);
        line_blocks(&path, request.block_bytes, request.forget, |block| {
            lines += memchr::memchr_iter(b'\n', block).count() as u64;
            counter.add(block);
            seen_fields(block, &finder, &mut facilities, &mut severities);
        })
        .map_err(read_error(&path))?;
        answer.output_bytes += std::fs::metadata(&path).map_err(read_error(&path))?.len();
        answer.unknown += counter.unknown;
        let mut file = FileCounts {
            file: path
                .strip_prefix(dir)
                .unwrap_or(&path)
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
        };
        for index in 0..senders {
            let cut = counter.cut[index];
            let counts = counter.counts(index);
            let (total, distinct) = (
                copies(counts),
                counts.iter().filter(|&&c| c != 0).count() as u64,
            );
            file.messages += total;
            file.duplicated += total - distinct;
            duplicated[index] += total - distinct;
            file.truncated += cut;
            truncated[index] += cut;
            if distinct > 0 {
                for (files, &c) in files_with[index * row..(index + 1) * row]
                    .iter_mut()
                    .zip(counts)
                {
                    *files = files.saturating_add(u8::from(c != 0));
                }
            }
        }
        answer.files.push(file);
    }
    answer.split_files = answer.files.len() as u64;
    let mut spread = [0u64; 256];
    let mut most = 0usize;
    let mut masks = Masks::open(request)?;
    let mut arrived_out = match &request.arrived_out {
        Some(path) => Some(File::create(path).map_err(|e| format!("cannot write {path}: {e}"))?),
        None => None,
    };
    let mut arrived = vec![0u8; row];
    for index in 0..senders {
        let files = &files_with[index * row..(index + 1) * row];
        for (a, &n) in arrived.iter_mut().zip(files) {
            *a = u8::from(n != 0);
        }
        let (expected, received, unexpected) = arrivals(&arrived, masks.get(index)?);
        let done_seen = arrived[row - 1] == 1;
        answer.senders.push(SenderCounts {
            expected,
            received,
            unexpected,
            duplicated: duplicated[index],
            truncated: truncated[index],
            done_seen,
        });
        answer.done_log_lines += u64::from(done_seen);
        for &n in &files[1..] {
            spread[n as usize] += 1;
        }
        most = most.max(files.iter().copied().max().unwrap_or(0) as usize);
        if expected > received {
            if let Some(out) = &mut arrived_out {
                out.write_all(&arrived)
                    .map_err(|e| format!("cannot write the arrival tables: {e}"))?;
            }
        }
    }
    answer.fanout = (1..=most).map(|n| (n.to_string(), spread[n])).collect();
    Ok(answer)
}

/// `syslogbench h=\d+ s=\d+ q=\d+ f=(\d+) v=(\d+) ` anywhere (as Python's findall: one match after another):
/// the facilities and severities below 24 and 8 that our lines show.
fn seen_fields(
    block: &[u8],
    finder: &memmem::Finder,
    facilities: &mut [bool],
    severities: &mut [bool],
) {
    let mut pos = 0;
    while let Some(i) = finder.find(&block[pos..]) {
        let at = pos + i + KEY.len();
        let parsed =
            parse_key(&block[at..]).and_then(|(_, _, _, tail)| fields(tail).map(|f| (f, tail)));
        match parsed {
            Some(((facility, severity, after), _)) => {
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

#[cfg(test)]
mod tests;
