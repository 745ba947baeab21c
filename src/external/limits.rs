//! What one implementation may use: its processes' memory and CPU time (`setrlimit` before
//! exec, `--memory`, `--cpu`), and what it may make dlqspec hold (a protocol line, the world
//! calls of one spec). docs/protocol.md lists them; an implementation past one is errored,
//! with a message naming the limit.

/// Whether implementations run in the box (`--sandbox`, `sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sandbox {
    /// Every implementation process runs in the box.
    On,
    /// No box: the implementation runs with dlqspec's rights (for debugging only; unsafe for
    /// grading).
    Off,
}

/// The most processes and threads one implementation may have at once, by default: Node runs
/// about 11 threads, tsx with esbuild some 30, Python one per thread it starts.
pub(crate) const DEFAULT_PROCESSES: u64 = 256;

/// The longest line an implementation may write on stdout.
pub(crate) const MAX_LINE_BYTES: usize = 16 << 20;

/// The most bytes of world-call lines one spec may receive: the world keeps what it is given
/// (DLQ entries, sent messages, the trace), so this bounds what an implementation can make
/// dlqspec hold. A plain spec of 10^5 messages takes about 20 MB through the world.
pub(crate) const MAX_WORLD_BYTES_PER_SPEC: usize = 64 << 20;

/// The most JSON values the world calls of one spec may carry in their arguments: what the
/// world keeps is counted in values too, each about 32 bytes held whatever its text, so that
/// 64 MiB of zeros (32 million values, a gigabyte held) is refused long before. A plain spec of
/// 10^5 messages sends about 5 a message.
pub(crate) const MAX_WORLD_VALUES_PER_SPEC: usize = 2_000_000;

/// The data memory (`RLIMIT_DATA`: heap and private writable mappings) each implementation
/// process may use by default. Not the address space (`RLIMIT_AS`): Node reserves far more
/// address space than it uses. Measured: Node 20 needs about 100 MiB to start, tsx about
/// 150 MiB, Python about 20 MiB.
pub(crate) const DEFAULT_MEMORY_BYTES: u64 = 2 << 30;

/// The CPU time each implementation process may use over its whole life, by default. One
/// process serves a whole run; a hang within one request is `--timeout`'s business.
pub(crate) const DEFAULT_CPU_SECONDS: u64 = 600;

/// What a box may write by default (`--disk`): its private folder and its `/dev/shm` each
/// hold at most this, and no file it writes grows past it.
pub(crate) const DEFAULT_DISK_BYTES: u64 = 64 << 20;

/// The defaults as the command line writes them (its `--memory`, `--cpu` and `--disk`); a
/// test holds them equal to the numbers above.
pub(crate) const DEFAULT_MEMORY_TEXT: &str = "2G";
pub(crate) const DEFAULT_CPU_TEXT: &str = "600";
pub(crate) const DEFAULT_DISK_TEXT: &str = "64M";

/// Resource limits for each implementation process; `None` is unlimited. And whether it runs
/// in the box (`sandbox`), where `processes` bounds its processes and threads together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) memory: Option<u64>,
    pub(crate) cpu_seconds: Option<u64>,
    pub(crate) processes: Option<u64>,
    /// What the box may write: its private folder and `/dev/shm` (each), and any one file.
    pub(crate) disk: Option<u64>,
    pub(crate) sandbox: Sandbox,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory: Some(DEFAULT_MEMORY_BYTES),
            cpu_seconds: Some(DEFAULT_CPU_SECONDS),
            processes: Some(DEFAULT_PROCESSES),
            disk: Some(DEFAULT_DISK_BYTES),
            sandbox: Sandbox::On,
        }
    }
}

impl Limits {
    /// No limit and no box: for a process of dlqspec's own (`grade`'s runs).
    pub(crate) fn unlimited() -> Self {
        Limits {
            memory: None,
            cpu_seconds: None,
            processes: None,
            disk: None,
            sandbox: Sandbox::Off,
        }
    }

