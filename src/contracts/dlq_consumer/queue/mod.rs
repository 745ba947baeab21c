//! The world's queue, behind one trait: the lesson's fake (`fake.rs`) or a real broker's
//! queue (`rabbitmq.rs`), so the same world, journal and faults run on either.
//!
//! A broker's queue keeps a fake beside it and compares every answer: where the broker's
//! answer is not the fake's, it notes a `BrokerDeparture` naming the broker's property, which is
//! what tells a divergence from an implementation's failure. A broker that dead-letters by
//! itself (`dead-letter=broker`) has what it dead-lettered compared with the lesson's DLQ the
//! same way (`dead_letters.rs`).
//!
//! A broker is one more queue behind the same world: `--world amqp://...` puts the queue on
//! RabbitMQ (`rabbitmq.rs`) and the world, its journal, faults, DLQ, clock and handler stay as
//! they are; every implementation still acts on dlqspec's world, never on the broker. A
//! *departure* is another message handed out, another count, another order. A spec that fails
//! after one is run on the fake, and passing there makes it a divergence
//! (`Outcome::Divergence`), the broker's and not the implementation's. A broker that breaks is
//! `Outcome::WorldFault`, which the runner turns into `not run` for that spec and every one after
//! it, exit 2. Foresight is off there: a broker's queue cannot be copied, nor looked at without
//! delivering its messages (docs/brokers.md). With `dead-letter=broker` the world tells the queue
//! which messages the consumer dead-letters (`Queue::dead_lettering`); the queue hands their acks
//! to the broker, reads back what it dead-letters (`x-death`) and compares it with the world's
//! DLQ where the spec reads it and at its end, each difference one more departure; a spec that
//! passes with one of those noted is a divergence too.

pub(crate) mod dead_letters;
pub(crate) mod fake;
pub(crate) mod rabbitmq;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::model::implementation::Naming;

/// A message as the queue hands it out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Message {
    pub(crate) id: String,
    pub(crate) body: String,
    pub(crate) receive_count: u64,
    pub(crate) first_received_at: Option<u64>,
}

impl Message {
    /// The message as the lesson of an implementation's language spells it: Python
    /// `receive_count`, JavaScript `receiveCount`.
    pub(crate) fn to_value(&self, naming: Naming) -> Value {
        let mut fields = serde_json::Map::with_capacity(4);
        fields.insert("id".to_owned(), json!(self.id));
        fields.insert("body".to_owned(), json!(self.body));
        fields.insert(
            naming.key("receive_count").into_owned(),
            json!(self.receive_count),
        );
        fields.insert(
            naming.key("first_received_at").into_owned(),
            json!(self.first_received_at),
        );
        Value::Object(fields)
    }
}

/// What the world needs of a queue. The harness's own actions (`send` at the start, `recover`
/// steps) and the implementation's calls go through the same methods, in order.
pub(crate) trait Queue: Send + fmt::Debug {
    /// Puts a message at the ready tail.
    fn send(&mut self, id: &str, body: &str);

    /// The message at the ready head, now in flight, with its receive count and first receive
    /// time (`now` when this is its first delivery); `None` when nothing is ready.
    fn receive(&mut self, now: u64) -> Option<Message>;

    /// Acks (`retry` false) or requeues (`retry` true) the first message in flight with id
    /// `id`; `false` when none is in flight.
    fn settle(&mut self, id: &str, retry: bool) -> bool;

    /// Every message in flight goes back to the ready queue (the visibility timeout ran out).
    fn recover(&mut self);

    /// The ready ids, head first. `&mut`: a broker's queue can only be seen by taking its
    /// messages and putting them back.
    fn pending(&mut self) -> Vec<String>;

    /// The ready ids, head first, as last seen, without looking again (the fake's are
    /// always as they are).
    fn ready_ids(&self) -> Vec<String>;

    /// How many messages are ready and in flight.
    fn lengths(&self) -> (usize, usize);

    /// The ids in flight, in the order they were received.
    fn in_flight(&self) -> Vec<String>;

    /// The id of the latest-received message in flight whose body is `body`.
    fn in_flight_with_body(&self, body: &str) -> Option<String>;

    /// Every id in flight or ready, in no order that means anything; an id sent twice is
    /// there twice.
    fn queued_ids(&self) -> Box<dyn Iterator<Item = &str> + '_>;

    /// A copy to ask what a call would answer (foresight); `None` for a broker's queue,
    /// which cannot be copied (nor asked without its messages being delivered).
    fn copy(&self) -> Option<Box<dyn Queue>>;

