//! A trial's messages, made at send time from templates: no file of rendered messages.
//!
//! Python renders one template per facility x severity (syslogbench/model/messages.py writes the message
//! text; the compiled rig never does): the trial's first message with that priority, framed as it goes on
//! the wire. Message i of the trial is a template, drawn by the sender's own stream, with its nine index
//! digits (the low digits of its sequence number, key.rs TRIAL_SEQ_SPAN) set to i + 1. Every message of a
//! trial has the same length for a priority, so nothing else changes. A 60 s trial at 1,000,000 msg/s was
//! 1.8 GB of rendered files that the senders read back under their memory limit, and stalled on.

use crate::key::TRIAL_SEQ_SPAN;
use serde::{Deserialize, Serialize};

/// The digits of an index within a trial's span (9: TRIAL_SEQ_SPAN is 10^9), derived so that the two never drift.
pub const INDEX_DIGITS: usize = TRIAL_SEQ_SPAN.ilog10() as usize;

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Templates {
    /// One framed message per priority, each the trial's message of index 0 with that priority.
    pub lines: Vec<String>,
    /// Where each line's nine index digits start.
    pub index_at: Vec<u64>,
    /// The sender's stream of priorities: the same seed, the same priorities.
    pub stream_seed: u64,
}

/// Why templates cannot make a trial's messages.
#[derive(Debug, Clone, PartialEq)]
pub enum TemplateError {
    /// Not one index position per template (or no template).
    Positions { lines: usize, positions: usize },
    /// More messages than the index digits can number.
    TooMany { count: u64 },
    /// A template without its index digits where it says they are.
    NoDigits { template: String, at: usize },
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TemplateError::Positions { lines, positions } => {
                write!(f, "{lines} templates with {positions} index positions")
            }
            TemplateError::TooMany { count } => {
                write!(f, "{count} messages do not fit a trial's index digits")
            }
            TemplateError::NoDigits { template, at } => {
                write!(
                    f,
                    "template {template:?} has no {INDEX_DIGITS} digits at {at}"
                )
            }
        }
    }
}

impl std::error::Error for TemplateError {}

/// The templates, checked, ready to make messages from.
#[derive(Debug)]
pub struct Maker {
    lines: Vec<Vec<u8>>,
    index_at: Vec<usize>,
    seed: u64,
}

impl Maker {
    pub fn new(templates: &Templates, count: u64) -> Result<Self, TemplateError> {
        let lines: Vec<Vec<u8>> = templates
            .lines
            .iter()
            .map(|l| l.as_bytes().to_vec())
            .collect();
        if lines.is_empty() || lines.len() != templates.index_at.len() {
            return Err(TemplateError::Positions {
                lines: lines.len(),
                positions: templates.index_at.len(),
            });
        }
        if count >= TRIAL_SEQ_SPAN {
            return Err(TemplateError::TooMany { count });
        }
        let index_at: Vec<usize> = templates.index_at.iter().map(|&at| at as usize).collect();
        for (line, &at) in lines.iter().zip(&index_at) {
            let digits = line.get(at..at + INDEX_DIGITS);
            if !digits.is_some_and(|d| d.iter().all(u8::is_ascii_digit)) {
                return Err(TemplateError::NoDigits {
                    template: String::from_utf8_lossy(line).into_owned(),
                    at,
                });
            }
        }
        Ok(Maker {
            lines,
            index_at,
            seed: templates.stream_seed,
        })
    }

