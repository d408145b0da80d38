//! The socket the Python rig connected, and how messages go out on it: a byte stream over TCP, records
//! over TLS, a datagram each over UDP. A blocked socket is waited on, never spun on, until the give-up time.

use super::error::SendError;
use super::tls::Tls;
use crate::clock::now;
use crate::mapped::Mapped;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// A blocked send looks at the give-up time this often (SO_SNDTIMEO).
pub const SEND_LOOK: Duration = Duration::from_millis(250);
/// UDP: datagrams handed to the kernel per sendmmsg call.
const UDP_BATCH: usize = 256;
/// TLS: at most one record's worth of whole messages per write (a record is 16 KiB at most).
pub const RECORD_BYTES: u64 = 16_384;
/// The longest one wait for a blocked socket: a look at the clock for the give-up time.
pub const BLOCKED_WAIT_MS: f64 = 100.0;

/// The socket, as the Python rig connected it (and over TLS, the session on it).
pub struct Link {
    pub fd: i32,
    pub udp: bool,
    pub tls: Option<Tls>,
}

pub fn set_send_timeout(fd: i32, timeout: Duration) -> Result<(), SendError> {
    let value = libc::timeval {
        tv_sec: timeout.as_secs() as _,
        tv_usec: timeout.subsec_micros() as _,
    };
    // SAFETY: setsockopt with a timeval we own.
    let done = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (&value as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as u32,
        )
    };
    if done != 0 {
        return Err(SendError::NotASocket {
            fd,
            error: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// TCP: the whole file with sendfile(2), from the page cache to the socket; the bytes handed over.
pub fn send_file(sock: i32, data: &Mapped, give_up: Option<f64>) -> Result<u64, SendError> {
    let size = data.bytes().len() as i64;
    let mut offset: libc::off_t = 0;
    while offset < size {
        // SAFETY: sendfile from our open file to the socket; the kernel advances offset.
        let done = unsafe {
            libc::sendfile(
                sock,
                data.file.as_raw_fd(),
                &mut offset,
                (size - offset) as usize,
            )
        };
        if done < 0 && !retry(sock, give_up)? {
            break;
        }
    }
    Ok(offset as u64)
}

/// After a send that returned an error: Ok(true) to try again (interrupted, or blocked before the give-up
/// time, once the socket takes bytes again), Ok(false) to stop (past the give-up time), Err for a broken
/// connection.
fn retry(fd: i32, give_up: Option<f64>) -> Result<bool, SendError> {
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EINTR) => Ok(true),
        Some(libc::EAGAIN) => Ok(wait_writable(fd, give_up)),
        _ => Err(SendError::Socket(error)),
    }
}

/// Sleep until the socket (non-blocking: Python handed it over with a timeout) takes bytes again, or the
/// give-up time; whether to try again. Retrying at once would spin: a daemon that pushes back made the
/// senders take a core of the 2 it shares with them (54.8 CPU s in a 60 s trial at 180,601 msg/s).
pub fn wait_writable(fd: i32, give_up: Option<f64>) -> bool {
    let left_ms = give_up.map_or(BLOCKED_WAIT_MS, |limit| (limit - now()) * 1000.0);
    if left_ms < 0.0 {
        return false;
    }
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    let wait_ms = left_ms.clamp(0.0, BLOCKED_WAIT_MS).ceil() as i32;
    // SAFETY: poll on one pollfd we own. An error or a timeout is looked at again by the caller's loop.
    unsafe { libc::poll(&mut poll, 1, wait_ms) };
    give_up.is_none_or(|limit| now() <= limit)
}

/// Where message `index` begins: the end of the one before.
pub fn begin(ends: &[u64], index: u64) -> u64 {
    if index == 0 {
        0
    } else {
        ends[index as usize - 1]
    }
}

/// Send messages [first, last); returns how many are now wholly handed over (first..returned).
pub fn send_range(
    link: &mut Link,
    data: &[u8],
    ends: &[u64],
    first: u64,
    last: u64,
    give_up: Option<f64>,
) -> Result<u64, SendError> {
    if link.udp {
        return send_datagrams(link.fd, data, ends, first, last, give_up);
    }
    if let Some(tls) = link.tls.as_mut() {
        return send_records(tls, link.fd, data, ends, first, last, give_up);
    }
    send_stream(link.fd, data, ends, first, last, give_up)
}

/// TCP: the byte range of whole messages. Blocked past the give-up time, it still finishes the message it
/// is in, so that the next trial's first line is not glued to half of this one's.
fn send_stream(
    fd: i32,
    data: &[u8],
    ends: &[u64],
    first: u64,
    last: u64,
    give_up: Option<f64>,
) -> Result<u64, SendError> {
    let (mut pos, stop) = (begin(ends, first), ends[last as usize - 1]);
    while pos < stop {
        if write_some(fd, &data[pos as usize..stop as usize], &mut pos) {
            continue;
        }
        if !retry(fd, give_up)? {
            break;
        }
    }
    let whole = ends.partition_point(|&end| end <= pos) as u64;
    if pos < stop && pos > begin(ends, whole) {
        let end = ends[whole as usize];
        while pos < end {
            if !write_some(fd, &data[pos as usize..end as usize], &mut pos) {
                retry(fd, None)?;
            }
        }
        return Ok(whole + 1);
    }
    Ok(whole)
}

/// One send(); true if it took bytes (pos advanced), false if it returned an error to look at.
fn write_some(fd: i32, bytes: &[u8], pos: &mut u64) -> bool {
    // SAFETY: send from a slice we borrow, of its length; MSG_NOSIGNAL: a closed peer is an error, not a signal.
    let done = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
    if done < 0 {
        return false;
    }
    *pos += done as u64;
    true
}

/// TLS: whole messages in records of at most RECORD_BYTES; a message counts once its record is all in the
/// kernel. What the give-up time left unsent stays in the session and goes first in the next request.
fn send_records(
    tls: &mut Tls,
    fd: i32,
    data: &[u8],
    ends: &[u64],
    first: u64,
    last: u64,
    give_up: Option<f64>,
) -> Result<u64, SendError> {
    if !tls.flush(fd, give_up)? {
        return Ok(first);
    }
    let mut whole = first;
    while whole < last {
        let from = begin(ends, whole);
        let limit = from + RECORD_BYTES;
        let slice = &ends[whole as usize..last as usize];
        let upto = whole + (slice.partition_point(|&end| end <= limit) as u64).max(1);
        tls.write(&data[from as usize..ends[upto as usize - 1] as usize]);
        if !tls.flush(fd, give_up)? {
            break;
        }
        whole = upto;
    }
    Ok(whole)
}

/// UDP: one datagram per message, UDP_BATCH per system call. A full send buffer blocks; it never drops.
fn send_datagrams(
    fd: i32,
    data: &[u8],
    ends: &[u64],
    first: u64,
    last: u64,
    give_up: Option<f64>,
) -> Result<u64, SendError> {
    let mut next = first;
    while next < last {
        let batch = ((last - next) as usize).min(UDP_BATCH);
        let mut vecs: Vec<libc::iovec> = (0..batch)
            .map(|k| {
                let index = next + k as u64;
                let from = begin(ends, index);
                libc::iovec {
                    iov_base: data[from as usize..].as_ptr() as *mut _,
                    iov_len: (ends[index as usize] - from) as usize,
                }
            })
            .collect();
        let mut headers: Vec<libc::mmsghdr> = vecs
            .iter_mut()
            .map(|vec| {
                // SAFETY: an all-zero msghdr is valid (no name, no control); we set the one iovec.
                let mut header: libc::mmsghdr = unsafe { std::mem::zeroed() };
                header.msg_hdr.msg_iov = vec;
                header.msg_hdr.msg_iovlen = 1;
                header
            })
            .collect();
        // SAFETY: sendmmsg over headers that point into data, which outlives the call.
        let done = unsafe { libc::sendmmsg(fd, headers.as_mut_ptr(), batch as u32, 0) };
        if done < 0 {
            if !retry(fd, give_up)? {
                break;
            }
            continue;
        }
        next += done as u64;
    }
    Ok(next)
}
