//! The world's queue on RabbitMQ: every call of the queue performed on a real queue, in order,
//! with the lesson's fake kept beside it to tell where the broker's answers part from it.
//!
//! `receive` is `basic.get` without auto-ack, `ack` is `basic.ack`, `retry` is `basic.nack`
//! with requeue, `recover` closes the channel holding the unacked deliveries so that the
//! broker itself brings them back. `receive_count` is the broker's: a quorum queue's
//! `x-delivery-count` + 1; a classic queue keeps none, only the `redelivered` flag (1 on a
//! first delivery, 2 on any later one). `first_received_at` no queue keeps: dlqspec fills
//! it in from its clock, as the fake does.
//!
//! The ready order, which `pending` (and a spec's `pending:`) reads, is seen the only way
//! AMQP lets one see it: every ready message is taken and put back (`basic.nack`, requeue),
//! which keeps the order on both queue types. The deliveries dlqspec makes for that are its
//! own: a quorum queue counts them in `x-delivery-count`, so dlqspec takes them off again.
//!
//! Names: every queue starts with `dlqspec.`. A world claims a slot, `dlqspec.N.lock`, an
//! exclusive queue that lives as long as its connection (a killed run's goes with it), and its
//! queue is `dlqspec.N.queue`, deleted when the spec ends; a killed run's is deleted by the
//! next world that claims the slot, and by `sweep` at the start of every run.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::Message;
use super::fake::FakeQueue;
use super::{
    BrokerDeparture, DELIVERY_COUNT, NO_DELIVERY_COUNT, ORDER, Property, Queue, RECOVER_AT_HEAD,
    REQUEUE_AT_HEAD,
};
use crate::amqp::wire::{Field, Properties, Table};
use crate::amqp::{Connection, Error, QueueFlags};
use crate::model::world::{QueueType, RabbitMq};

/// Every queue dlqspec declares starts with this.
pub(crate) const PREFIX: &str = "dlqspec.";

/// How many worlds may be on one broker at once: the slots a world claims one of.
pub(crate) const SLOTS: u32 = 64;

/// The header each message carries its copy number in, by which dlqspec knows it again.
const COPY_HEADER: &str = "x-dlqspec-copy";

/// How long the broker may take to answer any one call.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

/// A queue dlqspec left is deleted by the broker itself after this long unused, should no
/// later run of dlqspec come to delete it.
const EXPIRES_MS: i64 = 3_600_000;

fn lock_name(slot: u32) -> String {
    format!("{PREFIX}{slot}.lock")
}

fn queue_name(slot: u32) -> String {
    format!("{PREFIX}{slot}.queue")
}

/// How the broker failed, as a person reads it: the address (never the password), what
/// happened, and what to do.
pub(crate) fn describe(rabbit: &RabbitMq, error: &Error) -> String {
    let fix = match error {
        Error::Unreachable(_) => {
            "; is RabbitMQ running there? Start one with `rabbitmq-server -detached`"
        }
        Error::Closed { code: 403, .. } => "; check the user and password of --world",
        Error::Closed { code: 530, .. } => "; check the virtual host of --world",
        _ => "",
    };
    format!("the RabbitMQ broker at {}: {error}{fix}", rabbit.address)
}

/// Deletes the queues of every slot no world holds: those of a run that was killed.
pub(crate) fn sweep(rabbit: &RabbitMq) -> Result<(), String> {
    let fail = |error: Error| describe(rabbit, &error);
    let mut connection = Connection::open(&rabbit.address, TIMEOUT).map_err(fail)?;
    let mut channel = connection.open_channel().map_err(fail)?;
    for slot in 0..SLOTS {
        match claim(&mut connection, channel, slot) {
            // Not waited for: the channel performs them before its next claim, and its
            // close at the end waits for them all.
            Ok(()) => {
                connection
                    .delete_queue_nowait(channel, &queue_name(slot))
                    .and_then(|()| connection.delete_queue_nowait(channel, &lock_name(slot)))
                    .map_err(fail)?;
            }
            Err(error) if error.is_channel_error() => {
                channel = connection.open_channel().map_err(fail)?;
            }
            Err(error) => return Err(fail(error)),
        }
    }
    connection.close_channel(channel).map_err(fail)?;
    connection.close();
    Ok(())
}

/// Takes slot `slot` for this connection: its exclusive lock queue, which another
/// connection holding it refuses (405, and the channel is closed).
fn claim(connection: &mut Connection, channel: u16, slot: u32) -> Result<(), Error> {
    let classic = Table::default().with("x-queue-type", Field::text("classic"));
    let flags = QueueFlags {
        exclusive: true,
        ..QueueFlags::default()
    };
    connection
        .declare_queue(channel, &lock_name(slot), flags, &classic)
        .map(|_| ())
}

