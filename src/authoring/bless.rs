//! Blessing: rewriting a spec's failing expectations with what an implementation did, in place.
//!
//! Like insta's or trycmd's blessing: the spec is run recording every expectation's actual
//! value, each one that differs is rewritten where it is written (`text::yaml::edit`), and the rest of
//! the file stays byte for byte. The result is run again and must pass before it is written.
//! A spec error is never blessed: a broken spec needs a person, not a rewrite.

use crate::authoring::lint::{self, SpecSmell};
use crate::contracts::contract::RunMode;
use crate::load::discover::DiscoveredPath;
use crate::load::loader;
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;
use crate::report::Palette;
use crate::report::render;
use crate::text::source::SourceFile;
use crate::text::spec_error::SpecError;
use crate::text::yaml::edit::{self, Document};

/// What blessing one spec file came to.
#[derive(Debug, Clone)]
pub enum Blessing {
    /// Every expectation already holds.
    Unchanged,
    /// The expectations that differed, rewritten.
    Rewritten {
        /// The file as it was read, for a diff.
        original: String,
        blessed: String,
        /// How many written values were rewritten.
        values: usize,
        /// Comments that sat inside a value written anew, and are gone with it.
        comments_lost: usize,
        /// The lint smells the blessed spec has on its own (its `allow:` applied): blessing
        /// still writes it, and says so.
        smells: Vec<SpecSmell>,
    },
    SpecError(SpecError),
    /// The spec runs, but cannot be blessed automatically; why, in words.
    Refused(String),
}

/// Blesses the spec a discovery entry names against `implementation` (the built-in one, unless
/// a person explicitly asked for another). Nothing is written here; see `atomic_file`.
pub(crate) fn bless_entry(
    entry: &DiscoveredPath,
    implementation: &mut dyn Implementation,
) -> Blessing {
    let read = match entry {
        DiscoveredPath::Spec(found) => loader::read_found(found),
        DiscoveredPath::Unreadable { path, reason } => Err(loader::unreadable(path, reason)),
    };
    match read {
        Ok(file) => bless(file, implementation),
        Err(error) => Blessing::SpecError(error),
    }
}

pub fn bless(file: SourceFile, implementation: &mut dyn Implementation) -> Blessing {
    let spec = match loader::load(file) {
        Ok(spec) => spec,
        Err(error) => return Blessing::SpecError(error),
    };
    let file = &spec.file;
    if let Err(error) = implementation.begin_spec() {
        return Blessing::Refused(format!("the implementation could not start: {error}"));
    }
    let run = spec.scenario.run(implementation, RunMode::Record);
    // A spec error after the first difference (a fault that never fires on the reference,
    // say) is the spec's to fix: no rewrite of expectations mends it, so nothing is written.
    if let (Outcome::Mismatch(_), Some(error)) = (&run.outcome, &run.later_spec_error) {
        return Blessing::SpecError((**error).clone());
    }
    match run.outcome {
        Outcome::Passed => return Blessing::Unchanged,
        Outcome::Mismatch(_) => {}
        Outcome::SpecError(error) => return Blessing::SpecError(error),
        Outcome::Errored(error) => {
            return Blessing::Refused(render::impl_error(&error).trim_end().to_owned());
        }
        Outcome::Skipped(reason) => return Blessing::Refused(format!("skipped: {reason}")),
        Outcome::NotAttempted(why) => {
            return Blessing::Refused(format!("not attempted: {why}"));
        }
        // Known-failure lists are applied by the runner, after a scenario has run.
        Outcome::ExpectedFailure(_) | Outcome::Stale(_) => {
            return Blessing::Refused("a known-failure outcome cannot be blessed".into());
        }
        // Blessing runs on the fake world, where nothing diverges and no broker can fail.
        Outcome::Divergence(_) | Outcome::WorldFault(_) => {
            return Blessing::Refused("only the fake world's answers are blessed".into());
        }
    }
    let original = &file.text;
    let document = match Document::parse(original) {
        Ok(document) => document,
        Err(error) => return Blessing::Refused(format!("{}:{error}", file.display_path())),
    };
    let path = file.display_path();
    let mut edits = Vec::new();
    let mut values = 0;
    for checkpoint in run.checkpoints.iter().filter(|c| !c.matches()) {
        if checkpoint.written.is_empty() {
            return Blessing::Refused(unwritable(&path, checkpoint));
        }
        for written in checkpoint.written.iter().filter(|w| !w.matches()) {
            match document.rewrite(written.at, &written.path, &written.actual) {
                Ok(more) => {
                    values += 1;
                    edits.extend(more);
                }
                Err(error) => return Blessing::Refused(format!("{path}:{error}")),
            }
        }
    }
    let comments_lost = document.comments_replaced(&edits);
    let blessed = match edit::apply(original, edits) {
        Ok(blessed) => blessed,
        Err(error) => return Blessing::Refused(format!("{path}: {error}")),
    };
    let smells = match judge_blessed(file, &blessed, implementation) {
        Ok(smells) => smells,
        Err(reason) => return Blessing::Refused(reason),
    };
    Blessing::Rewritten {
        original: spec.file.text,
        blessed,
        values,
        comments_lost,
        smells,
    }
}

