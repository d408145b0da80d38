//! `send`: the open-loop sender of one sender id, over a socket the Python rig connected.
//!
//! One code path for a run's burst (rate 0: everything due at once) and a paced trial: message i is due at
//! start + i/rate; a sender behind its schedule sends all that is due at once and never stretches the
//! schedule. Its lag is looked at every batch, not only at the last message, and goes into the record with
//! its CPU seconds and its oversleeps, so that a sender-bound trial can be told from a slow daemon.

use crate::clock::{cpu_seconds, cpu_times, now, round, sleep_until};
use crate::io::{emit, parse, required, split_op, with_op, LineReader};
use crate::mapped::{offsets, Mapped};
use crate::schedule::Schedule;
use crate::templates::{Maker, Templates};
use crate::tls::Tls;
use serde::{Deserialize, Serialize};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// A blocked send looks at the give-up time this often (SO_SNDTIMEO).
const SEND_LOOK: Duration = Duration::from_millis(250);
/// The longest and shortest waits between two looks at the send queue while draining.
const DRAIN_LOOK_S: (f64, f64) = (0.01, 0.25);
/// UDP: datagrams handed to the kernel per sendmmsg call.
const UDP_BATCH: usize = 256;
/// TLS: at most one record's worth of whole messages per write (a record is 16 KiB at most).
const RECORD_BYTES: u64 = 16_384;
/// Messages made from templates at a time: a sender far behind its schedule does not make them all at once.
const MAKE_CHUNK: u64 = 4096;

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SendRequest {
    /// The rendered messages ("" when they are made from templates).
    pub file: String,
    /// Each message's end offset (little-endian u64s); None: a burst of the whole file (a run over TCP).
    #[serde(deserialize_with = "required")]
    pub ends: Option<String>,
    /// A trial's messages made at send time (templates.rs), in place of a file.
    #[serde(deserialize_with = "required")]
    pub templates: Option<Templates>,
    pub count: u64,
    /// Messages per second for this sender; 0: all due at once.
    pub rate: f64,
    /// The common start, in epoch seconds.
    pub start: f64,
    /// After this (epoch seconds) the sender stops: what is left is unsent. None: no give-up time.
    #[serde(deserialize_with = "required")]
    pub give_up: Option<f64>,
    /// The sender's batches go every tick_s on a grid from start + phase_s (schedule.rs); 0: no grid.
    pub tick_s: f64,
    pub phase_s: f64,
}

