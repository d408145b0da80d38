//! A message line's key, as model/messages.py writes it: "syslogbench h=H s=S q=Q", wherever the daemon
//! put it in the line. The one parser of it, for every role: the follower reads every key in what it read
//! (`keys`), the reconciliation a line's first key and its tail (reconcile/lines.rs). No regular expression.
//!
//! Leading zeros: a key's numbers are read as the senders write them. h and s are Python's str() of the
//! sender's numbers (messages.body_fields), so they have none ("0" alone is one number): "h=01" is no
//! sender's, as it was for Python's reconciler (it matched the sender as bytes). q is zero-padded to the
//! run's width (messages.seq_width, at least 7 digits), so any number of leading zeros is q's.

use memchr::memmem;

/// The trial number sits above this in a capacity trial's sequence numbers (model/capacity/trial.py).
pub const TRIAL_SEQ_SPAN: u64 = 1_000_000_000;
/// What every key starts with.
pub const MARK: &[u8] = b"syslogbench h=";

/// A key's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub host: u64,
    pub sender: u64,
    pub seq: u64,
}

/// A key as a line shows it: the digits of h, s and q, and what follows q's digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown<'a> {
    pub host: &'a [u8],
    pub sender: &'a [u8],
    pub seq: &'a [u8],
    pub rest: &'a [u8],
}

impl Shown<'_> {
    /// (host, sender) as a sender writes them (no leading zero); None for any other, or beyond u64.
    pub fn sender(&self) -> Option<(u64, u64)> {
        Some((plain(self.host)?, plain(self.sender)?))
    }

    /// The key's numbers, each as the senders write it (q with any leading zeros); None for numbers no
    /// sender writes, or beyond u64.
    pub fn key(&self) -> Option<Key> {
        let (host, sender) = self.sender()?;
        Some(Key {
            host,
            sender,
            seq: number(self.seq)?,
        })
    }
}

/// (trial, index) of a trial's sequence number (model/capacity/trial.py trial_of).
pub fn trial_of(seq: u64) -> (u64, u64) {
    let (trial, rest) = (seq / TRIAL_SEQ_SPAN, seq % TRIAL_SEQ_SPAN);
    (trial, rest.wrapping_sub(1))
}

/// How many ASCII digits `data` starts with.
pub fn digits(data: &[u8]) -> usize {
    data.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// Digits as a number, leading zeros and all (Python's int()); None if empty, not all digits, or beyond u64.
pub fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// Digits with no leading zero (as Python's str() and "%d" write a number) as a number; None otherwise.
pub fn plain(digits: &[u8]) -> Option<u64> {
    if digits.len() > 1 && digits[0] == b'0' {
        return None;
    }
    number(digits)
}

/// `text` starts with `word` and then one or more digits: (the digits, what follows).
pub fn field<'a>(text: &'a [u8], word: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let after = text.strip_prefix(word)?;
    let n = digits(after);
    (n > 0).then(|| after.split_at(n))
}

/// The key at the start of `text`, just after the mark: `\d+ s=\d+ q=\d+`, and the rest of `text`.
pub fn shown(text: &[u8]) -> Option<Shown<'_>> {
    let (host, rest) = field(text, b"")?;
    let (sender, rest) = field(rest, b" s=")?;
    let (seq, rest) = field(rest, b" q=")?;
    Some(Shown {
        host,
        sender,
        seq,
        rest,
    })
}

/// Built once: a finder per call cost more than the search in a follower's small reads.
static FINDER: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new(MARK));

/// The mark's finder, shared.
pub fn finder() -> &'static memmem::Finder<'static> {
    &FINDER
}

/// Every key in data (whole lines), in order: each mark that a well formed key with a sender's numbers
/// follows.
pub fn keys(data: &[u8]) -> impl Iterator<Item = Key> + '_ {
    FINDER
        .find_iter(data)
        .filter_map(move |at| shown(&data[at + MARK.len()..])?.key())
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

    /// The leading-zeros rule, for every role alike: q as the senders zero-pad it, h and s as Python's
    /// str() writes them (no leading zero), so "h=01" or "s=007" is no sender's key.
    #[test]
    fn q_may_have_leading_zeros_and_h_and_s_may_not() {
        assert_eq!(all(b"syslogbench h=1 s=2 q=0000007 x\n"), vec![(1, 2, 7)]);
        assert_eq!(all(b"syslogbench h=0 s=0 q=0 x\n"), vec![(0, 0, 0)]);
        assert_eq!(all(b"syslogbench h=01 s=2 q=7 x\n"), vec![]);
        assert_eq!(all(b"syslogbench h=1 s=007 q=7 x\n"), vec![]);
        let shown = shown(b"01 s=2 q=0000007 f=1").unwrap();
        assert_eq!(
            (shown.host, shown.sender, shown.seq, shown.rest),
            (&b"01"[..], &b"2"[..], &b"0000007"[..], &b" f=1"[..])
        );
        assert_eq!(shown.sender(), None, "shown, but no sender's");
        assert_eq!(
            (plain(b"0"), plain(b"10"), plain(b"010")),
            (Some(0), Some(10), None)
        );
        assert_eq!(
            (number(b"0000012"), number(b""), number(b"1x")),
            (Some(12), None, None)
        );
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
