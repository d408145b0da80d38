//! A message line's key, as model/messages.py writes it: "syslogbench h=H s=S q=Q", wherever the daemon
//! put it in the line. Parsed once per line, with no regular expression.

use memchr::memmem;

/// The trial number sits above this in a capacity trial's sequence numbers (model/capacity.py).
pub const TRIAL_SEQ_SPAN: u64 = 1_000_000_000;
const MARK: &[u8] = b"syslogbench h=";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub host: u64,
    pub sender: u64,
    pub seq: u64,
}

/// (trial, index) of a trial's sequence number (model/capacity.py trial_of).
pub fn trial_of(seq: u64) -> (u64, u64) {
    let (trial, rest) = (seq / TRIAL_SEQ_SPAN, seq % TRIAL_SEQ_SPAN);
    (trial, rest.wrapping_sub(1))
}

/// Digits at `at`, then the byte after them; None if there is no digit or the number overflows.
fn number(data: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    let mut end = at;
    while end < data.len() && data[end].is_ascii_digit() {
        value = value
            .checked_mul(10)?
            .checked_add((data[end] - b'0') as u64)?;
        end += 1;
    }
    (end > at).then_some((value, end))
}

fn expect(data: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    data.get(at..at + word.len())
        .filter(|found| *found == word)
        .map(|_| at + word.len())
}

/// The key that starts at `at` (at the mark), if the rest of it is well formed.
fn key_at(data: &[u8], at: usize) -> Option<Key> {
    let (host, end) = number(data, at + MARK.len())?;
    let (sender, end) = number(data, expect(data, end, b" s=")?)?;
    let (seq, _) = number(data, expect(data, end, b" q=")?)?;
    Some(Key { host, sender, seq })
}

/// Built once: a finder per call cost more than the search in a follower's small reads.
static FINDER: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new(MARK));

/// Every key in data (whole lines), in order.
pub fn keys(data: &[u8]) -> impl Iterator<Item = Key> + '_ {
    FINDER
        .find_iter(data)
        .filter_map(move |at| key_at(data, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(data: &[u8]) -> Vec<(u64, u64, u64)> {
        keys(data).map(|k| (k.host, k.sender, k.seq)).collect()
    }

    #[test]
    fn every_format_carries_its_key_where_the_daemon_put_it() {
        let rfc3164 =
            b"Nov 26 10:00:00 host1 bench[2]: syslogbench h=1 s=2 q=0000042 f=3 v=4 xxxx\n";
        let rfc5424 = b"2026-11-26T10:00:00.123456+00:00 host12 bench 7 - - syslogbench h=12 s=7 q=1000000001 f=0 v=0 x\n";
        let done =
            b"<13>Nov 26 10:00:00 host5 bench[4]: syslogbench h=5 s=4 q=300001 f=1 v=5 DONE\n";
        let json = b"{\"msg\":\"syslogbench h=2 s=1 q=17 f=23 v=7 x\"}\n";
        assert_eq!(all(rfc3164), vec![(1, 2, 42)]);
        assert_eq!(all(rfc5424), vec![(12, 7, 1_000_000_001)]);
        assert_eq!(all(done), vec![(5, 4, 300_001)]);
        assert_eq!(all(json), vec![(2, 1, 17)]);
    }

    #[test]
    fn a_line_cut_inside_its_key_or_mangled_has_no_key() {
        assert_eq!(all(b"syslogbench h=1 s=2 q=\n"), vec![]);
        assert_eq!(all(b"syslogbench h=1 s=\n"), vec![]);
        assert_eq!(all(b"syslogbench h=x s=1 q=1\n"), vec![]);
        assert_eq!(all(b"syslogbench h=1  s=1 q=1\n"), vec![]);
        assert_eq!(all(b"syslogbench h=99999999999999999999 s=1 q=1\n"), vec![]);
    }

    #[test]
    fn several_lines_give_their_keys_in_order() {
        let data = b"a syslogbench h=1 s=1 q=1 f=0 v=0 x\nb syslogbench h=1 s=2 q=2 f=0 v=0 x\n";
        assert_eq!(all(data), vec![(1, 1, 1), (1, 2, 2)]);
    }

    #[test]
    fn a_trial_sequence_number_gives_its_trial_and_index() {
        assert_eq!(trial_of(3 * TRIAL_SEQ_SPAN + 1), (3, 0));
        assert_eq!(trial_of(3 * TRIAL_SEQ_SPAN + 500), (3, 499));
    }
}