    /// Whether this is the lesson's fake: a spec is judged on it alone (what the reference
    /// cannot do on a broker is a divergence, never a broken spec).
    fn is_fake(&self) -> bool {
        true
    }

    /// What broke the broker under the queue, if it did: every call since has done nothing,
    /// and the spec is not run.
    fn fault(&self) -> Option<String> {
        None
    }

    /// Where the broker's answers were not the fake's, in order.
    fn departures(&self) -> Vec<BrokerDeparture> {
        Vec::new()
    }

    /// The consumer put an entry for `id` in the lesson's DLQ: the first message in flight
    /// with that id is being dead-lettered, and its ack (now, or after a crash and a
    /// redelivery) ends that. `transient`: whether the handler failed transiently on the
    /// delivery at hand. A broker that dead-letters by itself is handed the message at that
    /// ack instead; the fake has nothing to do.
    fn dead_lettering(&mut self, _id: &str, _transient: bool) {}

    /// Whether the broker under the queue dead-letters by itself (`dead-letter=broker`): the
    /// world then tells it which messages are being dead-lettered (`dead_lettering`).
    fn dead_letters_by_itself(&self) -> bool {
        false
    }

    /// The lesson's DLQ no longer holds `id` (`dlq.remove`, as a replay does): what the broker
    /// dead-lettered is read as if the same entry had been taken from it.
    fn forget_dead_letter(&mut self, _id: &str) {}

    /// Compares what the broker dead-lettered so far with the lesson's DLQ, `entries` (keys as
    /// `naming` spells them), noting each difference as a departure once; `fresh_only`: only
    /// if the broker dead-lettered something since the last comparison.
    fn compare_dead_letters(
        &mut self,
        _entries: &[Arc<Value>],
        _naming: Naming,
        _fresh_only: bool,
    ) {
    }

    /// The lesson's DLQ, `entries`, and what the broker dead-lettered, as YAML, for the two
    /// sides of a report's diff, as they were when they first parted (else as they are);
    /// `None` when the broker does not dead-letter by itself.
    fn dead_letters_shown(
        &self,
        _entries: &[Arc<Value>],
        _naming: Naming,
    ) -> Option<(String, String)> {
        None
    }
}

impl Default for Box<dyn Queue> {
    fn default() -> Self {
        Box::new(fake::FakeQueue::default())
    }
}

/// A way a broker's queue behaves that the lesson's fake does not, by which a spec that
/// passes on the fake can fail on the broker.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Property {
    /// Stable, for reports and scripts: `requeue-at-head`.
    pub(crate) id: &'static str,
    /// What the broker does, in a few words.
    pub(crate) says: &'static str,
    /// What it means for a consumer written to the lesson.
    pub(crate) means: &'static str,
}

/// `basic.nack` with requeue puts the message back at the head (classic queues).
pub(crate) const REQUEUE_AT_HEAD: Property = Property {
    id: "requeue-at-head",
    says: "a message requeued by basic.nack goes back to the head of the queue, not behind the messages waiting",
    means: "a retried message is delivered again at once, ahead of the rest: one failing message blocks those behind it (head-of-line blocking), where the lesson's retry sends it to the tail",
};

/// A closed channel's deliveries come back at the head (quorum and classic queues).
pub(crate) const RECOVER_AT_HEAD: Property = Property {
    id: "recover-at-head",
    says: "the unacked deliveries of a closed channel come back at the head of the queue, not at its tail",
    means: "after a crash the messages in flight are delivered again first, where the lesson's recover puts them behind the messages waiting",
};

/// No delivery count, only a `redelivered` flag (classic queues).
pub(crate) const NO_DELIVERY_COUNT: Property = Property {
    id: "no-delivery-count",
    says: "no delivery count: only the redelivered flag, so receive_count is 1 on a first delivery and 2 on every later one",
    means: "a consumer counting attempts from receive_count never sees it pass 2: the attempt budget and the poison check need a count the queue does not keep (a quorum queue's x-delivery-count, or a count of the consumer's own)",
};

/// A delivery count other than the lesson's.
pub(crate) const DELIVERY_COUNT: Property = Property {
    id: "delivery-count",
    says: "a delivery count that is not the number of deliveries the lesson's queue counts",
    means: "attempts counted from receive_count differ from the lesson's",
};

/// Any other order the broker hands messages out in.
pub(crate) const ORDER: Property = Property {
    id: "delivery-order",
    says: "messages handed out in another order than the lesson's queue",
    means: "a consumer that relies on the lesson's order of delivery sees another",
};

