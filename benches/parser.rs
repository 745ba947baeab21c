//! Benchmark: the parser decision, measured on a corpus of 5,000 real specs.
//!
//! dlqspec loads a spec straight from granit-parser's events into a positioned tree and decodes
//! its types from that, and hands to serde-saphyr whatever that path declines (aliases, tags,
//! odd spellings, every broken spec). This measures, on one thread, as ratios to serde-saphyr
//! parsing into a generic value: reading the files, granit-parser's events alone (with and
//! without comments), dlqspec's typed, positioned load by serde-saphyr alone and as shipped
//! (events first), and load and run on the built-in implementation.
//! Run with `cargo bench --bench parser`.

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

use granit_parser::{Options, Parser};

use dlqspec::contracts::builtin::Builtin;
use dlqspec::contracts::contract::RunMode;
use dlqspec::load::loader;
use dlqspec::text::source::SourceFile;
use dlqspec::text::yaml;

use support::{best_of, write_corpus};

const SPECS: usize = 5_000;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target").join("bench-parser-corpus");
    let files = write_corpus(&root, &dir, SPECS);
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("readable"))
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let rounds = 5;

    let read = best_of(rounds, || {
        for file in &files {
            black_box(std::fs::read_to_string(file).expect("readable"));
        }
    });
    let events = |comments: bool| {
        best_of(rounds, || {
            for text in &texts {
                let mut options = Options::default();
                options.set_emit_comments(comments);
                let count = Parser::new_from_str_with_options(text, options)
                    .take_while(Result::is_ok)
                    .count();
                black_box(count);
            }
        })
    };
    let events_with_comments = events(true);
    let events_alone = events(false);
    let generic = best_of(rounds, || {
        for text in &texts {
            let parsed: Result<serde_json::Value, _> = serde_saphyr::from_str(text);
            black_box(parsed.expect("every spec parses"));
        }
    });
    let sources: Vec<SourceFile> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| SourceFile::from_text(format!("spec-{i}.yaml"), text.clone()))
        .collect();
    let load_all = || {
        best_of(rounds, || {
            for source in &sources {
                black_box(loader::load(source.clone()).expect("every spec loads"));
            }
        })
    };
    yaml::set_fast_path(false);
    let loaded_by_serde_saphyr = load_all();
    yaml::set_fast_path(true);
    let loaded = load_all();
    let ran = best_of(rounds, || {
        let mut builtin = Builtin::new();
        for source in &sources {
            let spec = loader::load(source.clone()).expect("every spec loads");
            black_box(spec.run(&mut builtin, RunMode::Check).outcome);
        }
    });

    let per_spec = |d: std::time::Duration| d.as_secs_f64() * 1e6 / SPECS as f64;
    println!(
        "{SPECS} specs ({:.1} MB), best of {rounds}, one thread; µs per spec and ratio to serde-saphyr's generic parse",
        bytes as f64 / 1e6
    );
    let rows = [
        ("read the files", read),
        ("granit-parser events, with comments", events_with_comments),
        ("granit-parser events, no comments", events_alone),
        ("serde-saphyr into a generic value", generic),
        ("dlqspec load, serde-saphyr alone", loaded_by_serde_saphyr),
        ("dlqspec load, events first (as shipped)", loaded),
        ("dlqspec load and run on the built-in", ran),
    ];
    for (what, took) in rows {
        println!(
            "  {what:<40} {:>7.1} µs   {:>5.2}x",
            per_spec(took),
            took.as_secs_f64() / generic.as_secs_f64()
        );
    }
    println!(
        "  loading straight from events takes {:.0}% of serde-saphyr's time",
        100.0 * loaded.as_secs_f64() / loaded_by_serde_saphyr.as_secs_f64()
    );
}
