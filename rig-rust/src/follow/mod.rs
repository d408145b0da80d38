//! `follow`: the output follower of a capacity run. It reads only what was appended (whole lines), parses
//! each line's key once, and counts per sender and per trial: received, late, duplicated (or copies), and
//! lines of other trials (stale). Latency, from each message's intended send time to the moment its bytes
//! were read, goes into an HdrHistogram.
//!
//! It wakes on inotify when the daemon writes to a file of the latency sample, and looks at every other
//! file once a poll interval. A daemon that writes its 192 split files a line at a time (syslog-ng, rsyslog)
//! makes one inotify event per line, and nearly every one wakes the follower (about 13 us here): above
//! SAMPLE_LINES_S the follower watches only one split file in K (by facility x 8 + severity, which every
//! sender draws uniformly at random, so the sample is a uniform one of the messages), and reads the others
//! every poll interval, which decides late-or-not to within that interval but gives no latency figure.

use crate::clock::{cpu_seconds, cpu_times, now, round};
use crate::io::{emit, parse, required, split_op, with_op, LineReader};
use crate::key::{keys, trial_of, Key};
use crate::schedule::Schedule;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::ffi::CString;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Latencies in microseconds, to 3 significant digits, up to an hour (model/capacity.py LATENCY_DIGITS).
const HIGHEST_US: u64 = 3_600_000_000;
const DIGITS: u8 = 3;
/// A poll that returned sooner than this found events already waiting: the follower was busy.
const BUSY_S: f64 = 0.0002;
/// The longest wait in poll(): a look at the clock for the give-up time, and a rescan for new files.
const POLL_MS: i32 = 20;
const READ_BYTES: usize = 1 << 20;
/// Lines per second the follower takes on inotify, for the latency's sample; above it, a share of the files.
/// Nearly every one is a wake-up, and the follower's CPU in a trial is mostly its context switches (perf:
/// 80% in finish_task_switch behind syslog-ng at 80,000 msg/s): 1,000 a second keep 10,000 latencies in a
/// 10 s trial (100 above its p99) for half the wake-ups of 2,000 (docs/measurement.md).
const SAMPLE_LINES_S: f64 = 1_000.0;
/// The poll interval of the files outside the sample, as a share of LATENCY_BOUND, and its limits: 80 ms
/// with the default bound, so that a line waits under a tenth of it (flagged above) and the follower reads
/// each of 188 files 12.5 times a second rather than 25 (a quarter of its CPU behind syslog-ng at 80,000
/// msg/s, docs/measurement.md).
const POLL_SHARE: f64 = 0.08;
const POLL_MIN_S: f64 = 0.001;
const POLL_MAX_S: f64 = 0.080;
/// The seconds of a trial counted one by one in arrived_per_s (the daemon's supervisor stops it after 7,200 s);
/// later ones count in the last.
const PER_SECOND_MAX: usize = 7_200;

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrialRequest {
    pub trial: u64,
    /// Messages per second of each sender.
    pub rate: f64,
    /// Messages of each sender.
    pub messages: u64,
    pub start: f64,
    pub bound_s: f64,
    pub give_up: f64,
    /// After the give-up time, how long the senders' reports (expect) may still take.
    pub ledger_wait_s: f64,
    pub senders: Vec<String>,
    /// The senders' grid (schedule.rs): its step, and each sender's phase, in the order of `senders`.
    pub tick_s: f64,
    pub phases_s: Vec<f64>,
    /// A message seen again is a copy (a user's config writes some to several files), not a duplicate.
    pub copies: bool,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExpectRequest {
    /// What each sender says it sent: the trial ends once all of it has arrived.
    pub sent: BTreeMap<String, u64>,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DrainRequest {
    pub quiet_s: f64,
    pub max_s: f64,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SenderTally {
    pub id: String,
    pub received: u64,
    pub late: u64,
    pub duplicated: u64,
    pub copies: u64,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LatencyMs {
    #[serde(deserialize_with = "required")]
    pub p50: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub p90: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub p99: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub p999: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub max: Option<f64>,
}

/// One trial's arrivals, as the follower saw them.
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TallyRecord {
    pub op: String,
    pub trial: u64,
    pub senders: Vec<SenderTally>,
    /// Lines of other trials, and lines whose index is out of the trial's range.
    pub stale: u64,
    /// Messages seen before their intended time (clocks apart): recorded at 1 us, and counted here.
    pub early: u64,
    /// {latency in us, at the histogram's precision: count}: the host merges trials by adding them.
    pub histogram_us: BTreeMap<String, u64>,
    pub latency_ms: LatencyMs,
    /// Passes over the output that read something.
    pub looks: u64,
    /// The longest a line could wait between being written and being read, and its 99th percentile over
    /// the passes: the latency's resolution.
    pub look_gap_max_s: f64,
    pub look_gap_p99_s: f64,
    /// The longest a line in a file outside the latency's sample could wait before it was read (0: every
    /// file was in the sample): how finely late was told from on time there.
    pub poll_gap_max_s: f64,
    /// Received messages whose latency is in the histogram (those in the sample's files).
    pub sampled: u64,
    /// Messages received in each second from the trial's start (the first sighting of each): when the
    /// daemon fell behind in a trial that failed, and what it wrote after.
    pub arrived_per_s: Vec<u64>,
    /// The follower's own CPU over the trial.
    pub cpu_s: f64,
    /// Of it, the kernel's (system time): its reads and wake-ups.
    pub cpu_system_s: f64,
    /// Why the trial's following ended: "all-arrived", "give-up", or "stopped".
    pub ended: String,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DrainedRecord {
    pub op: String,
    pub stale: u64,
    pub waited_s: f64,
    pub cpu_s: f64,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ForgotRecord {
    pub op: String,
    pub files: u64,
}

/// Whether a file name is one of our layout's outputs: split by facility and severity, or one plain file
/// (syslogbench/rig/watcher/files.py names the same; done.log is not an output).
pub fn is_output_name(name: &str) -> bool {
    let Some(middle) = name
        .strip_prefix("test.")
        .and_then(|rest| rest.strip_suffix(".log"))
    else {
        return false;
    };
    let word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(id) = middle.strip_suffix(".all") {
        return word(id);
    }
    let parts: Vec<&str> = middle.split('.').collect();
    parts.len() == 5
        && word(parts[0])
        && parts[1] == "facility"
        && number(parts[2])
        && parts[3] == "severity"
        && number(parts[4])
}

/// A split file's facility x 8 + severity ("test.x.facility.3.severity.5.log" -> 29); None for any other.
pub fn split_pri(name: &[u8]) -> Option<u64> {
    let name = std::str::from_utf8(name).ok()?;
    let parts: Vec<&str> = name.strip_suffix(".log")?.rsplitn(5, '.').collect();
    match parts[..] {
        [severity, "severity", facility, "facility", _] => {
            Some(facility.parse::<u64>().ok()? * 8 + severity.parse::<u64>().ok()?)
        }
        _ => None,
    }
}

/// Open for reading without updating the access time where we may (the file's owner, or CAP_FOWNER): the
/// daemon's file is always newer than its last read, so with relatime every read would dirty its inode.
fn open_noatime(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.read(true).custom_flags(libc::O_NOATIME);
    options.open(path).or_else(|_| File::open(path)).ok()
}

/// One followed file: where the last look stopped, whether the daemon wrote to it since, and its inotify
/// watch while it is in the latency's sample.
struct Followed {
    path: PathBuf,
    file: Option<File>,
    partial: Vec<u8>,
    dirty: bool,
    pri: Option<u64>,
    watch: Option<i32>,
}

/// Every output file under the directory, read from where the last look stopped.
pub struct Output {
    directory: PathBuf,
    everywhere: bool,
    inotify: i32,
    watches: HashMap<i32, PathBuf>,
    files: Vec<Followed>,
    by_path: HashMap<PathBuf, usize>,
    /// (watch, name) to file: an inotify event finds its file without building a path.
    by_event: HashMap<i32, HashMap<Vec<u8>, usize>>,
    dirty: Vec<usize>,
    buffer: Vec<u8>,
    events: Vec<u8>,
    /// A split file is in the latency's sample when its facility x 8 + severity is a multiple of this.
    sample_every: u64,
    /// Files watched one by one (the sample), by watch.
    by_watch: HashMap<i32, usize>,
    poll_s: f64,
    last_poll: f64,
}

impl Output {
    pub fn new(directory: &Path, everywhere: bool) -> Result<Output, String> {
        // SAFETY: a new inotify descriptor, non-blocking (poll() says when to read it).
        let inotify = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if inotify < 0 {
            return Err(format!("inotify: {}", std::io::Error::last_os_error()));
        }
        let mut output = Output {
            directory: directory.to_path_buf(),
            everywhere,
            inotify,
            watches: HashMap::new(),
            files: Vec::new(),
            by_path: HashMap::new(),
            by_event: HashMap::new(),
            dirty: Vec::new(),
            buffer: vec![0; READ_BYTES],
            events: vec![0; 65536],
            sample_every: 1,
            by_watch: HashMap::new(),
            poll_s: POLL_MAX_S,
            last_poll: now(),
        };
        output.watch(directory)?;
        output.scan();
        Ok(output)
    }

    /// An inotify watch of `path` for `mask`: its descriptor.
    fn add_watch(&self, path: &Path, mask: u32) -> std::io::Result<i32> {
        let path = CString::new(path.as_os_str().as_encoded_bytes())?;
        // SAFETY: a watch on a path we own the string of.
        let wd = unsafe { libc::inotify_add_watch(self.inotify, path.as_ptr(), mask) };
        if wd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(wd)
    }

    fn watch(&mut self, directory: &Path) -> Result<(), String> {
        // New files only. Writes are watched file by file, for the files of the sample alone; and no
        // IN_CLOSE_WRITE: rsyslog's dynaFile cache (10 files by default) closes one of the 192 split files
        // for nearly every message, and a wake-up per close took the follower 3.9 CPU s in a 10 s trial at
        // 61,869 msg/s.
        let wd = self
            .add_watch(directory, libc::IN_CREATE | libc::IN_MOVED_TO)
            .map_err(|e| format!("inotify on {}: {e}", directory.display()))?;
        self.watches.insert(wd, directory.to_path_buf());
        Ok(())
    }

    fn wanted(&self, path: &Path) -> bool {
        self.everywhere
            || path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_output_name)
    }

    /// The file's slot, made on first sight (not opened yet: read_dirty opens it).
    fn slot(&mut self, path: PathBuf) -> usize {
        if let Some(&slot) = self.by_path.get(&path) {
            return slot;
        }
        let pri = path
            .file_name()
            .and_then(|name| split_pri(name.as_encoded_bytes()));
        self.files.push(Followed {
            path: path.clone(),
            file: None,
            partial: Vec::new(),
            dirty: false,
            pri,
            watch: None,
        });
        let slot = self.files.len() - 1;
        self.by_path.insert(path, slot);
        self.arm(slot);
        slot
    }

    fn in_sample(&self, slot: usize) -> bool {
        self.files[slot]
            .pri
            .is_none_or(|pri| pri % self.sample_every == 0)
    }

    /// Watch the file's writes if it is in the sample, else stop watching them.
    fn arm(&mut self, slot: usize) {
        match (self.in_sample(slot), self.files[slot].watch) {
            (true, None) => {
                // A file that cannot be watched (gone) is polled instead.
                if let Ok(wd) = self.add_watch(&self.files[slot].path, libc::IN_MODIFY) {
                    self.files[slot].watch = Some(wd);
                    self.by_watch.insert(wd, slot);
                }
            }
            (false, Some(wd)) => {
                // SAFETY: removing a watch of our own descriptor.
                unsafe { libc::inotify_rm_watch(self.inotify, wd) };
                self.files[slot].watch = None;
                self.by_watch.remove(&wd);
            }
            _ => {}
        }
    }

    /// Size the latency's sample for a trial of `lines_s` lines a second and a latency bound of `bound_s`.
    pub fn sample_for(&mut self, lines_s: f64, bound_s: f64) {
        self.sample_every = (lines_s / SAMPLE_LINES_S).ceil().max(1.0) as u64;
        self.poll_s = (bound_s * POLL_SHARE).clamp(POLL_MIN_S, POLL_MAX_S);
        for slot in 0..self.files.len() {
            self.arm(slot);
        }
    }

    /// Mark every file outside the sample when a poll interval has passed since the last poll; whether it had.
    fn poll_due(&mut self, at: f64) -> bool {
        if at - self.last_poll < self.poll_s {
            return false;
        }
        self.last_poll = at;
        for slot in 0..self.files.len() {
            if self.files[slot].watch.is_none() {
                self.mark(slot);
            }
        }
        true
    }

    /// Milliseconds poll() may wait: at most POLL_MS, and not past the next poll of unwatched files.
    fn wait_ms(&self, at: f64) -> i32 {
        if self.by_watch.len() == self.files.len() {
            return POLL_MS; // every file watched: nothing to poll
        }
        (((self.last_poll + self.poll_s - at) * 1000.0).ceil() as i32).clamp(0, POLL_MS)
    }

    fn mark(&mut self, slot: usize) {
        let followed = &mut self.files[slot];
        if !followed.dirty {
            followed.dirty = true;
            self.dirty.push(slot);
        }
    }

    /// Every file there now is followed (new ones from their start) and looked at once.
    pub fn scan(&mut self) {
        let mut pending = vec![self.directory.clone()];
        while let Some(directory) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&directory) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() && self.everywhere {
                    if !self.watches.values().any(|w| w == &path) {
                        let _ = self.watch(&path);
                    }
                    pending.push(path);
                } else if kind.is_file() && self.wanted(&path) {
                    let slot = self.slot(path);
                    self.mark(slot);
                }
            }
        }
    }

    /// Start from what is there now.
    pub fn skip_to_end(&mut self) {
        self.scan();
        for slot in std::mem::take(&mut self.dirty) {
            let followed = &mut self.files[slot];
            followed.dirty = false;
            if let Some(mut file) = open_noatime(&followed.path) {
                let _ = std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0));
                followed.file = Some(file);
            }
        }
    }

    /// Wait up to `timeout_ms` for the daemon to write, or for a request on `stdin`. Returns whether
    /// stdin is readable.
    fn wait(&mut self, stdin: i32, timeout_ms: i32) -> bool {
        let mut polls = [
            libc::pollfd {
                fd: self.inotify,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: stdin,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll over two pollfds we own.
        let ready = unsafe { libc::poll(polls.as_mut_ptr(), 2, timeout_ms) };
        if ready <= 0 {
            return false;
        }
        if polls[0].revents & libc::POLLIN != 0 {
            self.read_events();
        }
        polls[1].revents & (libc::POLLIN | libc::POLLHUP) != 0
    }

    fn read_events(&mut self) {
        let mut events = std::mem::take(&mut self.events); // kept: zeroing 64 KiB a wake-up cost more than the read
        loop {
            // SAFETY: read inotify events into our buffer.
            let got = unsafe { libc::read(self.inotify, events.as_mut_ptr().cast(), events.len()) };
            if got <= 0 {
                self.events = events;
                return;
            }
            let mut at = 0usize;
            let header = std::mem::size_of::<libc::inotify_event>();
            while at + header <= got as usize {
                // SAFETY: the kernel wrote whole events; read the header unaligned.
                let event: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(events[at..].as_ptr().cast()) };
                let name = &events[at + header..at + header + event.len as usize];
                let name = &name[..memchr::memchr(0, name).unwrap_or(name.len())];
                at += header + event.len as usize;
                self.event(event.wd, event.mask, name);
            }
        }
    }

    fn event(&mut self, wd: i32, mask: u32, name: &[u8]) {
        if mask & libc::IN_Q_OVERFLOW != 0 {
            // Events were lost: look at every file.
            for slot in 0..self.files.len() {
                self.mark(slot);
            }
            self.scan();
            return;
        }
        if let Some(&slot) = self.by_watch.get(&wd) {
            if mask & libc::IN_IGNORED != 0 {
                self.by_watch.remove(&wd); // the file is gone, and its watch with it
                self.files[slot].watch = None;
            } else {
                self.mark(slot);
            }
            return;
        }
        if let Some(&slot) = self.by_event.get(&wd).and_then(|names| names.get(name)) {
            self.mark(slot);
            return;
        }
        let Some(directory) = self.watches.get(&wd) else {
            return;
        };
        let path = directory.join(std::ffi::OsStr::from_bytes(name));
        if mask & libc::IN_ISDIR != 0 {
            if self.everywhere {
                let _ = self.watch(&path);
                self.scan();
            }
        } else if self.wanted(&path) {
            let slot = self.slot(path);
            self.by_event
                .entry(wd)
                .or_default()
                .insert(name.to_vec(), slot);
            self.mark(slot);
        }
    }

    /// Read what was appended to every file the daemon wrote since the last look; call `found` with the
    /// time of each read, whether the file is in the latency's sample, and the whole lines it completed.
    /// Whether anything was read from a file of the sample.
    fn read_dirty(&mut self, found: &mut dyn FnMut(f64, bool, &[u8])) -> bool {
        let mut any = false;
        for slot in std::mem::take(&mut self.dirty) {
            let followed = &mut self.files[slot];
            let sampled = followed.watch.is_some();
            followed.dirty = false;
            if followed.file.is_none() {
                followed.file = open_noatime(&followed.path);
            }
            let Some(file) = followed.file.as_mut() else {
                continue;
            };
            loop {
                let got = match file.read(&mut self.buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(got) => got,
                };
                let read_at = now(); // every line in these bytes was written by now
                let data = &self.buffer[..got];
                if let Some(last) = memchr::memrchr(b'\n', data) {
                    any |= sampled;
                    if followed.partial.is_empty() {
                        found(read_at, sampled, &data[..=last]);
                    } else {
                        followed.partial.extend_from_slice(&data[..=last]);
                        found(read_at, sampled, &followed.partial);
                        followed.partial.clear();
                    }
                    followed.partial.extend_from_slice(&data[last + 1..]);
                } else {
                    followed.partial.extend_from_slice(data);
                }
                if got < self.buffer.len() {
                    break; // a short read of a regular file: its end, for now (one read, not two)
                }
            }
        }
        any
    }

    /// Drop what was read from the page cache (between trials): the daemon's cgroup is charged for the
    /// cache of what it wrote, and a search's earlier trials would fill its memory limit.
    pub fn forget(&mut self) -> u64 {
        let mut open = 0;
        for file in self.files.iter().filter_map(|f| f.file.as_ref()) {
            // SAFETY: advice on a descriptor we own.
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            open += 1;
        }
        open
    }
}

/// One trial's arrivals: per sender, which indexes arrived, and how late.
pub struct Tally {
    request: TrialRequest,
    /// (host, sender) to the sender's place, sorted: a binary search per line, where SipHash cost 7% of
    /// the follower's CPU (perf, behind syslog-ng at 160,000 msg/s).
    index: Vec<((u64, u64), usize)>,
    schedules: Vec<Schedule>,
    seen: Vec<Vec<u8>>,
    counts: Vec<SenderTally>,
    pub stale: u64,
    pub early: u64,
    pub received: u64,
    pub sampled: u64,
    pub per_second: Vec<u64>,
    latency: Histogram<u64>,
}

impl Tally {
    pub fn new(request: TrialRequest) -> Result<Tally, String> {
        let mut index = Vec::new();
        for (k, name) in request.senders.iter().enumerate() {
            index.push((sender_numbers(name)?, k));
        }
        index.sort_unstable();
        if let Some(pair) = index.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(format!(
                "sender {:?} is named twice",
                request.senders[pair[1].1]
            ));
        }
        if request.phases_s.len() != request.senders.len() {
            return Err(format!(
                "{} phases for {} senders",
                request.phases_s.len(),
                request.senders.len()
            ));
        }
        let schedules = request
            .phases_s
            .iter()
            .map(|&phase| Schedule {
                start: request.start,
                rate: request.rate,
                tick: request.tick_s,
                phase,
            })
            .collect();
        let size = request.messages as usize;
        Ok(Tally {
            seen: vec![vec![0u8; size]; request.senders.len()],
            counts: request
                .senders
                .iter()
                .map(|id| SenderTally {
                    id: id.clone(),
                    received: 0,
                    late: 0,
                    duplicated: 0,
                    copies: 0,
                })
                .collect(),
            index,
            schedules,
            stale: 0,
            early: 0,
            received: 0,
            sampled: 0,
            per_second: Vec::new(),
            latency: Histogram::new_with_bounds(1, HIGHEST_US, DIGITS)
                .map_err(|e| e.to_string())?,
            request,
        })
    }

    /// A message seen at `seen_at`; its latency is recorded if it is in the sample.
    pub fn arrive(&mut self, key: Key, seen_at: f64, sampled: bool) {
        let (trial, index) = trial_of(key.seq);
        let Ok(place) = self
            .index
            .binary_search_by_key(&(key.host, key.sender), |&(numbers, _)| numbers)
        else {
            self.stale += 1;
            return;
        };
        let who = self.index[place].1;
        if trial != self.request.trial || index >= self.request.messages {
            self.stale += 1;
            return;
        }
        let flag = &mut self.seen[who][index as usize];
        let count = &mut self.counts[who];
        if *flag != 0 {
            if self.request.copies {
                count.copies += 1;
            } else {
                count.duplicated += 1;
            }
            return;
        }
        *flag = 1;
        count.received += 1;
        self.received += 1;
        let latency = seen_at - self.schedules[who].due_at(index);
        if latency > self.request.bound_s {
            count.late += 1;
        }
        self.count_second(seen_at);
        let us = (latency * 1e6).round();
        if us < 1.0 {
            self.early += (latency < 0.0) as u64;
        }
        if !sampled {
            return;
        }
        self.sampled += 1;
        self.latency
            .saturating_record((us.max(1.0) as u64).min(HIGHEST_US));
    }

    fn count_second(&mut self, seen_at: f64) {
        let second = ((seen_at - self.request.start).max(0.0) as usize).min(PER_SECOND_MAX - 1);
        if second >= self.per_second.len() {
            self.per_second.resize(second + 1, 0);
        }
        self.per_second[second] += 1;
    }

    fn histogram_us(&self) -> BTreeMap<String, u64> {
        self.latency
            .iter_recorded()
            .map(|v| {
                (
                    self.latency
                        .median_equivalent(v.value_iterated_to())
                        .to_string(),
                    v.count_at_value(),
                )
            })
            .collect()
    }

    fn latency_ms(&self) -> LatencyMs {
        let at = |q: f64| {
            (!self.latency.is_empty()).then(|| self.latency.value_at_quantile(q) as f64 / 1000.0)
        };
        LatencyMs {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            p999: at(0.999),
            max: (!self.latency.is_empty()).then(|| self.latency.max() as f64 / 1000.0),
        }
    }
}

