//! The outcome-queue rule catalogue (docs/contracts.md section 2): every rule's id and statement, once.

use crate::model::rule::Rule;

pub(crate) const MAX_ATTEMPTS_VALIDATED: Rule = Rule {
    id: "outcome-queue/max-attempts-validated",
    statement: "RetryQueue(max_attempts) raises ValueError unless max_attempts is an integer >= 1 (booleans, floats, strings and null are rejected).",
};
pub(crate) const SUBMIT_TAIL: Rule = Rule {
    id: "outcome-queue/submit-tail",
    statement: "submit(job_id, payload) appends the job to the ready tail with 0 attempts.",
};
pub(crate) const OUTCOME_VALIDATED_FIRST: Rule = Rule {
    id: "outcome-queue/outcome-validated-first",
    statement: "process validates the outcome before anything else: an invalid one raises ValueError and leaves every job untouched, even on an empty queue.",
};
pub(crate) const EMPTY_RETURNS_NONE: Rule = Rule {
    id: "outcome-queue/empty-returns-none",
    statement: "With nothing ready, process(valid outcome) returns None and changes nothing.",
};
pub(crate) const ATTEMPT_COUNTED_FIRST: Rule = Rule {
    id: "outcome-queue/attempt-counted-first",
    statement: "process takes the ready head and counts the attempt (attempts += 1) before deciding what happens to it.",
};
pub(crate) const SUCCESS_DONE: Rule = Rule {
    id: "outcome-queue/success-done",
    statement: "success moves the job to the done list and returns \"done\".",
};
pub(crate) const PERMANENT_QUARANTINE: Rule = Rule {
    id: "outcome-queue/permanent-quarantine",
    statement: "permanent quarantines the job with reason \"permanent\", whatever budget is left, and returns \"dead\".",
};
pub(crate) const TRANSIENT_RETRY_TAIL: Rule = Rule {
    id: "outcome-queue/transient-retry-tail",
    statement: "transient with attempts < max_attempts moves the job to the ready tail (others run first) and returns \"retry\".",
};
pub(crate) const EXHAUSTED_QUARANTINE: Rule = Rule {
    id: "outcome-queue/exhausted-quarantine",
    statement: "transient with attempts == max_attempts quarantines the job with reason \"exhausted\" and returns \"dead\"; there is no extra attempt.",
};
pub(crate) const QUARANTINE_STICKY: Rule = Rule {
    id: "outcome-queue/quarantine-sticky",
    statement: "Normal processing never takes a job out of quarantine; only replay does.",
};
pub(crate) const ENTRY_RETAINS_DIAGNOSTICS: Rule = Rule {
    id: "outcome-queue/entry-retains-diagnostics",
    statement: "A quarantine entry keeps the job's id, payload, attempt count and reason, in quarantine order.",
};
pub(crate) const REPLAY_RESETS: Rule = Rule {
    id: "outcome-queue/replay-resets",
    statement: "replay(job_id) of a quarantined job removes the entry, clears the reason, resets attempts to 0, appends it to the ready tail and returns True.",
};
pub(crate) const REPLAY_MISSING_FALSE: Rule = Rule {
    id: "outcome-queue/replay-missing-false",
    statement: "replay(job_id) of a job not in quarantine (unknown, ready, done, already replayed) returns False and changes nothing.",
};
pub(crate) const STATE_DEEP_COPY: Rule = Rule {
    id: "outcome-queue/state-deep-copy",
    statement: "state() returns a deep copy {ready, done, quarantine}: changing the view changes nothing inside the queue.",
};

pub(crate) const RULES: &[Rule] = &[
    MAX_ATTEMPTS_VALIDATED,
    SUBMIT_TAIL,
    OUTCOME_VALIDATED_FIRST,
    EMPTY_RETURNS_NONE,
    ATTEMPT_COUNTED_FIRST,
    SUCCESS_DONE,
    PERMANENT_QUARANTINE,
    TRANSIENT_RETRY_TAIL,
    EXHAUSTED_QUARANTINE,
    QUARANTINE_STICKY,
    ENTRY_RETAINS_DIAGNOSTICS,
    REPLAY_RESETS,
    REPLAY_MISSING_FALSE,
    STATE_DEEP_COPY,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_prefixed_with_the_contract() {
        let mut ids: Vec<_> = RULES.iter().map(|r| r.id).collect();
        assert!(ids.iter().all(|id| id.starts_with("outcome-queue/")));
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }
}
