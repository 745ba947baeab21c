//! The catalogue of classic dlq-consumer mistakes, each breaking one rule of lesson 000.
//!
//! `consumer.rs` can run with any one of them switched on (`DlqConsumer::with_slip`); each
//! `self.is(Slip::...)` there marks the line a mistake changes.

use super::rules::*;

crate::mistakes! {
    CountsInMemory = "counts-in-memory", COUNT_FROM_QUEUE,
        "counts deliveries in the consumer's own memory instead of reading receive_count, so a restarted consumer starts counting again";
    FirstSeenInMemory = "first-seen-in-memory", REPLAY_FRESH_DELIVERY,
        "remembers when it first saw each id in a process-wide table, so a replayed message keeps its old first_attempt_at";
    RetriesPermanent = "retries-permanent", PERMANENT,
        "has no PermanentError branch: a permanent failure is retried like a transient one";
    SubclassBlind = "subclass-blind", PERMANENT,
        "takes only PermanentError itself for permanent (`type(e) is PermanentError`, `e.name === \"PermanentError\"`), so a subclass of it is retried like a transient error";
    BudgetBeforeClass = "budget-before-class", PERMANENT,
        "checks the budget before the error's class, so a PermanentError on the last attempt is recorded as exhausted";
    UnexpectedIsPermanent = "unexpected-is-permanent", UNEXPECTED_ERROR,
        "dead-letters any error that is not a TransientError as permanent";
    OffByOneBudget = "off-by-one-budget", EXHAUSTED,
        "retries while receive_count <= max_attempts: one attempt too many";
    ExhaustsOneEarly = "exhausts-one-early", TRANSIENT_RETRY,
        "retries only while receive_count < max_attempts - 1: one attempt too few";
    RetryWithoutRequeue = "retry-without-requeue", TRANSIENT_RETRY,
        "returns retry without calling queue.retry";
    RetryByResend = "retry-by-resend", TRANSIENT_RETRY,
        "acks the message and sends it again instead of queue.retry, which restarts its receive_count";
    AcksBeforePut = "acks-before-put", DEAD_LETTER_SEQUENCE,
        "acks the message before putting its entry: dying in between loses it";
    PutWithoutAck = "put-without-ack", DEAD_LETTER_SEQUENCE,
        "dead-letters the message (dlq.put) but never acks it, so it stays in flight and comes back";
    NoDedupe = "no-dedupe", NO_DOUBLE_DEAD_LETTER,
        "never checks the DLQ for the id, so a redelivered dead message is handled again";
    DedupeWithoutAck = "dedupe-without-ack", NO_DOUBLE_DEAD_LETTER,
        "returns dead for an id already in the DLQ without acking it";
    DedupeByBody = "dedupe-by-body", NO_DOUBLE_DEAD_LETTER,
        "looks in the DLQ for the message's body instead of its id, so a new message with a dead-lettered body is acked as dead and a dead-lettered id sent again with another body is handled again";
    DedupeAfterPoison = "dedupe-after-poison", CHECK_ORDER,
        "checks for poison before checking the DLQ, so a poison pill already dead-lettered is put again";
    DedupeAfterHandler = "dedupe-after-handler", CHECK_ORDER,
        "calls the handler before checking whether the DLQ already has the id";
    NoPoisonCheck = "no-poison-check", POISON,
        "has no poison check, so a message that crashes the handler is delivered again and again";
    PoisonOneEarly = "poison-one-early", POISON,
        "takes receive_count == max_attempts for poison: one delivery too early";
    PoisonCallsHandler = "poison-calls-handler", POISON,
        "calls the handler once more before dead-lettering a poison pill";
    PoisonAttemptsIsReceiveCount = "poison-attempts-receive-count", POISON,
        "records a poison pill's attempts as receive_count, counting the delivery that never ran";
    PoisonAttemptsIsBudget = "poison-attempts-max-attempts", POISON,
        "records a poison pill's attempts as max_attempts, right only on the first delivery over budget";
    PoisonErrorIsEmpty = "poison-error-empty", POISON,
        "writes an empty string, not null, as a poison pill's error";
    CatchesCrash = "catches-crash", CRASH_PROPAGATES,
        "catches Crash like any other exception (`except BaseException`) and retries the message";
    SwallowsCrash = "swallows-crash", CRASH_PROPAGATES,
        "catches Crash and returns None, as if nothing happened";
    AcksOnCrash = "acks-on-crash", CRASH_PROPAGATES,
        "acks the message in a finally block, even when the process is dying";
    ErrorWithoutClass = "error-without-class", ENTRY_FIELDS,
        "writes only the message as the entry's error, without the class name";
    ErrorTemplate = "error-template", ENTRY_FIELDS,
        "builds the error like `${e}`, which drops the \": \" when the message is empty";
    ErrorCutShort = "error-cut-short", ENTRY_FIELDS,
        "cuts the error text to 40 characters to keep entries small";
    FailedAtIsFirstAttempt = "failed-at-first-attempt", ENTRY_FIELDS,
        "writes the first delivery's time as failed_at";
    FailedAtBeforeHandler = "failed-at-before-handler", ENTRY_FIELDS,
        "reads the clock for failed_at before calling the handler, so the time a failing call takes is left out of it";
    ErrorNamesGivenClass = "error-names-given-class", ENTRY_FIELDS,
        "names a PermanentError or TransientError in the entry's error by the given class it is (`e instanceof PermanentError ? \"PermanentError\" : ...`), not by the class raised, so a subclass's name is lost";
    FirstAttemptIsNow = "first-attempt-now", ENTRY_FIELDS,
        "writes the clock's time at dead-lettering as first_attempt_at";
    AttemptsOneShort = "attempts-one-short", ENTRY_FIELDS,
        "records attempts as receive_count - 1 in every entry, as if the last attempt did not count";
    SuccessWithoutAck = "success-without-ack", SUCCESS,
        "returns ok after the handler succeeds without acking";
    IdleRecovers = "idle-recovers", EMPTY_QUEUE,
        "calls queue.recover when nothing is ready, to unstick in-flight messages";
    EmptyBodyIsNothing = "empty-body-is-nothing", EMPTY_QUEUE,
        "takes a message with an empty body for nothing ready (`if not msg or not msg[\"body\"]:`), returning None and leaving it in flight";
    EmptyReturnsUndefined = "empty-returns-undefined", EMPTY_QUEUE,
        "ends processOne with a bare `return;` when nothing is ready: JavaScript's undefined, not null";
    AcksLeftover = "acks-leftover", NO_MISUSE,
        "keeps the message being handled in a process-wide global and acks it on the next call, even after a crash and a restart";
    HandlerGetsId = "handler-gets-id", NO_MISUSE,
        "calls the handler with the message's id instead of its body";
    ReplayRemovesBeforeSend = "replay-removes-before-send", REPLAY_SEND_BEFORE_REMOVE,
        "removes an entry from the DLQ before sending its message to the queue";
    ReplayKeepsEntries = "replay-keeps-entries", REPLAY_SEND_BEFORE_REMOVE,
        "sends the replayed messages but never removes their entries from the DLQ";
    ReplayInPutOrder = "replay-in-put-order", REPLAY_SELECTION,
        "replays the selected ids in the DLQ's order, not in the order given";
    ReplayEmptyMeansAll = "replay-empty-means-all", REPLAY_SELECTION,
        "treats replay([]) like replay() (`if not ids:`)";
    ReplayAllSkipsPoison = "replay-all-skips-poison", REPLAY_SELECTION,
        "replays only the entries with an error (`if entry[\"error\"]:`) when given no ids, so a poison pill, whose error is null, stays in the DLQ";
    ReplayFindsObjectProperties = "replay-finds-object-properties", REPLAY_SELECTION,
        "looks the ids to replay up in a plain JavaScript object (`id in entries`), so a name every object has, such as toString, counts as an entry: it is sent, with an empty body, and returned as replayed";
    ReplayReturnsRequested = "replay-returns-requested", REPLAY_SELECTION,
        "returns the ids it was asked for, including the ones it skipped";
    ReplayRepeatsIds = "replay-repeats-ids", REPLAY_SELECTION,
        "sends an id as often as it is given: replay([a, a]) sends a twice";
    ReplaySkipsEmptyBody = "replay-skips-empty-body", REPLAY_SELECTION,
        "skips an entry whose body is the empty string (`if entry.body:`), as if it were missing";
    ReplayIntegerKeysFirst = "replay-integer-keys-first", REPLAY_SELECTION,
        "keeps entries in a plain JavaScript object keyed by id, which lists ids like \"10\" and \"2\" first and in numeric order, not in put order";
}
