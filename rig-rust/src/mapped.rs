//! A rendered file, mapped read-only: the messages a sender sends (rendered by syslogbench/model).

use std::fs::File;
use std::os::fd::AsRawFd;

/// Why a rendered file could not be mapped, or its offsets read.
#[derive(Debug)]
pub enum MapError {
    Open {
        path: String,
        error: std::io::Error,
    },
    Size {
        path: String,
        error: std::io::Error,
    },
    Map {
        path: String,
        error: std::io::Error,
    },
    /// A file of offsets whose length is no multiple of 8.
    Offsets {
        bytes: usize,
    },
}

impl std::fmt::Display for MapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MapError::Open { path, error } => write!(f, "cannot open {path}: {error}"),
            MapError::Size { path, error } => write!(f, "{path}: {error}"),
            MapError::Map { path, error } => write!(f, "cannot map {path}: {error}"),
            MapError::Offsets { bytes } => {
                write!(f, "{bytes} bytes of offsets is not a whole number of them")
            }
        }
    }
}

impl std::error::Error for MapError {}

pub struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
    pub file: File,
}

impl Mapped {
    pub fn open(path: &str) -> Result<Self, MapError> {
        let file = File::open(path).map_err(|error| MapError::Open {
            path: path.into(),
            error,
        })?;
        let len = file
            .metadata()
            .map_err(|error| MapError::Size {
                path: path.into(),
                error,
            })?
            .len() as usize;
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
            return Err(MapError::Map {
                path: path.into(),
                error: std::io::Error::last_os_error(),
            });
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
pub fn offsets(file: &Mapped) -> Result<&[u64], MapError> {
    let raw = file.bytes();
    if raw.len() % 8 != 0 {
        return Err(MapError::Offsets { bytes: raw.len() });
    }
    if raw.is_empty() {
        return Ok(&[]);
    }
    // SAFETY: a mapping starts on a page boundary, so it is aligned for u64; its length is a multiple of 8,
    // and the slice lives as long as the mapping it borrows.
    Ok(unsafe { std::slice::from_raw_parts(raw.as_ptr().cast::<u64>(), raw.len() / 8) })
}