/// How a message came to be where it is in the ready queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placed {
    Sent,
    Retried,
    Recovered,
}

/// What dlqspec knows of one copy of a message on the broker.
#[derive(Debug)]
struct Copy {
    id: String,
    body: String,
    /// How many times dlqspec took it only to see the ready order.
    peeks: u64,
    /// Whether the implementation received it before.
    delivered: bool,
    first_received_at: Option<u64>,
    placed: Placed,
    /// Its delivery tag while it is in flight.
    tag: Option<u64>,
}

/// The world's queue on RabbitMQ.
pub(crate) struct RabbitQueue {
    rabbit: RabbitMq,
    connection: Option<Connection>,
    slot: u32,
    name: String,
    /// The channel deliveries are taken on.
    channel: u16,
    /// The lesson's queue, given the same calls: what the broker's answers are compared with.
    shadow: FakeQueue,
    copies: HashMap<u64, Copy>,
    fault: Option<String>,
    departures: Vec<BrokerDeparture>,
}

impl std::fmt::Debug for RabbitQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RabbitQueue({} at {})", self.name, self.rabbit.address)
    }
}

impl RabbitQueue {
    /// Connects, claims a slot, and declares a fresh queue of the world's type in it.
    pub(crate) fn open(rabbit: &RabbitMq) -> Result<RabbitQueue, String> {
        let fail = |error: Error| describe(rabbit, &error);
        let mut connection = Connection::open(&rabbit.address, TIMEOUT).map_err(fail)?;
        let mut channel = connection.open_channel().map_err(fail)?;
        let mut claimed = None;
        for slot in 0..SLOTS {
            match claim(&mut connection, channel, slot) {
                Ok(()) => {
                    claimed = Some(slot);
                    break;
                }
                Err(error) if error.is_channel_error() => {
                    channel = connection.open_channel().map_err(fail)?;
                }
                Err(error) => return Err(fail(error)),
            }
        }
        let slot = claimed.ok_or_else(|| {
            format!(
                "the RabbitMQ broker at {}: all {SLOTS} of dlqspec's slots are in use by other runs; run fewer at once",
                rabbit.address
            )
        })?;
        let name = queue_name(slot);
        let arguments = Table::default()
            .with("x-queue-type", Field::text(rabbit.queue_type.word()))
            .with("x-expires", Field::Int(EXPIRES_MS));
        let durable = QueueFlags {
            durable: true,
            ..QueueFlags::default()
        };
        connection
            .delete_queue(channel, &name)
            .and_then(|()| connection.declare_queue(channel, &name, durable, &arguments))
            .and_then(|_| connection.confirm_select(channel))
            .map_err(fail)?;
        Ok(RabbitQueue {
            rabbit: rabbit.clone(),
            connection: Some(connection),
            slot,
            name,
            channel,
            shadow: FakeQueue::default(),
            copies: HashMap::new(),
            fault: None,
            departures: Vec::new(),
        })
    }

    /// The connection, unless a fault broke it.
    fn live(&mut self) -> Option<&mut Connection> {
        if self.fault.is_some() {
            return None;
        }
        self.connection.as_mut()
    }

    /// Notes the first fault: from then on the queue does nothing, and the spec is not run.
    fn broke(&mut self, error: &Error) {
        if self.fault.is_none() {
            self.fault = Some(describe(&self.rabbit, error));
        }
    }

    fn depart(&mut self, property: &'static Property, detail: String) {
        self.departures.push(BrokerDeparture { property, detail });
    }

    fn id(&self, copy: u64) -> &str {
        self.copies.get(&copy).map_or("?", |c| c.id.as_str())
    }

