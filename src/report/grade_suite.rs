//! How `grade` tells the suite it refuses to grade anyone on: every spec its reference (the
//! built-in one, or an exercise's) does not pass, each error at its place.

use super::render::details;
use super::sanitize;
use crate::model::outcome::Outcome;
use crate::run::grading::suite::RefusedSuite;

/// The message for a suite that judges nobody: the run's error, or how many of its specs are
/// broken, what to do, and a line for each of their errors.
pub(crate) fn refused(refused: &RefusedSuite) -> String {
    let (broken, specs) = match refused {
        RefusedSuite::Unrun(why) => return why.clone(),
        RefusedSuite::Broken { broken, specs } => (broken, *specs),
    };
    let lines: Vec<String> = broken
        .iter()
        .flat_map(|report| -> Vec<String> {
            // A broken spec: each of its errors, at its place.
            if let Outcome::SpecError(error) = &report.outcome
                && (!error.more.is_empty() || error.untold.is_some())
            {
                let untold = error
                    .untold
                    .map(|why| format!("  {}: {}", sanitize::line(&error.path), why.says()));
                return error
                    .all()
                    .map(|one| format!("  {}", sanitize::line(&one.alone().to_string())))
                    .chain(untold)
                    .collect();
            }
            let details = details(&report.path, &report.outcome);
            let first = details.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let first = first.trim();
            vec![format!(
                "  {}: {}",
                report.path,
                first.strip_prefix("error: ").unwrap_or(first)
            )]
        })
        .collect();
    let them = if broken.len() == 1 { "it" } else { "them" };
    // Each reference as its contract names it: an exercise's as its author knows it.
    let mut references: Vec<String> = Vec::new();
    for report in broken {
        let path = std::path::Path::new(&report.path);
        let named = crate::contracts::registry::reference_of_path(path, "the built-in reference");
        if !references.contains(&named) {
            references.push(named);
        }
    }
    format!(
        "{} of the {} specs of --specs {} broken ({} {} not pass {them}), so no submission is graded against {them}: fix {them} (`dlqspec lint`, `dlqspec explain SPEC`) or leave {them} out of --specs:\n{}",
        broken.len(),
        specs,
        if broken.len() == 1 { "is" } else { "are" },
        sanitize::line(&references.join(" and ")),
        if references.len() == 1 { "does" } else { "do" },
        lines.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::grading::suite::reference_suite;

    #[test]
    fn a_refused_suite_says_how_many_specs_are_broken_and_where() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("b.yaml"),
            "contract: dlq-consumer\nstepz: []\n",
        )
        .unwrap();
        let refused = reference_suite(&[dir.path().to_path_buf()]).unwrap_err();
        let told = super::refused(&refused);
        let (head, specs) = told.split_once('\n').unwrap();
        assert!(
            head.starts_with("1 of the 1 specs of --specs is broken (the built-in reference does not pass it), so no submission is graded against it: fix it"),
            "{head}"
        );
        assert!(specs.starts_with("  "), "{specs}");
        assert!(specs.contains("b.yaml"), "{specs}");
        assert_eq!(
            super::refused(&RefusedSuite::Unrun("no spec files found".to_owned())),
            "no spec files found"
        );
    }
}
