//! Benchmark: a corpus of 5,000 specs, run, linted and counted, as ratios against a floor.
//!
//! The corpus is the bundled suite copied over and over (each copy with a name of its own), so
//! its specs are real ones. The floor is parsing every file with serde-saphyr into a generic
//! value on one thread: what any YAML-based tool pays. Against it: `run` with one and two jobs
//! (through the library, as the command does, with a reporter that renders nothing), `lint`,
//! and `rules`' work (every spec loaded and run once on the built-in implementation).
//! Run with `cargo bench --bench corpus`.

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
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use support::{best_of, best_of_with_cpu, write_corpus};

use dlqspec::authoring::lint;
use dlqspec::contracts::builtin::Builtin;
use dlqspec::contracts::contract::RunMode;
use dlqspec::model::implementation::Implementation;
use dlqspec::run::events::{Event, Reporter};
use dlqspec::run::runner::{self, RunConfig};

const SPECS: usize = 5_000;

/// Takes every event and renders nothing: what is measured is the run.
struct Silent;

impl Reporter for Silent {
    fn event(&mut self, event: &Event) {
        black_box(matches!(event, Event::Done(_)));
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target").join("bench-corpus");
    let files = write_corpus(&root, &dir, SPECS);
    let rounds = 3;

    let floor = best_of(rounds, || {
        for file in &files {
            let text = std::fs::read_to_string(file).expect("readable");
            let parsed: Result<serde_json::Value, _> = serde_saphyr::from_str(&text);
            let _ = black_box(parsed);
        }
    });
    let run_with = |jobs: usize| {
        let config = RunConfig {
            paths: vec![dir.clone()],
            jobs: NonZeroUsize::new(jobs),
            ..RunConfig::default()
        };
        best_of_with_cpu(rounds, || {
            let factory = || -> Box<dyn Implementation + Send> { Box::new(Builtin::new()) };
            let summary = runner::run(&config, &factory, &mut Silent).expect("the corpus runs");
            assert_eq!(summary.passed, SPECS);
        })
    };
    let (one_job, one_job_cpu) = run_with(1);
    let (two_jobs, two_jobs_cpu) = run_with(2);
    let linted = best_of(rounds, || {
        let report = lint::lint(
            std::slice::from_ref(&dir),
            &lint::LintOptions::default(),
            &mut Builtin::new(),
        )
        .expect("the corpus lints");
        black_box(report.findings.len());
    });
    let ruled = best_of(rounds, || {
        let config = RunConfig {
            paths: vec![dir.clone()],
            ..RunConfig::default()
        };
        let prepared = runner::prepare(&config).expect("the corpus loads");
        let mut builtin = Builtin::new();
        for (_, spec) in &prepared {
            if let Ok(spec) = spec {
                black_box(spec.run(&mut builtin, RunMode::Check).exercised);
            }
        }
    });

    let x = |d: Duration| d.as_secs_f64() / floor.as_secs_f64().max(1e-9);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("a corpus of {SPECS} specs (the bundled suite, copied), best of {rounds}");
    println!(
        "  parse with serde-saphyr (floor) {:>8.0} ms   1.00x",
        ms(floor)
    );
    println!(
        "  run, 1 job                      {:>8.0} ms  {:>5.2}x",
        ms(one_job),
        x(one_job)
    );
    println!(
        "  run, 2 jobs                     {:>8.0} ms  {:>5.2}x   ({:.2}x faster than 1 job)",
        ms(two_jobs),
        x(two_jobs),
        one_job.as_secs_f64() / two_jobs.as_secs_f64()
    );
    if let (Some(one), Some(two)) = (one_job_cpu, two_jobs_cpu) {
        println!(
            "  CPU time of run: {:.0} ms with 1 job, {:.0} ms with 2 ({:.2}x of 1 job's); 2 jobs kept {:.2} cores busy",
            ms(one),
            ms(two),
            two.as_secs_f64() / one.as_secs_f64(),
            two.as_secs_f64() / two_jobs.as_secs_f64()
        );
    }
    println!(
        "  lint                            {:>8.0} ms  {:>5.2}x   ({:.2}x of run, 1 job)",
        ms(linted),
        x(linted),
        linted.as_secs_f64() / one_job.as_secs_f64()
    );
    println!(
        "  rules (load and run each spec)  {:>8.0} ms  {:>5.2}x   ({:.2}x of run, 1 job)",
        ms(ruled),
        x(ruled),
        ruled.as_secs_f64() / one_job.as_secs_f64()
    );
    println!(
        "  per spec: {:.0} µs parsed, {:.0} µs run on one job",
        floor.as_secs_f64() * 1e6 / SPECS as f64,
        one_job.as_secs_f64() * 1e6 / SPECS as f64
    );
}
