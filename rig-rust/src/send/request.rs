//! One send request: its messages (a rendered file and its offsets, or made from templates), sent as a
//! burst or open loop on the link, and the sender's record of it.

use super::error::SendError;
use super::link::{begin, send_file, send_range, Link, RECORD_BYTES};
use super::records::{SendRecord, SendRequest};
use super::run::{open_loop, Pacing, RealClock, Sent};
use crate::clock::{cpu_times, now, round, sleep_until};
use crate::mapped::{offsets, Mapped};
use crate::templates::Maker;

/// Messages made from templates at a time: a sender far behind its schedule does not make them all at once.
const MAKE_CHUNK: u64 = 4096;

/// What sending did: messages and bytes handed over, the pacing, when the last one went.
type Outcome = (u64, u64, Pacing, f64);

/// The request's messages, sent; the sender's record of them.
pub fn send(link: &mut Link, request: &SendRequest) -> Result<SendRecord, SendError> {
    if let Some(templates) = &request.templates {
        if !request.file.is_empty() || request.ends.is_some() {
            return Err(SendError::FileAndTemplates);
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
        return Err(SendError::Offsets {
            offsets: ends.len(),
            count: request.count,
        });
    }
    if ends
        .last()
        .is_some_and(|&end| end as usize > data.bytes().len())
    {
        return Err(SendError::PastTheFile);
    }
    record(link, request, |link| {
        if ends.is_empty() {
            burst(link, &data, request)
        } else {
            paced(link, data.bytes(), ends, request)
        }
    })
}

/// Send as `how` does, from the request's start; the sender's record of it.
fn record(
    link: &mut Link,
    request: &SendRequest,
    how: impl FnOnce(&mut Link) -> Result<Outcome, SendError>,
) -> Result<SendRecord, SendError> {
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
fn burst(link: &mut Link, data: &Mapped, request: &SendRequest) -> Result<Outcome, SendError> {
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
        None if link.udp => return Err(SendError::UdpWithoutOffsets),
        None => send_file(link.fd, data, request.give_up)?,
    };
    let mut pacing = Pacing::default();
    let at = now();
    pacing.batch(&request.schedule(), request.count.saturating_sub(1), at);
    let sent = if bytes == size { request.count } else { 0 };
    Ok((sent, bytes, pacing, at))
}

/// Open loop over the rendered messages, on the link.
fn paced(
    link: &mut Link,
    data: &[u8],
    ends: &[u64],
    request: &SendRequest,
) -> Result<Outcome, SendError> {
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
fn made(link: &mut Link, maker: &Maker, request: &SendRequest) -> Result<Outcome, SendError> {
    let (mut data, mut ends, mut bytes) = (Vec::new(), Vec::new(), 0u64);
    let mut send = |first: u64, last: u64| -> Result<u64, SendError> {
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
    send: &mut dyn FnMut(u64, u64) -> Result<u64, SendError>,
) -> Result<Sent, SendError> {
    open_loop(
        &mut RealClock,
        request.count,
        &request.schedule(),
        request.give_up,
        send,
    )
}
