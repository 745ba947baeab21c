//! What the benchmarks share: timing a piece of work and writing a corpus of real specs.

#![allow(dead_code)] // Each benchmark uses the part it needs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Best-of-N wall time of `work`: a fair estimate of its cost on a noisy machine.
pub fn best_of(rounds: usize, mut work: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Writes `count` specs under `dir`: the bundled suite copied until there are enough, each
/// copy with a name of its own, 50 to a folder. Returns their paths in order.
pub fn write_corpus(root: &Path, dir: &Path, count: usize) -> Vec<PathBuf> {
    let bundled = dlqspec::discover::spec_files(&[root.join("specs")]).expect("specs/ exists");
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
