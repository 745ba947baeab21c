//! Benchmark: reading, loading and running the bundled suite, as ratios against a floor.
//!
//! The floor is reading every spec file from disk; loading (YAML + checks) and running
//! (loading + executing on the built-in implementation) are reported as multiples of it, so
//! the numbers mean something on any machine. Run with `cargo bench`.

// clippy.toml's rules hold the library; benchmarks set their cases up by writing files, starting
// programs and printing what they measured or found.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_macros,
    clippy::disallowed_types,
    reason = "benchmarks: files, processes and prints set cases up and tell what was found"
)]

mod support;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use support::best_of;

use dlqspec::contracts::builtin::Builtin;
use dlqspec::load::discover;
use dlqspec::load::loader;
use dlqspec::run::runner::{self, RunConfig};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let paths = vec![root.join("specs")];
    // The exercise folders among the specs (outcome-queue's), as a command registers them.
    let broken = dlqspec::commands::exercises::register_found(&paths);
    assert!(broken.is_empty(), "{broken:?}");
    let files = discover::spec_files(&paths).expect("specs/ exists");
    let rounds = 30;

    let floor = best_of(rounds, || {
        for file in &files {
            black_box(std::fs::read_to_string(file).expect("readable"));
        }
    });
    let load = best_of(rounds, || {
        for file in &files {
            let _ = black_box(loader::load_path(file));
        }
    });
    let one_job = RunConfig {
        paths: paths.clone(),
        jobs: std::num::NonZeroUsize::new(1),
        ..RunConfig::default()
    };
    let run = best_of(rounds, || {
        let prepared = runner::prepare(&one_job).expect("specs/ exists");
        let mut builtin = Builtin::new();
        for spec in &prepared {
            black_box(runner::run_one(spec, &mut builtin));
        }
    });

    let ratio = |d: Duration| d.as_secs_f64() / floor.as_secs_f64().max(1e-9);
    println!(
        "bundled suite: {} spec files, best of {rounds}",
        files.len()
    );
    println!(
        "  read (floor)     {:>9.3} ms   1.0x",
        floor.as_secs_f64() * 1e3
    );
    println!(
        "  read + load      {:>9.3} ms  {:>5.1}x",
        load.as_secs_f64() * 1e3,
        ratio(load)
    );
    println!(
        "  read + load + run{:>9.3} ms  {:>5.1}x",
        run.as_secs_f64() * 1e3,
        ratio(run)
    );
    println!(
        "  per spec: {:.1} µs loaded, {:.1} µs loaded and run",
        load.as_secs_f64() * 1e6 / files.len() as f64,
        run.as_secs_f64() * 1e6 / files.len() as f64
    );
}
