//! syslogbench's compiled rig, as a library: the roles the binary (main.rs) runs, each a module folder with
//! its command line, records, loop, counting, examples and tests, and the pieces they share. examples/ runs
//! each role in process (`cargo run --release --example send`, `follow`, `reconcile`).
//!
//! - `send`: the open-loop sender (TCP, UDP, TLS), burst or paced;
//! - `follow`: the output follower of a capacity trial (latency in an HdrHistogram);
//! - `reconcile`: a run's final count of every output line against the senders' ledgers;
//! - `check`: records read strictly, for the contract test;
//! - shared: `key` (a message line's key, parsed once for every role), `schedule` (the open-loop schedule),
//!   `templates` (a trial's messages made at send time), `mapped` (a rendered file, mapped), `io` (the
//!   request channel), `clock` (time and CPU).

pub mod check;
pub mod clock;
pub mod follow;
pub mod io;
pub mod key;
pub mod mapped;
pub mod reconcile;
pub mod schedule;
pub mod send;
pub mod templates;