/// "host3-s12" -> (3, 12).
fn sender_numbers(name: &str) -> Result<(u64, u64), String> {
    let bad = || format!("{name:?} is not a sender id like host1-s1");
    let (host, sender) = name
        .strip_prefix("host")
        .and_then(|r| r.split_once("-s"))
        .ok_or_else(bad)?;
    Ok((
        host.parse().map_err(|_| bad())?,
        sender.parse().map_err(|_| bad())?,
    ))
}

/// The passes' resolution: how long a line could wait between being written and being read.
struct Looks {
    count: u64,
    previous_start: f64,
    gaps: Histogram<u64>,
    longest: f64,
}

impl Looks {
    fn new() -> Looks {
        Looks {
            count: 0,
            previous_start: now(),
            gaps: Histogram::new_with_bounds(1, HIGHEST_US, DIGITS).unwrap(),
            longest: 0.0,
        }
    }

    /// A pass began reading at `start` and ended at `end`. If the wait before it returned at once (busy),
    /// a line may have been written just after the previous pass began; else, just before this one woke.
    fn pass(&mut self, busy: bool, woke: f64, start: f64, end: f64) {
        let since = if busy { self.previous_start } else { woke };
        let gap = (end - since).max(0.0);
        self.previous_start = start;
        self.count += 1;
        self.longest = self.longest.max(gap);
        self.gaps
            .saturating_record(((gap * 1e6) as u64).clamp(1, HIGHEST_US));
    }

