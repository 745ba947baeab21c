//! What a broker dead-lettered by itself (`dead-letter=broker`), compared with the lesson's
//! DLQ: each difference a `BrokerDeparture` named by the broker's property, and both sides shown
//! the same way for a report's diff.
//!
//! The two are matched by message id, in order (an id dead-lettered twice is matched twice).
//! A matched pair still departs: the broker's entry is its `x-death` (a reason of its own, a
//! count, a queue, its wall-clock time), never the consumer's reason, error, attempts or
//! `failed_at`. What is told is deterministic: the broker's time and the slot of its queue
//! are left out, so the same run tells the same thing.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{
    ATOMIC_DEAD_LETTER, BrokerDeparture, DEAD_LETTER_ENTRY, DEAD_LETTERED_ON_RETURN,
    DELIVERY_LIMIT, NO_DELIVERY_LIMIT, NOT_DEAD_LETTERED, Property, REJECTED,
};
use crate::amqp::death::Death;
use crate::model::implementation::Naming;

/// One message the broker dead-lettered, as dlqspec read it back from the dead-letter queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeadLettered {
    pub(crate) id: String,
    /// Its latest death, as its `x-death` header tells it; `Err` says what in the header could
    /// not be read (or that it had none).
    pub(crate) death: Result<Death, String>,
}

/// What the comparison needs to know of the broker's queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Broker<'a> {
    /// How the implementation spells the entry's keys (`failed_at`, `failedAt`).
    pub(crate) naming: Naming,
    /// The queue's `x-delivery-limit`; `None` on a classic queue, which has none.
    pub(crate) limit: Option<u64>,
    /// The spec's queue, as the broker names it in `x-death` (`dlqspec.3.queue`)...
    pub(crate) queue: &'a str,
    /// ...and as it is shown (`dlqspec.N.queue`): the slot is the run's chance, not the spec's.
    pub(crate) queue_shown: &'a str,
    /// The ids still on the queue, ready or in flight.
    pub(crate) queued: &'a HashSet<&'a str>,
}

/// The lesson's reasons that count deliveries: the broker's count stands for them.
const COUNTED: &[&str] = &["exhausted", "poison"];

/// Each way the broker's dead letters part from the lesson's DLQ, in the DLQ's order, then the
/// broker's entries the DLQ has none for.
pub(crate) fn compare(
    lesson: &[Arc<Value>],
    broker: &[DeadLettered],
    on: Broker<'_>,
) -> Vec<BrokerDeparture> {
    let mut matched = vec![false; broker.len()];
    // Each id's dead letters, first first, so that matching costs one look-up an entry.
    let mut by_id: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (at, dead) in broker.iter().enumerate() {
        by_id.entry(dead.id.as_str()).or_default().push_back(at);
    }
    let mut departures = Vec::new();
    let mut depart = |property: &'static Property, detail: String| {
        departures.push(BrokerDeparture { property, detail });
    };
    for entry in lesson {
        let entry = Lesson::read(entry, on.naming);
        let twin = by_id
            .get_mut(entry.id.as_str())
            .and_then(VecDeque::pop_front);
        let Some(at) = twin else {
            if on.queued.contains(&entry.id.as_str()) {
                depart(
                    &ATOMIC_DEAD_LETTER,
                    format!(
                        "{}: the lesson's DLQ holds it ({}) while it is still on the queue, not yet acked",
                        entry.id,
                        entry.told()
                    ),
                );
            } else {
                depart(
                    &NOT_DEAD_LETTERED,
                    format!(
                        "{}: the lesson's DLQ holds it ({}); the broker's dead-letter queue does not",
                        entry.id,
                        entry.told()
                    ),
                );
            }
            continue;
        };
        matched[at] = true;
        let dead = &broker[at];
        let death = match &dead.death {
            Ok(death) => death,
            Err(why) => {
                depart(
                    &DEAD_LETTER_ENTRY,
                    format!(
                        "{}: the broker's entry has no x-death to read ({why})",
                        dead.id
                    ),
                );
                continue;
            }
        };
        let says = format!(
            "{}: x-death says {}, and no reason, error, attempts or failed_at, where the lesson's entry says {}",
            entry.id,
            told(death, on),
            entry.told()
        );
        let property = match death.reason.as_str() {
            "delivery_limit" => &DELIVERY_LIMIT,
            "rejected" if on.limit.is_none() && COUNTED.contains(&entry.reason.as_str()) => {
                &NO_DELIVERY_LIMIT
            }
            "rejected" => &REJECTED,
            _ => &DEAD_LETTER_ENTRY,
        };
        depart(property, says);
    }
    for (dead, _) in broker
        .iter()
        .zip(&matched)
        .filter(|(_, matched)| !**matched)
    {
        let (property, death) = match &dead.death {
            Ok(death) if death.reason == "delivery_limit" => {
                (&DEAD_LETTERED_ON_RETURN, told(death, on))
            }
            Ok(death) => (&DEAD_LETTER_ENTRY, told(death, on)),
            Err(why) => (&DEAD_LETTER_ENTRY, format!("no x-death to read ({why})")),
        };
        depart(
            property,
            format!(
                "{}: the broker dead-lettered it (x-death {death}); the lesson's DLQ holds no entry for it",
                dead.id
            ),
        );
    }
    departures
}

