//! Benchmark: the parser decision, measured on a corpus of 5,000 real specs.
//!
//! dlqspec loads specs with serde-saphyr (positions of every value, duplicate keys rejected,
//! bounded aliases). The question is whether a loader built straight on parser events would
//! be worth its code. This measures, on one thread, against reading the files (the floor):
//! granit-parser's events alone (serde-saphyr's own parser, with and without comments), those
//! events built into a tree that keeps every position and rejects duplicate keys (the least
//! any event-based loader does before it checks a spec's vocabulary), serde-saphyr into a
//! generic value, dlqspec's load (typed, positioned, checked), and load and run.
//! Run with `cargo bench --bench parser`.

mod support;

use std::borrow::Cow;
use std::hint::black_box;
use std::path::PathBuf;

use granit_parser::{Event, Options, Parser};

use dlqspec::builtin::Builtin;
use dlqspec::contract::RunMode;
use dlqspec::loader;
use dlqspec::source::SourceFile;

use support::{best_of, write_corpus};

const SPECS: usize = 5_000;

/// A YAML value with where it starts: what an event-based loader would check a spec against.
enum Node<'a> {
    Scalar(Cow<'a, str>, usize, usize),
    List(Vec<Node<'a>>, usize, usize),
    Map(Vec<(Node<'a>, Node<'a>)>, usize, usize),
}

/// Builds the tree of one document from its events; `None` on a syntax error or a repeated
/// key (aliases are not followed: the corpus has none, and the count is what matters here).
fn tree(text: &str, comments: bool) -> Option<Node<'_>> {
    let mut options = Options::default();
    options.set_emit_comments(comments);
    let mut stack: Vec<Node<'_>> = Vec::new();
    let mut keys: Vec<Option<Node<'_>>> = Vec::new();
    let mut root = None;
    for event in Parser::new_from_str_with_options(text, options) {
        let (event, span) = event.ok()?;
        let (line, col) = (span.start.line(), span.start.col());
        let node = match event {
            Event::Scalar(value, ..) => Node::Scalar(value, line, col),
            Event::SequenceStart(..) => {
                stack.push(Node::List(Vec::new(), line, col));
                keys.push(None);
                continue;
            }
            Event::MappingStart(..) => {
                stack.push(Node::Map(Vec::new(), line, col));
                keys.push(None);
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                keys.pop();
                stack.pop()?
            }
            _ => continue,
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(Node::List(items, ..)) => items.push(node),
            Some(Node::Map(pairs, ..)) => {
                let pending = keys.last_mut()?;
                match pending.take() {
                    None => {
                        if let Node::Scalar(key, ..) = &node
                            && pairs
                                .iter()
                                .any(|(k, _)| matches!(k, Node::Scalar(s, ..) if s == key))
                        {
                            return None;
                        }
                        *pending = Some(node);
                    }
                    Some(key) => pairs.push((key, node)),
                }
            }
            Some(Node::Scalar(..)) => return None,
        }
    }
    root
}

/// The furthest position in a tree, as (line, column): checks the positions were kept.
fn furthest(node: &Node<'_>) -> (usize, usize) {
    match node {
        Node::Scalar(_, line, col) => (*line, *col),
        Node::List(items, line, col) => items.iter().map(furthest).fold((*line, *col), Ord::max),
        Node::Map(pairs, line, col) => pairs
            .iter()
            .map(|(key, value)| furthest(key).max(furthest(value)))
            .fold((*line, *col), Ord::max),
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target").join("bench-parser-corpus");
    let files = write_corpus(&root, &dir, SPECS);
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("readable"))
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    for text in &texts {
        let node = tree(text, false).expect("every spec parses");
        assert!(furthest(&node).0 > 1, "positions are kept");
    }
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
    let trees = best_of(rounds, || {
        for text in &texts {
            assert!(black_box(tree(text, false)).is_some(), "every spec parses");
        }
    });
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
    let loaded = best_of(rounds, || {
        for source in &sources {
            black_box(loader::load(source.clone()).expect("every spec loads"));
        }
    });
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
        ("events into a positioned tree", trees),
        ("serde-saphyr into a generic value", generic),
        ("dlqspec load (typed, positioned)", loaded),
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
        "  an event-based loader could save at most {:.0}% of load and run",
        100.0 * (loaded.as_secs_f64() - trees.as_secs_f64()).max(0.0) / ran.as_secs_f64()
    );
}