    fn p99_s(&self) -> f64 {
        if self.gaps.is_empty() {
            0.0
        } else {
            self.gaps.value_at_quantile(0.99) as f64 / 1e6
        }
    }
}

struct Args {
    directory: PathBuf,
    everywhere: bool,
}

fn args(argv: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        directory: PathBuf::new(),
        everywhere: false,
    };
    let mut words = argv.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "--dir" => parsed.directory = words.next().ok_or("--dir needs a path")?.into(),
            "--everywhere" => parsed.everywhere = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if parsed.directory.as_os_str().is_empty() {
        return Err("follow needs --dir PATH".into());
    }
    Ok(parsed)
}

pub fn main(argv: &[String]) -> Result<(), String> {
    let args = args(argv)?;
    let mut output = Output::new(&args.directory, args.everywhere)?;
    output.skip_to_end();
    let mut requests = LineReader::stdin();
    emit(&serde_json::json!({"op": "following"}));
    while let Some(line) = requests.next_line() {
        let (op, body) = split_op(&line).map_err(|e| e.to_string())?;
        match op.as_str() {
            "trial" => emit(&trial(
                &mut output,
                &mut requests,
                parse(&body).map_err(|e| e.to_string())?,
            )?),
            "drain" => emit(&drain(
                &mut output,
                &parse(&body).map_err(|e| e.to_string())?,
            )),
            "forget" => emit(&ForgotRecord {
                op: "forgot".into(),
                files: output.forget(),
            }),
            "end" => return Ok(()),
            other => return Err(format!("unknown op {other:?}")),
        }
    }
    Ok(())
}