impl SendRequest {
    pub fn schedule(&self) -> Schedule {
        Schedule {
            start: self.start,
            rate: self.rate,
            tick: self.tick_s,
            phase: self.phase_s,
        }
    }
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CloseRequest {
    pub drain_timeout_s: f64,
}

/// What one send request did: the sender's ledger for its messages.
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SendRecord {
    pub op: String,
    pub intended: u64,
    /// Messages whose every byte was handed to the kernel.
    pub sent: u64,
    /// Bytes handed to the kernel (plaintext over TLS).
    pub bytes: u64,
    /// From the start to the last message handed over.
    pub pace_s: f64,
    /// This process's CPU over the request.
    pub cpu_s: f64,
    /// Of it, the kernel's (system time).
    pub cpu_system_s: f64,
    pub batches: u64,
    /// The largest lag of a batch behind its schedule: when it was handed over, minus when its last
    /// message was due (0 for a burst).
    pub behind_max_s: f64,
    /// The lag of the last batch.
    pub behind_end_s: f64,
    /// The longest a sleep ran past its wake time: the sender's own scheduling, not the daemon.
    pub oversleep_max_s: f64,
    /// When the last message was handed over (epoch seconds).
    pub last_at: f64,
    pub status: String,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClosedRecord {
    pub op: String,
    /// Bytes still unacknowledged when the drain gave up (0: the peer has every byte).
    pub left_bytes: u64,
    pub drain_s: f64,
    /// This process's CPU over its whole life.
    pub cpu_s: f64,
    /// TLS: whether the daemon answered our close_notify by closing. None over TCP and UDP.
    #[serde(deserialize_with = "required")]
    pub peer_closed: Option<bool>,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConnectedRecord {
    pub op: String,
    pub transport: String,
    #[serde(deserialize_with = "required")]
    pub tls_version: Option<String>,
    #[serde(deserialize_with = "required")]
    pub tls_cipher: Option<String>,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FailedRecord {
    pub op: String,
    pub error: String,
}

struct Args {
    fd: i32,
    transport: String,
    ca: Option<String>,
    server_name: String,
}

fn args(argv: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        fd: -1,
        transport: String::new(),
        ca: None,
        server_name: "central".into(),
    };
    let mut words = argv.iter();
    while let Some(word) = words.next() {
        let mut value = || words.next().cloned().ok_or(format!("{word} needs a value"));
        match word.as_str() {
            "--fd" => {
                parsed.fd = value()?
                    .parse()
                    .map_err(|_| "--fd needs a number".to_string())?
            }
            "--transport" => parsed.transport = value()?,
            "--ca" => parsed.ca = Some(value()?),
            "--server-name" => parsed.server_name = value()?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if parsed.fd < 0 || !["tcp", "udp", "tls"].contains(&parsed.transport.as_str()) {
        return Err("send needs --fd N --transport tcp|udp|tls".into());
    }
    Ok(parsed)
}

/// The socket, as the Python rig connected it (and over TLS, the session on it).
pub struct Link {
    fd: i32,
    udp: bool,
    tls: Option<Tls>,
}

pub fn main(argv: &[String]) -> Result<(), String> {
    let args = args(argv)?;
    set_send_timeout(args.fd, SEND_LOOK)?;
    let tls = if args.transport == "tls" {
        let ca = args.ca.as_deref().ok_or("TLS needs --ca")?;
        match Tls::connect(args.fd, ca, &args.server_name) {
            Ok(tls) => Some(tls),
            Err(error) => return fail(error),
        }
    } else {
        None
    };
    emit(&ConnectedRecord {
        op: "connected".into(),
        transport: args.transport.clone(),
        tls_version: tls.as_ref().map(|t| t.version()),
        tls_cipher: tls.as_ref().map(|t| t.cipher()),
    });
    let mut link = Link {
        fd: args.fd,
        udp: args.transport == "udp",
        tls,
    };
    let mut requests = LineReader::stdin();
    while let Some(line) = requests.next_line() {
        let (op, body) = split_op(&line)?;
        match op.as_str() {
            "send" => match send(&mut link, &parse(&body)?) {
                Ok(record) => emit(&record),
                Err(error) => return fail(error),
            },
            "close" => {
                emit(&close(&mut link, &parse(&body)?));
                return Ok(());
            }
            other => return Err(format!("unknown op {other:?}")),
        }
    }
    Ok(())
}

fn fail(error: String) -> Result<(), String> {
    emit(&FailedRecord {
        op: "failed".into(),
        error: error.clone(),
    });
    Err(error)
}

fn set_send_timeout(fd: i32, timeout: Duration) -> Result<(), String> {
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
        return Err(format!(
            "fd {fd} is not a socket: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// The schedule's bookkeeping: what a batch's lag and a sleep's oversleep were, at most.
#[derive(Default, Debug, PartialEq)]
pub struct Pacing {
    pub batches: u64,
    pub behind_max: f64,
    pub behind_end: f64,
    pub oversleep_max: f64,
}

impl Pacing {
    /// A batch ending with message `last` was handed over at `at`.
    pub fn batch(&mut self, schedule: &Schedule, last: u64, at: f64) {
        let lag = if schedule.rate > 0.0 {
            (at - schedule.due_at(last)).max(0.0)
        } else {
            0.0
        };
        self.batches += 1;
        self.behind_max = self.behind_max.max(lag);
        self.behind_end = lag;
    }
}

fn send(link: &mut Link, request: &SendRequest) -> Result<SendRecord, String> {
    if let Some(templates) = &request.templates {
        if !request.file.is_empty() || request.ends.is_some() {
            return Err("a send takes its messages from a file or from templates, not both".into());
        }
        let maker = Maker::new(templates, request.count)?;
        return record(link, request, |link| made(link, &maker, request));
    }
    let data = Mapped::open(&request.file)?;
    // Mapped, not read: a 60 s trial's offsets are 8 bytes a message (120 MB for 15 million), and the
    // generator's memory limit holds every sender's (a read copy killed them at 1,000,000 msg/s).
    let ends_file = match &request.ends {
        Some(path) => Some(Mapped::open(path)?),
        None => None,
    };
    let ends = match &ends_file {
        Some(file) => offsets(file)?,
        None => &[],
    };
    if request.ends.is_some() && ends.len() as u64 != request.count {
        return Err(format!(
            "{} offsets for {} messages",
            ends.len(),
            request.count
        ));
    }
    if ends
        .last()
        .is_some_and(|&end| end as usize > data.bytes().len())
    {
        return Err("the offsets run past the rendered file".into());
    }
    record(link, request, |link| {
        if ends.is_empty() {
            burst(link, &data, request)
        } else {
            paced(link, data.bytes(), ends, request)
        }
    })
}

/// What sending did: messages and bytes handed over, the pacing, when the last one went.
type Outcome = (u64, u64, Pacing, f64);

/// Send as `how` does, from the request's start; the sender's record of it.
fn record(
    link: &mut Link,
    request: &SendRequest,
    how: impl FnOnce(&mut Link) -> Result<Outcome, String>,
) -> Result<SendRecord, String> {
    let (user0, system0) = cpu_times();
    if let Some(tls) = link.tls.as_mut() {
        tls.flush(link.fd, request.give_up)?; // an earlier trial's record first
    }
    sleep_until(request.start);
    let (sent, bytes, pacing, last_at) = how(link)?;
    let status = if sent == request.count {
        "ok".to_string()
    } else {
        format!(
            "gave up: {} not handed to the kernel by the trial's end",
            request.count - sent
        )
    };
    let (user, system) = cpu_times();
    Ok(SendRecord {
        op: "sent".into(),
        intended: request.count,
        sent,
        bytes,
        pace_s: round((last_at - request.start).max(0.0), 6),
        cpu_s: round(user - user0 + system - system0, 6),
        cpu_system_s: round(system - system0, 6),
        batches: pacing.batches,
        behind_max_s: round(pacing.behind_max, 6),
        behind_end_s: round(pacing.behind_end, 6),
        oversleep_max_s: round(pacing.oversleep_max, 6),
        last_at,
        status,
    })
}

/// A run's burst over TCP or TLS: the whole file, as fast as the daemon takes it.
fn burst(link: &mut Link, data: &Mapped, request: &SendRequest) -> Result<Outcome, String> {
    let size = data.bytes().len() as u64;
    let bytes = match link.tls.as_mut() {
        Some(tls) => {
            let mut pos = 0u64;
            while pos < size {
                let upto = size.min(pos + RECORD_BYTES);
                tls.write(&data.bytes()[pos as usize..upto as usize]);
                if !tls.flush(link.fd, request.give_up)? {
                    break;
                }
                pos = upto;
            }
            pos
        }
        None if link.udp => return Err("a UDP send needs each datagram's offsets".into()),
        None => send_file(link.fd, data, request.give_up)?,
    };
    let mut pacing = Pacing::default();
    let at = now();
    pacing.batch(&request.schedule(), request.count.saturating_sub(1), at);
    let sent = if bytes == size { request.count } else { 0 };
    Ok((sent, bytes, pacing, at))
}

fn send_file(sock: i32, data: &Mapped, give_up: Option<f64>) -> Result<u64, String> {
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
fn retry(fd: i32, give_up: Option<f64>) -> Result<bool, String> {
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EINTR) => Ok(true),
        Some(libc::EAGAIN) => Ok(wait_writable(fd, give_up)),
        _ => Err(format!("send: {error}")),
    }
}

/// The longest one wait for a blocked socket: a look at the clock for the give-up time.
const BLOCKED_WAIT_MS: f64 = 100.0;

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

/// The clock a schedule is kept by: the real one, or a test's.
pub trait Clock {
    fn now(&mut self) -> f64;
    fn sleep_until(&mut self, until: f64);
}

pub struct RealClock;

impl Clock for RealClock {
    fn now(&mut self) -> f64 {
        now()
    }

    fn sleep_until(&mut self, until: f64) {
        sleep_until(until)
    }
}

/// What an open loop did: messages handed over, when the last one was, and its pacing.
#[derive(Debug, PartialEq)]
pub struct Sent {
    pub sent: u64,
    pub last_at: f64,
    pub pacing: Pacing,
}

/// Send messages [0, count) open loop, each at its due time (schedule.rs). A sender behind its schedule
/// sends all that is due at once, and stays behind: the schedule never stretches. Stops at give_up (what
/// is left is unsent). `send_range(first, last)` hands over [first, last) and returns how many are now
/// wholly handed over (fewer only when the give-up time came while it was blocked).
pub fn open_loop(
    clock: &mut dyn Clock,
    count: u64,
    schedule: &Schedule,
    give_up: Option<f64>,
    send_range: &mut dyn FnMut(u64, u64) -> Result<u64, String>,
) -> Result<Sent, String> {
    let mut pacing = Pacing::default();
    let (mut sent, mut last_at) = (0u64, schedule.start);
    clock.sleep_until(schedule.start);
    while sent < count {
        let at = clock.now();
        if give_up.is_some_and(|limit| at > limit) {
            break;
        }
        let target = schedule.due_by(at, count);
        if target > sent {
            let upto = send_range(sent, target)?;
            last_at = clock.now();
            if upto > sent {
                pacing.batch(schedule, upto - 1, last_at);
            }
            sent = upto;
            if upto < target {
                break; // the give-up time came while blocked
            }
        }
        // Behind: the next round at once. On time: sleep until the next message's batch is due.
        if sent < count && schedule.rate > 0.0 {
            let at = clock.now();
            let wake = schedule.due_at(sent);
            if wake > at {
                clock.sleep_until(wake); // descheduled since `at`: it does not sleep at all
                pacing.oversleep_max = pacing.oversleep_max.max(clock.now() - wake);
            }
        }
    }
    Ok(Sent {
        sent,
        last_at,
        pacing,
    })
}

/// Open loop over the rendered messages, on the link.
fn paced(
    link: &mut Link,
    data: &[u8],
    ends: &[u64],
    request: &SendRequest,
) -> Result<Outcome, String> {
    let mut send =
        |first: u64, last: u64| send_range(link, data, ends, first, last, request.give_up);
    let done = on_schedule(request, &mut send)?;
    let bytes = if done.sent == 0 {
        0
    } else {
        ends[done.sent as usize - 1]
    };
    Ok((done.sent, bytes, done.pacing, done.last_at))
}

/// Open loop over messages made from templates, MAKE_CHUNK at a time into one buffer.
fn made(link: &mut Link, maker: &Maker, request: &SendRequest) -> Result<Outcome, String> {
    let (mut data, mut ends, mut bytes) = (Vec::new(), Vec::new(), 0u64);
    let mut send = |first: u64, last: u64| -> Result<u64, String> {
        let mut done = first;
        while done < last {
            let upto = last.min(done + MAKE_CHUNK);
            maker.make(done, upto, &mut data, &mut ends);
            let whole = send_range(link, &data, &ends, 0, upto - done, request.give_up)?;
            bytes += begin(&ends, whole);
            done += whole;
            if done < upto {
                break; // the give-up time came while blocked
            }
        }
        Ok(done)
    };
    let done = on_schedule(request, &mut send)?;
    Ok((done.sent, bytes, done.pacing, done.last_at))
}

/// The request's messages open loop on the real clock, each handed over by `send`.
fn on_schedule(
    request: &SendRequest,
    send: &mut dyn FnMut(u64, u64) -> Result<u64, String>,
) -> Result<Sent, String> {
    open_loop(
        &mut RealClock,
        request.count,
        &request.schedule(),
        request.give_up,
        send,
    )
}

fn begin(ends: &[u64], index: u64) -> u64 {
    if index == 0 {
        0
    } else {
        ends[index as usize - 1]
    }
}

/// Send messages [first, last); returns how many are now wholly handed over (first..returned).
fn send_range(
    link: &mut Link,
    data: &[u8],
    ends: &[u64],
    first: u64,
    last: u64,
    give_up: Option<f64>,
) -> Result<u64, String> {
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
) -> Result<u64, String> {
    let (mut pos, stop) = (begin(ends, first), ends[last as usize - 1]);
    while pos < stop {
        if write_some(fd, &data[pos as usize..stop as usize], &mut pos)? {
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
            if !write_some(fd, &data[pos as usize..end as usize], &mut pos)? {
                retry(fd, None)?;
            }
        }
        return Ok(whole + 1);
    }
    Ok(whole)
}

/// One send(); Ok(true) if it took bytes (pos advanced), Ok(false) if it returned an error to look at.
fn write_some(fd: i32, bytes: &[u8], pos: &mut u64) -> Result<bool, String> {
    // SAFETY: send from a slice we borrow, of its length; MSG_NOSIGNAL: a closed peer is an error, not a signal.
    let done = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
    if done < 0 {
        return Ok(false);
    }
    *pos += done as u64;
    Ok(true)
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
) -> Result<u64, String> {
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
) -> Result<u64, String> {
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

/// Close our side and wait until the peer has acknowledged every byte: a sender that exits with bytes in
/// its send queue loses them when its container's network goes (NOTES.md, "tail loss").
fn close(link: &mut Link, request: &CloseRequest) -> ClosedRecord {
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

/// One example of every record, for the contract test (syslogbench/model/rigrecord.py reads them strictly).
pub fn examples() -> Vec<serde_json::Value> {
    // A trial's request: its messages made from templates (a run's names a file and its offsets instead).
    let request = SendRequest {
        file: String::new(),
        ends: None,
        templates: Some(Templates {
            lines: vec![
                "<13>Nov 27 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=3000000001 f=1 v=5 x\n"
                    .into(),
            ],
            index_at: vec![59],
            stream_seed: 1_234_567_890_123,
        }),
        count: 1000,
        rate: 250.0,
        start: 1.8e9,
        give_up: Some(1.8e9 + 7.0),
        tick_s: 0.005,
        phase_s: 0.00125,
    };
    let record = SendRecord {
        op: "sent".into(),
        intended: 1000,
        sent: 1000,
        bytes: 120_000,
        pace_s: 3.996,
        cpu_s: 0.01,
        cpu_system_s: 0.006,
        batches: 800,
        behind_max_s: 0.0004,
        behind_end_s: 0.0001,
        oversleep_max_s: 0.0002,
        last_at: 1.8e9 + 3.996,
        status: "ok".into(),
    };
    let closed = ClosedRecord {
        op: "closed".into(),
        left_bytes: 0,
        drain_s: 0.01,
        cpu_s: 0.2,
        peer_closed: Some(true),
    };
    let connected = ConnectedRecord {
        op: "connected".into(),
        transport: "tls".into(),
        tls_version: Some("TLSv1.3".into()),
        tls_cipher: Some("TLS13_AES_256_GCM_SHA384".into()),
    };
    let failed = FailedRecord {
        op: "failed".into(),
        error: "send: Connection reset by peer".into(),
    };
    let close = CloseRequest {
        drain_timeout_s: 120.0,
    };
    [
        with_op("send", serde_json::to_value(request)),
        with_op("close", serde_json::to_value(close)),
        serde_json::to_value(record),
        serde_json::to_value(closed),
        serde_json::to_value(connected),
        serde_json::to_value(failed),
    ]
    .into_iter()
    .map(Result::unwrap)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// This thread's CPU: the process's would count the tests that run beside it.
    fn thread_cpu_seconds() -> f64 {
        let mut at = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime into a timespec we own.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut at) };
        at.tv_sec as f64 + at.tv_nsec as f64 / 1e9
    }

    #[test]
    fn a_blocked_socket_is_waited_on_not_spun_on_until_the_give_up_time() {
        let (writer, _reader) = std::os::unix::net::UnixStream::pair().unwrap();
        writer.set_nonblocking(true).unwrap();
        let chunk = [0u8; 65536];
        while std::io::Write::write(&mut &writer, &chunk).is_ok() {} // full: the reader never reads
        let (began, cpu0) = (now(), thread_cpu_seconds());
        let mut tries = 0;
        while wait_writable(writer.as_raw_fd(), Some(began + 0.3)) {
            tries += 1; // the caller's loop: the socket is still full
            assert!(std::io::Write::write(&mut &writer, &chunk).is_err());
        }
        let (waited, cpu) = (now() - began, thread_cpu_seconds() - cpu0);
        assert!(waited >= 0.29, "gave up after {waited} s");
        assert!(
            tries <= 3,
            "{tries} tries: at most one per {BLOCKED_WAIT_MS} ms"
        );
        assert!(cpu < 0.1 * waited, "{cpu} CPU s in {waited} s: it spun");
    }

    #[test]
    fn a_batch_lag_is_measured_at_every_batch_and_the_largest_kept() {
        let mut pacing = Pacing::default();
        let schedule = Schedule {
            start: 100.0,
            rate: 1000.0,
            tick: 0.0,
            phase: 0.0,
        };
        pacing.batch(&schedule, 99, 100.099); // on time: message 99 due at 100.099
        pacing.batch(&schedule, 199, 100.5); // 0.301 s behind
        pacing.batch(&schedule, 299, 100.299); // caught up
        assert_eq!(pacing.batches, 3);
        assert!((pacing.behind_max - 0.301).abs() < 1e-9, "{pacing:?}");
        assert_eq!(pacing.behind_end, 0.0);
    }

    /// A sender's schedule on a 5 ms grid of phase 0.
    fn grid(rate: f64, start: f64) -> Schedule {
        Schedule {
            start,
            rate,
            tick: 0.005,
            phase: 0.0,
        }
    }

    /// A test's clock: sleeping moves it, and so does what the test says a send or a sleep costs.
    struct FakeClock {
        now: f64,
        oversleep: f64,
        deschedule_every: u64,
        looks: u64,
    }

    impl FakeClock {
        fn at(now: f64) -> FakeClock {
            FakeClock {
                now,
                oversleep: 0.0,
                deschedule_every: 0,
                looks: 0,
            }
        }
    }

    impl Clock for FakeClock {
        fn now(&mut self) -> f64 {
            self.looks += 1;
            if self.deschedule_every > 0 && self.looks % self.deschedule_every == 0 {
                self.now += 0.05; // a starved process: time passes between two looks
            }
            self.now
        }

        fn sleep_until(&mut self, until: f64) {
            if until > self.now {
                self.now = until + self.oversleep;
            }
        }
    }

    #[test]
    fn a_sender_that_falls_behind_sends_what_is_due_and_never_stretches_its_schedule() {
        let mut clock = FakeClock::at(100.0);
        let batches = std::cell::RefCell::new(Vec::new());
        let clock_now = std::cell::Cell::new(0.0);
        let mut send = |first: u64, last: u64| {
            batches.borrow_mut().push((first, last));
            if first == 0 {
                clock_now.set(0.5); // the daemon held the first send for half a second
            }
            Ok(last)
        };
        // The stall is applied to the clock between sends.
        struct Stalling<'a> {
            inner: FakeClock,
            stall: &'a std::cell::Cell<f64>,
        }
        impl Clock for Stalling<'_> {
            fn now(&mut self) -> f64 {
                self.inner.now += self.stall.replace(0.0);
                self.inner.now()
            }
            fn sleep_until(&mut self, until: f64) {
                self.inner.sleep_until(until)
            }
        }
        clock.now = 100.0;
        let mut stalling = Stalling {
            inner: clock,
            stall: &clock_now,
        };
        let done = open_loop(
            &mut stalling,
            100,
            &grid(100.0, 100.0),
            Some(200.0),
            &mut send,
        )
        .unwrap();
        assert_eq!(done.sent, 100);
        // After the stall, everything due by 0.5 s (indexes 1..50) goes at once: the schedule did not move.
        assert_eq!(batches.borrow()[1], (1, 51), "{:?}", &batches.borrow()[..3]);
        assert!((done.last_at - 100.99).abs() < 0.011, "{}", done.last_at);
        assert!(
            (done.pacing.behind_max - 0.5).abs() < 0.011,
            "{:?}",
            done.pacing
        );
        assert_eq!(
            done.pacing.oversleep_max, 0.0,
            "the stall was the daemon's: the sleeps kept time"
        );
    }

    #[test]
    fn a_sender_that_wakes_late_says_so() {
        let mut clock = FakeClock::at(100.0);
        clock.oversleep = 0.3; // every sleep ends 0.3 s late
        let done = open_loop(
            &mut clock,
            10,
            &grid(10.0, 100.0),
            Some(200.0),
            &mut |_, b| Ok(b),
        )
        .unwrap();
        assert!(
            (done.pacing.oversleep_max - 0.3).abs() < 1e-9,
            "{:?}",
            done.pacing
        );
    }

    #[test]
    fn a_sender_descheduled_before_its_sleep_never_sleeps_a_negative_time() {
        let mut clock = FakeClock::at(100.0);
        clock.deschedule_every = 5;
        let done = open_loop(
            &mut clock,
            200,
            &grid(10.0, 100.0),
            Some(200.0),
            &mut |_, b| Ok(b),
        )
        .unwrap();
        assert_eq!(done.sent, 200);
    }

    #[test]
    fn a_sender_stops_at_the_give_up_time_and_the_rest_is_unsent() {
        let clock = std::cell::RefCell::new(FakeClock::at(100.0));
        struct Shared<'a>(&'a std::cell::RefCell<FakeClock>);
        impl Clock for Shared<'_> {
            fn now(&mut self) -> f64 {
                self.0.borrow_mut().now()
            }
            fn sleep_until(&mut self, until: f64) {
                self.0.borrow_mut().sleep_until(until)
            }
        }
        let mut stuck = |_: u64, last: u64| {
            clock.borrow_mut().now += 2.0; // every send blocks for 2 s
            Ok(last)
        };
        let done = open_loop(
            &mut Shared(&clock),
            100,
            &grid(10.0, 100.0),
            Some(103.0),
            &mut stuck,
        )
        .unwrap();
        assert!(0 < done.sent && done.sent < 100, "{}", done.sent);
    }

    #[test]
    fn the_drain_look_backs_off_while_the_queue_stands_and_follows_its_pace() {
        assert_eq!(next_look(100, 100, 0.01), 0.02);
        assert_eq!(next_look(100, 200, 0.2), 0.25);
        // 1000 bytes in 0.01 s: 9000 left empty in 0.09 s, looked at after half of it.
        assert!((next_look(10_000, 9_000, 0.01) - 0.045).abs() < 1e-9);
    }

    #[test]
    fn requests_with_unknown_or_missing_keys_are_refused() {
        let good = r#"{"file":"f","ends":null,"templates":null,"count":1,"rate":0,"start":1,"give_up":null,"tick_s":0.005,"phase_s":0}"#;
        assert!(parse::<SendRequest>(good).is_ok());
        let extra = good.replace("\"count\"", "\"extra\":1,\"count\"");
        assert!(parse::<SendRequest>(&extra)
            .unwrap_err()
            .contains("unknown field"));
        let missing = good
            .replace("\"tick_s\":0.005", "\"x\":0")
            .replace(",\"x\":0", "");
        assert!(parse::<SendRequest>(&missing).is_err());
    }
}
