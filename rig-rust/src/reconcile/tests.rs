//! The reconcile role's own tests: line parsing in every output form, the tails table, blocks across reads.
//! The counts of whole runs are tested through the Python adapter (tests/unit/test_reconcile.py).

use super::blocks::{line_blocks, BLOCK_BYTES, CUT, LONGEST_LINE};
use super::counter::Counter;
use super::done_log::DONE_LOG;
use super::examples::example;
use super::lines::{each_key, is_done_tail};
use super::reconcile;
use super::records::{Mode, Proof, Reconciled, Request, TailTable};
use super::split::output_kind;
use super::tails::Tails;
use super::tally::{arrivals, copies, Tally};
use crate::key::{number, plain};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A message line's host, sender and q digits, and its tail.
type Parsed<'a> = (&'a [u8], &'a [u8], &'a [u8], &'a [u8]);
type Owned = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);

/// Every message line of a block, as each_key finds it.
fn parsed(block: &[u8]) -> Vec<Owned> {
    let mut found = Vec::new();
    each_key(block, |key, tail| {
        found.push((
            key.host.to_vec(),
            key.sender.to_vec(),
            key.seq.to_vec(),
            tail.to_vec(),
        ))
    });
    found
}

/// A whole tail of these tests: "f=F v=V " and `pad` x's.
fn tail(facility: u32, severity: u32, pad: usize) -> String {
    format!("f={facility} v={severity} {}", "x".repeat(pad))
}

fn table(entries: &[(u32, u32, usize, &[u32])]) -> TailTable {
    TailTable {
        host_digits: 1,
        sender_digits: 1,
        whole: entries
            .iter()
            .map(|&(f, v, pad, lengths)| (tail(f, v, pad), lengths.to_vec()))
            .collect(),
    }
}