/// A message whose delivery count passed `x-delivery-limit`, dead-lettered by the broker.
pub(crate) const DELIVERY_LIMIT: Property = Property {
    id: "delivery-limit",
    says: "the broker dead-letters a message by its own count, once the count passes x-delivery-limit (max_attempts - 1): its x-death holds reason delivery_limit, a count, the queue and the broker's time, none of the entry's reason, error, attempts or failed_at",
    means: "a consumer that leaves dead-lettering to the broker keeps no record of why: the error, the attempts and the spec's failed_at are the consumer's alone to write (in headers it republishes with, or in a DLQ of its own)",
};

/// A message the consumer rejected without requeue, dead-lettered by the broker.
pub(crate) const REJECTED: Property = Property {
    id: "rejected",
    says: "the broker knows no permanent error: it dead-letters what the consumer rejects without requeue (basic.nack, requeue false), reason rejected, with no error",
    means: "a permanent failure reaches the broker's dead-letter queue only if the consumer rejects it, and as rejected: permanent, exhausted and poison are the lesson's reasons, not the broker's",
};

/// A message dead-lettered when it came back (a nack, a closed channel), not handed out again.
pub(crate) const DEAD_LETTERED_ON_RETURN: Property = Property {
    id: "dead-lettered-on-return",
    says: "a message whose delivery count passes x-delivery-limit is dead-lettered as it comes back to the queue (a nack with requeue, a closed channel), not delivered again",
    means: "a message that died in the handler max_attempts times never reaches the consumer's poison check: the broker dead-letters it at the recover, as delivery_limit, and the lesson's poison entry is never written",
};

/// A classic queue has no delivery limit.
pub(crate) const NO_DELIVERY_LIMIT: Property = Property {
    id: "no-delivery-limit",
    says: "a classic queue has no delivery limit (it refuses x-delivery-limit): the broker dead-letters only what the consumer rejects",
    means: "on a classic queue the attempt budget is the consumer's to keep: what the lesson dead-letters as exhausted or poison reaches the broker's dead-letter queue only as a reject, and a consumer that leaves it to the broker has it redelivered for ever",
};

/// An entry of the lesson's DLQ whose message is still on the queue.
pub(crate) const ATOMIC_DEAD_LETTER: Property = Property {
    id: "atomic-dead-letter",
    says: "the broker moves a message to its dead-letter queue in one step, as it settles it: a message is never on the queue and in the dead-letter queue at once",
    means: "the lesson's put-then-ack can stop between the two, leaving the entry in the DLQ and the message in flight, which the consumer's check of the DLQ before the handler is for; with the broker dead-lettering there is no such state, and that check has nothing to find",
};

/// An entry of the lesson's DLQ the broker did not dead-letter.
pub(crate) const NOT_DEAD_LETTERED: Property = Property {
    id: "not-dead-lettered",
    says: "the broker did not dead-letter a message the lesson's DLQ holds: the consumer acked it without handing it to the broker",
    means: "what a consumer puts in a DLQ of its own and acks, the broker never sees: its dead-letter queue holds only what the consumer returns or rejects",
};

/// Anything else the broker's dead-letter queue holds.
pub(crate) const DEAD_LETTER_ENTRY: Property = Property {
    id: "dead-letter-entry",
    says: "the broker's dead-letter queue holds an entry the lesson's DLQ does not, or one of another reason than delivery_limit or rejected",
    means: "the broker's dead-lettering parts from the lesson's in a way the other properties do not name",
};

/// The properties of a broker's own dead-lettering (`dead-letter=broker`): a spec that passes
/// with one of them noted still diverges, for its DLQ is not what the broker would hold.
pub(crate) const DEAD_LETTER_PROPERTIES: &[&Property] = &[
    &DELIVERY_LIMIT,
    &REJECTED,
    &DEAD_LETTERED_ON_RETURN,
    &NO_DELIVERY_LIMIT,
    &ATOMIC_DEAD_LETTER,
    &NOT_DEAD_LETTERED,
    &DEAD_LETTER_ENTRY,
];

impl Property {
    /// Whether this is a property of the broker's own dead-lettering.
    pub(crate) fn is_dead_letter(&self) -> bool {
        DEAD_LETTER_PROPERTIES.contains(&self)
    }
}

/// One point where the broker's answer was not the fake's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BrokerDeparture {
    pub(crate) property: &'static Property,
    /// What the broker answered and what the fake would have, e.g. `queue.receive() handed
    /// out a (receive_count 2), where the lesson's queue hands out b`.
    pub(crate) detail: String,
}
