//! `grade --against DIR`: the earlier grading read back (before any submission is graded, and
//! never where this grading writes), and what changed since, submissions matched by name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::formats::grade::SpecOutcome;
use crate::run::grading::row::{Graded, Status};
use crate::run::grading::suite::About;
use crate::run::grading::summary::{SUMMARY_JSON, read_summary_about};

/// The earlier grading `--against` named: its folder as given, its rows, and what it said of
/// its suite (when it said it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Earlier {
    pub(crate) dir: PathBuf,
    pub(crate) rows: Vec<Graded>,
    pub(crate) about: Option<About>,
}

impl Earlier {
    /// What changed from it to `rows`, graded on the suite `about` tells.
    pub(crate) fn against(&self, rows: &[Graded], about: Option<&About>) -> Against {
        let suite = match (&self.about, about) {
            (Some(then), Some(now)) if then.digest != now.digest => Some(SuiteChange {
                then: then.digest.clone(),
                now: now.digest.clone(),
            }),
            _ => None,
        };
        Against {
            dir: self.dir.display().to_string(),
            diff: regrade(&self.rows, rows),
            suite,
        }
    }
}

/// A regrade: the earlier grading's folder as given to `--against`, what changed since, and
/// whether the suite did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Against {
    pub(crate) dir: String,
    pub(crate) diff: Regrade,
    /// The suite's digests then and now, when they differ: a spec, an exercise's
    /// `exercise.yaml` or its reference changed, and a verdict may have changed with it.
    pub(crate) suite: Option<SuiteChange>,
}

/// The digests of two gradings' suites (`About::digest`) that differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SuiteChange {
    pub(crate) then: String,
    pub(crate) now: String,
}

/// The earlier grading `--against` names (`against`), read before any submission is graded
/// (a wrong folder is said at once, not after the class); `None` without `--against`. Refused
/// when the `output` folder is that folder, inside it or around it: a regrade writes nothing
/// into what it compares with.
pub(crate) fn earlier(against: Option<&Path>, output: &Path) -> Result<Option<Earlier>, String> {
    let Some(dir) = against else {
        return Ok(None);
    };
    if is_within(output, dir) {
        return Err(format!(
            "--output {} is within --against {}: a regrade writes nothing into the grading it compares with; give another --output folder",
            output.display(),
            dir.display()
        ));
    }
    // Inside the output folder, a submission's reports could land in it under its name.
    if is_within(dir, output) {
        return Err(format!(
            "--against {} is within --output {}: a submission's reports could be written into it; move the earlier grading out of the output folder",
            dir.display(),
            output.display()
        ));
    }
    read_earlier(dir).map(|(rows, about)| {
        Some(Earlier {
            dir: dir.to_path_buf(),
            rows,
            about,
        })
    })
}

/// Reads the rows of an earlier grading for `grade --against DIR`: DIR must be a folder
/// holding the `summary.json` a grade wrote (read as `--merge` reads a shard's: bounded, a
/// regular file only, its format and version checked). Every error is one sentence saying
/// what to give instead.
pub(crate) fn read_earlier(dir: &Path) -> Result<(Vec<Graded>, Option<About>), String> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(format!(
                "--against {shown} is not a folder: give the folder an earlier `dlqspec grade --output DIR` wrote"
            ));
        }
        Err(error) => {
            return Err(format!(
                "--against {shown} cannot be read ({error}): give the folder an earlier `dlqspec grade --output DIR` wrote"
            ));
        }
    }
    let file = dir.join(SUMMARY_JSON);
    if std::fs::symlink_metadata(&file).is_err() {
        return Err(format!(
            "--against {shown} holds no {SUMMARY_JSON}: give the folder an earlier `dlqspec grade --output DIR` wrote (whose grading finished)"
        ));
    }
    read_summary_about(&file).map_err(|why| format!("--against: {why}"))
}

/// Whether `output` is `dir` or a folder inside it (where neither need exist yet): a regrade
/// writes nothing into the grading it compares with.
pub(crate) fn is_within(output: &Path, dir: &Path) -> bool {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return false;
    };
    let Ok(mut probe) = std::path::absolute(output) else {
        return false;
    };
    // The nearest folder of `output` that exists, with the rest of the path after it.
    let mut rest = Vec::new();
    loop {
        if let Ok(found) = std::fs::canonicalize(&probe) {
            let whole = rest
                .iter()
                .rev()
                .fold(found, |path: PathBuf, part| path.join(part));
            return whole.starts_with(&dir);
        }
        match (probe.file_name().map(ToOwned::to_owned), probe.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                probe = parent.to_path_buf();
            }
            _ => return false,
        }
    }
}

