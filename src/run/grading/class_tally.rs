//! What the class's summaries tell of the whole class, computed once for every renderer:
//! each rule's share of the class and the class's most common failure causes.

use std::collections::BTreeSet;

use crate::run::grading::row::{Graded, RuleVerdict, Status};

/// Every rule any submission's specs cover, sorted.
pub(crate) fn rules(rows: &[Graded]) -> Vec<String> {
    let rules: BTreeSet<&String> = rows.iter().flat_map(|row| row.marks.rules.keys()).collect();
    rules.into_iter().cloned().collect()
}

/// A rule's share of the class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleCount {
    pub(crate) rule: String,
    /// The submissions that passed it.
    pub(crate) passed: usize,
    /// The submissions it is a share of: the class, less those that did not attempt its
    /// contract and those whose run never reached it; a submission that never ran at all
    /// passed none.
    pub(crate) submissions: usize,
    /// The submissions with no class of its contract: apart, not failed.
    pub(crate) not_attempted: usize,
    /// The submissions whose run never reached it (hung before, out of budget), none of its
    /// specs failed: apart, no verdict.
    pub(crate) not_run: usize,
}

/// Each rule with how many of the class's submissions passed it, of how many, and those
/// apart (not attempted, not run); one the machine could not run (`ungraded`) is not counted.
pub(crate) fn rule_shares(rows: &[Graded]) -> Vec<RuleCount> {
    let graded: Vec<&Graded> = rows
        .iter()
        .filter(|row| row.status != Status::Ungraded)
        .collect();
    rules(rows)
        .into_iter()
        .map(|rule| {
            let count = |verdict: RuleVerdict| {
                graded
                    .iter()
                    .filter(|row| row.marks.rules.get(&rule) == Some(&verdict))
                    .count()
            };
            let (passed, not_attempted, not_run) = (
                count(RuleVerdict::Pass),
                count(RuleVerdict::NotAttempted),
                count(RuleVerdict::NotRun),
            );
            RuleCount {
                rule,
                passed,
                submissions: graded.len() - not_attempted - not_run,
                not_attempted,
                not_run,
            }
        })
        .collect()
}

/// How many of the class's most common failure causes the summaries list.
pub(crate) const TOP_CAUSES: usize = 10;

/// A failure cause across the class: the run's cause of a failing spec (as its "failures by
/// cause" groups them, by the cause's key), and whom and what it hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassCause {
    /// Its one line, as its first failure in the class's order tells it.
    pub(crate) cause: String,
    /// Its key (`cause_id`), when the runs gave one: failures of one key are one cause.
    pub(crate) id: Option<String>,
    /// The rule it breaks, when a rule of the suite decides it.
    pub(crate) rule: Option<String>,
    /// The rows of the submissions it hit, in the class's order.
    pub(crate) who: Vec<usize>,
    /// How many submissions failed some spec of it.
    pub(crate) submissions: usize,
    /// How many specs of the suite it failed, in any submission.
    pub(crate) specs: usize,
    /// How many failures it is: each submission's each spec.
    pub(crate) failures: usize,
    /// Its first failure, in the class's order: the row, and the spec's path.
    pub(crate) example: (usize, String),
}

/// The class's most common failure causes, most submissions first (then most failures, then
/// the order the class first met them), at most [`TOP_CAUSES`].
pub(crate) fn class_causes(rows: &[Graded]) -> Vec<ClassCause> {
    let mut causes: Vec<(ClassCause, BTreeSet<usize>, BTreeSet<&str>)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        for (path, verdict) in &row.marks.specs {
            let Some(cause) = &verdict.cause else {
                continue;
            };
            // One key, one cause, however its first line reads for each submission; a report
            // without keys (from an older dlqspec) groups by the line.
            let same = |c: &ClassCause| match (&c.id, &verdict.cause_id) {
                (Some(a), Some(b)) => a == b,
                (None, None) => c.cause == *cause,
                _ => false,
            };
            let at = match causes.iter().position(|(c, ..)| same(c)) {
                Some(at) => at,
                None => {
                    let first = ClassCause {
                        cause: cause.clone(),
                        id: verdict.cause_id.clone(),
                        rule: verdict.cause_rule.clone(),
                        who: Vec::new(),
                        submissions: 0,
                        specs: 0,
                        failures: 0,
                        example: (i, path.clone()),
                    };
                    causes.push((first, BTreeSet::new(), BTreeSet::new()));
                    causes.len() - 1
                }
            };
            let (cause, submissions, specs) = &mut causes[at];
            if submissions.insert(i) {
                cause.who.push(i);
            }
            specs.insert(path);
            cause.failures += 1;
            cause.submissions = submissions.len();
            cause.specs = specs.len();
        }
    }
    let mut causes: Vec<ClassCause> = causes.into_iter().map(|(cause, ..)| cause).collect();
    causes.sort_by_key(|c| {
        (
            std::cmp::Reverse(c.submissions),
            std::cmp::Reverse(c.failures),
        )
    });
    causes.truncate(TOP_CAUSES);
    causes
}
