//! What `explain` tells of a dlq-consumer run beside the steps: each delivery, the decision
//! the rule behind it makes and why, what the implementation did there against what it wanted,
//! a replay's sends and skips, a crash.

use super::did_wanted::{Did, EFFECT_CALLS, Wanted, expected_ending};
use super::*;

impl Run<'_> {
    /// Adds what the world saw since journal entry `from` to the timeline.
    pub(super) fn narrate(&mut self, from: usize) {
        if !self.recorder.telling() {
            return;
        }
        let told: Vec<_> = self.world.journal()[from..]
            .iter()
            .map(WorldEvent::timeline_line)
            .collect();
        self.recorder.tell_all(told);
    }

    /// `why` is only written out when the run keeps a timeline: a plain run reaches a rule at
    /// every step and would otherwise build a sentence per step that nobody reads.
    pub(super) fn rule_line(&mut self, rule: &Rule, why: impl std::fmt::Display) {
        self.recorder.exercise(rule, why);
    }

    /// A rule line for the rule that decides the step: a difference in it breaks `rule`.
    pub(super) fn decision_line(&mut self, rule: &'static Rule, why: impl std::fmt::Display) {
        self.recorder.decided(rule);
        self.recorder.exercise(rule, why);
    }

    /// Names the rules that decide what `replay` must do with what it was asked, and what it
    /// skipped; the same for every implementation, right or wrong.
    pub(super) fn decide_replay(&mut self, from: usize, ids: Option<&[String]>) {
        let happened = &self.world.journal()[from..];
        let sent: Vec<String> = happened
            .iter()
            .filter_map(|h| match h {
                WorldEvent::Sent { id } => Some(id.clone()),
                _ => None,
            })
            .collect();
        let crashed = happened.iter().find_map(|h| match h {
            WorldEvent::Crashed { call, .. } => Some(call.clone()),
            _ => None,
        });
        let selection = match ids {
            None => "every entry is replayed, in put order".to_owned(),
            Some([]) => "an empty list replays nothing".to_owned(),
            Some(ids) => {
                let mut seen = HashSet::new();
                let skipped: Vec<String> = ids
                    .iter()
                    .filter(|id| !seen.insert(id.as_str()) || !sent.contains(id))
                    .cloned()
                    .collect();
                if crashed.is_none() {
                    self.tell_skipped(ids, &sent, from);
                }
                if skipped.is_empty() || crashed.is_some() {
                    "the given ids that are in the DLQ are replayed, in the order given".to_owned()
                } else {
                    format!(
                        "the given ids that are in the DLQ are replayed, in the order given, each once; skipped: {}",
                        listing::list(&skipped)
                    )
                }
            }
        };
        self.decision_line(&rules::REPLAY_SELECTION, &selection);
        if !sent.is_empty() {
            self.rule_line(
                &rules::REPLAY_SEND_BEFORE_REMOVE,
                "each replayed id is sent to the queue before it leaves the DLQ",
            );
        }
        // The consumer's own count of deliveries is left alone: one that counts from memory
        // carries it across the replay, which is what the queue's fresh count shows wrong.
        self.replayed.extend(sent);
        if let Some(call) = crashed {
            self.decision_line(
                &rules::CRASH_PROPAGATES,
                format_args!("the crash injected at {call} propagates out of replay"),
            );
        }
    }

    /// Tells what a replay that ran to its end skipped of the ids it was given: those the DLQ
    /// did not hold when it was called, and repeats of an id already replayed.
    pub(super) fn tell_skipped(&mut self, ids: &[String], sent: &[String], from: usize) {
        if !self.recorder.telling() {
            return;
        }
        // The DLQ before the call: what it holds now, and what the call removed from it.
        let mut held: HashSet<String> = self.world.dlq_ids().into_iter().collect();
        held.extend(self.world.journal()[from..].iter().filter_map(|h| match h {
            WorldEvent::Removed {
                id, removed: true, ..
            } => Some(id.clone()),
            _ => None,
        }));
        let mut seen = HashSet::new();
        let (mut unknown, mut repeated) = (Vec::new(), Vec::new());
        for id in ids {
            if !seen.insert(id.as_str()) {
                if sent.contains(id) && !repeated.contains(id) {
                    repeated.push(id.clone());
                }
            } else if !held.contains(id) && !unknown.contains(id) {
                unknown.push(id.clone());
            }
        }
        if !unknown.is_empty() {
            self.recorder.tell(format!(
                "    replay skips {}: not in the DLQ",
                listing::list(&unknown)
            ));
        }
        if !repeated.is_empty() {
            self.recorder.tell(format!(
                "    replay skips the repeats of {}: each id is replayed once",
                listing::list(&repeated)
            ));
        }
    }

    /// Names the rules that decide what `process_one` must do in the situation the world saw
    /// since journal entry `from`: the same for every implementation, right or wrong.
    pub(super) fn decide(&mut self, from: usize) {
        // Read in place, not copied: every fact needed later is taken out before a rule is
        // noted, so the journal need not outlive the borrow.
        let happened = &self.world.journal()[from..];
        let max = self.scenario.budget();
        let crashed = happened.iter().find_map(|h| match h {
            WorldEvent::Crashed { call, .. } => Some(call.clone()),
            _ => None,
        });
        let received = happened.iter().find_map(|h| match h {
            WorldEvent::Received {
                id,
                receive_count,
                already_dead,
                ..
            } => Some((id.clone(), *receive_count, *already_dead)),
            _ => None,
        });
        let handled = happened.iter().find_map(|h| match h {
            WorldEvent::Handled { outcome, .. } => Some(outcome.clone()),
            _ => None,
        });
        // A handler call that took time: how long, and the clock when it returned.
        let took = happened.iter().find_map(|h| match h {
            WorldEvent::Took { takes, now, .. } => Some((*takes, *now)),
            _ => None,
        });
        let effect = |wanted: fn(&WorldEvent) -> bool| happened.iter().any(wanted);
        let put_or_retried = effect(|h| matches!(h, WorldEvent::Put { .. }))
            || effect(|h| matches!(h, WorldEvent::Retried { .. }));
        let acked = effect(|h| matches!(h, WorldEvent::Acked { .. }));
        // Explaining only: what the implementation did with the message it received, to be
        // set against what the deciding rule expects.
        let did = match &received {
            Some((id, ..)) if self.recorder.telling() => {
                Some(Did::of(happened, id, &handled, self.world.now()))
            }
            _ => None,
        };
        let Some((id, count, already_dead)) = received else {
            if happened.contains(&WorldEvent::NothingReady) {
                self.decision_line(&rules::EMPTY_QUEUE, "nothing is ready: return none");
            }
            return self.crash_line(crashed.as_deref());
        };
        // A consumer counting deliveries itself would decide differently from one reading
        // receive_count only when the two counts differ and the budget matters.
        let budget_matters = count > max
            || matches!(&handled, Some(o) if !matches!(o, ScriptedOutcome::Ok | ScriptedOutcome::Crash));
        self.delivered(&id, count, budget_matters);
        let stopped = match &crashed {
            Some(call) => format!(" (the crash injected at {call} cuts it short)"),
            None => String::new(),
        };
        // A crash before a decision's first effect leaves the decision untold: it never
        // happened, and the crash line says what the crash prevented.
        let prevented = crashed
            .is_some()
            .then(|| {
                if put_or_retried {
                    return None;
                }
                match &handled {
                    _ if already_dead => (!acked).then(|| format!("the ack of {id} never happens")),
                    _ if count > max => Some(format!("the dead-lettering of {id} never happens")),
                    Some(ScriptedOutcome::Ok) => {
                        (!acked).then(|| format!("the ack of {id} never happens"))
                    }
                    Some(ScriptedOutcome::Crash) | None => None,
                    Some(outcome) if outcome.is_permanent() => {
                        Some(format!("the dead-lettering of {id} never happens"))
                    }
                    Some(_) if count < max => Some(format!("the retry of {id} never happens")),
                    Some(_) => Some(format!("the dead-lettering of {id} never happens")),
                }
            })
            .flatten();
        if already_dead {
            self.rule_line(
                &rules::CHECK_ORDER,
                "the DLQ check comes right after the receive, before the poison check and the handler",
            );
            self.recorder.hush(prevented.is_some());
            self.decision_line(
                &rules::NO_DOUBLE_DEAD_LETTER,
                format_args!("{id} is already in the DLQ: ack it and return dead, with no second put and no handler call{stopped}"),
            );
            self.recorder.hush(false);
        } else if count > max {
            self.rule_line(
                &rules::CHECK_ORDER,
                "the poison check comes after the DLQ check and before the handler",
            );
            // What brought it back past its budget, as this run shows it: a correct consumer
            // gets here only when the delivery at max_attempts died mid-handler.
            let before = match self.endings.get(&id) {
                _ if !self.recorder.telling() => String::new(),
                Some((n, Ending::Crashed)) => {
                    format!(" (its delivery at receive_count {n} died mid-handler)")
                }
                Some((n, Ending::Retried)) => {
                    format!(" (this implementation retried it at receive_count {n})")
                }
                Some((n, Ending::LeftInFlight)) => {
                    format!(" (this implementation left it in flight at receive_count {n})")
                }
                Some((n, _)) => format!(" (it came back after its delivery at receive_count {n})"),
                None => String::new(),
            };
            self.recorder.hush(prevented.is_some());
            self.decision_line(
                &rules::POISON,
                format_args!("receive_count {count} > max_attempts {max}: {id} is past its budget{before}, so it is dead-lettered as poison without calling the handler{stopped}"),
            );
            self.dead_letter_lines(&id, None);
            self.recorder.hush(false);
        } else {
            if count == max {
                // The edge of the poison rule: one more crash and the next delivery is poison.
                self.rule_line(
                    &rules::POISON,
                    format_args!("receive_count {count} = max_attempts {max}: not poison yet, the handler decides"),
                );
            }
            if let Some(outcome) = &handled {
                self.recorder.hush(prevented.is_some());
                self.handled_lines(&id, count, max, outcome, took, &stopped);
                self.recorder.hush(false);
            }
        }
        let injected = crashed.is_some();
        match (prevented, crashed) {
            (Some(what), Some(call)) => {
                // An ack before the crash took the message out of flight: never say it stayed.
                let left = if self.world.in_flight().contains(&id) {
                    format!("{id} stays in flight")
                } else {
                    format!("{id}, acked already, is no longer in flight")
                };
                self.decision_line(
                    &rules::CRASH_PROPAGATES,
                    format_args!("the crash injected at {call} propagates out of process_one: {what}, and {left}"),
                );
            }
            (_, crashed) => self.crash_line(crashed.as_deref()),
        }
        if let Some(did) = did {
            if !self.reference {
                let expected = if already_dead {
                    Some((Ending::Acked, &rules::NO_DOUBLE_DEAD_LETTER))
                } else if count > max {
                    Some((Ending::DeadLettered, &rules::POISON))
                } else {
                    expected_ending(&handled, count, max)
                };
                if let Some((ending, rule)) = expected {
                    let entry = (ending == Ending::DeadLettered)
                        .then(|| self.expected_entry(&id, count, rule, &handled, &did));
                    let wanted = Wanted { ending, entry };
                    if injected {
                        self.mark_cut_short(&id, rule, &did, &wanted);
                    } else {
                        self.mark_decision(&id, rule, &did, &wanted);
                    }
                }
            }
            self.endings.insert(id, (count, did.ending));
        }
    }

    /// The DLQ entry the contract pins for dead-lettering `id` under `rule` (poison, permanent
    /// or exhausted), its keys as the implementation's language spells them. The body is the
    /// one the message was received with, `failed_at` the clock when the implementation put
    /// its entry (or now, when it put none).
    pub(super) fn expected_entry(
        &self,
        id: &str,
        count: u64,
        rule: &Rule,
        handled: &Option<ScriptedOutcome>,
        did: &Did,
    ) -> Map<String, Value> {
        let (reason, error, attempts) = if rule.id == rules::POISON.id {
            ("poison", Value::Null, count.saturating_sub(1))
        } else {
            let error = handled.as_ref().and_then(ScriptedOutcome::entry_error);
            let reason = if rule.id == rules::PERMANENT.id {
                "permanent"
            } else {
                "exhausted"
            };
            (reason, json!(error), count)
        };
        let mut entry = Map::new();
        let mut field = |key: &str, value: Value| {
            entry.insert(self.naming.key(key).into_owned(), value);
        };
        field("id", json!(id));
        // Known in a detailed world, which is the only one explaining; an entry whose body is
        // not known is not judged by it.
        if let Some(body) = self.world.received_body(id) {
            field("body", json!(body));
        }
        field("reason", json!(reason));
        field("error", error);
        field("attempts", json!(attempts));
        field("first_attempt_at", json!(did.first_received_at));
        field("failed_at", json!(did.clock_at_put));
        entry
    }

    /// Marks a decision an injected crash cut short: nothing, when what the implementation
    /// did (and the call the crash stopped) is the start of what `rule` expects; `✗` when it
    /// is not, such as an ack before any put, which loses the message if the process dies
    /// between the two (`dead-letter-sequence`).
    pub(super) fn mark_cut_short(
        &mut self,
        id: &str,
        rule: &'static Rule,
        did: &Did,
        wanted: &Wanted,
    ) {
        let Some((call, timing, about)) = &did.crash else {
            return;
        };
        let stopped = (*timing == CrashTiming::Before
            && about.as_deref() == Some(id)
            && EFFECT_CALLS.contains(&call.as_str()))
        .then_some(call.as_str());
        let mut attempted: Vec<&str> = did.calls.clone();
        attempted.extend(stopped);
        let expected_calls: &[&str] = match wanted.ending {
            Ending::Acked => &["queue.ack"],
            Ending::Retried => &["queue.retry"],
            Ending::DeadLettered => &["dlq.put", "queue.ack"],
            _ => &[],
        };
        let entry_wrong = !wanted.entry_differences(did).is_empty();
        if expected_calls.starts_with(&attempted) && !entry_wrong {
            return;
        }
        let ack_first =
            wanted.ending == Ending::DeadLettered && attempted.first() == Some(&"queue.ack");
        let rule = if ack_first {
            &rules::DEAD_LETTER_SEQUENCE
        } else {
            rule
        };
        let mut done = did.shown(wanted);
        if let Some(call) = stopped {
            done.push(format!("{call}({id})"));
        }
        let mut text = done.join(", ");
        match stopped {
            Some(call) => text.push_str(&format!(
                ", and the crash injected before {call} stopped that call"
            )),
            None => text.push_str(&format!(
                ", then the crash injected {} {call} killed the process",
                timing.word()
            )),
        }
        if ack_first {
            let put = did.calls.contains(&"dlq.put");
            if did.calls.contains(&"queue.ack") && !put {
                text.push_str(&format!(": {id} is acked and never put, so it is lost"));
            } else {
                let any = if put { "" } else { "any " };
                text.push_str(&format!(
                    ": queue.ack({id}) came before {any}dlq.put({id}), which loses {id} if the process dies between the two"
                ));
            }
        }
        let expected = wanted.expected(id, did);
        self.recorder.tell_event(
            format!(
                "    \u{2717} decision {}: the implementation called {text}; expected: {expected}",
                rule.id
            ),
            TimelineEvent::Decision {
                did: format!("called {text}"),
                expected: Some(expected),
            },
        );
    }

    /// Tells what the implementation did at a decision: `✓` when it is what `rule` expects
    /// (`wanted`, the entry too when it dead-letters), `✗` with what was expected when it is
    /// not.
    pub(super) fn mark_decision(
        &mut self,
        id: &str,
        rule: &'static Rule,
        did: &Did,
        wanted: &Wanted,
    ) {
        let done = did.told(wanted);
        // A put with no ack after it, or an ack before it, is the dead-lettering out of order.
        let put = did.calls.contains(&"dlq.put");
        let out_of_order = wanted.ending == Ending::DeadLettered
            && put
            && (did.calls.first() == Some(&"queue.ack") || !did.calls.contains(&"queue.ack"));
        let rule = match out_of_order {
            true => &rules::DEAD_LETTER_SEQUENCE,
            false => rule,
        };
        if did.ending == wanted.ending && !out_of_order && wanted.entry_differences(did).is_empty()
        {
            self.recorder.tell_event(
                format!(
                    "    \u{2713} decision {}: the implementation did {done}",
                    rule.id
                ),
                TimelineEvent::Decision {
                    did: done,
                    expected: None,
                },
            );
        } else {
            let expected = wanted.expected(id, did);
            self.recorder.tell_event(
                format!(
                    "    \u{2717} decision {}: the implementation did {done}; expected: {expected}",
                    rule.id
                ),
                TimelineEvent::Decision {
                    did: done,
                    expected: Some(expected),
                },
            );
        }
    }

    /// The rules behind what follows a handler call that returned or raised `outcome`.
    pub(super) fn handled_lines(
        &mut self,
        id: &str,
        count: u64,
        max: u64,
        outcome: &ScriptedOutcome,
        took: Option<(u64, u64)>,
        stopped: &str,
    ) {
        match outcome {
            ScriptedOutcome::Ok => self.decision_line(
                &rules::SUCCESS,
                format_args!("the handler succeeded: ack {id} and return ok{stopped}"),
            ),
            ScriptedOutcome::Crash => self.decision_line(
                &rules::CRASH_PROPAGATES,
                format_args!("the crash propagates out of process_one and {id} stays in flight"),
            ),
            permanent if permanent.is_permanent() => {
                if let ScriptedOutcome::Permanent(GivenError {
                    subclass: Some(class),
                    ..
                }) = permanent
                {
                    self.rule_line(
                        &rules::PERMANENT,
                        format_args!("{class} is a subclass of PermanentError, so it is permanent, and the entry's error names {class}"),
                    );
                }
                self.decision_line(
                    &rules::PERMANENT,
                    format_args!("a PermanentError dead-letters {id} at once, reason permanent, whatever budget is left{stopped}"),
                );
                if count >= max {
                    self.rule_line(
                        &rules::EXHAUSTED,
                        format_args!("receive_count {count} = max_attempts {max}, but the error is permanent: the reason is permanent, not exhausted"),
                    );
                }
                self.dead_letter_lines(id, took);
            }
            transient => {
                match transient {
                    ScriptedOutcome::Transient(GivenError {
                        subclass: Some(class),
                        ..
                    }) => self.rule_line(
                        &rules::TRANSIENT_RETRY,
                        format_args!("{class} is a subclass of TransientError, so it is transient"),
                    ),
                    ScriptedOutcome::Transient(_) => {}
                    _ => {
                        let why = format!(
                            "{} is not a PermanentError, so it counts as transient",
                            transient.label()
                        );
                        self.rule_line(&rules::UNEXPECTED_ERROR, &why);
                    }
                }
                if count < max {
                    self.decision_line(
                        &rules::TRANSIENT_RETRY,
                        format_args!("receive_count {count} < max_attempts {max}: retry {id} to the ready tail{stopped}"),
                    );
                    if count + 1 == max {
                        self.rule_line(
                            &rules::EXHAUSTED,
                            format_args!("one attempt is left: not exhausted until receive_count reaches {max}"),
                        );
                    }
                } else {
                    self.decision_line(
                        &rules::EXHAUSTED,
                        format_args!("receive_count {count} = max_attempts {max}: the budget is spent, dead-letter {id} with reason exhausted{stopped}"),
                    );
                    self.dead_letter_lines(id, took);
                }
            }
        }
    }

    /// The rules of a dead-lettering; `took`, a handler call that took time, and the clock
    /// when it returned, which is what `failed_at` reads.
    pub(super) fn dead_letter_lines(&mut self, id: &str, took: Option<(u64, u64)>) {
        self.rule_line(
            &rules::DEAD_LETTER_SEQUENCE,
            format_args!("dead-lettering is dlq.put, then queue.ack({id}), then return dead"),
        );
        self.rule_line(
            &rules::ENTRY_FIELDS,
            "the entry holds id, body, reason, error \"Class: message\", attempts, first_attempt_at and failed_at",
        );
        if let Some((takes, now)) = took {
            self.rule_line(
                &rules::ENTRY_FIELDS,
                format_args!("the handler's call took {takes}: failed_at is the time of dead-lettering, after the call: the clock reads {now} when it returns"),
            );
        }
    }

    pub(super) fn crash_line(&mut self, crashed: Option<&str>) {
        if let Some(call) = crashed {
            self.decision_line(
                &rules::CRASH_PROPAGATES,
                format_args!("the crash injected at {call} propagates out of process_one"),
            );
        }
    }

    /// Notes who received `id`, and the rules that only a consumer instance new to the message
    /// can get wrong: counting from memory, a replayed message's fresh start, and acting only
    /// on what it received itself.
    pub(super) fn delivered(&mut self, id: &str, count: u64, budget_matters: bool) {
        let generation = self.generation;
        // Updated in place when known: a new key would cost a copy of the id at every delivery.
        let own = match self.received_by.get_mut(id) {
            Some(seen) => {
                let own = if seen.0 == generation { seen.1 + 1 } else { 1 };
                *seen = (generation, own);
                own
            }
            None => {
                self.received_by.insert(id.to_owned(), (generation, 1));
                1
            }
        };
        if budget_matters && own != count {
            // Over the budget the poison rule decides; within it, the count that differs does.
            if count <= self.scenario.budget() {
                self.recorder.decided_firmly(&rules::COUNT_FROM_QUEUE);
            }
            self.rule_line(
                &rules::COUNT_FROM_QUEUE,
                format_args!("this consumer has received {id} {own} time{} itself; the budget goes by the queue's receive_count {count}", if own == 1 { "" } else { "s" }),
            );
        }
        // Most runs replay nothing: an empty set is not worth hashing the id for.
        if !self.replayed.is_empty() && self.replayed.remove(id) {
            self.recorder.decided_firmly(&rules::REPLAY_FRESH_DELIVERY);
            self.rule_line(
                &rules::REPLAY_FRESH_DELIVERY,
                format_args!("{id} was replayed: its receive_count starts again at {count}"),
            );
        }
        // CaseVerdict once per instance, at its first delivery: is anything an earlier consumer
        // received still around for this one to wrongly ack or retry?
        // Each instance after a crash would scan the whole queue here: a scenario of many
        // crashes over a big queue would grow quadratically, so the scan runs only while it can
        // still tell something.
        let first_call = std::mem::take(&mut self.first_call);
        if first_call && generation > 1 && self.recorder.wants(&rules::NO_MISUSE) {
            let received_by = &self.received_by;
            let mut left: Vec<&str> = self
                .world
                .queued_ids()
                .filter(|id| received_by.get(*id).is_some_and(|(g, _)| *g < generation))
                .collect();
            if left.is_empty() {
                return;
            }
            // Which ones is only told: a run without a timeline notes the rule, and neither
            // sorts nor copies the ids of what may be most of the queue.
            let told = if self.recorder.telling() {
                left.sort_unstable();
                left.dedup();
                let left: Vec<String> = left.into_iter().map(str::to_owned).collect();
                listing::list(&left)
            } else {
                String::new()
            };
            self.rule_line(
                &rules::NO_MISUSE,
                format_args!("{told} came from an earlier consumer; this one acks or retries only what it received"),
            );
        }
    }
}
