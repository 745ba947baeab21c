//! `summary.csv`: a row per submission, a column per rule, every field safe for a spreadsheet.

use super::{never_ran, report, verdict};
use crate::report::render::number;
use crate::report::sanitize;
use crate::run::grading::class_tally::rules;
use crate::run::grading::row::{Graded, Status};

/// What a spreadsheet reads as the start of a formula, at the start of a cell.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// The characters a spreadsheet may split a line on, whatever the file says.
const DELIMITERS: [char; 4] = [',', ';', '\t', '|'];

/// A CSV field: control characters escaped, and a field a spreadsheet could read as a formula
/// defused as OWASP advises, whatever delimiter it guesses: a leading `=`, `+`, `-`, `@`, tab
/// or carriage return gets a `'` before it, and so does what follows any delimiter inside it
/// (`,`, `;`, tab, `|`) when it starts so, past spaces and quotes: a spreadsheet whose list
/// separator is `;` ignores a quote that does not open its own field, and splits
/// `"see below;=2+5"` into a cell `=2+5`. A field holding a delimiter or a quote is quoted
/// besides, for a reader that honours quotes.
pub(super) fn field(text: &str) -> String {
    let text = sanitize::line(text);
    let mut defused = String::with_capacity(text.len() + 2);
    if text.starts_with(FORMULA_STARTS) {
        defused.push('\'');
    }
    for (at, c) in text.char_indices() {
        defused.push(c);
        if DELIMITERS.contains(&c)
            && text[at + c.len_utf8()..]
                .trim_start_matches([' ', '"'])
                .starts_with(FORMULA_STARTS)
        {
            defused.push('\'');
        }
    }
    let text = defused;
    if text.contains([',', ';', '\t', '|', '"']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

pub(super) fn csv(rows: &[Graded]) -> String {
    let rules = rules(rows);
    let mut out = String::from(
        "submission,status,score,max_score,passed,failed,not_attempted,not_run,seconds,note,report,json_report",
    );
    for rule in &rules {
        out.push(',');
        out.push_str(&field(rule));
    }
    out.push('\n');
    for row in rows {
        let cells = [
            field(&row.submission),
            row.status.as_str().to_owned(),
            // No score of the student's: a gradebook reading the column must not take a 0.
            match row.status {
                Status::Ungraded => String::new(),
                _ => number(row.marks.score),
            },
            number(row.marks.max_score),
            row.marks.passed.to_string(),
            row.marks.failed.to_string(),
            row.marks.not_attempted.to_string(),
            row.marks.not_run.to_string(),
            format!("{:.2}", row.took.as_secs_f64()),
            field(&row.note),
            report(row, "txt").map_or_else(String::new, |file| field(&file)),
            report(row, "jsonl").map_or_else(String::new, |file| field(&file)),
        ];
        out.push_str(&cells.join(","));
        for rule in &rules {
            out.push(',');
            // A submission that never ran has no verdict on any rule: blank, alike.
            if !never_ran(row) {
                out.push_str(verdict(row, rule));
            }
        }
        out.push('\n');
    }
    out
}
