//! Whether a queue's answer and its state after a call bear out a rule line `explain --impl`
//! tells of the call: the line says what the spec's pinned answer implies, the state says
//! whether this queue did it.

use serde_json::{Value, json};

use super::rules;
use crate::model::implementation::Reply;
use crate::model::rule::Rule;
use crate::text::yaml;

/// Whether the call that `reply` answered, taking the queue from state `before` to `after`
/// (both as `normalize_state` orders them), did what `rule`'s line claims of it: `None` when
/// `state()` cannot show it (a job's attempts once it is done), or the rule is not one a
/// call's effect decides.
pub(crate) fn call_follows_rule(
    rule: &Rule,
    args: &[Value],
    reply: &Reply,
    before: &Value,
    after: &Value,
) -> Option<bool> {
    let answered = |wanted: Value| matches!(reply, Reply::Returned(value) if *value == wanted);
    let (ready, quarantine, done) = (
        list(before, "ready"),
        list(before, "quarantine"),
        list(before, "done"),
    );
    let head = ready.first();
    // The head job with its attempt counted, as the ready tail or quarantine should hold it.
    let counted = head.and_then(|job| {
        let attempts = job.get("attempts")?.as_u64()?;
        let mut job = job.clone();
        job["attempts"] = json!(attempts + 1);
        Some(job)
    });
    let rest = &ready[ready.len().min(1)..];
    let unchanged = after == before;
    Some(match rule.id {
        id if id == rules::SUBMIT_TAIL.id => {
            let job = json!({
                "id": args.first(),
                "payload": args.get(1),
                "attempts": 0,
            });
            list(after, "ready") == appended(ready, job)
        }
        id if id == rules::OUTCOME_VALIDATED_FIRST.id => {
            matches!(reply, Reply::Raised(_)) && unchanged
        }
        id if id == rules::EMPTY_RETURNS_NONE.id => answered(Value::Null) && unchanged,
        id if id == rules::QUARANTINE_STICKY.id => {
            list(after, "quarantine").starts_with(quarantine)
        }
        id if id == rules::ATTEMPT_COUNTED_FIRST.id => {
            let (Some(head), Some(counted)) = (head, &counted) else {
                return Some(false);
            };
            let id = head.get("id");
            // Where the job went, if state() shows its count there: back in ready, or newly
            // quarantined. Done lists only ids.
            let newly_quarantined = list(after, "quarantine")
                .get(quarantine.len()..)
                .unwrap_or_default();
            let found = list(after, "ready")
                .iter()
                .chain(newly_quarantined)
                .rfind(|job| job.get("id") == id);
            match found {
                Some(job) => job.get("attempts") == counted.get("attempts"),
                None if list(after, "done")
                    .get(done.len()..)
                    .unwrap_or_default()
                    .iter()
                    .any(|d| Some(d) == id) =>
                {
                    return None;
                }
                None => false,
            }
        }
        id if id == rules::SUCCESS_DONE.id => {
            let id = head.and_then(|job| job.get("id")).cloned();
            answered(json!("done"))
                && id.is_some()
                && list(after, "ready") == rest
                && list(after, "done") == appended(done, id.unwrap_or_default())
        }
        id if id == rules::TRANSIENT_RETRY_TAIL.id => {
            answered(json!("retry"))
                && counted.is_some_and(|job| list(after, "ready") == appended(rest, job))
        }
        id if id == rules::PERMANENT_QUARANTINE.id || id == rules::EXHAUSTED_QUARANTINE.id => {
            let reason = if id == rules::PERMANENT_QUARANTINE.id {
                "permanent"
            } else {
                "exhausted"
            };
            let after_quarantine = list(after, "quarantine");
            let entry = after_quarantine
                .last()
                .filter(|_| after_quarantine.len() == quarantine.len() + 1);
            answered(json!("dead"))
                && head.is_some()
                && list(after, "ready") == rest
                && entry.is_some_and(|entry| {
                    entry.get("id") == head.and_then(|job| job.get("id"))
                        && entry.get("reason") == Some(&json!(reason))
                })
        }
        id if id == rules::ENTRY_RETAINS_DIAGNOSTICS.id => {
            let reason = if args.first().and_then(Value::as_str) == Some("permanent") {
                "permanent"
            } else {
                "exhausted"
            };
            counted.is_some_and(|mut entry| {
                entry["reason"] = json!(reason);
                list(after, "quarantine") == appended(quarantine, entry)
            })
        }
        id if id == rules::REPLAY_RESETS.id => {
            let at = quarantine
                .iter()
                .position(|entry| entry.get("id") == args.first());
            answered(json!(true))
                && at.is_some_and(|at| {
                    let entry = &quarantine[at];
                    let job = json!({
                        "id": entry.get("id"),
                        "payload": entry.get("payload"),
                        "attempts": 0,
                    });
                    let left = [&quarantine[..at], &quarantine[at + 1..]].concat();
                    list(after, "quarantine") == left
                        && list(after, "ready") == appended(ready, job)
                })
        }
        id if id == rules::REPLAY_MISSING_FALSE.id => answered(json!(false)) && unchanged,
        id if id == rules::STATE_DEEP_COPY.id => unchanged,
        _ => return None,
    })
}

