//! Nothing panics on any input: mangled copies of every bundled spec load and run without a
//! panic, and `run`, `explain` and `bless --check` give each of them the same verdict.
//!
//! A deterministic fuzz (a fixed-seed generator, so a failure replays exactly): each copy has
//! lines dropped, duplicated or swapped, or YAML-significant tokens dropped in, which reaches
//! the parser, every load-time check and, where a copy still loads, the runner.

use std::panic::{AssertUnwindSafe, catch_unwind};

use dlqspec::load::discover;

use dlqspec::generate::rng::Rng;

use crate::common::{TOKENS, root, verdicts};

fn mangle(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for _ in 0..1 + rng.below(3) {
        if lines.is_empty() {
            break;
        }
        let i = rng.below(lines.len());
        match rng.below(5) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let copy = lines[i].clone();
                lines.insert(i, copy);
            }
            2 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            _ => {
                let line = &mut lines[i];
                let mut at = rng.below(line.len() + 1);
                while !line.is_char_boundary(at) {
                    at -= 1;
                }
                let token: &&str = rng.pick(TOKENS);
                line.insert_str(at, token);
            }
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn mangled_specs_never_panic_and_get_one_verdict_from_run_explain_and_bless() {
    let files: Vec<_> = discover::spec_files(&[root().join("specs")])
        .expect("specs/ exists")
        .into_iter()
        .collect();
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut loaded = 0;
    for path in &files {
        let original = std::fs::read_to_string(path).expect("readable");
        for round in 0..120 {
            let text = mangle(&original, &mut rng);
            let result = catch_unwind(AssertUnwindSafe(|| verdicts(path, &text)));
            match result {
                Ok([run, explain, bless]) => {
                    // The one exception: a run that meets a spec error after its first
                    // difference (a fault that never fires) is refused by bless as broken.
                    let refused_as_broken = run == 1 && bless == 2 && later_spec_error(path, &text);
                    assert!(
                        run == explain && (run == bless || refused_as_broken),
                        "{} (round {round}): run exits {run}, explain {explain}, bless --check {bless} on this text:\n{text}",
                        path.display()
                    );
                    loaded += usize::from(run != 2);
                }
                Err(_) => panic!(
                    "{} (round {round}) panicked on this text:\n{text}",
                    path.display()
                ),
            }
        }
    }
    // The mangling must not be so heavy that nothing reaches the runner.
    assert!(loaded > files.len(), "only {loaded} mangled copies ran");
}

/// Whether the recorded run of `text` meets a spec error after its first difference.
fn later_spec_error(path: &std::path::Path, text: &str) -> bool {
    dlqspec::load::loader::load(dlqspec::text::source::SourceFile::from_text(
        path,
        text.to_owned(),
    ))
    .is_ok_and(|spec| {
        spec.run(
            &mut dlqspec::contracts::builtin::Builtin::new(),
            dlqspec::contracts::contract::RunMode::Record,
        )
        .later_spec_error
        .is_some()
    })
}
