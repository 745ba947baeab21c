//! What `dlqspec strength` tells: per contract, every classic mistake, caught (and by which
//! spec) or surviving (with its rule, what it does, and a spec explore found to catch it).

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::report::render;
use crate::report::sanitize;
use crate::report::style::{Palette, paint};
use crate::strength::StrengthReport;

/// The report. `written` says where each suggested spec went, by mistake id, when `--output`
/// was given; otherwise the specs are shown whole.
pub(crate) fn strength(
    report: &StrengthReport,
    written: &[(String, PathBuf)],
    palette: &Palette,
) -> String {
    let mut out = String::new();
    for (path, outcome) in &report.broken {
        let _ = writeln!(
            out,
            "{} {}: it judges no implementation",
            paint(palette.spec, "SPEC "),
            sanitize::line(path)
        );
        for line in render::details(path, outcome).lines() {
            let _ = writeln!(out, "      {line}");
        }
    }
    let width = report
        .contracts
        .iter()
        .flat_map(|c| &c.mistakes)
        .map(|v| v.mistake.id.len())
        .max()
        .unwrap_or(0);
    for contract in &report.contracts {
        let _ = writeln!(
            out,
            "{}: {} {} {} of {} classic mistakes",
            paint(palette.bold, contract.contract),
            contract.specs,
            specs_catch(contract.specs),
            contract.caught(),
            contract.mistakes.len()
        );
        for verdict in &contract.mistakes {
            let mistake = verdict.mistake;
            match &verdict.caught_by {
                Some(path) => {
                    let _ = writeln!(
                        out,
                        "  {}  {:width$}  {}",
                        paint(palette.pass, "caught  "),
                        mistake.id,
                        paint(palette.dim, &format!("by {}", sanitize::line(path))),
                    );
                    if let Some(misnamed) = &verdict.misnamed {
                        let _ = writeln!(
                            out,
                            "              {} told as breaking {}, not {} as its header says",
                            paint(palette.fail, "but"),
                            misnamed.named.unwrap_or("no rule"),
                            mistake.rule.id
                        );
                    }
                }
                None => {
                    let _ = writeln!(
                        out,
                        "  {}  {:width$}  breaks {}",
                        paint(palette.fail, "SURVIVES"),
                        mistake.id,
                        mistake.rule.id
                    );
                    let _ = writeln!(out, "              the mistake: {}", mistake.what);
                    match &verdict.suggestion {
                        None if report.explore_cases > 0 => {
                            let _ = writeln!(
                                out,
                                "              explore found no spec that catches it in {} cases",
                                report.explore_cases
                            );
                        }
                        None => {}
                        Some(finding) => match written.iter().find(|(id, _)| id == mistake.id) {
                            Some((_, path)) => {
                                let _ = writeln!(
                                    out,
                                    "              explore found a spec that catches it: {}",
                                    sanitize::line(&crate::text::source::display_path(path))
                                );
                            }
                            None => {
                                let _ = writeln!(
                                    out,
                                    "              explore found a spec that catches it ({}):",
                                    finding.origin
                                );
                                for line in finding.spec.lines() {
                                    let _ =
                                        writeln!(out, "                {}", sanitize::text(line));
                                }
                            }
                        },
                    }
                }
            }
        }
    }
    // Each misnamed mistake, for its author: at its header, with the two fixes.
    for verdict in report.contracts.iter().flat_map(|c| &c.mistakes) {
        let Some(misnamed) = &verdict.misnamed else {
            continue;
        };
        let _ = writeln!(
            out,
            "{}:1:1: {}: {}",
            sanitize::line(&misnamed.path),
            paint(palette.fail, "misnamed mistake"),
            sanitize::text(&misnamed.message(verdict.mistake))
        );
        if let Some(header) = &misnamed.header {
            out.push_str(&render::caret(
                header,
                crate::text::source::Position::new(1, 1),
                palette,
            ));
        }
    }
    let misnamed = report.misnamed();
    let (caught, total) = (report.caught(), report.total());
    let percent = if total == 0 {
        0.0
    } else {
        100.0 * caught as f64 / total as f64
    };
    let verdict = if caught == total && total > 0 && misnamed > 0 {
        paint(
            palette.fail,
            &format!(
                "every mistake is caught, {misnamed} under another rule than its header names"
            ),
        )
    } else if caught == total && total > 0 {
        paint(palette.pass, "every mistake is caught")
    } else {
        paint(palette.fail, &format!("{} survive", total - caught))
    };
    // Survivors were searched with a seed: say it, so the suggested specs can be found again.
    let replay = if caught < total && report.explore_cases > 0 {
        format!(
            "; explore seed {} (`--seed {}` replays its searches)",
            report.seed, report.seed
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{verdict}: {} {} {caught} of {total} classic mistakes ({percent:.0}%){replay}",
        report.specs,
        specs_catch(report.specs),
    );
    out
}

/// `spec catches` or `specs catch`, after a count.
fn specs_catch(count: usize) -> &'static str {
    if count == 1 {
        "spec catches"
    } else {
        "specs catch"
    }
}
