//! What the terminal shows of a grading: the regrade against an earlier one, the class's most
//! common failure causes and each rule's share of the class.

use std::fmt::Write as _;

use super::{SPECS_SHOWN, apart, change, outcome, percent, who};
use crate::report::render::number;
use crate::report::sanitize;
use crate::run::grading::class_tally::{class_causes, rule_shares};
use crate::run::grading::regrade::{Against, Standing};
use crate::run::grading::row::Graded;
use crate::text::listing::count;

/// The regrade for a terminal, short: a line per submission that changed (`bob 35 -> 86`)
/// with its first changed specs under it, then the new and the gone; or `no change`.
pub(crate) fn against_text(rows: &[Graded], against: &Against) -> String {
    let diff = &against.diff;
    let dir = sanitize::line(&against.dir);
    let suite = super::suite_changed(against)
        .map(|said| format!("  {said}\n"))
        .unwrap_or_default();
    if diff.no_change() {
        return format!(
            "against {dir}: no change ({})\n{suite}",
            count(diff.unchanged, "submission")
        );
    }
    let mut out = format!(
        "against {dir}: {} changed, {} new, {} gone, {} unchanged\n",
        diff.changed.len(),
        diff.new.len(),
        diff.gone.len(),
        diff.unchanged
    );
    out.push_str(&suite);
    for changed in &diff.changed {
        let row = &rows[changed.row];
        let _ = writeln!(
            out,
            "  {} {}",
            sanitize::line(&row.name),
            change(&changed.before, &Standing::of(row))
        );
        for (path, was, is) in changed.specs.iter().take(SPECS_SHOWN) {
            let _ = writeln!(
                out,
                "    {}: {} -> {}",
                sanitize::line(path),
                outcome(was),
                outcome(is)
            );
        }
        if changed.specs.len() > SPECS_SHOWN {
            let _ = writeln!(
                out,
                "    ... and {} more specs changed (summary.json, summary.html)",
                changed.specs.len() - SPECS_SHOWN
            );
        }
    }
    for &i in &diff.new {
        let row = &rows[i];
        let _ = writeln!(
            out,
            "  new: {} {}",
            sanitize::line(&row.name),
            number(row.marks.score)
        );
    }
    for (name, _, before) in &diff.gone {
        let _ = writeln!(
            out,
            "  gone: {} (was {})",
            sanitize::line(name),
            number(before.score)
        );
    }
    out
}

/// The class's most common failure causes for a terminal: a line each, with an example.
pub(crate) fn cause_table(rows: &[Graded]) -> String {
    let causes = class_causes(rows);
    if causes.is_empty() {
        return String::new();
    }
    let mut out = String::from("most common failure causes:\n");
    for cause in causes {
        let (row, spec) = &cause.example;
        let _ = writeln!(
            out,
            "  {:>4} {:<11} {:>4} {:<5}  {}  (e.g. {}: {})",
            cause.submissions,
            noun(cause.submissions, "submission"),
            cause.specs,
            noun(cause.specs, "spec"),
            sanitize::line(&cause.cause),
            sanitize::line(&rows[*row].name),
            sanitize::line(spec)
        );
        let _ = writeln!(out, "{:>25}  {}", "", sanitize::line(&who(&cause, rows)));
    }
    out
}

/// `noun`, with an `s` for any count but one.
fn noun(n: usize, noun: &str) -> String {
    count(n, noun).split_off(n.to_string().len() + 1)
}

/// The class view for a terminal: a line per rule, its share of the class passing.
pub(crate) fn rule_table(rows: &[Graded]) -> String {
    let shares = rule_shares(rows);
    let width = shares
        .iter()
        .map(|share| share.rule.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for share in shares {
        let (passed, submissions) = (share.passed, share.submissions);
        let percent = percent(passed, submissions);
        let _ = writeln!(
            out,
            "  {:<width$}  {passed:>4}/{submissions:<4} {percent:>3}% passing{}",
            sanitize::line(&share.rule),
            apart(&share)
        );
    }
    out
}