    /// The template of message `index`: a counter-based stream (splitmix64 of the seed and the index), so a
    /// message's priority does not depend on how the messages were batched.
    pub fn pick(&self, index: u64) -> usize {
        let mut x = self
            .seed
            .wrapping_add((index + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        // Lemire's multiply-shift: uniform over the templates to within n / 2^32.
        (((x >> 32) * self.lines.len() as u64) >> 32) as usize
    }

    /// Messages [first, last) into out (cleared), each one's end offset into ends (cleared).
    pub fn make(&self, first: u64, last: u64, out: &mut Vec<u8>, ends: &mut Vec<u64>) {
        out.clear();
        ends.clear();
        // The digits of index + 1, counted up in place: a division per digit per message cost more than the copy.
        let mut digits = [b'0'; INDEX_DIGITS];
        let mut value = first + 1;
        for digit in digits.iter_mut().rev() {
            *digit = b'0' + (value % 10) as u8;
            value /= 10;
        }
        for index in first..last {
            let pick = self.pick(index);
            let from = out.len();
            out.extend_from_slice(&self.lines[pick]);
            let at = from + self.index_at[pick];
            out[at..at + INDEX_DIGITS].copy_from_slice(&digits);
            count_up(&mut digits);
            ends.push(out.len() as u64);
        }
    }
}

/// Add one to a number written in ASCII digits (it wraps to zeros past the last; make never uses that one).
fn count_up(digits: &mut [u8]) {
    for digit in digits.iter_mut().rev() {
        if *digit == b'9' {
            *digit = b'0';
        } else {
            *digit += 1;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn templates(seed: u64) -> Templates {
        Templates {
            lines: vec![
                "<13>Nov 27 10:00:00 host1 bench[2]: syslogbench h=1 s=2 q=3000000001 f=1 v=5 xx\n"
                    .into(),
                "<14>Nov 27 10:00:00 host1 bench[2]: syslogbench h=1 s=2 q=3000000001 f=1 v=6 xx\n"
                    .into(),
                "<191>Nov 27 10:00:00 host1 bench[2]: syslogbench h=1 s=2 q=3000000001 f=23 v=7 \n"
                    .into(),
            ],
            index_at: vec![59, 59, 60],
            stream_seed: seed,
        }
    }

    #[test]
    fn each_message_is_its_template_with_its_index_digits() {
        let maker = Maker::new(&templates(7), 1000).unwrap();
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        maker.make(998, 1000, &mut out, &mut ends);
        assert_eq!(ends.len(), 2);
        let first = std::str::from_utf8(&out[..ends[0] as usize]).unwrap();
        assert!(first.contains("q=3000000999 "), "{first}");
        let second = std::str::from_utf8(&out[ends[0] as usize..]).unwrap();
        assert!(second.contains("q=3000001000 "), "{second}");
        let pick = maker.pick(999);
        assert_eq!(
            second.replace("q=3000001000", "q=3000000001"),
            templates(7).lines[pick]
        );
    }

    #[test]
    fn a_message_is_the_same_whatever_the_batches() {
        let maker = Maker::new(&templates(11), 5000).unwrap();
        let (mut whole, mut ends) = (Vec::new(), Vec::new());
        maker.make(0, 5000, &mut whole, &mut ends);
        let mut pieces = Vec::new();
        for (first, last) in [(0, 1), (1, 1234), (1234, 5000)] {
            let mut part = Vec::new();
            maker.make(first, last, &mut part, &mut ends);
            pieces.extend(part);
        }
        assert_eq!(whole, pieces);
    }

    #[test]
    fn the_priorities_are_spread_evenly_and_follow_the_seed() {
        let lines: Vec<String> = (0..192)
            .map(|p| format!("<{p:03}>x q=3000000001\n"))
            .collect();
        let many = Templates {
            index_at: vec![10; 192],
            lines,
            stream_seed: 5,
        };
        let maker = Maker::new(&many, 192_000).unwrap();
        let mut counts = [0u32; 192];
        for index in 0..192_000 {
            counts[maker.pick(index)] += 1;
        }
        // 1,000 expected each; a binomial's standard deviation is about 31.
        assert!(
            counts.iter().all(|&c| (850..1150).contains(&c)),
            "{counts:?}"
        );
        let other = Maker::new(
            &Templates {
                stream_seed: 6,
                ..many
            },
            10,
        )
        .unwrap();
        let differ = (0..100).filter(|&i| maker.pick(i) != other.pick(i)).count();
        assert!(differ > 90, "{differ} of 100 differ");
    }

    #[test]
    fn templates_without_their_digits_or_a_count_past_the_span_are_refused() {
        let mut bad = templates(1);
        bad.index_at[2] = 3;
        assert!(Maker::new(&bad, 10)
            .unwrap_err()
            .to_string()
            .contains("no 9 digits at 3"));
        bad.index_at.pop();
        assert!(Maker::new(&bad, 10).is_err());
        assert!(Maker::new(&templates(1), TRIAL_SEQ_SPAN).is_err());
    }
}

#[cfg(test)]
mod speed {
    use super::*;

    /// `cargo test --release make_speed -- --ignored --nocapture`: nanoseconds per message made.
    #[test]
    #[ignore]
    fn make_speed() {
        let lines: Vec<String> = (0..192)
            .map(|p| format!("<{p:03}>Nov 27 10:00:00 host1 bench[2]: syslogbench h=1 s=2 q=3000000001 f=1 v=5 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"))
            .collect();
        let maker = Maker::new(
            &Templates {
                index_at: vec![60; 192],
                lines,
                stream_seed: 5,
            },
            100_000_000,
        )
        .unwrap();
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        let began = std::time::Instant::now();
        let mut first = 0;
        while first < 20_000_000 {
            maker.make(first, first + 110, &mut out, &mut ends);
            first += 110;
        }
        let ns = began.elapsed().as_nanos() as f64 / first as f64;
        println!("make: {ns:.1} ns per message ({} bytes last)", out.len());
    }
}