/// The lists of a state view `call_follows_rule` reads for `rule`: what a line that is not borne out
/// shows of the queue.
pub(crate) fn looked_at(rule: &Rule) -> &'static [&'static str] {
    match rule.id {
        id if id == rules::SUBMIT_TAIL.id || id == rules::TRANSIENT_RETRY_TAIL.id => &["ready"],
        id if id == rules::QUARANTINE_STICKY.id || id == rules::ENTRY_RETAINS_DIAGNOSTICS.id => {
            &["quarantine"]
        }
        id if id == rules::SUCCESS_DONE.id => &["ready", "done"],
        id if id == rules::ATTEMPT_COUNTED_FIRST.id
            || id == rules::PERMANENT_QUARANTINE.id
            || id == rules::EXHAUSTED_QUARANTINE.id
            || id == rules::REPLAY_RESETS.id =>
        {
            &["ready", "quarantine"]
        }
        _ => &["ready", "done", "quarantine"],
    }
}

/// Lists `keys` of a state view as a spec writes them, `ready [{id: a, ...}]; done []`: long
/// lists by their ends.
pub(crate) fn shown_lists(state: &Value, keys: &[&str]) -> String {
    keys.iter()
        .map(|key| {
            let items = crate::text::listing::shown(list(state, key), yaml::flow);
            format!("{key} [{}]", items.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `list` with `item` after its last.
fn appended(list: &[Value], item: Value) -> Vec<Value> {
    let mut all = list.to_vec();
    all.push(item);
    all
}

/// List `key` of a state view; empty when the view has none (a difference from any list
/// a rule expects to hold something).
fn list<'s>(state: &'s Value, key: &str) -> &'s [Value] {
    state
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::implementation::Raised;

    fn state(ready: Value, done: Value, quarantine: Value) -> Value {
        json!({"ready": ready, "done": done, "quarantine": quarantine})
    }

    fn returned(value: Value) -> Reply {
        Reply::Returned(value)
    }

    #[test]
    fn a_permanent_failure_retried_bears_out_the_count_and_not_the_quarantine() {
        let before = state(
            json!([{"id": "a", "payload": "p", "attempts": 1}]),
            json!([]),
            json!([]),
        );
        let retried = state(
            json!([{"id": "a", "payload": "p", "attempts": 2}]),
            json!([]),
            json!([]),
        );
        let args = [json!("permanent")];
        let reply = returned(json!("retry"));
        let judge = |rule: &Rule| call_follows_rule(rule, &args, &reply, &before, &retried);
        assert_eq!(judge(&rules::ATTEMPT_COUNTED_FIRST), Some(true));
        assert_eq!(judge(&rules::PERMANENT_QUARANTINE), Some(false));
        assert_eq!(judge(&rules::ENTRY_RETAINS_DIAGNOSTICS), Some(false));
        let quarantined = state(
            json!([]),
            json!([]),
            json!([{"id": "a", "payload": "p", "attempts": 2, "reason": "permanent"}]),
        );
        let dead = returned(json!("dead"));
        for rule in [
            &rules::ATTEMPT_COUNTED_FIRST,
            &rules::PERMANENT_QUARANTINE,
            &rules::ENTRY_RETAINS_DIAGNOSTICS,
        ] {
            assert_eq!(
                call_follows_rule(rule, &args, &dead, &before, &quarantined),
                Some(true),
                "{}",
                rule.id
            );
        }
        // The right list, the wrong answer: the line says what process returns too.
        assert_eq!(
            call_follows_rule(
                &rules::PERMANENT_QUARANTINE,
                &args,
                &reply,
                &before,
                &quarantined
            ),
            Some(false)
        );
    }

    #[test]
    fn a_success_hides_the_count_and_a_replay_that_keeps_the_reason_does_not_reset() {
        let before = state(
            json!([{"id": "a", "payload": "p", "attempts": 0}]),
            json!([]),
            json!([]),
        );
        let done = state(json!([]), json!(["a"]), json!([]));
        let args = [json!("success")];
        let reply = returned(json!("done"));
        assert_eq!(
            call_follows_rule(&rules::ATTEMPT_COUNTED_FIRST, &args, &reply, &before, &done),
            None
        );
        assert_eq!(
            call_follows_rule(&rules::SUCCESS_DONE, &args, &reply, &before, &done),
            Some(true)
        );
        assert_eq!(
            call_follows_rule(&rules::SUCCESS_DONE, &args, &reply, &before, &before),
            Some(false)
        );
        let quarantined = state(
            json!([]),
            json!([]),
            json!([{"id": "a", "payload": "p", "attempts": 3, "reason": "exhausted"}]),
        );
        let args = [json!("a")];
        let yes = returned(json!(true));
        let reset = state(
            json!([{"id": "a", "payload": "p", "attempts": 0}]),
            json!([]),
            json!([]),
        );
        let kept = state(
            json!([{"id": "a", "payload": "p", "attempts": 0, "reason": "exhausted"}]),
            json!([]),
            json!([]),
        );
        assert_eq!(
            call_follows_rule(&rules::REPLAY_RESETS, &args, &yes, &quarantined, &reset),
            Some(true)
        );
        assert_eq!(
            call_follows_rule(&rules::REPLAY_RESETS, &args, &yes, &quarantined, &kept),
            Some(false)
        );
    }

    #[test]
    fn a_refused_outcome_and_an_empty_queue_must_change_nothing() {
        let before = state(
            json!([{"id": "a", "payload": "p", "attempts": 0}]),
            json!([]),
            json!([]),
        );
        let counted = state(
            json!([{"id": "a", "payload": "p", "attempts": 1}]),
            json!([]),
            json!([]),
        );
        let raised = Reply::Raised(Raised::error("ValueError", "bad outcome"));
        let args = [json!("bogus")];
        let judge = |after: &Value| {
            call_follows_rule(
                &rules::OUTCOME_VALIDATED_FIRST,
                &args,
                &raised,
                &before,
                after,
            )
        };
        assert_eq!(judge(&before), Some(true));
        assert_eq!(judge(&counted), Some(false));
        let empty = state(json!([]), json!([]), json!([]));
        let none = returned(Value::Null);
        let args = [json!("success")];
        assert_eq!(
            call_follows_rule(&rules::EMPTY_RETURNS_NONE, &args, &none, &empty, &empty),
            Some(true)
        );
        assert_eq!(
            call_follows_rule(
                &rules::EMPTY_RETURNS_NONE,
                &args,
                &Reply::Undefined,
                &empty,
                &empty
            ),
            Some(false)
        );
    }
}
