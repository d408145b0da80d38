//! Which files are outputs of our layout, and a split file's facility and severity.

/// Whether a file name is one of our layout's outputs: split by facility and severity, or one plain file
/// (syslogbench/rig/watcher/files.py names the same; done.log is not an output).
pub fn is_output_name(name: &str) -> bool {
    let Some(middle) = name
        .strip_prefix("test.")
        .and_then(|rest| rest.strip_suffix(".log"))
    else {
        return false;
    };
    let word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(id) = middle.strip_suffix(".all") {
        return word(id);
    }
    let parts: Vec<&str> = middle.split('.').collect();
    parts.len() == 5
        && word(parts[0])
        && parts[1] == "facility"
        && number(parts[2])
        && parts[3] == "severity"
        && number(parts[4])
}

/// A split file's facility x 8 + severity ("test.x.facility.3.severity.5.log" -> 29); None for any other.
pub fn split_pri(name: &[u8]) -> Option<u64> {
    let name = std::str::from_utf8(name).ok()?;
    let parts: Vec<&str> = name.strip_suffix(".log")?.rsplitn(5, '.').collect();
    match parts[..] {
        [severity, "severity", facility, "facility", _] => {
            Some(facility.parse::<u64>().ok()? * 8 + severity.parse::<u64>().ok()?)
        }
        _ => None,
    }
}
