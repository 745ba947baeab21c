//! The catalogue of classic outcome-queue mistakes, each breaking one rule of lesson 001.
//!
//! `queue.rs` can run with any one of them switched on (`RetryQueue::with_slip`); each
//! `self.is(Slip::...)` there marks the line a mistake changes.

use super::rules::*;

crate::mistakes! {
    BoolBudget = "bool-budget", MAX_ATTEMPTS_VALIDATED,
        "accepts True as max_attempts (a bool is an int in Python)";
    FloatBudget = "float-budget", MAX_ATTEMPTS_VALIDATED,
        "accepts any number >= 1 as max_attempts, so 2.5 is a budget";
    StringBudget = "string-budget", MAX_ATTEMPTS_VALIDATED,
        "converts max_attempts with int(), so \"3\" is accepted";
    ZeroBudget = "zero-budget", MAX_ATTEMPTS_VALIDATED,
        "checks max_attempts >= 0 instead of >= 1";
    NarrowBudget = "32-bit-budget", MAX_ATTEMPTS_VALIDATED,
        "checks for an integer with (n | 0) === n, which rejects budgets beyond 2^31";
    SubmitAtHead = "submit-at-head", SUBMIT_TAIL,
        "puts a submitted job at the ready head";
    PopsBeforeValidating = "pops-before-validating", OUTCOME_VALIDATED_FIRST,
        "takes the ready head before validating the outcome, so an invalid outcome loses the job";
    NoValidationWhenEmpty = "no-validation-when-empty", OUTCOME_VALIDATED_FIRST,
        "returns None on an empty queue before looking at the outcome, so an invalid one passes";
    CaseInsensitiveOutcome = "case-insensitive-outcome", OUTCOME_VALIDATED_FIRST,
        "compares outcomes case-insensitively, so \"Success\" is a success";
    SubstringOutcome = "substring-outcome", OUTCOME_VALIDATED_FIRST,
        "validates with `outcome in \"success transient permanent\"`, so part of a word passes (as transient)";
    PropertyNameOutcome = "property-name-outcome", OUTCOME_VALIDATED_FIRST,
        "validates with `outcome in POLICY` on a JavaScript object, so toString or constructor pass (as transient)";
    StrippedOutcome = "stripped-outcome", OUTCOME_VALIDATED_FIRST,
        "strips whitespace from the outcome before validating it";
    EmptyReturnsFalse = "empty-returns-false", EMPTY_RETURNS_NONE,
        "returns False instead of None when nothing is ready";
    EmptyReturnsUndefined = "empty-returns-undefined", EMPTY_RETURNS_NONE,
        "ends process with a bare `return;` when nothing is ready: JavaScript's undefined, not null";
    CountsAfterDeciding = "counts-after-deciding", ATTEMPT_COUNTED_FIRST,
        "compares attempts with the budget before counting this attempt, so a job gets one attempt too many";
    SuccessForgotten = "success-forgotten", SUCCESS_DONE,
        "drops a successful job without recording it in done";
    DoneNewestFirst = "done-newest-first", SUCCESS_DONE,
        "records completed jobs newest first";
    PermanentRetried = "permanent-retried", PERMANENT_QUARANTINE,
        "treats a permanent failure like a transient one while attempts remain";
    BudgetBeforeOutcome = "budget-before-outcome", PERMANENT_QUARANTINE,
        "checks the budget before the outcome, so a permanent failure on the last attempt is recorded as exhausted";
    RetryAtHead = "retry-at-head", TRANSIENT_RETRY_TAIL,
        "puts a retried job back at the ready head, where it blocks the others";
    OffByOneBudget = "off-by-one-budget", EXHAUSTED_QUARANTINE,
        "retries while attempts <= max_attempts: one attempt too many";
    ExhaustedAsPermanent = "exhausted-as-permanent", EXHAUSTED_QUARANTINE,
        "records an exhausted job with reason permanent";
    QuarantineLeaks = "quarantine-leaks", QUARANTINE_STICKY,
        "takes a quarantined job when nothing else is ready";
    QuarantineNewestFirst = "quarantine-newest-first", ENTRY_RETAINS_DIAGNOSTICS,
        "puts new quarantine entries first";
    EntryForgetsAttempts = "entry-forgets-attempts", ENTRY_RETAINS_DIAGNOSTICS,
        "resets a job's attempts to 0 when it is quarantined";
    ReplaySwapRemove = "replay-swap-remove", ENTRY_RETAINS_DIAGNOSTICS,
        "removes a replayed entry by moving the last entry into its place, which reorders the quarantine";
    ReplayKeepsAttempts = "replay-keeps-attempts", REPLAY_RESETS,
        "does not reset the attempts of a replayed job";
    ReplayKeepsReason = "replay-keeps-reason", REPLAY_RESETS,
        "leaves the old reason on a replayed job";
    ReplayToHead = "replay-to-head", REPLAY_RESETS,
        "puts a replayed job at the ready head";
    ReplayAlwaysTrue = "replay-always-true", REPLAY_MISSING_FALSE,
        "returns True from replay whether or not the job was in quarantine";
    ReplayFindsObjectProperties = "replay-finds-object-properties", REPLAY_MISSING_FALSE,
        "keeps the quarantine in a plain JavaScript object and replays with `jobId in quarantine`, so replay(\"toString\") finds a name every object has and returns true";
    ShallowState = "shallow-state", STATE_DEEP_COPY,
        "copies the lists in state() but shares the job entries with the queue";
    SharedDone = "shared-done", STATE_DEEP_COPY,
        "returns its own done list from state(), not a copy";
    ReplaySkipsEmptyPayload = "replay-skips-empty-payload", REPLAY_RESETS,
        "finds the quarantined job with a falsy check (`if not entry.payload:`), so a job whose payload is the empty string cannot be replayed";
    QuarantineIntegerKeysFirst = "quarantine-integer-keys-first", EXHAUSTED_QUARANTINE,
        "keeps the quarantine in a plain JavaScript object keyed by id, which lists ids like \"10\" and \"2\" first and in numeric order, not in quarantine order";
}
