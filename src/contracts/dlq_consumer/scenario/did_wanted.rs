//! What a dlq-consumer implementation did with a message in one step, against what the step's
//! rule wanted of it: the ending (ok, retry, dead), the effects in order, the entry put. The
//! narration words a wrong decision from the two.

use super::*;

/// How a delivery of a message ended, as the implementation left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    Acked,
    Retried,
    DeadLettered,
    /// The handler crashed the process, or an injected crash did.
    Crashed,
    /// Nothing was done with it: it stays in flight.
    LeftInFlight,
    /// Some other mix of effects (a put without an ack, a retry and an ack).
    Other,
}

impl Ending {
    /// What a rule expecting this ending wants done with `id`, as a trace writes it.
    pub(super) fn expected(self, id: &str) -> String {
        match self {
            Ending::Acked => format!("queue.ack({id})"),
            Ending::Retried => format!("queue.retry({id})"),
            Ending::DeadLettered => format!("dlq.put({id}), then queue.ack({id})"),
            Ending::Crashed => {
                format!("nothing more: the crash propagates and {id} stays in flight")
            }
            Ending::LeftInFlight | Ending::Other => format!("nothing: {id} stays in flight"),
        }
    }
}

/// The ending the deciding rule expects of a delivery the handler ran for, and that rule.
pub(super) fn expected_ending(
    handled: &Option<ScriptedOutcome>,
    count: u64,
    max: u64,
) -> Option<(Ending, &'static Rule)> {
    Some(match handled.as_ref()? {
        ScriptedOutcome::Ok => (Ending::Acked, &rules::SUCCESS),
        ScriptedOutcome::Crash => (Ending::Crashed, &rules::CRASH_PROPAGATES),
        permanent if permanent.is_permanent() => (Ending::DeadLettered, &rules::PERMANENT),
        _ if count < max => (Ending::Retried, &rules::TRANSIENT_RETRY),
        _ => (Ending::DeadLettered, &rules::EXHAUSTED),
    })
}

/// The effects a decision is made of, by their protocol names: what a crash can stop.
pub(super) const EFFECT_CALLS: [&str; 3] = ["queue.ack", "queue.retry", "dlq.put"];

/// What the deciding rule expects of a delivery: how it ends and, for a dead-lettering, the
/// entry the contract pins.
pub(super) struct Wanted {
    pub(super) ending: Ending,
    pub(super) entry: Option<Map<String, Value>>,
}

impl Wanted {
    /// The pinned fields the implementation's put got wrong: the key, the value pinned, and
    /// the value put (`None`: missing).
    pub(super) fn entry_differences<'w>(
        &'w self,
        did: &'w Did,
    ) -> Vec<(&'w str, &'w Value, Option<&'w Value>)> {
        let (Some(entry), Some(put)) = (&self.entry, &did.put) else {
            return Vec::new();
        };
        entry
            .iter()
            .filter_map(|(key, value)| {
                let put = put.get(key);
                (put != Some(value)).then_some((key.as_str(), value, put))
            })
            .collect()
    }

    /// What the rule wants done with `id`, as a trace writes it: a dead-lettering names its
    /// reason, and every other pinned field the implementation's put got wrong.
    pub(super) fn expected(&self, id: &str, did: &Did) -> String {
        let Some(entry) = self
            .entry
            .as_ref()
            .filter(|_| self.ending == Ending::DeadLettered)
        else {
            return self.ending.expected(id);
        };
        let mut fields: Vec<String> = entry
            .get("reason")
            .map(|reason| format!("reason={}", yaml::flow(reason)))
            .into_iter()
            .collect();
        for (key, value, _) in self.entry_differences(did) {
            if key != "reason" {
                fields.push(format!("{key}={}", cut_flow(value)));
            }
        }
        format!("dlq.put({id}, {}), then queue.ack({id})", fields.join(", "))
    }
}

/// What the implementation did with a message it received, from the world's journal.
pub(super) struct Did {
    pub(super) ending: Ending,
    /// Its effects on the message, as a trace writes them.
    pub(super) effects: Vec<String>,
    /// The same effects by their protocol names (`misuse` for a misuse).
    pub(super) calls: Vec<&'static str>,
    /// Which of `effects` is the first put, and the entry it put.
    pub(super) put_at: Option<usize>,
    pub(super) put: Option<Arc<Value>>,
    /// The delivery's `first_received_at`, and the clock when the entry was put (now, when
    /// none was): what the pinned entry's times are.
    pub(super) first_received_at: Option<u64>,
    pub(super) clock_at_put: u64,
    /// The injected crash that fired during the delivery: the call, when, and the id it named.
    pub(super) crash: Option<(String, CrashTiming, Option<String>)>,
}

