//! The sender's own tests: waiting on a blocked socket, the open loop on a test's clock, the drain's looks,
//! the requests' strictness. Sending over real sockets is tested from Python (tests/unit/test_sender.py,
//! test_tls.py).

use super::close::next_look;
use super::link::{wait_writable, BLOCKED_WAIT_MS};
use super::records::SendRequest;
use super::run::{open_loop, Clock, Pacing};
use crate::clock::now;
use crate::io::parse;
use crate::schedule::Schedule;
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
        .to_string()
        .contains("unknown field"));
    let missing = good
        .replace("\"tick_s\":0.005", "\"x\":0")
        .replace(",\"x\":0", "");
    assert!(parse::<SendRequest>(&missing).is_err());
}
