//! The dlq-consumer starter spec `dlqspec new` writes: every part of the vocabulary, commented.

/// The starter spec named `name`: the header every starter has, then this vocabulary's keys.
pub(crate) fn starter(name: &str) -> String {
    let mut text = crate::contracts::spec_file::starter_header(
        super::NAME,
        name,
        &["dlq-consumer/transient-retry", "dlq-consumer/success"],
    );
    text.push_str(BODY);
    text
}

/// What follows the header: every key of the vocabulary, commented.
const BODY: &str = r#"# The consumer's budget of deliveries; left out, the consumer's own default (the lesson's 3).
max_attempts: 3
# The messages in the queue at the start, in order.
messages:
  - {id: a, body: order-1}
# What the handler does on each call, per message id, in call order:
#   ok | crash | transient: MESSAGE | permanent: MESSAGE | error: {class: TypeError, message: MESSAGE}
handler:
  a: [transient: db timeout, ok]
# The steps, in order:
#   process: ok | retry | dead | none | crash | any   (process_one and what it must return)
#   recover | restart | advance: N | send: {id: ID, body: BODY}
#   replay: {ids: [ID], returns: [ID]}   (ids left out: replay everything)
#   fault: {crash: before | after, call: dlq.put, nth: 1}
#   expect: {...}   (the same keys as the final expect below)
steps:
  - process: retry
  - expect: {pending: [a], in_flight: []}
  - process: ok
  - process: none
# The world after the last step; only the keys written are checked:
#   dlq (every entry, every field), pending, in_flight, handler_calls, trace, clock
expect:
  dlq: []
  pending: []
  in_flight: []
  handler_calls: {a: 2}
"#;