/// The lesson's DLQ and the broker's dead letters as YAML, for the two sides of a diff: the
/// entries' fields the lesson writes, and each dead letter's `x-death`.
pub(crate) fn shown(
    lesson: &[Arc<Value>],
    broker: &[DeadLettered],
    on: Broker<'_>,
) -> (String, String) {
    let entries: Vec<Value> = lesson
        .iter()
        .map(|entry| Lesson::read(entry, on.naming).shown())
        .collect();
    let dead: Vec<Value> = broker
        .iter()
        .map(|dead| {
            let death = match &dead.death {
                Ok(death) => json!({
                    "reason": death.reason,
                    "count": death.count,
                    "queue": queue_shown(&death.queue, on),
                }),
                Err(why) => json!(why),
            };
            json!({ "id": dead.id, "x-death": death })
        })
        .collect();
    let render = |list: Vec<Value>| crate::text::yaml::render(&json!({ "dlq": list }));
    (render(entries), render(dead))
}

/// `delivery_limit, count 1, from dlqspec.N.queue`.
fn told(death: &Death, on: Broker<'_>) -> String {
    format!(
        "{}, count {}, from {}",
        death.reason,
        death.count,
        queue_shown(&death.queue, on)
    )
}

fn queue_shown(queue: &str, on: Broker<'_>) -> String {
    if queue == on.queue {
        on.queue_shown.to_owned()
    } else {
        queue.to_owned()
    }
}

/// The fields of a lesson's entry the broker's could stand for, read as the implementation
/// spells them.
struct Lesson {
    id: String,
    reason: String,
    /// The rest, canonical keys, as written: `error`, `attempts`, `first_attempt_at`,
    /// `failed_at`.
    fields: Map<String, Value>,
}

/// The keys of an entry shown beside the broker's, in the lesson's order (`body` is the
/// message's, which the broker keeps too).
const SHOWN: &[&str] = &["error", "attempts", "first_attempt_at", "failed_at"];

impl Lesson {
    fn read(entry: &Value, naming: Naming) -> Lesson {
        let text = |key: &str| match entry.get(key) {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => "none".to_owned(),
        };
        let mut fields = Map::new();
        for key in SHOWN {
            if let Some(value) = entry.get(naming.key(key).as_ref()) {
                fields.insert((*key).to_owned(), value.clone());
            }
        }
        Lesson {
            id: text("id"),
            reason: text("reason"),
            fields,
        }
    }

    /// `reason exhausted, error "TransientError: timeout", attempts 3, failed_at 20`.
    fn told(&self) -> String {
        let mut parts = vec![format!("reason {}", self.reason)];
        for key in ["error", "attempts", "failed_at"] {
            if let Some(value) = self.fields.get(key) {
                parts.push(format!("{key} {value}"));
            }
        }
        parts.join(", ")
    }

    fn shown(self) -> Value {
        let mut shown = Map::new();
        shown.insert("id".to_owned(), json!(self.id));
        shown.insert("reason".to_owned(), json!(self.reason));
        shown.extend(self.fields);
        Value::Object(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUEUE: &str = "dlqspec.7.queue";

    fn on(limit: Option<u64>) -> Broker<'static> {
        static NONE: std::sync::LazyLock<HashSet<&'static str>> =
            std::sync::LazyLock::new(HashSet::new);
        Broker {
            naming: Naming::Snake,
            limit,
            queue: QUEUE,
            queue_shown: "dlqspec.N.queue",
            queued: &NONE,
        }
    }

    fn entry(id: &str, reason: &str) -> Arc<Value> {
        Arc::new(json!({
            "id": id, "body": "b", "reason": reason, "error": "TransientError: timeout",
            "attempts": 3, "first_attempt_at": 0, "failed_at": 20,
        }))
    }

    fn dead(id: &str, reason: &str) -> DeadLettered {
        DeadLettered {
            id: id.to_owned(),
            death: Ok(Death {
                reason: reason.to_owned(),
                count: 1,
                queue: QUEUE.to_owned(),
                time: Some(1_700_000_000),
                exchange: String::new(),
                routing_keys: vec![QUEUE.to_owned()],
            }),
        }
    }

    fn ids(departures: &[BrokerDeparture]) -> Vec<&'static str> {
        departures.iter().map(|d| d.property.id).collect()
    }