    /// The property by which the broker put `copy` ahead of where the lesson's queue has it.
    fn moved_by(&self, copy: u64) -> &'static Property {
        match self.copies.get(&copy).map(|c| c.placed) {
            Some(Placed::Retried) => &REQUEUE_AT_HEAD,
            Some(Placed::Recovered) => &RECOVER_AT_HEAD,
            _ => &ORDER,
        }
    }

    /// The receive count the broker gives for a delivery of `copy`.
    fn broker_count(&self, copy: u64, headers: &Table) -> u64 {
        let facts = self.copies.get(&copy);
        match self.rabbit.queue_type {
            QueueType::Quorum => {
                let count = headers
                    .get("x-delivery-count")
                    .and_then(Field::as_int)
                    .and_then(|n| u64::try_from(n).ok())
                    .unwrap_or(0);
                (count + 1).saturating_sub(facts.map_or(0, |c| c.peeks))
            }
            QueueType::Classic => 1 + u64::from(facts.is_some_and(|c| c.delivered)),
        }
    }

    /// Takes every ready message and puts each back, in order: the ready copies, head first.
    fn look(&mut self) -> Option<Vec<u64>> {
        let (channel, most) = (self.channel, self.shadow.lengths().0 + 1);
        let name = self.name.clone();
        let connection = self.live()?;
        let mut taken = Vec::new();
        let mut looked = || -> Result<(), Error> {
            while taken.len() < most {
                match connection.get(channel, &name)? {
                    Some(delivery) => taken.push(delivery),
                    None => break,
                }
            }
            for delivery in &taken {
                connection.nack(channel, delivery.tag, true)?;
            }
            Ok(())
        };
        if let Err(error) = looked() {
            self.broke(&error);
            return None;
        }
        let mut order = Vec::with_capacity(taken.len());
        for delivery in &taken {
            let copy = copy_of(&delivery.properties);
            if let Some(facts) = copy.and_then(|copy| self.copies.get_mut(&copy)) {
                facts.peeks += 1;
            }
            order.push(copy.unwrap_or(0));
        }
        Some(order)
    }

    /// Waits until the broker has `ready` messages ready: a closed channel's deliveries go
    /// back after its close is answered (a quorum queue's a moment later).
    fn wait_ready(&mut self, ready: usize) {
        let (channel, name) = (self.channel, self.name.clone());
        let Some(connection) = self.live() else {
            return;
        };
        let started = Instant::now();
        let mut pause = Duration::from_micros(200);
        let passive = QueueFlags {
            passive: true,
            ..QueueFlags::default()
        };
        loop {
            match connection.declare_queue(channel, &name, passive, &Table::default()) {
                Ok(declared) if declared.messages as usize >= ready => return,
                Ok(_) if started.elapsed() < TIMEOUT => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Ok(declared) => {
                    let error = Error::Lost(format!(
                        "the queue holds {} ready messages {} s after the channel closed, where {ready} should be back",
                        declared.messages,
                        TIMEOUT.as_secs()
                    ));
                    self.broke(&error);
                    return;
                }
                Err(error) => {
                    self.broke(&error);
                    return;
                }
            }
        }
    }
}

/// The copy number a message carries.
fn copy_of(properties: &Properties) -> Option<u64> {
    properties
        .headers
        .get(COPY_HEADER)
        .and_then(Field::as_int)
        .and_then(|n| u64::try_from(n).ok())
}

impl Queue for RabbitQueue {
    fn send(&mut self, id: &str, body: &str) {
        let copy = self.shadow.send_copy(id, body);
        self.copies.insert(
            copy,
            Copy {
                id: id.to_owned(),
                body: body.to_owned(),
                peeks: 0,
                delivered: false,
                first_received_at: None,
                placed: Placed::Sent,
                tag: None,
            },
        );
        let (channel, name) = (self.channel, self.name.clone());
        let properties = Properties {
            // A message id is a short string: an id longer than 255 bytes travels in the
            // copy's record only.
            message_id: (id.len() <= 255).then(|| id.to_owned()),
            headers: Table::default().with(COPY_HEADER, Field::Int(copy as i64)),
            delivery_mode: Some(2),
        };
        let Some(connection) = self.live() else {
            return;
        };
        if let Err(error) = connection.publish(channel, "", &name, &properties, body.as_bytes()) {
            self.broke(&error);
        }
    }

    fn receive(&mut self, now: u64) -> Option<Message> {
        let (channel, name) = (self.channel, self.name.clone());
        let delivery = match self.live()?.get(channel, &name) {
            Ok(delivery) => delivery,
            Err(error) => {
                self.broke(&error);
                return None;
            }
        };
        let Some(delivery) = delivery else {
            if let Some(head) = self.shadow.head() {
                let id = self.id(head).to_owned();
                self.broke(&Error::Lost(format!(
                    "the queue handed out nothing where dlqspec sent {id} and has not taken it"
                )));
            }
            return None;
        };
        let Some(copy) = copy_of(&delivery.properties).filter(|c| self.copies.contains_key(c))
        else {
            self.broke(&Error::Malformed(format!(
                "queue {} handed out a message dlqspec did not send: is another program using it?",
                self.name
            )));
            return None;
        };
        let fake_head = self.shadow.head();
        let fake = self.shadow.receive_copy(copy, now);
        let id = self.id(copy).to_owned();
        if fake_head != Some(copy) {
            let instead = fake_head.map_or("nothing", |head| self.id(head)).to_owned();
            self.depart(
                self.moved_by(copy),
                format!(
                    "queue.receive() handed out {id}, where the lesson's queue hands out {instead}"
                ),
            );
        }
        let count = self.broker_count(copy, &delivery.properties.headers);
        let fake_count = fake.map_or(0, |message| message.receive_count);
        if count != fake_count {
            let property = match self.rabbit.queue_type {
                QueueType::Classic => &NO_DELIVERY_COUNT,
                QueueType::Quorum => &DELIVERY_COUNT,
            };
            self.depart(
                property,
                format!("{id} was handed out with receive_count {count}, where the lesson's queue counts {fake_count}"),
            );
        }
        let facts = self.copies.get_mut(&copy)?;
        facts.delivered = true;
        facts.tag = Some(delivery.tag);
        let first_received_at = *facts.first_received_at.get_or_insert(now);
        Some(Message {
            id,
            body: facts.body.clone(),
            receive_count: count,
            first_received_at: Some(first_received_at),
        })
    }