/// A submission's grading before and after, in brief.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Standing {
    pub(crate) status: Status,
    pub(crate) score: f64,
    pub(crate) max_score: f64,
}

impl Standing {
    pub(crate) fn of(row: &Graded) -> Standing {
        Standing {
            status: row.status,
            score: row.marks.score,
            max_score: row.marks.max_score,
        }
    }
}

impl Standing {
    /// Whether the two read the same: the status, and the scores as the summaries write them
    /// (a score summed in another order, or read back from `summary.json`, may differ in its
    /// last bits).
    pub(crate) fn same_as(&self, other: &Standing) -> bool {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
        self.status == other.status
            && close(self.score, other.score)
            && close(self.max_score, other.max_score)
    }
}

/// Whether a spec's verdict changed from `was` to `is` (`None`: not in that grading's
/// suite): it earns its points in one grading and not in the other, or it is in one suite
/// only. One failure read as another (a mismatch, then an error; an error, then not run
/// after an earlier spec hung) changes no verdict: listed, a submission whose grade did not
/// move reads as changed (`erin 0 -> 0`).
fn verdict_changed(was: Option<SpecOutcome>, is: Option<SpecOutcome>) -> bool {
    let earns = |outcome: SpecOutcome| outcome.earns_points();
    match (was, is) {
        (Some(was), Some(is)) => {
            earns(was) != earns(is) || was.is_not_attempted() != is.is_not_attempted()
        }
        (was, is) => was.is_some() != is.is_some(),
    }
}

/// One submission graded both times whose grading changed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Changed {
    /// Its row in the new grading.
    pub(crate) row: usize,
    pub(crate) before: Standing,
    /// Each spec whose verdict changed: its path, its outcome before and after (`None`: the
    /// spec was not in that grading's suite).
    pub(crate) specs: Vec<(String, Option<SpecOutcome>, Option<SpecOutcome>)>,
}

/// What changed from an earlier grading to this one, submissions matched by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Regrade {
    pub(crate) changed: Vec<Changed>,
    /// The rows (of the new grading) of submissions the earlier one did not have.
    pub(crate) new: Vec<usize>,
    /// The earlier rows of submissions this grading does not have, with their standing.
    pub(crate) gone: Vec<(String, String, Standing)>,
    /// How many submissions were graded both times the same.
    pub(crate) unchanged: usize,
}

impl Regrade {
    pub(crate) fn no_change(&self) -> bool {
        self.changed.is_empty() && self.new.is_empty() && self.gone.is_empty()
    }
}