impl Did {
    pub(super) fn of(
        happened: &[WorldEvent],
        id: &str,
        handled: &Option<ScriptedOutcome>,
        now: u64,
    ) -> Did {
        let mine: Vec<&WorldEvent> = happened
            .iter()
            .filter(|h| match h {
                WorldEvent::Acked { id: of }
                | WorldEvent::Retried { id: of }
                | WorldEvent::Put { id: of, .. } => of == id,
                WorldEvent::Misused { .. } => true,
                _ => false,
            })
            .collect();
        let effects: Vec<String> = mine.iter().map(|h| h.trace_line()).collect();
        let calls = mine
            .iter()
            .map(|h| match h {
                WorldEvent::Acked { .. } => "queue.ack",
                WorldEvent::Retried { .. } => "queue.retry",
                WorldEvent::Put { .. } => "dlq.put",
                _ => "misuse",
            })
            .collect();
        let has = |wanted: fn(&WorldEvent) -> bool| mine.iter().filter(|h| wanted(h)).count();
        let (acks, retries, puts) = (
            has(|h| matches!(h, WorldEvent::Acked { .. })),
            has(|h| matches!(h, WorldEvent::Retried { .. })),
            has(|h| matches!(h, WorldEvent::Put { .. })),
        );
        let crashed = matches!(handled, Some(ScriptedOutcome::Crash))
            || happened
                .iter()
                .any(|h| matches!(h, WorldEvent::Crashed { .. }));
        let ending = match (effects.len(), acks, retries, puts) {
            _ if crashed && effects.is_empty() => Ending::Crashed,
            (0, ..) => Ending::LeftInFlight,
            (1, 1, 0, 0) => Ending::Acked,
            (1, 0, 1, 0) => Ending::Retried,
            (2, 1, 0, 1) => Ending::DeadLettered,
            _ => Ending::Other,
        };
        let put_at = mine
            .iter()
            .position(|h| matches!(h, WorldEvent::Put { .. }));
        let put = put_at.and_then(|at| match mine[at] {
            WorldEvent::Put { entry, .. } => Some(Arc::clone(entry)),
            _ => None,
        });
        // The clock moves during a delivery only by the implementation's own advances and the
        // handler calls that take time: those after the put had not happened when it was made.
        let put_in_journal = happened
            .iter()
            .position(|h| matches!(h, WorldEvent::Put { id: of, .. } if of == id));
        let moved_since: u64 = put_in_journal.map_or(0, |at| {
            happened[at..]
                .iter()
                .map(|h| match h {
                    WorldEvent::Advanced { by, .. } | WorldEvent::Took { takes: by, .. } => *by,
                    _ => 0,
                })
                .sum()
        });
        let first_received_at = happened.iter().find_map(|h| match h {
            WorldEvent::Received {
                id: of,
                first_received_at,
                ..
            } if of == id => *first_received_at,
            _ => None,
        });
        let crash = happened.iter().find_map(|h| match h {
            WorldEvent::Crashed {
                call,
                timing,
                about,
            } => Some((call.clone(), *timing, about.clone())),
            _ => None,
        });
        Did {
            ending,
            effects,
            calls,
            put_at,
            put,
            first_received_at,
            clock_at_put: now.saturating_sub(moved_since),
            crash,
        }
    }

    /// Its effects as a trace writes them, the put with the pinned fields it got wrong.
    pub(super) fn shown(&self, wanted: &Wanted) -> Vec<String> {
        let mut shown = self.effects.clone();
        let wrong = wanted.entry_differences(self);
        if let (Some(at), false) = (self.put_at, wrong.is_empty()) {
            let fields: Vec<String> = wrong
                .iter()
                .map(|(key, _, put)| match put {
                    Some(value) => format!("{key}={}", cut_flow(value)),
                    None => format!("no {key}"),
                })
                .collect();
            let call = shown[at].strip_suffix(')').unwrap_or(&shown[at]).to_owned();
            shown[at] = format!("{call}, {})", fields.join(", "));
        }
        shown
    }

    /// Its effects, or what leaving the message alone means.
    pub(super) fn told(&self, wanted: &Wanted) -> String {
        match self.ending {
            Ending::Crashed => {
                "nothing more: the process crashed, the message stays in flight".to_owned()
            }
            Ending::LeftInFlight => "nothing with it: it stays in flight".to_owned(),
            _ => self.shown(wanted).join(", "),
        }
    }
}
