//! A rendered file, mapped read-only: the messages a sender sends (rendered by syslogbench/model).

use std::fs::File;
use std::os::fd::AsRawFd;

pub struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
    pub file: File,
}

impl Mapped {
    pub fn open(path: &str) -> Result<Self, String> {
        let file = File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
        let len = file.metadata().map_err(|e| format!("{path}: {e}"))?.len() as usize;
        if len == 0 {
            return Ok(Mapped {
                ptr: std::ptr::null_mut(),
                len,
                file,
            });
        }
        // SAFETY: a private read-only mapping of a file we keep open; unmapped in drop.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(format!(
                "cannot map {path}: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Mapped { ptr, len, file })
    }

    pub fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the mapping is len bytes long and lives as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmapping what open() mapped.
            unsafe { libc::munmap(self.ptr, self.len) };
        }
    }
}

/// Each message's end offset in the rendered file: little-endian u64s, one per message, as mapped.
#[cfg(target_endian = "little")]
pub fn offsets(file: &Mapped) -> Result<&[u64], String> {
    let raw = file.bytes();
    if raw.len() % 8 != 0 {
        return Err(format!(
            "{} bytes of offsets is not a whole number of them",
            raw.len()
        ));
    }
    if raw.is_empty() {
        return Ok(&[]);
    }
    // SAFETY: a mapping starts on a page boundary, so it is aligned for u64; its length is a multiple of 8,
    // and the slice lives as long as the mapping it borrows.
    Ok(unsafe { std::slice::from_raw_parts(raw.as_ptr().cast::<u64>(), raw.len() / 8) })
}