/// Read until no line has arrived for quiet_s (at most max_s): every line is an earlier trial's.
fn drain(output: &mut Output, request: &DrainRequest) -> DrainedRecord {
    let (began, cpu0) = (now(), cpu_seconds());
    let mut last = began;
    let mut stale = 0u64;
    while now() - last < request.quiet_s && now() - began < request.max_s {
        output.wait(-1, 10);
        output.poll_due(now());
        let mut found = 0u64;
        output.read_dirty(&mut |_, _, data| found += keys(data).count() as u64);
        if found > 0 {
            stale += found;
            last = now();
        }
    }
    DrainedRecord {
        op: "drained".into(),
        stale,
        waited_s: round(now() - began, 3),
        cpu_s: round(cpu_seconds() - cpu0, 4),
    }
}

/// Follow one trial until every message sent has arrived, or the give-up time and every report are in, or
/// the host says stop.
fn trial(
    output: &mut Output,
    requests: &mut LineReader,
    request: TrialRequest,
) -> Result<TallyRecord, String> {
    let (user0, system0) = cpu_times();
    let (give_up, ledger_wait) = (request.give_up, request.ledger_wait_s);
    let number = request.trial;
    output.sample_for(request.rate * request.senders.len() as f64, request.bound_s);
    let mut tally = Tally::new(request)?;
    let mut looks = Looks::new();
    let (mut poll_gap, mut previous_poll) = (0.0f64, now());
    let mut expected: Option<u64> = None;
    let mut last_scan = now();
    let ended = loop {
        let before = now();
        let timeout = if requests.has_line() {
            0
        } else {
            output.wait_ms(before)
        };
        let stdin_ready = output.wait(requests.fd(), timeout);
        let woke = now();
        if woke - last_scan > 0.1 {
            output.scan(); // a file inotify did not announce (created before its directory was watched)
            last_scan = woke;
        }
        let start = now();
        let polled = output.poll_due(start);
        let read = output.read_dirty(&mut |at, sampled, data| {
            for key in keys(data) {
                tally.arrive(key, at, sampled);
            }
        });
        let end = now();
        if read {
            looks.pass(woke - before < BUSY_S, woke, start, end);
        }
        if polled {
            // A line written just after the previous poll began waited until this one's read.
            poll_gap = poll_gap.max(end - previous_poll);
            previous_poll = start;
        }
        let mut stopped = requests.closed;
        let lines = if stdin_ready {
            requests.read_available()
        } else {
            requests.buffered()
        };
        for line in lines {
            let (op, body) = split_op(&line).map_err(|e| e.to_string())?;
            match op.as_str() {
                "expect" => {
                    expected = Some(
                        parse::<ExpectRequest>(&body)
                            .map_err(|e| e.to_string())?
                            .sent
                            .values()
                            .sum(),
                    )
                }
                "stop" => stopped = true,
                other => return Err(format!("unknown op {other:?} during a trial")),
            }
        }
        if stopped || requests.closed {
            break "stopped";
        }
        if expected.is_some_and(|sent| tally.received >= sent) {
            break "all-arrived";
        }
        let at = now();
        if at > give_up && (expected.is_some() || at > give_up + ledger_wait) {
            break "give-up";
        }
    };
    let (user, system) = cpu_times();
    Ok(TallyRecord {
        op: "tally".into(),
        trial: number,
        histogram_us: tally.histogram_us(),
        latency_ms: tally.latency_ms(),
        senders: tally.counts.clone(),
        stale: tally.stale,
        early: tally.early,
        looks: looks.count,
        look_gap_max_s: round(looks.longest, 6),
        look_gap_p99_s: round(looks.p99_s(), 6),
        poll_gap_max_s: round(poll_gap, 6),
        sampled: tally.sampled,
        arrived_per_s: std::mem::take(&mut tally.per_second),
        cpu_s: round(user - user0 + system - system0, 4),
        cpu_system_s: round(system - system0, 4),
        ended: ended.into(),
    })
}

