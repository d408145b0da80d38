//! The close request: our side closed, then a wait until the peer has acknowledged every byte.

use super::link::Link;
use super::records::{CloseRequest, ClosedRecord};
use crate::clock::{cpu_seconds, now, round};
use std::time::Duration;

/// The longest and shortest waits between two looks at the send queue while draining.
const DRAIN_LOOK_S: (f64, f64) = (0.01, 0.25);

/// Close our side and wait until the peer has acknowledged every byte: a sender that exits with bytes in
/// its send queue loses them when its container's network goes (NOTES.md, "tail loss").
pub fn close(link: &mut Link, request: &CloseRequest) -> ClosedRecord {
    let began = now();
    let mut peer_closed = None;
    if let Some(tls) = link.tls.as_mut() {
        tls.close_notify();
        let _ = tls.flush(link.fd, Some(began + request.drain_timeout_s));
    }
    let mut left = 0;
    if !link.udp {
        // SAFETY: shutting our side of a socket we own.
        unsafe { libc::shutdown(link.fd, libc::SHUT_WR) };
        let deadline = began + request.drain_timeout_s;
        let mut wait = DRAIN_LOOK_S.0;
        left = unsent_bytes(link.fd);
        while left > 0 && now() < deadline {
            std::thread::sleep(Duration::from_secs_f64(wait));
            let before = left;
            left = unsent_bytes(link.fd);
            wait = next_look(before, left, wait);
        }
        if link.tls.is_some() {
            peer_closed = Some(wait_for_close(link.fd, deadline));
        }
    }
    // SAFETY: the socket is ours to close now.
    unsafe { libc::close(link.fd) };
    ClosedRecord {
        op: "closed".into(),
        left_bytes: left,
        drain_s: round(now() - began, 6),
        cpu_s: round(cpu_seconds(), 6),
        peer_closed,
    }
}

/// Read (and drop) what the peer still sends until it closes: closing with unread data would send RST.
fn wait_for_close(fd: i32, deadline: f64) -> bool {
    let mut sink = [0u8; 65536];
    while now() < deadline {
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let wait_ms = ((deadline - now()) * 1000.0).clamp(1.0, 250.0) as i32;
        // SAFETY: poll on one pollfd we own, then read into our buffer.
        if unsafe { libc::poll(&mut poll, 1, wait_ms) } <= 0 {
            continue;
        }
        let got = unsafe { libc::read(fd, sink.as_mut_ptr().cast(), sink.len()) };
        if got == 0 {
            return true;
        }
        if got < 0 {
            return false;
        }
    }
    false
}

/// Bytes still in the send queue: sent but not acknowledged, or not yet sent.
fn unsent_bytes(fd: i32) -> u64 {
    let mut left: libc::c_int = 0;
    // SAFETY: TIOCOUTQ writes one int.
    if unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut left) } != 0 {
        return 0;
    }
    left.max(0) as u64
}

/// The wait before the next look at the send queue: about half the time it takes to empty at the pace it
/// went, twice as long as the last while it does not move (rsyslog left queues standing for tens of seconds).
pub fn next_look(before: u64, left: u64, wait: f64) -> f64 {
    let (shortest, longest) = DRAIN_LOOK_S;
    if left >= before {
        return (wait * 2.0).min(longest);
    }
    let pace = (before - left) as f64 / wait;
    (left as f64 / pace / 2.0).clamp(shortest, longest)
}
