//! The follower's wake-ups: inotify on the directories (new files) and on the sample's files (writes), and
//! the wait in poll() for those or a request on stdin.

use super::error::FollowError;
use super::output::Output;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

impl Output {
    /// An inotify watch of `path` for `mask`: its descriptor.
    pub(super) fn add_watch(&self, path: &Path, mask: u32) -> std::io::Result<i32> {
        let path = CString::new(path.as_os_str().as_encoded_bytes())?;
        // SAFETY: a watch on a path we own the string of.
        let wd = unsafe { libc::inotify_add_watch(self.inotify, path.as_ptr(), mask) };
        if wd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(wd)
    }

    pub(super) fn watch(&mut self, directory: &Path) -> Result<(), FollowError> {
        // New files only. Writes are watched file by file, for the files of the sample alone; and no
        // IN_CLOSE_WRITE: rsyslog's dynaFile cache (10 files by default) closes one of the 192 split files
        // for nearly every message, and a wake-up per close took the follower 3.9 CPU s in a 10 s trial at
        // 61,869 msg/s.
        let wd = self
            .add_watch(directory, libc::IN_CREATE | libc::IN_MOVED_TO)
            .map_err(|error| FollowError::Watch {
                directory: directory.to_path_buf(),
                error,
            })?;
        self.watches.insert(wd, directory.to_path_buf());
        Ok(())
    }

    /// Wait up to `timeout_ms` for the daemon to write, or for a request on `stdin`. Returns whether
    /// stdin is readable.
    pub fn wait(&mut self, stdin: i32, timeout_ms: i32) -> bool {
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

    pub(super) fn event(&mut self, wd: i32, mask: u32, name: &[u8]) {
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
}
