//! The follower's own tests: the tally's counts and latency, the files followed and sampled, the looks.

use super::drain::drain;
use super::looks::Looks;
use super::names::{is_output_name, split_pri};
use super::output::Output;
use super::records::{DrainRequest, TrialRequest};
use super::sample::SAMPLE_LINES_S;
use super::tally::Tally;
use super::trial::trial;
use crate::clock::now;
use crate::io::LineReader;
use crate::key::{keys, Key, TRIAL_SEQ_SPAN};

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
    let seq = |index: u64| 2 * TRIAL_SEQ_SPAN + index + 1;
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
    let seq = |index: u64| 2 * TRIAL_SEQ_SPAN + index + 1;
    tally.arrive(key(1, seq(0)), 100.002, true); // 2 ms
    tally.arrive(key(1, seq(0)), 100.003, true); // again: a duplicate
    tally.arrive(key(1, seq(5)), 101.5, true); // due at 100.005: late
    tally.arrive(key(2, seq(9)), 99.0, true); // seen before it was due: early
    tally.arrive(key(1, TRIAL_SEQ_SPAN + 1), 100.0, true); // an earlier trial's
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
    let seq = 2 * TRIAL_SEQ_SPAN + 1;
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
    let refused = Tally::new(named)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
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
    let seq = 2 * TRIAL_SEQ_SPAN + 1;
    tally.arrive(key(1, seq), 100.001, true);
    tally.arrive(key(1, seq), 100.001, true);
    assert_eq!((tally.counts[0].copies, tally.counts[0].duplicated), (1, 0));
}

#[test]
fn the_histogram_keeps_three_significant_digits_and_merges_by_adding() {
    let mut tally = Tally::new(request(false)).unwrap();
    let seq = |index: u64| 2 * TRIAL_SEQ_SPAN + index + 1;
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
    let seq = |index: u64| 2 * TRIAL_SEQ_SPAN + index + 1;
    tally.arrive(key(1, seq(0)), 100.002, true);
    tally.arrive(key(1, seq(5)), 101.5, false); // due at 100.005: late, unsampled
    assert_eq!((tally.received, tally.sampled), (2, 1));
    assert_eq!(tally.counts[0].late, 1);
    assert_eq!(tally.histogram_us().values().sum::<u64>(), 1);
}

/// The host's side of a follower's stdin: a pipe, these requests written into it, its write end kept open
/// (closed: the host went) or not.
fn host_says(requests: &[&str], keep_open: bool) -> (LineReader, Option<i32>) {
    let mut ends = [0i32; 2];
    // SAFETY: a pipe into an array we own.
    assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
    let text: String = requests.iter().map(|r| format!("{r}\n")).collect();
    // SAFETY: our bytes into the pipe's write end, closed unless kept.
    unsafe {
        libc::write(ends[1], text.as_ptr().cast(), text.len());
        if !keep_open {
            libc::close(ends[1]);
        }
    }
    (LineReader::on(ends[0]), keep_open.then_some(ends[1]))
}

/// A trial now, over `dir`, with a give-up time far ahead: only arrivals or the host end it.
fn trial_now() -> TrialRequest {
    TrialRequest {
        start: now(),
        give_up: now() + 60.0,
        ..request(false)
    }
}

#[test]
fn a_trial_ends_when_every_message_sent_has_arrived() {
    let dir = std::env::temp_dir().join(format!("follow-trial-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("test.x.all.log");
    std::fs::write(&path, b"").unwrap();
    let mut output = Output::new(&dir, false).unwrap();
    output.skip_to_end();
    let seq = |index: u64| 2 * TRIAL_SEQ_SPAN + index + 1;
    let lines = format!(
        "syslogbench h=1 s=1 q={} f=0 v=0 x\nsyslogbench h=2 s=1 q={} f=0 v=0 x\nsyslogbench h=1 s=1 q=1 f=0 v=0 x\n",
        seq(0),
        seq(1)
    );
    std::fs::write(&path, lines).unwrap();
    let (mut requests, write_end) = host_says(
        &[r#"{"op":"expect","sent":{"host1-s1":1,"host2-s1":1}}"#],
        true,
    );
    let record = trial(&mut output, &mut requests, trial_now()).unwrap();
    assert_eq!(record.ended, "all-arrived");
    assert_eq!(
        (record.trial, record.stale),
        (2, 1),
        "an earlier trial's line"
    );
    let received: Vec<u64> = record.senders.iter().map(|s| s.received).collect();
    assert_eq!(received, vec![1, 1]);
    assert_eq!(record.arrived_per_s.iter().sum::<u64>(), 2);
    // SAFETY: closing the write end we kept, and the read end.
    unsafe {
        libc::close(write_end.unwrap());
        libc::close(requests.fd());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_trial_ends_when_the_host_says_stop_or_goes_and_refuses_other_requests() {
    let dir = std::env::temp_dir().join(format!("follow-stop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut output = Output::new(&dir, false).unwrap();
    for (said, keep_open) in [(&[r#"{"op":"stop"}"#][..], true), (&[][..], false)] {
        let (mut requests, write_end) = host_says(said, keep_open);
        let record = trial(&mut output, &mut requests, trial_now()).unwrap();
        assert_eq!(record.ended, "stopped", "{said:?}");
        // SAFETY: closing the descriptors this test opened.
        unsafe {
            write_end.map(|fd| libc::close(fd));
            libc::close(requests.fd());
        }
    }
    let (mut requests, write_end) = host_says(&[r#"{"op":"drain"}"#], true);
    let refused = trial(&mut output, &mut requests, trial_now()).unwrap_err();
    assert_eq!(refused.to_string(), "unknown op \"drain\" during a trial");
    // SAFETY: closing the descriptors this test opened.
    unsafe {
        libc::close(write_end.unwrap());
        libc::close(requests.fd());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn drain_dir(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("follow-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("test.x.all.log");
    std::fs::write(&path, b"old syslogbench h=1 s=1 q=1\n").unwrap();
    (dir, path)
}

const QUIET: DrainRequest = DrainRequest {
    quiet_s: 0.2,
    max_s: 10.0,
};

#[test]
fn an_output_quiet_since_the_followers_last_read_is_drained_at_once() {
    let (dir, _) = drain_dir("drain-quiet");
    let mut output = Output::new(&dir, false).unwrap();
    output.read_dirty(&mut |_, _, _| {});
    std::thread::sleep(std::time::Duration::from_millis(300));
    let drained = drain(&mut output, &QUIET);
    assert_eq!(drained.stale, 0);
    assert!(drained.waited_s < 0.2, "waited {} s", drained.waited_s);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_line_written_since_the_last_read_is_stale_and_the_drain_waits_a_whole_quiet() {
    let (dir, path) = drain_dir("drain-late");
    let mut output = Output::new(&dir, false).unwrap();
    output.read_dirty(&mut |_, _, _| {});
    std::thread::sleep(std::time::Duration::from_millis(300));
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"late syslogbench h=1 s=1 q=2\n").unwrap();
    let drained = drain(&mut output, &QUIET);
    assert_eq!(drained.stale, 1);
    assert!(drained.waited_s >= 0.2, "waited {} s", drained.waited_s);
    std::fs::remove_dir_all(&dir).unwrap();
}
