//! A dlq-consumer spec's expectations judged: `expect` steps and the final `expect` against
//! the world (pending, in flight, the DLQ, handler calls, trace), each value as the spec wrote
//! it.

use super::*;

impl Run<'_> {
    /// Whether every part of `expect` holds, found without building the values a difference
    /// would show. `false` when a part does not hold or is not judged here (`pending`,
    /// `in_flight`, `handler_calls`, `trace`): the full comparison in `expect` decides then.
    /// Each part judged here must hold exactly when `expect` finds it equal.
    pub(super) fn holds(&self, expect: &Expectation) -> bool {
        // Every part named, none left to `..`: a part added to `Expectation` must be judged
        // here or sent to the full comparison, or a checking run would pass what it never saw.
        let Expectation {
            dlq,
            pending,
            in_flight,
            handler_calls,
            trace,
            clock,
            counts,
            dlq_reasons,
            patterned: _,
        } = expect;
        if pending.is_some() || in_flight.is_some() || handler_calls.is_some() || trace.is_some() {
            return false;
        }
        let world = &self.world;
        let put = world.dlq();
        if let Some(entries) = dlq {
            let same = entries.len() == put.len()
                && entries
                    .iter()
                    .zip(put)
                    .all(|(entry, put)| same_entry(&entry.to_value(), put, self.naming));
            if !same {
                return false;
            }
        }
        if let Some(counts) = counts {
            let (ready, in_flight) = world.queue_lengths();
            let observed = [
                (counts.dlq, put.len() as u64),
                (counts.pending, ready as u64),
                (counts.in_flight, in_flight as u64),
                (counts.handler_calls, world.handler_call_total()),
            ];
            if observed
                .iter()
                .any(|(written, observed)| written.is_some_and(|n| n != *observed))
            {
                return false;
            }
        }
        if let Some(reasons) = dlq_reasons {
            // A reason left out and a reason written as 0 both say "none".
            let mut observed = [0u64; 3];
            for entry in put {
                match entry.get("reason").and_then(Value::as_str) {
                    Some("permanent") => observed[0] += 1,
                    Some("exhausted") => observed[1] += 1,
                    Some("poison") => observed[2] += 1,
                    _ => {}
                }
            }
            let written = [reasons.permanent, reasons.exhausted, reasons.poison];
            if written.map(|n| n.unwrap_or(0)) != observed {
                return false;
            }
        }
        clock.is_none_or(|clock| clock == world.now())
    }

    /// Checks an `expect` written at `position`; `path` leads from there to the expectation's
    /// mapping (`[expect]` for a step, nothing for the final one).
    pub(super) fn expect(
        &mut self,
        label: &dyn fmt::Display,
        position: Position,
        path: &[&str],
        expect: &Expectation,
    ) -> Result<(), Stop> {
        // Where the spec reads the DLQ, a broker that dead-letters by itself is compared.
        let reads_dlq = expect.dlq.is_some()
            || expect.dlq_reasons.is_some()
            || expect
                .counts
                .as_ref()
                .is_some_and(|counts| counts.dlq.is_some());
        if reads_dlq {
            self.world.compare_dead_letters();
        }
        // A checking run keeps no checkpoint that matches (see `Recorder`): when the
        // expectation holds there is nothing to build, and for a big DLQ that is most of it.
        if !self.recorder.keeps_matches() && self.holds(expect) {
            return Ok(());
        }
        let mut parts: Vec<ComparedKey> = Vec::new();
        if let Some(entries) = &expect.dlq {
            let naming = self.naming;
            let written: Vec<Value> = entries.iter().map(|e| e.to_value()).collect();
            let put = self.world.dlq();
            // Patterned entries stand for many: bless rewrites none of them, so what is
            // written and what it would become are the same.
            let as_written = if expect.patterned {
                let same = Value::Array(written.clone());
                (same.clone(), same)
            } else {
                (
                    Value::Array(written.clone()),
                    put.iter().map(|e| canonical_entry(e, naming)).collect(),
                )
            };
            parts.push((
                "dlq",
                written.iter().map(|e| entry_in(e, naming)).collect(),
                put.iter().map(|e| normalize_entry(e, naming)).collect(),
                Some(as_written),
            ));
        }
        if let Some(counts) = &expect.counts {
            let world_calls = self.world.handler_call_total();
            let (ready, in_flight) = self.world.queue_lengths();
            let mut expected = Map::new();
            let mut actual = Map::new();
            for (key, written, observed) in [
                ("dlq", counts.dlq, self.world.dlq().len() as u64),
                ("pending", counts.pending, ready as u64),
                ("in_flight", counts.in_flight, in_flight as u64),
                ("handler_calls", counts.handler_calls, world_calls),
            ] {
                if let Some(written) = written {
                    expected.insert(key.to_owned(), json!(written));
                    actual.insert(key.to_owned(), json!(observed));
                }
            }
            parts.push((
                "counts",
                Value::Object(expected),
                Value::Object(actual),
                None,
            ));
        }
        if let Some(reasons) = &expect.dlq_reasons {
            let expected: Map<String, Value> = reasons
                .written()
                .into_iter()
                .map(|(reason, n)| (reason.to_owned(), json!(n)))
                .collect();
            let mut actual = Map::new();
            for reason in ["permanent", "exhausted", "poison"] {
                let n = self
                    .world
                    .dlq()
                    .iter()
                    .filter(|e| e.get("reason").and_then(Value::as_str) == Some(reason))
                    .count();
                if n > 0 {
                    actual.insert(reason.to_owned(), json!(n));
                }
            }
            parts.push((
                "dlq_reasons",
                Value::Object(expected),
                Value::Object(actual),
                None,
            ));
        }
        if let Some(pending) = &expect.pending {
            parts.push(("pending", json!(pending), json!(self.world.pending()), None));
        }
        if let Some(in_flight) = &expect.in_flight {
            let actual = json!(self.world.in_flight());
            parts.push(("in_flight", json!(in_flight), actual, None));
        }
        if let Some(calls) = &expect.handler_calls {
            let listed: Map<String, Value> = calls
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(id, n)| (id.clone(), json!(n)))
                .collect();
            // Ids the spec lists come first, in its order, so the diff lines up.
            let mut observed = Map::new();
            let world_calls = self.world.handler_calls();
            for id in listed.keys() {
                if let Some(n) = world_calls.get(id) {
                    observed.insert(id.clone(), json!(n));
                }
            }
            for (id, n) in world_calls {
                if !observed.contains_key(id) {
                    observed.insert(id.clone(), json!(n));
                }
            }
            parts.push((
                "handler_calls",
                Value::Object(listed),
                Value::Object(observed),
                None,
            ));
        }
        if let Some(trace) = &expect.trace {
            let expected: Vec<String> = trace.iter().map(|line| line.value.clone()).collect();
            // The effects in the spec's order where the contract leaves the order free.
            let actual = super::super::trace::align(&expected, &self.world.trace());
            parts.push(("trace", json!(expected), json!(actual), None));
        }
        if let Some(clock) = expect.clock {
            parts.push(("clock", json!(clock), json!(self.world.now()), None));
        }
        let mut expected = Map::new();
        let mut actual = Map::new();
        let mut written = Vec::with_capacity(parts.len());
        for (key, expected_part, actual_part, as_written) in parts {
            let mut at_key = path.to_vec();
            at_key.push(key);
            let (expected_written, actual_written) =
                as_written.unwrap_or_else(|| (expected_part.clone(), actual_part.clone()));
            written.push(WrittenValue::new(
                position,
                &at_key,
                expected_written,
                actual_written,
            ));
            expected.insert(key.to_owned(), expected_part);
            actual.insert(key.to_owned(), actual_part);
        }
        // Patterned DLQ entries stand for many and are never rewritten: when they differ, the
        // expectation as a whole cannot be blessed, and `bless` must say so before it rewrites
        // anything else in it (rather than fail late, when the blessed spec still differs).
        if expect.patterned && expected.get("dlq") != actual.get("dlq") {
            written.clear();
        }
        let checkpoint = Checkpoint {
            position,
            label: "expect".to_owned(),
            expected: Value::Object(expected),
            actual: Value::Object(actual),
            written,
        };
        self.recorder.compare(label, checkpoint, None)
    }
}

/// Whether `entry_in(written, naming)` equals `normalize_entry(put, naming)`, without building
/// either: one only renames keys and the other only reorders them, and maps compare whatever
/// their order. `written` holds the contract's seven keys, which no spelling makes collide.
pub(super) fn same_entry(written: &Value, put: &Value, naming: Naming) -> bool {
    match (written, put) {
        (Value::Object(written), Value::Object(put)) => {
            // Keys in the same order, as the built-in puts them, are compared in step, with no
            // key looked up; any other order by looking each one up.
            let in_step = || {
                written
                    .iter()
                    .zip(put)
                    .all(|((key, value), (put_key, put_value))| {
                        naming.key(key) == put_key.as_str() && value == put_value
                    })
            };
            let looked_up = || {
                written
                    .iter()
                    .all(|(key, value)| put.get(naming.key(key).as_ref()) == Some(value))
            };
            written.len() == put.len() && (in_step() || looked_up())
        }
        _ => entry_in(written, naming) == normalize_entry(put, naming),
    }
}
