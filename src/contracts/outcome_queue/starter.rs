//! The outcome-queue starter spec `dlqspec new` writes: every part of the vocabulary, commented.

use serde_json::Value;

use crate::yaml;

/// The starter, with `{name}` standing for the spec's name.
const TEMPLATE: &str = r#"contract: outcome-queue
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

pub fn starter(name: &str) -> String {
    TEMPLATE.replace("{name}", &yaml::flow(&Value::String(name.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::Builtin;
    use crate::contract::{RunMode, Scenario};
    use crate::outcome::Outcome;
    use crate::source::SourceFile;

    #[test]
    fn the_starter_passes_on_the_builtin_and_has_no_smells() {
        let file = SourceFile::from_text("new.yaml", starter("a: tricky name"));
        let scenario = super::super::spec::load(&file).unwrap();
        assert_eq!(scenario.header.name, "a: tricky name");
        let run = scenario.run(&mut Builtin::new(), RunMode::Check);
        assert!(matches!(run.outcome, Outcome::Passed), "{:?}", run.outcome);
        assert_eq!(scenario.smells(&mut Builtin::new()).unwrap(), vec![]);
    }
}
