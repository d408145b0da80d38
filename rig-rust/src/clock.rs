//! Time and CPU, as both roles measure them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds since the epoch: the clock of the trial's common start (the watcher's), shared by all roles.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// This process's CPU seconds, user and system (what the rig itself costs).
pub fn cpu_seconds() -> f64 {
    let (user, system) = cpu_times();
    user + system
}

/// This process's CPU seconds apart: (user, system). System time is the kernel's work in our name: the
/// send path and, on one machine, the receiving side's softirq run in the sender's context.
pub fn cpu_times() -> (f64, f64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// Sleep until the epoch time `until` (no sleep if it has passed).
pub fn sleep_until(until: f64) {
    let wait = until - now();
    if wait > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(wait));
    }
}

/// Round to `digits` decimals, as the records carry times.
pub fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}
