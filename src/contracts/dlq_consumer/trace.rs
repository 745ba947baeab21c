//! What a dlq-consumer `trace` expectation pins: the effects, in the orders the rules fix.
//!
//! docs/contracts.md section 3 pins every effect (receive, ack, retry, send, put, remove, each
//! handler call) and a few orders between them, and leaves reads free. So a trace lists effects
//! only, and two traces are the same when one can be turned into the other by swapping adjacent
//! effects whose order no rule fixes. The only such pairs are inside `replay`: the contract pins
//! the order of the sends (the given order) and, for each id, send before remove, but not when
//! the removal of one id happens relative to the send or removal of another. So `dlq.remove(x)`
//! commutes with `queue.send(y)` and `dlq.remove(y)` for `y != x`, and with nothing else.
//! This is trace equivalence in Mazurkiewicz's sense, with that independence relation.

use std::collections::HashSet;

use super::spec::EFFECT_CALLS;

/// Effects written `name(ID)`.
const ON_AN_ID: &[&str] = &[
    "queue.ack",
    "queue.retry",
    "queue.send",
    "dlq.put",
    "dlq.remove",
];

/// Reads, which a trace never lists, and what to do instead.
const READS: &[&str] = &["dlq.has", "dlq.entries", "queue.pending", "clock.now"];

/// The forms a trace line takes, for error messages.
pub(crate) const FORMS: &str = "`queue.receive() -> ID`, `handler(ID) -> OUTCOME`, `queue.ack(ID)`, \
`queue.retry(ID)`, `queue.send(ID)`, `dlq.put(ID)`, `dlq.remove(ID)`, `queue.recover()`, \
`clock.advance(N)`, `CALL -> crash (injected before the call)` or `... after the call`, \
or a misuse ending in ` !misuse`";

/// Why `line` cannot be a trace line, if it cannot. `ids` are the spec's message ids (an id
/// may itself be `none`).
pub(crate) fn check_line(line: &str, ids: &HashSet<String>) -> Result<(), String> {
    if line.ends_with(" !misuse") {
        return Ok(());
    }
    for timing in ["before", "after"] {
        if let Some(call) = line.strip_suffix(&format!(" -> crash (injected {timing} the call)")) {
            return if EFFECT_CALLS.contains(&call) {
                Ok(())
            } else {
                Err(format!(
                    "`{call}` is not a call a fault can crash{}; expected one of {}",
                    crate::text::suggest::hint(call, EFFECT_CALLS),
                    EFFECT_CALLS.join(", ")
                ))
            };
        }
    }
    let name = line.split('(').next().unwrap_or(line).trim();
    if READS.contains(&name) {
        return Err(format!(
            "`{line}` is a read, and a trace lists effects only: docs/contracts.md leaves free how and how often an implementation reads (`dlq.has` or scanning `dlq.entries()`, once or twice, `queue.pending()` for a log line); remove this line"
        ));
    }
    if let Some(delivered) = line.strip_prefix("queue.receive() -> ") {
        if delivered == "none" && !ids.contains("none") {
            return Err("`queue.receive() -> none` delivers nothing, so it is a read, and a trace lists effects only; remove this line (`process: none` checks the return)".to_owned());
        }
        return non_empty(line, delivered);
    }
    if let Some(rest) = line.strip_prefix("dlq.remove(")
        && let Some((id, answer)) = rest.rsplit_once(") -> ")
        && matches!(answer, "true" | "false")
    {
        return Err(if answer == "true" {
            format!("write `dlq.remove({id})`: a trace lists the removal, not what it answered")
        } else {
            format!(
                "`{line}` removes nothing, so it is a read, and a trace lists effects only; remove this line"
            )
        });
    }
    if let Some(rest) = line.strip_prefix("handler(")
        && let Some((id, outcome)) = rest.split_once(") -> ")
    {
        non_empty(line, id)?;
        return non_empty(line, outcome);
    }
    if line == "queue.recover()" {
        return Ok(());
    }
    if let Some(by) = line
        .strip_prefix("clock.advance(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        return if !by.is_empty() && by.bytes().all(|b| b.is_ascii_digit()) {
            Ok(())
        } else {
            Err(format!(
                "`{line}`: clock.advance takes a whole number, e.g. `clock.advance(5)`"
            ))
        };
    }
    if ON_AN_ID.contains(&name) {
        let id = line
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('('))
            .and_then(|rest| rest.strip_suffix(')'));
        return match id {
            Some(id) => non_empty(line, id),
            None => Err(format!("`{line}`: write `{name}(ID)`")),
        };
    }
    let calls: Vec<&str> = ON_AN_ID
        .iter()
        .chain(&["queue.receive", "queue.recover", "clock.advance", "handler"])
        .copied()
        .collect();
    let suggestion = crate::text::suggest::hint(name, &calls);
    Err(format!(
        "`{line}` is not a trace line{suggestion}; a line is one of {FORMS}"
    ))
}

fn non_empty(line: &str, part: &str) -> Result<(), String> {
    if part.is_empty() {
        Err(format!("`{line}` names no message"))
    } else {
        Ok(())
    }
}

/// The id of `call(ID)`, when `line` is exactly that.
fn target<'l>(line: &'l str, call: &str) -> Option<&'l str> {
    line.strip_prefix(call)?
        .strip_prefix('(')?
        .strip_suffix(')')
}

/// Whether the contract lets the two effects happen in either order.
pub(crate) fn commute(a: &str, b: &str) -> bool {
    fn other(line: &str) -> Option<&str> {
        target(line, "queue.send").or_else(|| target(line, "dlq.remove"))
    }
    match (target(a, "dlq.remove"), target(b, "dlq.remove")) {
        (Some(x), _) => other(b).is_some_and(|y| y != x),
        (None, Some(y)) => other(a).is_some_and(|x| x != y),
        (None, None) => false,
    }
}

