//! Benchmark: how one scenario's cost grows with its size, as ratios against a floor.
//!
//! Generates dlq-consumer specs of N messages with mixed outcomes (success, a transient
//! failure then success, permanent, three transient failures) for growing N, and measures
//! parsing the text into a generic YAML value (the floor), loading it as a spec, and loading
//! and running it on the built-in implementation. It prints each as a multiple of the floor
//! and the exponent fitted between sizes: 1.0 is linear. Then the same specs go through the
//! `dlqspec run` command, on the built-in implementation and through the Python shim, and the
//! whole process's wall time and peak memory (and their exponents) are reported: memory is
//! what a process can hold, so it is measured per process. Run with `cargo bench --bench scale`
//! (`DLQSPEC_SCALE_PYTHON=0` leaves the Python runs out: 10^5 messages take about a minute).

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
use std::time::{Duration, Instant};

use support::best_of;

use dlqspec::contracts::builtin::Builtin;
use dlqspec::contracts::contract::RunMode;
use dlqspec::load::loader;
use dlqspec::text::source::SourceFile;

/// The text of a mixed scenario of `n` messages that passes on the built-in implementation.
fn mixed_scenario(n: usize) -> String {
    let mut text = format!("contract: dlq-consumer\nname: {n} mixed messages\nmessages:\n");
    for i in 0..n {
        text.push_str(&format!("  - {{id: m{i}, body: b{i}}}\n"));
    }
    text.push_str("handler:\n");
    let mut deliveries = 0;
    for i in 0..n {
        let (outcomes, calls) = match i % 4 {
            0 => ("[ok]", 1),
            1 => ("[transient: x, ok]", 2),
            2 => ("[permanent: bad]", 1),
            _ => ("[transient: x, transient: y, transient: z]", 3),
        };
        text.push_str(&format!("  m{i}: {outcomes}\n"));
        deliveries += calls;
    }
    text.push_str("steps:\n");
    for _ in 0..deliveries {
        text.push_str("  - process: any\n");
    }
    text.push_str("  - process: none\n");
    text
}

/// serde-saphyr's options with room for the biggest scenario, as dlqspec's own loader has:
/// with the default budget (250,000 values) a scenario of 10^5 messages is refused, and the
/// floor would time a refusal.
fn admitting_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = dlqspec::text::yaml::MAX_NODES;
    budget.max_events = 2 * dlqspec::text::yaml::MAX_NODES;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

fn main() {
    let sizes = [1_000, 10_000, 100_000];
    // First, while this process is small: a child's peak memory starts from its parent's
    // (Linux carries it across exec), so measured later it would read this process's peak.
    whole_process(&sizes);
    let mut previous: Option<(usize, Duration)> = None;
    println!("one dlq-consumer scenario of N mixed messages, best of 3");
    println!("       N   parse (floor)        load          load + run    exponent of run");
    for n in sizes {
        let text = mixed_scenario(n);
        let rounds = if n >= 100_000 { 1 } else { 3 };
        let floor = best_of(rounds, || {
            let parsed: Result<serde_json::Value, _> =
                serde_saphyr::from_str_with_options(&text, admitting_options());
            black_box(parsed.expect("the floor parses the whole file"));
        });
        let file = SourceFile::from_text("scale.yaml", text.clone());
        let loaded = loader::load(file.clone());
        let spec = match loaded {
            Ok(spec) => spec,
            Err(error) => {
                println!("{n:>8}   the spec does not load: {}", error.message);
                continue;
            }
        };
        let load = best_of(rounds, || {
            black_box(loader::load(file.clone()).ok());
        });
        let run = best_of(rounds, || {
            let spec = loader::load(file.clone()).expect("loads");
            black_box(spec.run(&mut Builtin::new(), RunMode::Check));
        });
        let outcome = spec.run(&mut Builtin::new(), RunMode::Check).outcome;
        assert!(
            matches!(outcome, dlqspec::model::outcome::Outcome::Passed),
            "{outcome:?}"
        );
        let exponent = previous.map_or(String::from("-"), |(m, before)| {
            let ratio = run.as_secs_f64() / before.as_secs_f64();
            format!("{:.2}", ratio.ln() / (n as f64 / m as f64).ln())
        });
        let x = |d: Duration| d.as_secs_f64() / floor.as_secs_f64().max(1e-9);
        println!(
            "{n:>8}   {:>9.1} ms   {:>9.1} ms {:>4.1}x   {:>9.1} ms {:>4.1}x   {exponent}",
            floor.as_secs_f64() * 1e3,
            load.as_secs_f64() * 1e3,
            x(load),
            run.as_secs_f64() * 1e3,
            x(run),
        );
        previous = Some((n, run));
    }
}

/// Wall time and peak resident memory of `dlqspec run` on each size, with their exponents.
fn whole_process(sizes: &[usize]) {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-scale");
    std::fs::create_dir_all(&dir).expect("a folder for the specs");
    let python = std::env::var("DLQSPEC_SCALE_PYTHON").map_or(true, |v| v != "0");
    let solution = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/python/solution.py");
    let mut implementations = vec![("built-in", None)];
    if python {
        implementations.push(("python", Some(format!("python:{solution}"))));
    }
    println!("the whole `dlqspec run` process, once each");
    println!("  implementation        N       wall   exponent    peak memory   exponent");
    for (label, implementation) in &implementations {
        let mut previous: Option<(usize, f64, f64)> = None;
        for &n in sizes {
            let path = dir.join(format!("mixed-{n}.yaml"));
            std::fs::write(&path, mixed_scenario(n)).expect("the spec is written");
            let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_dlqspec"));
            command
                .arg("run")
                .arg(&path)
                .args(["--timeout", "900", "--cpu", "900"]);
            if let Some(implementation) = implementation {
                command.args(["--impl", implementation]);
            }
            command.stdout(std::process::Stdio::null());
            let (wall, peak, passed) = measured(command);
            assert!(passed, "{label}: {n} messages do not pass");
            let exponent = |now: f64, before: f64, m: usize| {
                format!("{:.2}", (now / before).ln() / (n as f64 / m as f64).ln())
            };
            let (wall_exp, peak_exp) = previous.map_or(("-".into(), "-".into()), |(m, w, p)| {
                (exponent(wall, w, m), exponent(peak, p, m))
            });
            println!(
                "  {label:<12} {n:>10} {:>8.2} s {wall_exp:>8}   {:>9.1} MiB {peak_exp:>8}",
                wall,
                peak / 1024.0 / 1024.0
            );
            previous = Some((n, wall, peak));
        }
    }
    println!();
}

/// Runs `command` and gives its wall time in seconds, the peak resident memory of the
/// process in bytes (its children, an implementation's interpreter, are not counted), and
/// whether it exited 0.
#[cfg(unix)]
#[allow(clippy::zombie_processes)] // wait4 reaps it, and tells its resource use as it does.
fn measured(mut command: std::process::Command) -> (f64, f64, bool) {
    let started = Instant::now();
    let child = command.spawn().expect("dlqspec starts");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, with valid pointers for the call.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "waited for dlqspec");
    let wall = started.elapsed().as_secs_f64();
    let peak = usage.ru_maxrss as f64 * 1024.0;
    (
        wall,
        peak,
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    )
}
