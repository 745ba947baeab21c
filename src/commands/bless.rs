//! `dlqspec bless`: rewrite failing expectations with what the built-in implementation does.

use std::io::Write;

use crate::authoring::bless::{self, Blessing};
use crate::authoring::lint::SpecSmell;
use crate::commands::cli::BlessArgs;
use crate::commands::interactive::{self, ReviewAnswer};
use crate::contracts::builtin::Builtin;
use crate::load::discover;
use crate::report::sanitize;
use crate::report::style::paint;
use crate::report::{Palette, render};
use crate::run::exit;
use crate::text::source::display_path;

/// How many specs came to what, for the closing line.
#[derive(Default)]
struct Tally {
    changed: usize,
    unchanged: usize,
    refused: usize,
    broken: usize,
    /// `--interactive`: changes the person skipped; after a quit, the specs left as they are
    /// (the one asked about and every one after it).
    skipped: usize,
    left: Option<usize>,
}

pub(crate) fn bless(args: BlessArgs, palette: Palette) -> i32 {
    if args.interactive && !interactive::stdin_is_terminal() {
        return super::messages::usage_error(
            "`bless --interactive` asks about each change on the terminal, but stdin is not a terminal: run it in a terminal, or drop --interactive (`dlqspec bless --check` shows every change without writing)",
            &palette,
        );
    }
    let discovery = match discover::discover(&args.specs.paths) {
        Ok(discovery) => discovery,
        Err(error) => return super::messages::usage_error(&error.to_string(), &palette),
    };
    crate::report::render::warn_skipped(&discovery.skipped, &palette);
    let files = discovery.entries;
    // Always the reference implementation: blessing records what the rules say, not what
    // some implementation under test happens to do.
    let mut implementation = Builtin::new();
    let mut out = sanitize::stdout();
    let stdin = std::io::stdin();
    let mut answers = stdin.lock();
    let mut tally = Tally::default();
    for (index, entry) in files.iter().enumerate() {
        let path = entry.path();
        let shown = sanitize::line(&display_path(path)).into_owned();
        let blessing = bless::bless_entry(entry, &mut implementation);
        let text = match blessing {
            Blessing::Unchanged => {
                tally.unchanged += 1;
                continue;
            }
            Blessing::Rewritten {
                original,
                blessed,
                values,
                comments_lost,
                smells,
            } => {
                let what = format!("{values} value{}", if values == 1 { "" } else { "s" });
                let mut notes = String::new();
                if comments_lost > 0 {
                    notes.push_str(&format!(
                        "  note: {comments_lost} comment{} inside rewritten values {} dropped\n",
                        if comments_lost == 1 { "" } else { "s" },
                        if comments_lost == 1 { "was" } else { "were" }
                    ));
                }
                notes.push_str(&smell_lines(&shown, &smells, &palette));
                let diff = || bless::diff(&shown, &original, &blessed, &palette);
                if args.check {
                    tally.changed += 1;
                    format!("would bless {shown} ({what}):\n{}\n{notes}", diff())
                } else {
                    if args.interactive {
                        let _ = write!(out, "{shown} ({what}):\n{}\n{notes}", diff());
                        match interactive::ask(&format!("bless {shown}?"), &mut answers, &mut out) {
                            ReviewAnswer::Accept => {}
                            ReviewAnswer::Skip => {
                                tally.skipped += 1;
                                let _ = writeln!(out, "skipped {shown}\n");
                                continue;
                            }
                            ReviewAnswer::Quit => {
                                tally.left = Some(files.len() - index);
                                break;
                            }
                        }
                        // The diff and notes were shown with the question.
                        notes.clear();
                        // The answer may come long after the diff: an edit made meanwhile
                        // (in the author's editor, say) is theirs, and must not be overwritten.
                        let now = crate::text::source::SourceFile::read(path).map(|file| file.text);
                        if now.as_deref().ok() != Some(original.as_str()) {
                            tally.refused += 1;
                            let _ = writeln!(
                                out,
                                "not blessed: {shown} changed since its diff was shown; run bless again\n"
                            );
                            continue;
                        }
                    }
                    match crate::files::atomic_file::write_spec(path, blessed.as_bytes()) {
                        Ok(()) => {
                            tally.changed += 1;
                            format!("blessed {shown} ({what} rewritten)\n{notes}")
                        }
                        Err(error) => {
                            tally.refused += 1;
                            let error = sanitize::text(&error.to_string()).into_owned();
                            format!("could not write {shown}: {error}\n")
                        }
                    }
                }
            }
            Blessing::SpecError(error) => {
                tally.broken += 1;
                format!(
                    "{} {shown}: the spec is broken\n{}\n",
                    paint(palette.spec, "not blessed:"),
                    render::spec_error(&error, &palette)
                )
            }
            Blessing::Refused(reason) => {
                tally.refused += 1;
                format!(
                    "{} {shown}\n{}\n\n",
                    paint(palette.fail, "could not bless"),
                    sanitize::text(&reason)
                )
            }
        };
        let _ = write!(out, "{text}");
    }
    let _ = writeln!(out, "{}", closing(&args, &tally, files.len()));
    if tally.broken > 0 {
        exit::SPEC_OR_USAGE_ERROR
    } else if tally.refused > 0 || (args.check && tally.changed > 0) {
        exit::FAILED
    } else {
        exit::PASSED
    }
}

/// One line per lint smell of a blessed spec, pointing at `dlqspec lint`: blessing writes the
/// spec anyway, the smell is the author's to judge.
fn smell_lines(shown: &str, smells: &[SpecSmell], palette: &Palette) -> String {
    smells
        .iter()
        .map(|(id, position, message)| {
            format!(
                "  {} {shown}:{}:{}: {}: {} (see `dlqspec lint {shown}`)\n",
                paint(palette.skip, "smell:"),
                position.line,
                position.column,
                id,
                sanitize::line(message)
            )
        })
        .collect()
}

fn closing(args: &BlessArgs, tally: &Tally, files: usize) -> String {
    let specs = |n: usize| format!("{n} spec{}", if n == 1 { "" } else { "s" });
    let mut closing = match (args.check, tally.changed) {
        (true, 0) => format!("nothing to bless in {}", specs(files)),
        (true, n) => format!(
            "{} would change; `dlqspec bless` writes {}",
            specs(n),
            if n == 1 { "it" } else { "them" }
        ),
        (false, n) => format!("blessed {}, {} unchanged", specs(n), tally.unchanged),
    };
    if args.interactive {
        closing.push_str(&format!(", {} skipped", tally.skipped));
        if let Some(left) = tally.left {
            closing.push_str(&format!(
                ", stopped by quit: {} left as {}",
                specs(left),
                if left == 1 { "it is" } else { "they are" }
            ));
        }
    }
    if tally.refused > 0 {
        closing.push_str(&format!(", {} could not be blessed", specs(tally.refused)));
    }
    if tally.broken > 0 {
        closing.push_str(&format!(", {} broken", specs(tally.broken)));
    }
    closing
}