    /// `2 GiB of data (--memory)`, for messages.
    pub(crate) fn memory_text(&self) -> String {
        match self.memory {
            Some(bytes) => format!("{} of data (--memory)", size(bytes)),
            None => "unlimited (--memory)".to_owned(),
        }
    }

    /// `64 MiB (--disk)`, for messages.
    pub(crate) fn disk_text(&self) -> String {
        match self.disk {
            Some(bytes) => format!("{} (--disk)", size(bytes)),
            None => "unlimited (--disk)".to_owned(),
        }
    }

    /// `600 s of CPU time (--cpu)`, for messages.
    pub(crate) fn cpu_text(&self) -> String {
        match self.cpu_seconds {
            Some(seconds) => format!("{seconds} s of CPU time (--cpu)"),
            None => "unlimited (--cpu)".to_owned(),
        }
    }
}

/// `512 MiB`, `2 GiB`, `1000 bytes`.
pub(crate) fn size(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// Parses `--memory`: bytes with an optional K, M or G (powers of 1024, `MiB` and `MB` alike),
/// or `unlimited`.
pub(crate) fn parse_memory(value: &str) -> Result<Option<u64>, String> {
    if value.trim().eq_ignore_ascii_case("unlimited") {
        return Ok(None);
    }
    let bytes = parse_size(value).ok_or_else(|| {
        format!(
            "`{value}` is not a memory size: write bytes with K, M or G, such as 512M or 2G, or unlimited"
        )
    })?;
    if bytes < 16 << 20 {
        return Err(format!(
            "`{value}` is too little memory for any interpreter to start: give at least 16M"
        ));
    }
    Ok(Some(bytes))
}

/// Parses `--disk`: bytes with an optional K, M or G, as `--memory` reads them, at least 1M,
/// or `unlimited`.
pub(crate) fn parse_disk(value: &str) -> Result<Option<u64>, String> {
    if value.trim().eq_ignore_ascii_case("unlimited") {
        return Ok(None);
    }
    let bytes = parse_size(value).ok_or_else(|| {
        format!(
            "`{value}` is not a disk size: write bytes with K, M or G, such as 64M or 1G, or unlimited"
        )
    })?;
    if bytes < 1 << 20 {
        return Err(format!(
            "`{value}` is too little for a box's private folder: give at least 1M"
        ));
    }
    Ok(Some(bytes))
}

/// Bytes with an optional K, M or G suffix (powers of 1024, `MiB` and `MB` alike).
fn parse_size(value: &str) -> Option<u64> {
    let upper = value.trim().to_ascii_uppercase();
    let upper = upper.trim_end_matches("IB").trim_end_matches('B');
    let (number, shift) = match upper.char_indices().last() {
        Some((at, 'K')) => (&upper[..at], 10),
        Some((at, 'M')) => (&upper[..at], 20),
        Some((at, 'G')) => (&upper[..at], 30),
        _ => (upper, 0),
    };
    let number: u64 = number.trim().parse().ok()?;
    number.checked_shl(shift).filter(|b| b >> shift == number)
}

/// Parses `--cpu`: whole seconds of CPU time, or `unlimited`.
pub(crate) fn parse_cpu(value: &str) -> Result<Option<u64>, String> {
    let text = value.trim();
    if text.eq_ignore_ascii_case("unlimited") {
        return Ok(None);
    }
    match text.parse::<u64>() {
        Ok(0) | Err(_) => Err(format!(
            "`{value}` is not a CPU time: write whole seconds, at least 1, or unlimited"
        )),
        Ok(seconds) => Ok(Some(seconds)),
    }
}

/// Parses `--processes`: how many processes and threads at once, at least 8 (an interpreter
/// runs a few threads to start), or `unlimited`.
pub(crate) fn parse_processes(value: &str) -> Result<Option<u64>, String> {
    let text = value.trim();
    if text.eq_ignore_ascii_case("unlimited") {
        return Ok(None);
    }
    match text.parse::<u64>() {
        Ok(n) if n >= 8 => Ok(Some(n)),
        _ => Err(format!(
            "`{value}` is not a process count: write a whole number, at least 8, or unlimited"
        )),
    }
}

/// Whether a line of an implementation's output says it ran out of memory (Python's
/// MemoryError, V8's fatal out-of-memory, C and C++ allocation failures, the JVM's fatal
/// report, which it prints on stdout, and its heap reservation).
pub(crate) fn says_out_of_memory(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    [
        "memoryerror",
        "out of memory",
        "cannot allocate memory",
        "bad_alloc",
        "allocation failed",
        "insufficient memory",
        "could not reserve enough space",
    ]
    .iter()
    .any(|marker| lower.contains(marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_lines_defaults_are_the_defaults() {
        assert_eq!(
            parse_memory(DEFAULT_MEMORY_TEXT),
            Ok(Some(DEFAULT_MEMORY_BYTES))
        );
        assert_eq!(parse_cpu(DEFAULT_CPU_TEXT), Ok(Some(DEFAULT_CPU_SECONDS)));
        assert_eq!(parse_disk(DEFAULT_DISK_TEXT), Ok(Some(DEFAULT_DISK_BYTES)));
    }

    #[test]
    fn disk_sizes_read_as_memory_sizes_do() {
        assert_eq!(parse_disk("1G"), Ok(Some(1 << 30)));
        assert_eq!(parse_disk("16MiB"), Ok(Some(16 << 20)));
        assert_eq!(parse_disk("unlimited"), Ok(None));
        assert!(parse_disk("512K").unwrap_err().contains("at least 1M"));
        assert!(
            parse_disk("lots")
                .unwrap_err()
                .starts_with("`lots` is not a disk size")
        );
    }

    #[test]
    fn memory_sizes_read_like_people_write_them() {
        assert_eq!(parse_memory("2G"), Ok(Some(2 << 30)));
        assert_eq!(parse_memory("512MiB"), Ok(Some(512 << 20)));
        assert_eq!(parse_memory("512mb"), Ok(Some(512 << 20)));
        assert_eq!(parse_memory("1073741824"), Ok(Some(1 << 30)));
        assert_eq!(parse_memory("unlimited"), Ok(None));
        assert!(
            parse_memory("lots")
                .unwrap_err()
                .starts_with("`lots` is not a memory size")
        );
        assert!(parse_memory("1K").unwrap_err().contains("at least 16M"));
        assert!(parse_memory("99999999999G").is_err());
        assert_eq!(size(2 << 30), "2 GiB");
        assert_eq!(size(1536 << 20), "1536 MiB");
    }

    #[test]
    fn process_counts_are_whole_and_enough_to_start() {
        assert_eq!(parse_processes("256"), Ok(Some(256)));
        assert_eq!(parse_processes("256"), Ok(Some(DEFAULT_PROCESSES)));
        assert_eq!(parse_processes("unlimited"), Ok(None));
        assert!(parse_processes("2").is_err());
        assert!(parse_processes("many").is_err());
    }

    #[test]
    fn cpu_times_are_whole_seconds() {
        assert_eq!(parse_cpu("30"), Ok(Some(30)));
        assert_eq!(parse_cpu("unlimited"), Ok(None));
        assert!(parse_cpu("0").is_err());
        assert!(parse_cpu("1.5").is_err());
    }

    #[test]
    fn out_of_memory_is_recognised_in_every_language() {
        for line in [
            "MemoryError",
            "# Fatal process out of memory: Zone",
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
            "terminate called after throwing an instance of 'std::bad_alloc'",
            "# There is insufficient memory for the Java Runtime Environment to continue.",
            "Could not reserve enough space for object heap",
        ] {
            assert!(says_out_of_memory(line), "{line}");
        }
        assert!(!says_out_of_memory("KeyError: 'memory'"));
    }
}