/// One example of every record, for the contract test (syslogbench/model/rigrecord.py reads them strictly).
pub fn examples() -> Vec<serde_json::Value> {
    let trial = TrialRequest {
        trial: 3,
        rate: 250.0,
        messages: 1000,
        start: 1.8e9,
        bound_s: 1.0,
        give_up: 1.8e9 + 7.0,
        ledger_wait_s: 30.0,
        senders: vec!["host1-s1".into(), "host1-s2".into()],
        tick_s: 0.005,
        phases_s: vec![0.0, 0.0025],
        copies: false,
    };
    let expect = ExpectRequest {
        sent: BTreeMap::from([("host1-s1".into(), 1000), ("host1-s2".into(), 990)]),
    };
    let drain = DrainRequest {
        quiet_s: 0.5,
        max_s: 60.0,
    };
    let tally = TallyRecord {
        op: "tally".into(),
        trial: 3,
        senders: vec![SenderTally {
            id: "host1-s1".into(),
            received: 1000,
            late: 2,
            duplicated: 0,
            copies: 0,
        }],
        stale: 0,
        early: 0,
        histogram_us: BTreeMap::from([("1000".into(), 998), ("1500000".into(), 2)]),
        latency_ms: LatencyMs {
            p50: Some(1.0),
            p90: Some(1.0),
            p99: Some(1.0),
            p999: Some(1500.0),
            max: Some(1500.0),
        },
        looks: 800,
        look_gap_max_s: 0.0004,
        look_gap_p99_s: 0.0002,
        poll_gap_max_s: 0.011,
        sampled: 125,
        arrived_per_s: vec![600, 400],
        cpu_s: 0.01,
        cpu_system_s: 0.004,
        ended: "all-arrived".into(),
    };
    let drained = DrainedRecord {
        op: "drained".into(),
        stale: 12,
        waited_s: 0.5,
        cpu_s: 0.001,
    };
    let forgot = ForgotRecord {
        op: "forgot".into(),
        files: 192,
    };
    [
        with_op("trial", serde_json::to_value(trial)),
        with_op("expect", serde_json::to_value(expect)),
        with_op("drain", serde_json::to_value(drain)),
        serde_json::to_value(tally),
        serde_json::to_value(drained),
        serde_json::to_value(forgot),
    ]
    .into_iter()
    .map(Result::unwrap)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(copies: bool) -> TrialRequest {
        TrialRequest {
            trial: 2,
            rate: 1000.0,
            messages: 10,
            start: 100.0,
            bound_s: 1.0,
            give_up: 200.0,
            ledger_wait_s: 30.0,
            senders: vec!["host1-s1".into(), "host2-s1".into()],
            tick_s: 0.0,
            phases_s: vec![0.0, 0.0],
            copies,
        }
    }

    #[test]
    fn latency_counts_from_the_batch_of_the_senders_own_grid() {
        let mut gridded = request(false);
        gridded.tick_s = 0.005;
        gridded.phases_s = vec![0.0, 0.0025];
        let mut tally = Tally::new(gridded).unwrap();
        let seq = |index: u64| 2 * crate::key::TRIAL_SEQ_SPAN + index + 1;
        // host2-s1's message 3 (own time 3 ms) goes in its batch at 2.5 + 5 = 7.5 ms.
        tally.arrive(key(2, seq(3)), 100.0085, true);
        assert_eq!(tally.latency.max(), 1000, "1 ms after its batch");
        // host1-s1's message 6 (6 ms) goes in its batch at 10 ms.
        tally.arrive(key(1, seq(6)), 100.0105, true);
        assert_eq!(tally.latency.min(), 500);
        let mut unequal = request(false);
        unequal.phases_s = vec![0.0];
        assert!(Tally::new(unequal).is_err(), "a phase for each sender");
    }

    fn key(host: u64, seq: u64) -> Key {
        Key {
            host,
            sender: 1,
            seq,
        }
    }

    #[test]
    fn our_layout_names_are_followed_and_done_log_is_not() {
        assert!(is_output_name("test.seed2014.facility.3.severity.7.log"));
        assert!(is_output_name("test.plain.all.log"));
        assert!(!is_output_name("done.log"));
        assert!(!is_output_name("test.x.facility.a.severity.7.log"));
        assert!(!is_output_name("test..all.log"));
    }

    #[test]
    fn a_trial_counts_received_late_duplicated_and_stale_per_sender() {
        let mut tally = Tally::new(request(false)).unwrap();
        let seq = |index: u64| 2 * crate::key::TRIAL_SEQ_SPAN + index + 1;
        tally.arrive(key(1, seq(0)), 100.002, true); // 2 ms
        tally.arrive(key(1, seq(0)), 100.003, true); // again: a duplicate
        tally.arrive(key(1, seq(5)), 101.5, true); // due at 100.005: late
        tally.arrive(key(2, seq(9)), 99.0, true); // seen before it was due: early
        tally.arrive(key(1, crate::key::TRIAL_SEQ_SPAN + 1), 100.0, true); // an earlier trial's
        tally.arrive(key(1, seq(10)), 100.0, true); // past the trial's messages
        tally.arrive(key(3, seq(1)), 100.0, true); // no such sender
        let first = &tally.counts[0];
        assert_eq!((first.received, first.late, first.duplicated), (2, 1, 1));
        assert_eq!(
            (tally.counts[1].received, tally.early, tally.stale),
            (1, 1, 3)
        );
        // Per second from the start (100.0), first sightings only; the early one in the first second.
        assert_eq!(tally.per_second, vec![2, 1]);
        let histogram = tally.histogram_us();
        assert_eq!(histogram.values().sum::<u64>(), 3);
        assert_eq!(histogram.get("2000"), Some(&1), "{histogram:?}");
        assert_eq!(
            histogram.get("1"),
            Some(&1),
            "the early one, at 1 us: {histogram:?}"
        );
    }

    #[test]
    fn each_line_counts_for_its_own_sender_whatever_the_order_they_were_named_in() {
        let mut named = request(false);
        named.senders = vec!["host2-s1".into(), "host1-s3".into(), "host1-s1".into()];
        named.phases_s = vec![0.0; 3];
        let mut tally = Tally::new(named.clone()).unwrap();
        let seq = 2 * crate::key::TRIAL_SEQ_SPAN + 1;
        for (host, sender) in [(1, 1), (1, 1), (2, 1), (1, 3), (1, 2)] {
            tally.arrive(
                Key {
                    host,
                    sender,
                    seq: seq + host + sender,
                },
                100.0,
                false,
            );
        }
        let received: Vec<u64> = tally.counts.iter().map(|c| c.received).collect();
        assert_eq!(received, vec![1, 1, 1]);
        assert_eq!((tally.counts[2].duplicated, tally.stale), (1, 1));
        named.senders[1] = "host2-s1".into();
        let refused = Tally::new(named).err().unwrap_or_default();
        assert!(refused.contains("named twice"), "{refused}");
    }

    #[test]
    fn lost_events_make_every_followed_file_looked_at() {
        let dir = std::env::temp_dir().join(format!("follow-overflow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["test.x.all.log", "test.y.all.log"] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let mut output = Output::new(&dir, false).unwrap();
        output.skip_to_end();
        assert!(output.dirty.is_empty());
        output.event(-1, libc::IN_Q_OVERFLOW, b"");
        assert_eq!(output.dirty.len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_user_configs_second_sighting_is_a_copy() {
        let mut tally = Tally::new(request(true)).unwrap();
        let seq = 2 * crate::key::TRIAL_SEQ_SPAN + 1;
        tally.arrive(key(1, seq), 100.001, true);
        tally.arrive(key(1, seq), 100.001, true);
        assert_eq!((tally.counts[0].copies, tally.counts[0].duplicated), (1, 0));
    }

    #[test]
    fn the_histogram_keeps_three_significant_digits_and_merges_by_adding() {
        let mut tally = Tally::new(request(false)).unwrap();
        let seq = |index: u64| 2 * crate::key::TRIAL_SEQ_SPAN + index + 1;
        tally.arrive(key(1, seq(0)), 100.0 + 0.123456, true); // 123,456 us
        let histogram = tally.histogram_us();
        let value: u64 = histogram.keys().next().unwrap().parse().unwrap();
        assert!((123_400..=123_500).contains(&value), "{histogram:?}");
        assert_eq!(
            tally.latency_ms().p50,
            Some(tally.latency.value_at_quantile(0.5) as f64 / 1000.0)
        );
    }

    #[test]
    fn a_look_gap_is_the_pass_when_idle_and_since_the_previous_pass_when_busy() {
        let mut looks = Looks::new();
        looks.previous_start = 10.0;
        looks.pass(false, 20.0, 20.0001, 20.0002); // idle: woke at 20.0
        assert!((looks.longest - 0.0002).abs() < 1e-9);
        looks.pass(true, 20.0003, 20.0003, 20.0010); // busy: since the previous pass began (20.0001)
        assert!((looks.longest - 0.0009).abs() < 1e-9);
        assert_eq!(looks.count, 2);
    }

    #[test]
    fn a_user_config_is_followed_in_every_file_nested_ones_too_and_ours_only_by_name() {
        let dir = std::env::temp_dir().join(format!("follow-everywhere-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let mut everywhere = Output::new(&dir, true).unwrap();
        let mut ours = Output::new(&dir, false).unwrap();
        std::fs::write(
            dir.join("syslog"),
            b"syslogbench h=1 s=1 q=1\nsyslogbench h=1 s=1 q=2\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("sub").join("mail.log"),
            b"syslogbench h=1 s=1 q=2\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("late")).unwrap();
        std::fs::write(dir.join("late").join("x"), b"syslogbench h=1 s=1 q=3\n").unwrap();
        let mut found = Vec::new();
        for _ in 0..3 {
            everywhere.wait(-1, 50);
            everywhere.scan();
            everywhere.read_dirty(&mut |_, _, data| found.extend(keys(data).map(|k| k.seq)));
        }
        found.sort();
        assert_eq!(found, vec![1, 2, 2, 3]);
        ours.wait(-1, 50);
        ours.scan();
        let mut none = 0;
        ours.read_dirty(&mut |_, _, data| none += keys(data).count());
        assert_eq!(none, 0, "no file of our own layout here");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_follower_reads_only_whole_lines_appended_since_its_last_look() {
        let dir = std::env::temp_dir().join(format!("follow-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("test.x.all.log");
        std::fs::write(&path, b"old syslogbench h=1 s=1 q=1\n").unwrap();
        let mut output = Output::new(&dir, false).unwrap();
        output.skip_to_end();
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(b"new syslogbench h=1 s=1 q=2\nhalf syslogbench h=1 s=1 q=")
            .unwrap();
        std::fs::write(dir.join("done.log"), b"syslogbench h=9 s=9 q=9\n").unwrap();
        output.wait(-1, 100);
        let mut found = Vec::new();
        output.read_dirty(&mut |_, _, data| found.extend(keys(data).map(|k| k.seq)));
        assert_eq!(found, vec![2]);
        file.write_all(b"3 f=0 v=0 x\n").unwrap();
        output.wait(-1, 100);
        output.read_dirty(&mut |_, _, data| found.extend(keys(data).map(|k| k.seq)));
        assert_eq!(found, vec![2, 3]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_split_files_name_gives_its_facility_and_severity() {
        assert_eq!(split_pri(b"test.ab-1.facility.3.severity.5.log"), Some(29));
        assert_eq!(split_pri(b"test.x.facility.23.severity.7.log"), Some(191));
        assert_eq!(split_pri(b"test.x.all.log"), None);
        assert_eq!(split_pri(b"test.x.facility.3.severity.log"), None);
        assert_eq!(split_pri(b"syslog"), None);
    }

    #[test]
    fn above_the_sample_rate_only_a_share_of_split_files_is_watched_and_the_rest_is_polled() {
        let dir = std::env::temp_dir().join(format!("follow-sample-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let name = |pri: u64| format!("test.x.facility.{}.severity.{}.log", pri / 8, pri % 8);
        for pri in 0..8 {
            std::fs::write(dir.join(name(pri)), b"").unwrap();
        }
        std::fs::write(dir.join("test.x.all.log"), b"").unwrap();
        let mut output = Output::new(&dir, false).unwrap();
        output.skip_to_end();
        assert_eq!(
            output.by_watch.len(),
            9,
            "at a low rate every file is watched"
        );
        output.sample_for(4.0 * SAMPLE_LINES_S, 1.0); // one split file in 4, and every other file
        let watched: Vec<u64> = output
            .files
            .iter()
            .filter(|f| f.watch.is_some())
            .map(|f| f.pri.unwrap_or(999))
            .collect();
        assert_eq!(watched.len(), 3, "{watched:?}");
        assert!(watched.iter().all(|pri| pri % 4 == 0 || *pri == 999));
        assert_eq!(output.poll_s, 0.08); // 8% of a 1 s bound
        use std::io::Write;
        for pri in [0, 1] {
            // Opened, written and closed, as rsyslog's dynaFile cache does: the close wakes no one.
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(dir.join(name(pri)))
                .unwrap();
            file.write_all(b"syslogbench h=1 s=1 q=1\n").unwrap();
        }
        let mut found = Vec::new();
        output.wait(-1, 100);
        output.read_dirty(&mut |_, sampled, _| found.push(sampled));
        assert_eq!(found, vec![true], "the sampled file on its write");
        output.last_poll = now() - 1.0;
        assert!(output.poll_due(now()));
        assert!(!output.poll_due(now()), "once a poll interval");
        output.read_dirty(&mut |_, sampled, _| found.push(sampled));
        assert_eq!(found, vec![true, false], "the other at the poll");
        output.sample_for(100.0, 1.0);
        assert_eq!(output.by_watch.len(), 9, "every file watched again");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_message_outside_the_sample_counts_but_has_no_latency() {
        let mut tally = Tally::new(request(false)).unwrap();
        let seq = |index: u64| 2 * crate::key::TRIAL_SEQ_SPAN + index + 1;
        tally.arrive(key(1, seq(0)), 100.002, true);
        tally.arrive(key(1, seq(5)), 101.5, false); // due at 100.005: late, unsampled
        assert_eq!((tally.received, tally.sampled), (2, 1));
        assert_eq!(tally.counts[0].late, 1);
        assert_eq!(tally.histogram_us().values().sum::<u64>(), 1);
    }
}