    #[test]
    fn an_exhausted_entry_the_broker_dead_lettered_by_its_count_lacks_the_consumers_metadata() {
        let departures = compare(
            &[entry("a", "exhausted")],
            &[dead("a", "delivery_limit")],
            on(Some(2)),
        );
        assert_eq!(ids(&departures), ["delivery-limit"]);
        assert_eq!(
            departures[0].detail,
            "a: x-death says delivery_limit, count 1, from dlqspec.N.queue, and no reason, error, attempts or failed_at, where the lesson's entry says reason exhausted, error \"TransientError: timeout\", attempts 3, failed_at 20"
        );
    }

    #[test]
    fn a_rejected_entry_is_the_brokers_only_word_for_a_permanent_error() {
        let departures = compare(
            &[entry("p", "permanent")],
            &[dead("p", "rejected")],
            on(Some(2)),
        );
        assert_eq!(ids(&departures), ["rejected"]);
        // On a classic queue a counted reason is a reject only because there is no limit.
        let classic = compare(
            &[entry("a", "exhausted"), entry("p", "permanent")],
            &[dead("a", "rejected"), dead("p", "rejected")],
            on(None),
        );
        assert_eq!(ids(&classic), ["no-delivery-limit", "rejected"]);
    }

    #[test]
    fn what_only_one_side_holds_is_named_by_which_side() {
        let departures = compare(
            &[entry("a", "exhausted"), entry("b", "permanent")],
            &[
                dead("p", "delivery_limit"),
                dead("a", "delivery_limit"),
                dead("q", "expired"),
            ],
            on(Some(2)),
        );
        assert_eq!(
            ids(&departures),
            [
                "delivery-limit",
                "not-dead-lettered",
                "dead-lettered-on-return",
                "dead-letter-entry"
            ]
        );
        assert!(
            departures[1]
                .detail
                .starts_with("b: the lesson's DLQ holds it (reason permanent")
        );
        assert_eq!(
            departures[2].detail,
            "p: the broker dead-lettered it (x-death delivery_limit, count 1, from dlqspec.N.queue); the lesson's DLQ holds no entry for it"
        );
    }

    #[test]
    fn an_entry_whose_message_is_still_on_the_queue_is_a_dead_lettering_not_finished() {
        let queued = HashSet::from(["a"]);
        let broker = Broker {
            queued: &queued,
            ..on(Some(2))
        };
        let departures = compare(&[entry("a", "permanent")], &[], broker);
        assert_eq!(ids(&departures), ["atomic-dead-letter"]);
        assert!(
            departures[0]
                .detail
                .ends_with("while it is still on the queue, not yet acked")
        );
    }

    #[test]
    fn an_id_dead_lettered_twice_is_matched_twice_and_an_unreadable_death_is_told() {
        let unreadable = DeadLettered {
            id: "a".to_owned(),
            death: Err("no x-death header".to_owned()),
        };
        let departures = compare(
            &[entry("a", "exhausted"), entry("a", "poison")],
            &[dead("a", "delivery_limit"), unreadable],
            on(Some(2)),
        );
        assert_eq!(ids(&departures), ["delivery-limit", "dead-letter-entry"]);
        assert!(departures[1].detail.contains("no x-death header"));
        assert!(compare(&[], &[], on(Some(2))).is_empty());
    }

    #[test]
    fn the_entries_keys_are_read_as_the_implementation_spells_them() {
        let js = Arc::new(json!({
            "id": "a", "reason": "exhausted", "error": "TransientError: t", "attempts": 3,
            "firstAttemptAt": 0, "failedAt": 9,
        }));
        let broker = Broker {
            naming: Naming::Camel,
            ..on(Some(2))
        };
        let departures = compare(
            std::slice::from_ref(&js),
            &[dead("a", "delivery_limit")],
            broker,
        );
        assert!(
            departures[0].detail.ends_with("attempts 3, failed_at 9"),
            "{departures:?}"
        );
        let (lesson, dead) = shown(&[js], &[dead("a", "delivery_limit")], broker);
        assert_eq!(
            lesson,
            "dlq:\n- id: a\n  reason: exhausted\n  error: \"TransientError: t\"\n  attempts: 3\n  first_attempt_at: 0\n  failed_at: 9\n"
        );
        assert_eq!(
            dead,
            "dlq:\n- id: a\n  x-death:\n    reason: delivery_limit\n    count: 1\n    queue: dlqspec.N.queue\n"
        );
    }
}
