//! The output being followed: every output file under the directory, each read from where the last look
//! stopped, whole lines only. Which files wake the follower is sample.rs's; the inotify side is events.rs's.

use super::error::FollowError;
use super::names::{is_output_name, split_pri};
use super::sample::POLL_MAX_S;
use crate::clock::now;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

const READ_BYTES: usize = 1 << 20;

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
pub(super) struct Followed {
    pub(super) path: PathBuf,
    file: Option<File>,
    partial: Vec<u8>,
    dirty: bool,
    pub(super) pri: Option<u64>,
    pub(super) watch: Option<i32>,
}

/// Every output file under the directory, read from where the last look stopped.
pub struct Output {
    pub(super) directory: PathBuf,
    pub(super) everywhere: bool,
    pub(super) inotify: i32,
    pub(super) watches: HashMap<i32, PathBuf>,
    pub(super) files: Vec<Followed>,
    by_path: HashMap<PathBuf, usize>,
    /// (watch, name) to file: an inotify event finds its file without building a path.
    pub(super) by_event: HashMap<i32, HashMap<Vec<u8>, usize>>,
    pub(super) dirty: Vec<usize>,
    buffer: Vec<u8>,
    pub(super) events: Vec<u8>,
    /// A split file is in the latency's sample when its facility x 8 + severity is a multiple of this.
    pub(super) sample_every: u64,
    /// Files watched one by one (the sample), by watch.
    pub(super) by_watch: HashMap<i32, usize>,
    pub(super) poll_s: f64,
    pub(super) last_poll: f64,
    /// When a read last returned bytes: every byte the daemon wrote before it has been read by then.
    pub last_data_at: f64,
}

impl Output {
    pub fn new(directory: &Path, everywhere: bool) -> Result<Output, FollowError> {
        // SAFETY: a new inotify descriptor, non-blocking (poll() says when to read it).
        let inotify = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if inotify < 0 {
            return Err(FollowError::Inotify(std::io::Error::last_os_error()));
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
            last_data_at: now(),
        };
        output.watch(directory)?;
        output.scan();
        Ok(output)
    }

    pub(super) fn wanted(&self, path: &Path) -> bool {
        self.everywhere
            || path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_output_name)
    }

    /// The file's slot, made on first sight (not opened yet: read_dirty opens it).
    pub(super) fn slot(&mut self, path: PathBuf) -> usize {
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

    pub(super) fn mark(&mut self, slot: usize) {
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

    /// Read what was appended to every file the daemon wrote since the last look; call `found` with the
    /// time of each read, whether the file is in the latency's sample, and the whole lines it completed.
    /// Whether anything was read from a file of the sample.
    pub fn read_dirty(&mut self, found: &mut dyn FnMut(f64, bool, &[u8])) -> bool {
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
                self.last_data_at = read_at;
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