/// `actual`, with effects the contract lets commute moved into the order `expected` writes
/// them, as far as that is possible. The result equals `expected` exactly when the two traces
/// are the same up to such swaps; otherwise it shows the first real difference where it is.
///
/// Greedy, and still exact: an effect can move to the front when it commutes with every
/// effect before it, and equal lines never commute, so only the first occurrence can.
pub(crate) fn align(expected: &[String], actual: &[String]) -> Vec<String> {
    aligned_order(expected, actual)
        .into_iter()
        .map(|at| actual[at].clone())
        .collect()
}

/// The order `align` puts `actual` in, as indices into it: a diagnosis compares the effects
/// themselves (a put's entry too), not only their lines.
pub(crate) fn aligned_order<S: AsRef<str>>(expected: &[S], actual: &[S]) -> Vec<usize> {
    let mut rest: Vec<usize> = (0..actual.len()).collect();
    let mut aligned = Vec::with_capacity(actual.len());
    for want in expected {
        let want = want.as_ref();
        let Some(found) = rest.iter().position(|&at| actual[at].as_ref() == want) else {
            break;
        };
        if !rest[..found]
            .iter()
            .all(|&before| commute(actual[before].as_ref(), want))
        {
            break;
        }
        aligned.push(rest.remove(found));
    }
    aligned.extend(rest);
    aligned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.split(';').map(|l| l.trim().to_owned()).collect()
    }

    fn ids() -> HashSet<String> {
        ["a", "b"].iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn sends_and_removes_of_different_ids_interleave_freely() {
        let expected = lines("queue.send(a); dlq.remove(a); queue.send(b); dlq.remove(b)");
        for actual in [
            "queue.send(a); queue.send(b); dlq.remove(a); dlq.remove(b)",
            "queue.send(a); queue.send(b); dlq.remove(b); dlq.remove(a)",
            "queue.send(a); dlq.remove(a); queue.send(b); dlq.remove(b)",
        ] {
            assert_eq!(align(&expected, &lines(actual)), expected, "{actual}");
        }
    }

    #[test]
    fn the_orders_the_rules_pin_stay_pinned() {
        // Remove before send of the same id; sends out of order; ack before put.
        for (expected, actual) in [
            (
                "queue.send(a); dlq.remove(a)",
                "dlq.remove(a); queue.send(a)",
            ),
            (
                "queue.send(a); queue.send(b); dlq.remove(a); dlq.remove(b)",
                "queue.send(b); queue.send(a); dlq.remove(a); dlq.remove(b)",
            ),
            ("dlq.put(a); queue.ack(a)", "queue.ack(a); dlq.put(a)"),
            (
                "queue.send(a); dlq.remove(a); queue.send(b); dlq.remove(b)",
                "dlq.remove(b); queue.send(a); dlq.remove(a); queue.send(b)",
            ),
        ] {
            assert_ne!(align(&lines(expected), &lines(actual)), lines(expected));
        }
    }

    #[test]
    fn a_missing_or_extra_effect_is_a_difference_shown_where_it_is() {
        let expected = lines("queue.receive() -> a; handler(a) -> ok; queue.ack(a)");
        let actual = lines("queue.receive() -> a; handler(a) -> ok");
        assert_eq!(align(&expected, &actual), actual);
        let extra = lines("queue.receive() -> a; handler(a) -> ok; queue.ack(a); queue.ack(a)");
        assert_ne!(align(&expected, &extra), expected);
    }

    #[test]
    fn crashes_are_barriers() {
        let crash = "queue.send -> crash (injected after the call)";
        assert!(!commute("dlq.remove(a)", crash));
        assert!(!commute("dlq.remove(a)", "dlq.remove(a)"));
        assert!(!commute("dlq.remove(a)", "dlq.put(b)"));
        assert!(commute("queue.send(b)", "dlq.remove(a)"));
    }

    #[test]
    fn reads_are_refused_with_the_reason_and_effects_accepted() {
        for line in [
            "queue.receive() -> a",
            "handler(a) -> PermanentError",
            "queue.ack(a)",
            "dlq.remove(a)",
            "queue.recover()",
            "clock.advance(3)",
            "dlq.put -> crash (injected after the call)",
            "queue.ack(a): a is not in flight !misuse",
        ] {
            assert_eq!(check_line(line, &ids()), Ok(()), "{line}");
        }
        for (line, start) in [
            ("dlq.has(a) -> false", "`dlq.has(a) -> false` is a read"),
            ("dlq.entries()", "`dlq.entries()` is a read"),
            ("queue.pending()", "`queue.pending()` is a read"),
            (
                "queue.receive() -> none",
                "`queue.receive() -> none` delivers nothing",
            ),
            ("dlq.remove(a) -> true", "write `dlq.remove(a)`"),
            (
                "dlq.remove(z) -> false",
                "`dlq.remove(z) -> false` removes nothing",
            ),
            (
                "queue.ak(a)",
                "`queue.ak(a)` is not a trace line (did you mean `queue.ack`?)",
            ),
            (
                "dlq.has -> crash (injected after the call)",
                "`dlq.has` is not a call a fault can crash",
            ),
        ] {
            let error = check_line(line, &ids()).unwrap_err();
            assert!(error.starts_with(start), "{line}: {error}");
        }
        let with_none: HashSet<String> = ["none".to_owned()].into();
        assert_eq!(check_line("queue.receive() -> none", &with_none), Ok(()));
    }
}
