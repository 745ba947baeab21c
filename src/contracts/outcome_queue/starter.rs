//! The outcome-queue starter spec `dlqspec new` writes: every part of the vocabulary, commented.

/// The starter, with `{name}` standing for the spec's name.
pub(crate) const TEMPLATE: &str = r#"contract: outcome-queue
name: {name}
description: >
  Say in a sentence or two what this scenario shows and why it matters.
# The rules this scenario checks; `dlqspec rules` lists them all.
rules: [outcome-queue/transient-retry-tail, outcome-queue/success-done, outcome-queue/exhausted-quarantine]
# The steps, in order; the first one creates the queue:
#   create: {max_attempts: N}   (an invalid N also needs `raises: invalid_argument`)
#   submit: {id: ID, payload: TEXT}
#   process: {outcome: success | transient | permanent, returns: done | retry | dead | none}
#            (an invalid outcome needs `raises: invalid_argument` instead of `returns`)
#   replay: {id: ID, returns: true | false}
#   mutate_state: [{set: {path: [ready, 0, payload], value: X}}]   (also delete, append, clear:
#            a change to a state() view, after which the queue itself must be unchanged)
#   expect: {ready: [...], done: [...], quarantine: [...]}   (the whole state)
steps:
  - create: {max_attempts: 2}
  - submit: {id: a, payload: sync-1}
  - submit: {id: b, payload: sync-2}
  - process: {outcome: transient, returns: retry}
  - expect:
      ready: [{id: b, payload: sync-2, attempts: 0}, {id: a, payload: sync-1, attempts: 1}]
      done: []
      quarantine: []
  - process: {outcome: success, returns: done}
  - process: {outcome: transient, returns: dead}
  - process: {outcome: success, returns: none}
# The whole state after the last step.
expect:
  ready: []
  done: [b]
  quarantine:
    - {id: a, payload: sync-1, attempts: 2, reason: exhausted}
"#;
