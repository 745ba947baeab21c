//! `dlqspec bless`: rewrite failing expectations with what the built-in implementation does.

use std::io::Write;

use crate::authoring::bless::{self, Blessing};
use crate::builtin::Builtin;
use crate::cli::BlessArgs;
use crate::discover;
use crate::report::sanitize;
use crate::report::style::paint;
use crate::report::{Palette, render};
use crate::runner::exit;
use crate::source::display_path;

pub fn bless(args: BlessArgs, palette: Palette) -> i32 {
    let discovery = match discover::discover(&args.specs.paths) {
        Ok(discovery) => discovery,
        Err(error) => return super::dispatch::usage_error(&error.to_string(), &palette),
    };
    crate::report::render::warn_skipped(&discovery.skipped, &palette);
    let files = discovery.entries;
    // Always the reference implementation: blessing records what the rules say, not what
    // some implementation under test happens to do.
    let mut implementation = Builtin::new();
    let mut out = sanitize::stdout();
    let (mut changed, mut unchanged, mut refused, mut broken) = (0, 0, 0, 0);
    for entry in &files {
        let path = entry.path();
        let shown = sanitize::line(&display_path(path)).into_owned();
        let blessing = bless::bless_entry(entry, &mut implementation);
        let text = match blessing {
            Blessing::Unchanged => {
                unchanged += 1;
                continue;
            }
            Blessing::Rewritten {
                original,
                blessed,
                values,
                comments_lost,
            } => {
                let what = format!("{values} value{}", if values == 1 { "" } else { "s" });
                let mut text = if args.check {
                    format!(
                        "would bless {shown} ({what}):\n{}\n",
                        bless::diff(&shown, &original, &blessed, &palette)
                    )
                } else {
                    match crate::atomic_file::write_spec(path, blessed.as_bytes()) {
                        Ok(()) => format!("blessed {shown} ({what} rewritten)\n"),
                        Err(error) => {
                            refused += 1;
                            let error = sanitize::text(&error.to_string()).into_owned();
                            let _ = writeln!(out, "could not write {shown}: {error}");
                            continue;
                        }
                    }
                };
                if comments_lost > 0 {
                    text.push_str(&format!(
                        "  note: {comments_lost} comment{} inside rewritten values {} dropped\n",
                        if comments_lost == 1 { "" } else { "s" },
                        if comments_lost == 1 { "was" } else { "were" }
                    ));
                }
                changed += 1;
                text
            }
            Blessing::SpecError(error) => {
                broken += 1;
                format!(
                    "{} {shown}: the spec is broken\n{}\n",
                    paint(palette.spec, "not blessed:"),
                    render::spec_error(&error, &palette)
                )
            }
            Blessing::Refused(reason) => {
                refused += 1;
                format!(
                    "{} {shown}\n{}\n\n",
                    paint(palette.fail, "could not bless"),
                    sanitize::text(&reason)
                )
            }
        };
        let _ = write!(out, "{text}");
    }
    let specs = |n: usize| format!("{n} spec{}", if n == 1 { "" } else { "s" });
    let closing = match (args.check, changed) {
        (true, 0) => format!("nothing to bless in {}", specs(files.len())),
        (true, n) => format!(
            "{} would change; `dlqspec bless` writes {}",
            specs(n),
            if n == 1 { "it" } else { "them" }
        ),
        (false, n) => format!("blessed {}, {} unchanged", specs(n), unchanged),
    };
    let mut closing = closing;
    if refused > 0 {
        closing.push_str(&format!(", {} could not be blessed", specs(refused)));
    }
    if broken > 0 {
        closing.push_str(&format!(", {} broken", specs(broken)));
    }
    let _ = writeln!(out, "{closing}");
    if broken > 0 {
        exit::SPEC_OR_USAGE_ERROR
    } else if refused > 0 || (args.check && changed > 0) {
        exit::FAILED
    } else {
        exit::PASSED
    }
}
