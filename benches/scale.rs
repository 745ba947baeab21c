//! Benchmark: how one scenario's cost grows with its size, as ratios against a floor.
//!
//! Generates dlq-consumer specs of N messages with mixed outcomes (success, a transient
//! failure then success, permanent, three transient failures) for growing N, and measures
//! parsing the text into a generic YAML value (the floor), loading it as a spec, and loading
//! and running it on the built-in implementation. It prints each as a multiple of the floor
//! and the exponent fitted between sizes: 1.0 is linear. Run with `cargo bench --bench scale`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use dlqspec::builtin::Builtin;
use dlqspec::contract::RunMode;
use dlqspec::loader;
use dlqspec::source::SourceFile;

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

fn best_of(rounds: usize, mut work: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let sizes = [1_000, 10_000, 100_000];
    let mut previous: Option<(usize, Duration)> = None;
    println!("one dlq-consumer scenario of N mixed messages, best of 3");
    println!("       N   parse (floor)        load          load + run    exponent of run");
    for n in sizes {
        let text = mixed_scenario(n);
        let rounds = if n >= 100_000 { 1 } else { 3 };
        let floor = best_of(rounds, || {
            let parsed: Result<serde_json::Value, _> = serde_saphyr::from_str(&text);
            let _ = black_box(parsed);
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
            matches!(outcome, dlqspec::outcome::Outcome::Passed),
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
