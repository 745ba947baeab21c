//! What the benchmarks share: timing a piece of work and writing a corpus of real specs.

#![allow(dead_code)] // Each benchmark uses the part it needs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Best-of-N wall time of `work`: a fair estimate of its cost on a noisy machine.
pub(crate) fn best_of(rounds: usize, mut work: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Best-of-N wall time of `work`, and the least CPU time (user and system, all threads of
/// this process) a round took, where the system tells it. Wall time over CPU time tells how
/// much of the machine a run had: a run with two jobs that takes as much CPU time as one job
/// yet no less wall time was kept waiting for a core, not held up by its own threads.
pub(crate) fn best_of_with_cpu(
    rounds: usize,
    mut work: impl FnMut(),
) -> (Duration, Option<Duration>) {
    let mut wall = Duration::MAX;
    let mut cpu: Option<Duration> = None;
    for _ in 0..rounds {
        let (cpu_before, started) = (process_cpu(), Instant::now());
        work();
        wall = wall.min(started.elapsed());
        if let (Some(before), Some(after)) = (cpu_before, process_cpu()) {
            let spent = after.saturating_sub(before);
            cpu = Some(cpu.map_or(spent, |least| least.min(spent)));
        }
    }
    (wall, cpu)
}

/// User and system CPU time this process has used so far, all threads counted.
#[cfg(unix)]
pub(crate) fn process_cpu() -> Option<Duration> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage into memory that is valid for it.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: getrusage succeeded, so it filled the struct (zeroed before in any case).
    let usage = unsafe { usage.assume_init() };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Some(time(usage.ru_utime) + time(usage.ru_stime))
}

#[cfg(not(unix))]
pub fn process_cpu() -> Option<Duration> {
    None
}

/// Writes `count` specs under `dir`: the bundled suite copied until there are enough, each
/// copy with a name of its own, 50 to a folder. Returns their paths in order.
pub(crate) fn write_corpus(root: &Path, dir: &Path, count: usize) -> Vec<PathBuf> {
    let bundled =
        dlqspec::load::discover::spec_files(&[root.join("specs")]).expect("specs/ exists");
    let texts: Vec<String> = bundled
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("readable"))
        .collect();
    let _ = std::fs::remove_dir_all(dir);
    (0..count)
        .map(|i| {
            let text = &texts[i % texts.len()];
            let text = text.replacen("\nname: ", &format!("\nname: copy {i} of "), 1);
            let folder = dir.join(format!("{:02}", i % 50));
            std::fs::create_dir_all(&folder).expect("corpus folder");
            let path = folder.join(format!("spec-{i:05}.yaml"));
            std::fs::write(&path, text).expect("write");
            path
        })
        .collect()
}