    fn settle(&mut self, id: &str, retry: bool) -> bool {
        let Some(copy) = self.shadow.settle_copy(id, retry) else {
            return false;
        };
        let channel = self.channel;
        let Some(facts) = self.copies.get_mut(&copy) else {
            return true;
        };
        let tag = facts.tag.take();
        if retry {
            facts.placed = Placed::Retried;
        }
        let (Some(tag), Some(connection)) = (tag, self.live()) else {
            return true;
        };
        let settled = if retry {
            connection.nack(channel, tag, true)
        } else {
            connection.ack(channel, tag)
        };
        if let Err(error) = settled {
            self.broke(&error);
        }
        true
    }

    fn recover(&mut self) {
        let moving = self.shadow.in_flight_copies();
        if moving.is_empty() {
            return;
        }
        let ready = self.shadow.lengths().0 + moving.len();
        self.shadow.recover();
        for copy in &moving {
            if let Some(facts) = self.copies.get_mut(copy) {
                facts.placed = Placed::Recovered;
                facts.tag = None;
            }
        }
        let channel = self.channel;
        let Some(connection) = self.live() else {
            return;
        };
        let reopened = connection
            .close_channel(channel)
            .and_then(|()| connection.open_channel())
            .and_then(|channel| connection.confirm_select(channel).map(|()| channel));
        match reopened {
            Ok(channel) => {
                self.channel = channel;
                self.wait_ready(ready);
            }
            Err(error) => self.broke(&error),
        }
    }

    fn pending(&mut self) -> Vec<String> {
        let fake = self.shadow.ready_copies();
        let Some(order) = self.look() else {
            return self.shadow.ready_ids();
        };
        if order != fake {
            let mut sorted = (order.clone(), fake.clone());
            sorted.0.sort_unstable();
            sorted.1.sort_unstable();
            if sorted.0 != sorted.1 {
                let error = Error::Lost(format!(
                    "queue {} holds {} ready messages where dlqspec counts {}",
                    self.name,
                    order.len(),
                    fake.len()
                ));
                self.broke(&error);
                return self.shadow.ready_ids();
            }
            let differs = order
                .iter()
                .zip(&fake)
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            let ids = |copies: &[u64]| {
                copies
                    .iter()
                    .map(|copy| self.id(*copy).to_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let detail = format!(
                "the ready queue is [{}], where the lesson's is [{}]",
                ids(&order),
                ids(&fake)
            );
            self.depart(self.moved_by(order[differs]), detail);
            self.shadow.reorder(&order);
        }
        self.shadow.ready_ids()
    }

    fn ready_ids(&self) -> Vec<String> {
        self.shadow.ready_ids()
    }

    fn lengths(&self) -> (usize, usize) {
        self.shadow.lengths()
    }

    fn in_flight(&self) -> Vec<String> {
        self.shadow.in_flight()
    }

    fn in_flight_with_body(&self, body: &str) -> Option<String> {
        self.shadow.in_flight_with_body(body)
    }

    fn queued_ids(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        self.shadow.queued_ids()
    }

    fn copy(&self) -> Option<Box<dyn Queue>> {
        None
    }

    fn is_fake(&self) -> bool {
        false
    }

    fn fault(&self) -> Option<String> {
        self.fault.clone()
    }

    fn departures(&self) -> Vec<BrokerDeparture> {
        self.departures.clone()
    }
}

impl Drop for RabbitQueue {
    /// The spec's queue is deleted, and the slot given back with the connection. After a
    /// fault nothing is tried: the next run's sweep deletes what is left.
    fn drop(&mut self) {
        let Some(mut connection) = self.connection.take() else {
            return;
        };
        if self.fault.is_some() {
            return;
        }
        let channel = self.channel;
        let deleted = connection
            .delete_queue(channel, &self.name)
            .and_then(|()| connection.delete_queue(channel, &lock_name(self.slot)));
        if deleted.is_ok() {
            connection.close();
        }
    }
}