fn request(dir: &Path, per_sender: u64) -> Request {
    Request {
        mode: Mode::Split,
        log_dir: dir.to_string_lossy().into_owned(),
        senders: vec![[1, 1], [1, 2]],
        per_sender,
        tails: vec![table(&[
            (1, 2, 40, &[7]),
            (23, 7, 38, &[7]),
            (0, 0, 1, &[7, 8]),
        ])],
        masks: None,
        proof: None,
        forget: false,
        block_bytes: BLOCK_BYTES,
        arrived_out: None,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "syslogbench-rig-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn blocks_of(data: &[u8], size: usize) -> Vec<Vec<u8>> {
    let dir = scratch(&format!("blocks-{size}-{}", data.len()));
    let path = dir.join("lines");
    std::fs::write(&path, data).unwrap();
    let mut found = Vec::new();
    line_blocks(&path, size, true, |block| found.push(block.to_vec())).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    found
}

fn lines_of(blocks: &[Vec<u8>]) -> Vec<Vec<u8>> {
    blocks
        .iter()
        .flat_map(|b| b.split_inclusive(|&c| c == b'\n').map(<[u8]>::to_vec))
        .collect()
}

// -- parsing every output form ---------------------------------------------------------------------------

#[test]
fn the_key_in_every_output_form() {
    // What each daemon writes: RFC 3164 and RFC 5424 (text payload), and the JSON and key=value rows as
    // rsyslog and syslog-ng rebuild them from the parsed fields ("syslogbench h= s= q= f= v= <x>").
    let lines: [&[u8]; 5] = [
        b"2026-11-22T10:00:00.123456+00:00 host1 bench[1]: syslogbench h=1 s=1 q=0000003 f=1 v=2 xxxx",
        b"<14>1 2026-11-22T10:00:00.000000Z host12 bench 3 - - syslogbench h=12 s=3 q=0000004 f=1 v=2 xx",
        b"2026-11-22T10:00:00+00:00 host1 bench[1]: syslogbench h=1 s=1 q=5 f=1 v=2 xxxxx",
        b"Nov 22 10:00:00 host2 bench[10]: syslogbench h=2 s=10 q=0000006 f=23 v=7 x",
        b"Nov 22 10:00:00 relay-host1 bench[1]: syslogbench h=1 s=1 q=0000061 f=5 v=0 DONE",
    ];
    let expected: [Parsed; 5] = [
        (b"1", b"1", b"0000003", b"f=1 v=2 xxxx"),
        (b"12", b"3", b"0000004", b"f=1 v=2 xx"),
        (b"1", b"1", b"5", b"f=1 v=2 xxxxx"),
        (b"2", b"10", b"0000006", b"f=23 v=7 x"),
        (b"1", b"1", b"0000061", b"f=5 v=0 DONE"),
    ];
    for (line, want) in lines.iter().zip(expected) {
        assert_eq!(
            parsed(line),
            vec![(
                want.0.to_vec(),
                want.1.to_vec(),
                want.2.to_vec(),
                want.3.to_vec()
            )]
        );
    }
    assert!(is_done_tail(b"f=5 v=0 DONE"));
    assert!(!is_done_tail(b"f=5 v=0 DONE "));
    assert!(!is_done_tail(b"f=5 v=0 DON"));
    assert!(!is_done_tail(b"F=5 v=0 DONE"));
}

#[test]
fn the_first_whole_key_on_a_line_is_its_key_and_the_rest_its_tail() {
    let block =
        b"a syslogbench h=x syslogbench h=1 s=2 q=3 f=0 v=0 x syslogbench h=4 s=4 q=4 y\r\n\
                  syslogbench h=1 s=2 q=3\nsyslogbench h=1 s=2 q= x\nsyslogbench h=1 s=1 q=9 ";
    assert_eq!(
        parsed(block),
        vec![
            (
                b"1".to_vec(),
                b"2".to_vec(),
                b"3".to_vec(),
                b"f=0 v=0 x syslogbench h=4 s=4 q=4 y\r".to_vec()
            ),
            (b"1".to_vec(), b"1".to_vec(), b"9".to_vec(), b"".to_vec()),
        ]
    );
}

#[test]
fn numbers_are_read_as_python_reads_them() {
    assert_eq!(plain(b"12"), Some(12));
    assert_eq!(plain(b"0"), Some(0));
    assert_eq!(plain(b"012"), None); // no sender's key is written with a leading zero
    assert_eq!(number(b"0000012"), Some(12));
    assert_eq!(number(b"99999999999999999999999"), None); // beyond every sequence number
}

#[test]
fn file_names_say_split_plain_or_neither() {
    let split = |f: &str, v: &str| Some(Some((f.to_string(), v.to_string())));
    assert_eq!(
        output_kind("test.rsyslog.facility.23.severity.7.log"),
        split("23", "7")
    );
    assert_eq!(
        output_kind("test.syslog-ng.facility.01.severity.00.log"),
        split("1", "0")
    );
    assert_eq!(output_kind("test.baseline.all.log"), Some(None));
    assert_eq!(output_kind("test.rsyslog.facility.x.severity.1.log"), None);
    assert_eq!(
        output_kind("test.rsyslog.facility.23.severity.7.log.1"),
        None
    );
    assert_eq!(output_kind("test.a.b.all.log"), None);
    assert_eq!(output_kind("messages.log"), None);
    assert_eq!(output_kind("done.log"), None);
}

// -- the tails table ---------------------------------------------------------------------------------------

#[test]
fn a_tail_is_whole_only_as_the_table_says() {
    let tails = Tails::new(&table(&[(1, 2, 40, &[7]), (0, 0, 1, &[7, 8])])).unwrap();
    let xs = vec![b'x'; 64];
    let lengths = |t: &str| tails.lengths(t.as_bytes(), &xs);
    assert_eq!(lengths(&tail(1, 2, 40)), 1 << 7);
    assert_eq!(lengths(&tail(1, 2, 39)), 0); // padded short
    assert_eq!(lengths(&tail(1, 2, 41)), 0); // padded long
    assert_eq!(lengths(&tail(1, 3, 40)), 0); // another severity's table entry is absent
    assert_eq!(lengths(&tail(0, 0, 1)), 1 << 7 | 1 << 8); // one x: several lengths of q
    assert_eq!(lengths(&format!("{} ", tail(1, 2, 40))), 0); // a space added
    assert_eq!(lengths(&format!("{}\r", tail(1, 2, 40))), 0); // a carriage return kept
    assert_eq!(lengths(&format!("f=1 v=2 {}y", "x".repeat(39))), 0); // a padding byte changed
    assert_eq!(lengths("F=1 v=2 x"), 0);
    assert_eq!(lengths("f=1 v=2 DONE"), 0);
}

#[test]
fn a_table_that_is_not_tails_is_refused() {
    for bad in [
        "f=1 v=2 ",
        "f=1 v=2 xxy",
        "f=24 v=0 x",
        "f=1 v=8 x",
        "f=01 v=2 x",
        "v=2 f=1 x",
    ] {
        let table = TailTable {
            host_digits: 1,
            sender_digits: 1,
            whole: BTreeMap::from([(bad.into(), vec![7])]),
        };
        assert!(Tails::new(&table).is_err(), "{bad}");
    }
    let table = TailTable {
        host_digits: 1,
        sender_digits: 1,
        whole: BTreeMap::from([("f=1 v=2 x".into(), vec![64])]),
    };
    assert!(Tails::new(&table).is_err());
}

// -- blocks of whole lines ---------------------------------------------------------------------------------

#[test]
fn blocks_end_at_newlines_and_join_a_split_line() {
    let blocks = blocks_of(b"one\ntwo two\nthree\nfour", 6);
    assert_eq!(
        blocks,
        vec![
            b"one\n".to_vec(),
            b"two two\n".to_vec(),
            b"three\n".to_vec(),
            b"four".to_vec()
        ]
    );
}

#[test]
fn lines_do_not_depend_on_where_the_reads_fall() {
    let data = b"first line\nsecond\n\nthird has more bytes than a read\nlast, unterminated";
    let whole = lines_of(&blocks_of(data, BLOCK_BYTES));
    assert_eq!(whole.len(), 5);
    for size in [1, 2, 3, 7, 11, 64] {
        let blocks = blocks_of(data, size);
        assert!(
            blocks[..blocks.len() - 1]
                .iter()
                .all(|b| b.ends_with(b"\n")),
            "{size}"
        );
        assert_eq!(lines_of(&blocks), whole, "{size}");
    }
}

#[test]
fn an_overlong_line_is_cut_wherever_the_reads_fall() {
    let mut data = b"a\n".to_vec();
    data.extend(std::iter::repeat_n(b'y', LONGEST_LINE + 3));
    data.extend_from_slice(b"\nb\n");
    let mut cut_line = vec![b'y'; LONGEST_LINE];
    cut_line.extend_from_slice(CUT);
    for size in [LONGEST_LINE, 1000, 4096 + 1] {
        let lines = lines_of(&blocks_of(&data, size));
        assert_eq!(
            lines,
            vec![b"a\n".to_vec(), cut_line.clone(), b"b\n".to_vec()],
            "{size}"
        );
    }
    // Unterminated at the file's end: cut all the same; at exactly LONGEST_LINE, whole.
    let long = vec![b'z'; LONGEST_LINE + 1];
    let mut cut_end = vec![b'z'; LONGEST_LINE];
    cut_end.extend_from_slice(CUT);
    assert_eq!(lines_of(&blocks_of(&long, 1 << 20)), vec![cut_end]);
    let mut exact = vec![b'z'; LONGEST_LINE];
    exact.push(b'\n');
    assert_eq!(lines_of(&blocks_of(&exact, 1 << 20)), vec![exact.clone()]);
}

// -- counting ------------------------------------------------------------------------------------------------

fn line(sender: u64, seq: &str, tail: &str) -> String {
    format!("Nov 22 10:00:00 host1 bench[{sender}]: syslogbench h=1 s={sender} q={seq} {tail}\n")
}

#[test]
fn whole_cut_unknown_and_done_lines_count_apart() {
    let dir = scratch("count");
    let request = request(&dir, 5);
    let mut counter = Counter::new(&request).unwrap();
    let text = [
        line(1, "0000001", &tail(1, 2, 40)),  // whole
        line(1, "0000001", &tail(1, 2, 40)),  // twice
        line(1, "0000002", &tail(1, 2, 39)),  // padded wrong: truncated, still shows f and v
        line(1, "0000003", "f=1 v="),         // cut before its fields: truncated, shown no more
        line(2, "00000004", &tail(1, 2, 40)), // padding of another length of q: truncated
        line(2, "0000005", "f=0 v=0 DONE"),   // the DONE
        line(2, "0000004", &tail(1, 2, 40)),  // whole
        line(2, "0000005", &tail(0, 0, 1)),   // padding on the DONE's number: truncated
        line(3, "0000001", &tail(1, 2, 40)),  // no such sender: unknown
        line(1, "0000006", "cut"),            // beyond the DONE: unknown, shown no more
        "Nov 22 10:00:00 host1 bench[1]: syslogbench h=01 s=1 q=1 f=1 v=2 x\n".into(), // not a sender's key
        "-- MARK --\n".into(),
    ]
    .concat();
    let (lines, shown) = counter.add(text.as_bytes());
    assert_eq!((lines, shown), (11, 9));
    assert_eq!(counter.counts(0), &[0, 2, 0, 0, 0, 0]);
    assert_eq!(counter.counts(1), &[0, 0, 0, 0, 1, 1]);
    assert_eq!(counter.cut, vec![2, 2]);
    assert_eq!(counter.unknown, 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn occurrences_saturate_at_255() {
    let dir = scratch("saturate");
    let mut counter = Counter::new(&request(&dir, 5)).unwrap();
    let text = line(1, "0000001", &tail(1, 2, 40)).repeat(300);
    counter.add(text.as_bytes());
    assert_eq!(counter.counts(0)[1], 255);
    assert_eq!(copies(counter.counts(0)), 255);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn arrivals_with_and_without_a_mask() {
    let counts = [0u8, 1, 0, 2, 1, 0];
    assert_eq!(arrivals(&counts, None), (5, 3, 0));
    let mask = [0u8, 0, 1, 0, 1, 1];
    assert_eq!(arrivals(&counts, Some(&mask)), (3, 1, 2));
}

#[test]
fn split_files_count_misfiled_lines_and_done_log() {
    let dir = scratch("split");
    let right = [
        line(1, "0000001", &tail(1, 2, 40)),
        line(1, "0000002", &tail(23, 7, 38)),
    ]
    .concat();
    std::fs::write(dir.join("test.rsyslog.facility.1.severity.2.log"), right).unwrap();
    std::fs::write(
        dir.join("test.rsyslog.facility.23.severity.7.log"),
        line(2, "0000005", "f=23 v=7 DONE"),
    )
    .unwrap();
    std::fs::write(dir.join("other.log"), line(2, "0000001", &tail(1, 2, 40))).unwrap();
    let done = format!("{}-- MARK --\r\n", line(2, "0000005", "f=23 v=7 DONE"));
    std::fs::write(dir.join(DONE_LOG), done).unwrap();
    let answer = reconcile(&request(&dir, 5)).unwrap();
    assert_eq!(
        (answer.split_files, answer.misfiled, answer.unknown),
        (2, 1, 0)
    );
    assert_eq!((answer.done_log_lines, answer.done_log_extra), (1, 1));
    let received: Vec<u64> = answer.senders.iter().map(|s| s.received).collect();
    assert_eq!(received, vec![2, 1]);
    let done: Vec<bool> = answer.senders.iter().map(|s| s.done_seen).collect();
    assert_eq!(done, vec![false, true]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The key's leading-zeros rule (key.rs), here too: "h=01" and "s=02" are no sender's, whether in an
/// output file (unknown) or in done.log (a DONE line, but no sender's DONE), while q's zeros are its own.
#[test]
fn a_leading_zero_in_h_or_s_is_no_senders_key_in_the_files_and_in_done_log() {
    let dir = scratch("zeros");
    let text = [
        line(1, "0000001", &tail(1, 2, 40)).replace("h=1 ", "h=01 "),
        line(2, "0000002", &tail(1, 2, 40)).replace("s=2 ", "s=02 "),
        line(2, "0000003", &tail(1, 2, 40)),
    ]
    .concat();
    std::fs::write(dir.join("test.rsyslog.facility.1.severity.2.log"), text).unwrap();
    let done = line(2, "0000005", "f=23 v=7 DONE").replace("s=2 ", "s=02 ");
    std::fs::write(dir.join(DONE_LOG), done).unwrap();
    let answer = reconcile(&request(&dir, 5)).unwrap();
    assert_eq!(answer.unknown, 2);
    let received: Vec<u64> = answer.senders.iter().map(|s| s.received).collect();
    assert_eq!(received, vec![0, 1]);
    assert_eq!((answer.done_log_lines, answer.done_log_extra), (1, 0));
    assert!(answer.senders.iter().all(|s| !s.done_seen));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_proof_counts_matches_and_equal_groups() {
    let dir = scratch("proof");
    let mut request = request(&dir, 5);
    request.proof = Some(Proof {
        source: r"(?m)\brelay-host(\d+) [^\n]*syslogbench h=(\d+) ".into(),
        same: Some([1, 2]),
    });
    let text = [
        line(1, "0000001", &tail(1, 2, 40)).replace("host1", "relay-host1"),
        line(1, "0000002", &tail(1, 2, 40)).replace("host1 ", "relay-host2 "),
        line(1, "0000003", &tail(1, 2, 40)),
    ]
    .concat();
    std::fs::write(dir.join("test.rsyslog.all.log"), text).unwrap();
    let answer = reconcile(&request).unwrap();
    assert_eq!(answer.unprocessed, 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_records_refuse_unknown_and_missing_keys() {
    let value = serde_json::to_value(example()).unwrap();
    let again: Reconciled = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(again, example());
    let mut more = value.clone();
    more["surplus"] = 1.into();
    assert!(serde_json::from_value::<Reconciled>(more).is_err());
    let mut less = value;
    less.as_object_mut().unwrap().remove("unknown");
    assert!(serde_json::from_value::<Reconciled>(less).is_err());
    let dir = scratch("records");
    let mut request = serde_json::to_value(request(&dir, 5)).unwrap();
    let mut without_masks = request.clone();
    without_masks.as_object_mut().unwrap().remove("masks"); // null is "no mask"; missing is an error
    assert!(serde_json::from_value::<Request>(without_masks).is_err());
    request["tails"][0]["extra"] = true.into();
    assert!(serde_json::from_value::<Request>(request).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_tally_keeps_its_counts_when_it_turns_into_bytes() {
    // 70,000 numbers twice: past the map's limit (65,536), so the bits and the map become a byte each.
    let mut tally = Tally::new(200_001, 2).unwrap();
    for number in 1..=70_000 {
        tally.add(1, number);
        tally.add(1, number);
    }
    tally.add(0, 5);
    assert!(!tally.dense.is_empty() && tally.seen.is_empty() && tally.more.is_empty());
    for _ in 0..300 {
        tally.add(1, 7);
    }
    let mut row = Vec::new();
    tally.row(1, &mut row);
    assert_eq!(row.len(), 200_001);
    assert_eq!(
        (row[0], row[1], row[7], row[70_000], row[70_001]),
        (0, 2, 255, 2, 0)
    );
    assert_eq!(copies(&row), 2 * 70_000 - 2 + 255);
    tally.row(0, &mut row);
    assert_eq!(copies(&row), 1);
    tally.clear();
    tally.row(1, &mut row);
    assert_eq!(copies(&row), 0);
}

#[test]
fn the_tally_in_bits_counts_each_sender_apart() {
    let mut tally = Tally::new(70, 3).unwrap(); // rows of 70 numbers, in two words each
    for (index, number) in [(0, 69), (1, 0), (1, 69), (1, 69), (2, 1)] {
        tally.add(index, number);
    }
    let mut row = Vec::new();
    let rows: Vec<Vec<u8>> = (0..3)
        .map(|index| {
            tally.row(index, &mut row);
            row.iter()
                .enumerate()
                .filter(|(_, &c)| c != 0)
                .flat_map(|(n, &c)| [n as u8, c])
                .collect()
        })
        .collect();
    assert_eq!(rows, vec![vec![69, 1], vec![0, 1, 69, 2], vec![1, 1]]);
}
