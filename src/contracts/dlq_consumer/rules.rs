//! The dlq-consumer rule catalogue (docs/contracts.md section 1): every rule's id and statement, once.

use crate::model::rule::Rule;

pub(crate) const EMPTY_QUEUE: Rule = Rule {
    id: "dlq-consumer/empty-queue",
    statement: "With nothing ready, process_one returns None and touches nothing else.",
};
pub(crate) const SUCCESS: Rule = Rule {
    id: "dlq-consumer/success",
    statement: "The handler succeeds: ack the message and return \"ok\".",
};
pub(crate) const PERMANENT: Rule = Rule {
    id: "dlq-consumer/permanent",
    statement: "A PermanentError is dead-lettered at once (reason \"permanent\"), whatever budget is left.",
};
pub(crate) const TRANSIENT_RETRY: Rule = Rule {
    id: "dlq-consumer/transient-retry",
    statement: "A transient error with receive_count < max_attempts is retried to the ready tail; return \"retry\".",
};
pub(crate) const UNEXPECTED_ERROR: Rule = Rule {
    id: "dlq-consumer/unexpected-error",
    statement: "Any other exception (e.g. TypeError) is transient, and the entry's error names its class.",
};
pub(crate) const EXHAUSTED: Rule = Rule {
    id: "dlq-consumer/exhausted",
    statement: "A transient error with receive_count == max_attempts is dead-lettered with reason \"exhausted\".",
};
pub(crate) const POISON: Rule = Rule {
    id: "dlq-consumer/poison",
    statement: "receive_count > max_attempts: dead-letter without calling the handler (reason \"poison\", error null, attempts receive_count - 1).",
};
pub(crate) const CRASH_PROPAGATES: Rule = Rule {
    id: "dlq-consumer/crash-propagates",
    statement: "A Crash propagates out of process_one and the message stays in flight.",
};
pub(crate) const NO_DOUBLE_DEAD_LETTER: Rule = Rule {
    id: "dlq-consumer/no-double-dead-letter",
    statement: "A message whose id is already in the DLQ is acked and \"dead\" is returned: no second put, no handler call.",
};
pub(crate) const CHECK_ORDER: Rule = Rule {
    id: "dlq-consumer/check-order",
    statement: "process_one checks in order: receive, DLQ dedupe, poison, handler.",
};
pub(crate) const DEAD_LETTER_SEQUENCE: Rule = Rule {
    id: "dlq-consumer/dead-letter-sequence",
    statement: "Dead-lettering is dlq.put(entry), then queue.ack(id), then return \"dead\".",
};
pub(crate) const ENTRY_FIELDS: Rule = Rule {
    id: "dlq-consumer/entry-fields",
    statement: "An entry holds id, body, reason, error \"Class: message\", attempts receive_count, first_attempt_at first_received_at, failed_at clock.now().",
};
pub(crate) const COUNT_FROM_QUEUE: Rule = Rule {
    id: "dlq-consumer/count-from-queue",
    statement: "Attempts are counted from the queue's receive_count, never from the consumer's memory.",
};
pub(crate) const NO_MISUSE: Rule = Rule {
    id: "dlq-consumer/no-misuse",
    statement: "The consumer only acks or retries a message that is in flight, and calls the handler with a received body.",
};
pub(crate) const REPLAY_SELECTION: Rule = Rule {
    id: "dlq-consumer/replay-selection",
    statement: "replay() replays all entries in put order, replay(ids) the given ids in their order skipping unknown ones, replay([]) none; it returns the replayed ids.",
};
pub(crate) const REPLAY_SEND_BEFORE_REMOVE: Rule = Rule {
    id: "dlq-consumer/replay-send-before-remove",
    statement: "replay sends a message to the queue before removing it from the DLQ, so a crash between the two loses nothing.",
};
pub(crate) const REPLAY_FRESH_DELIVERY: Rule = Rule {
    id: "dlq-consumer/replay-fresh-delivery",
    statement: "A replayed message is a new send: receive_count starts again at 1 and first_received_at is set anew.",
};

pub(crate) const RULES: &[Rule] = &[
    EMPTY_QUEUE,
    SUCCESS,
    PERMANENT,
    TRANSIENT_RETRY,
    UNEXPECTED_ERROR,
    EXHAUSTED,
    POISON,
    CRASH_PROPAGATES,
    NO_DOUBLE_DEAD_LETTER,
    CHECK_ORDER,
    DEAD_LETTER_SEQUENCE,
    ENTRY_FIELDS,
    COUNT_FROM_QUEUE,
    NO_MISUSE,
    REPLAY_SELECTION,
    REPLAY_SEND_BEFORE_REMOVE,
    REPLAY_FRESH_DELIVERY,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_prefixed_with_the_contract() {
        let mut ids: Vec<_> = RULES.iter().map(|r| r.id).collect();
        assert!(ids.iter().all(|id| id.starts_with("dlq-consumer/")));
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }
}