/// Why a differing expectation that cannot be rewritten in place is refused, with its place
/// and both values (long lists by their ends: a compact spec's DLQ may hold 10^5 entries).
fn unwritable(path: &str, checkpoint: &crate::contracts::contract::Checkpoint) -> String {
    let patterned = checkpoint.label == "expect"
        && checkpoint.expected.get("dlq") != checkpoint.actual.get("dlq");
    let hint = if patterned {
        "its `dlq` holds patterned entries (`count:`), which stand for many and are never rewritten; change them by hand, or write the entries out"
    } else {
        "change it by hand"
    };
    format!(
        "{path}:{}:{}: `{}` cannot be rewritten in place: it expects {}, but the run gave {}; {hint}",
        checkpoint.position.line,
        checkpoint.position.column,
        checkpoint.label,
        crate::contracts::contract::told_value(&checkpoint.expected),
        crate::contracts::contract::told_value(&checkpoint.actual),
    )
}

/// The lint smells of the blessed text on its own, when it passes; why it would still not
/// pass, when it would not. One recorded run gives both.
fn judge_blessed(
    file: &SourceFile,
    blessed: &str,
    implementation: &mut dyn Implementation,
) -> Result<Vec<SpecSmell>, String> {
    let again = SourceFile::from_text(file.path.clone(), blessed);
    let spec = match loader::load(again) {
        Ok(spec) => spec,
        Err(error) => {
            return Err(format!(
                "the blessed spec would not load ({error}); nothing was written"
            ));
        }
    };
    let still = |outcome: &Outcome| {
        format!(
            "the blessed spec would still not pass; nothing was written:\n{}",
            render::details(&file.display_path(), outcome).trim_end()
        )
    };
    match lint::spec_smells(&spec, implementation) {
        Ok((smells, run)) if matches!(run.outcome, Outcome::Passed) => {
            let header = spec.scenario.header();
            // A duplicate name needs the other specs to judge; this is one spec alone.
            let (smells, _) = lint::apply_allows(header, smells, |smell| {
                smell != crate::contracts::smell::DUPLICATE_NAME
            });
            Ok(smells)
        }
        Ok((_, run)) => Err(still(&run.outcome)),
        Err(outcome) => Err(still(&outcome)),
    }
}

/// A unified diff of a file before and after blessing, with `path` in the headers.
pub(crate) fn diff(path: &str, before: &str, after: &str, palette: &Palette) -> String {
    let body = render::diff(before, after, palette);
    // The shared diff says "expected"/"actual"; for a file, say which file.
    let mut lines = body.lines();
    let _ = (lines.next(), lines.next());
    let mut out = format!(
        "{}\n{}\n",
        crate::report::style::paint(palette.removed, &format!("--- {path}")),
        crate::report::style::paint(palette.added, &format!("+++ {path} (blessed)"))
    );
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::builtin::Builtin;
    use crate::text::spec_error::SpecErrorKind;

    const SPEC: &str = "# why\ncontract: dlq-consumer\nname: t\nrules: [dlq-consumer/success]\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps:\n  - process: retry   # wrong\nexpect:\n  handler_calls: {a: 2}\n  pending: []\n";

    fn bless_text(text: &str) -> Blessing {
        bless(SourceFile::from_text("t.yaml", text), &mut Builtin::new())
    }

    #[test]
    fn failing_expectations_are_rewritten_and_nothing_else() {
        let Blessing::Rewritten {
            blessed, values, ..
        } = bless_text(SPEC)
        else {
            panic!("not rewritten");
        };
        assert_eq!(values, 2);
        assert_eq!(
            blessed,
            SPEC.replace("process: retry", "process: ok")
                .replace("{a: 2}", "{a: 1}")
        );
        assert!(matches!(bless_text(&blessed), Blessing::Unchanged));
    }

    #[test]
    fn a_spec_error_is_never_blessed() {
        let text = SPEC.replace("handler: {a: [ok]}", "handler: {a: []}");
        let Blessing::SpecError(error) = bless_text(&text) else {
            panic!("blessed a broken spec");
        };
        assert_eq!(error.kind, SpecErrorKind::Incomplete);
    }

    #[test]
    fn a_fault_that_never_fires_after_a_difference_is_a_spec_error_at_the_fault() {
        let text = SPEC.replace(
            "steps:\n",
            "steps:\n  - fault: {crash: after, call: dlq.put}\n",
        );
        let Blessing::SpecError(error) = bless_text(&text) else {
            panic!("blessed a spec whose fault never fires");
        };
        assert_eq!(error.position, crate::text::source::Position::new(8, 5));
        assert!(error.to_string().contains("never fires"), "{error}");
    }

    #[test]
    fn an_expectation_that_cannot_be_rewritten_in_place_is_refused() {
        let text = format!("{SPEC}  dlq: []\n").replace(
            "  - process: retry   # wrong\n",
            "  - process: ok\n  - replay: {crash: true}\n",
        );
        let Blessing::Refused(reason) = bless_text(&text) else {
            panic!("blessed");
        };
        assert_eq!(
            reason,
            "t.yaml:9:5: `replay` cannot be rewritten in place: it expects crash, but the run gave []; change it by hand"
        );
    }
}
