//! The world's queue, behind one trait: the lesson's fake (`fake.rs`) or a real broker's
//! queue (`rabbitmq.rs`), so the same world, journal and faults run on either.
//!
//! A broker's queue keeps a fake beside it and compares every answer: where the broker's
//! answer is not the fake's, it notes a `BrokerDeparture` naming the broker's property, which is
//! what tells a divergence from an implementation's failure.

pub(crate) mod fake;
pub(crate) mod rabbitmq;

use std::fmt;

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

/// One point where the broker's answer was not the fake's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BrokerDeparture {
    pub(crate) property: &'static Property,
    /// What the broker answered and what the fake would have, e.g. `queue.receive() handed
    /// out a (receive_count 2), where the lesson's queue hands out b`.
    pub(crate) detail: String,
}