/// Compares `after` with `before`, matching submissions by their report name; the changed
/// and new in `after`'s order, the gone in `before`'s.
pub(crate) fn regrade(before: &[Graded], after: &[Graded]) -> Regrade {
    let earlier: BTreeMap<&str, &Graded> = before.iter().map(|r| (r.name.as_str(), r)).collect();
    let now: BTreeSet<&str> = after.iter().map(|r| r.name.as_str()).collect();
    let mut diff = Regrade::default();
    for (i, row) in after.iter().enumerate() {
        let Some(old) = earlier.get(row.name.as_str()) else {
            diff.new.push(i);
            continue;
        };
        let paths: BTreeSet<&String> = old
            .marks
            .specs
            .keys()
            .chain(row.marks.specs.keys())
            .collect();
        let specs: Vec<(String, Option<SpecOutcome>, Option<SpecOutcome>)> = paths
            .into_iter()
            .filter_map(|path| {
                let was = old.marks.specs.get(path).map(|v| v.outcome);
                let is = row.marks.specs.get(path).map(|v| v.outcome);
                verdict_changed(was, is).then(|| (path.clone(), was, is))
            })
            .collect();
        let before = Standing::of(old);
        if specs.is_empty() && before.same_as(&Standing::of(row)) {
            diff.unchanged += 1;
        } else {
            diff.changed.push(Changed {
                row: i,
                before,
                specs,
            });
        }
    }
    diff.gone = before
        .iter()
        .filter(|row| !now.contains(row.name.as_str()))
        .map(|row| (row.name.clone(), row.submission.clone(), Standing::of(row)))
        .collect();
    diff
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::grading::row::{Marks, SpecVerdict, WrittenReports};
    use std::time::Duration;

    #[test]
    fn a_regrade_matches_submissions_by_name_and_lists_each_changed_spec() {
        use crate::model::outcome::OutcomeKind::{Errored, Mismatch, Passed};
        use SpecOutcome::{NotRun, Ran};
        let row = |name: &str, score: f64, outcomes: &[(&str, SpecOutcome)]| Graded {
            submission: format!("class/{name}"),
            name: name.into(),
            status: if score == 2.0 {
                Status::Pass
            } else {
                Status::Fail
            },
            marks: Marks {
                score,
                max_score: 2.0,
                specs: outcomes
                    .iter()
                    .map(|(path, outcome)| {
                        let verdict = SpecVerdict {
                            outcome: *outcome,
                            ..SpecVerdict::default()
                        };
                        ((*path).to_owned(), verdict)
                    })
                    .collect(),
                ..Marks::default()
            },
            took: Duration::ZERO,
            note: String::new(),
            reports: WrittenReports::default(),
        };
        let before = [
            row("alice", 2.0, &[("a", Ran(Passed)), ("b", Ran(Passed))]),
            row("bob", 1.0, &[("a", Ran(Passed)), ("b", Ran(Mismatch))]),
            row("dave", 0.0, &[("a", Ran(Errored))]),
        ];
        let after = [
            row("alice", 2.0, &[("a", Ran(Passed)), ("b", Ran(Passed))]),
            row(
                "bob",
                2.0,
                &[("a", Ran(Passed)), ("b", Ran(Passed)), ("c", NotRun)],
            ),
            row("carol", 1.0, &[("a", Ran(Passed))]),
        ];
        let diff = regrade(&before, &after);
        assert_eq!(diff.unchanged, 1);
        assert_eq!(diff.new, [2]);
        assert_eq!(diff.gone.len(), 1);
        assert_eq!(diff.gone[0].0, "dave");
        assert_eq!(diff.changed.len(), 1);
        let bob = &diff.changed[0];
        assert_eq!((bob.row, bob.before.score), (1, 1.0));
        assert_eq!(
            bob.specs,
            [
                ("b".to_owned(), Some(Ran(Mismatch)), Some(Ran(Passed))),
                ("c".to_owned(), None, Some(NotRun)),
            ]
        );
        assert!(!diff.no_change());
        assert!(regrade(&after, &after).no_change());
        // A verdict changed at the same score is a change all the same.
        let swapped = [row(
            "alice",
            2.0,
            &[("a", Ran(Passed)), ("b", Ran(Errored))],
        )];
        assert_eq!(regrade(&before[..1], &swapped).changed.len(), 1);
        // One failure read as another, at the same score, is no change: `dave 0 -> 0` is not
        // listed.
        let dave = |outcomes: &[(&str, SpecOutcome)]| [row("dave", 0.0, outcomes)];
        let hung_then = dave(&[("a", Ran(Errored)), ("b", NotRun)]);
        let hung_now = dave(&[("a", Ran(Mismatch)), ("b", Ran(Errored))]);
        let diff = regrade(&hung_then, &hung_now);
        assert!(diff.no_change(), "{diff:?}");
        assert_eq!(diff.unchanged, 1);
        // A score read back from summary.json in its last bits is the same score.
        let mut close = dave(&[("a", Ran(Errored))]);
        close[0].marks.max_score = 0.1 + 0.2;
        let mut exact = dave(&[("a", Ran(Errored))]);
        exact[0].marks.max_score = 0.3;
        assert!(regrade(&close, &exact).no_change());
    }

    #[test]
    fn a_regrade_never_writes_within_the_folder_it_compares_with() {
        let dir = tempfile::tempdir().unwrap();
        let earlier = dir.path().join("grades");
        std::fs::create_dir(&earlier).unwrap();
        assert!(is_within(&earlier, &earlier));
        assert!(is_within(&earlier.join("new/deeper"), &earlier));
        assert!(is_within(&earlier.join("../grades/x"), &earlier));
        assert!(!is_within(&dir.path().join("grades-2"), &earlier));
        assert!(!is_within(dir.path(), &earlier));
    }

    #[test]
    fn the_earlier_grading_is_refused_where_this_one_writes_and_none_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let earlier_dir = dir.path().join("grades");
        std::fs::create_dir(&earlier_dir).unwrap();
        assert_eq!(earlier(None, &earlier_dir), Ok(None));
        let error = earlier(Some(&earlier_dir), &earlier_dir.join("new")).unwrap_err();
        assert!(error.starts_with("--output "), "{error}");
        assert!(error.contains("is within --against"), "{error}");
        let error = earlier(Some(&earlier_dir), dir.path()).unwrap_err();
        assert!(error.starts_with("--against "), "{error}");
        assert!(error.contains("is within --output"), "{error}");
        let error = earlier(Some(&earlier_dir), &dir.path().join("new")).unwrap_err();
        assert!(error.contains("holds no summary.json"), "{error}");
    }
}
