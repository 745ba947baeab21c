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
//! With `dead-letter=broker` the broker dead-letters too: the queue is declared with the
//! default exchange for its dead-letter exchange, routing to `dlqspec.N.dead`, and (quorum)
//! `x-delivery-limit` max_attempts - 1, so that the broker delivers a message at most
//! max_attempts times (RabbitMQ 3.10, measured: a message is dead-lettered as it comes back,
//! once its delivery count passes the limit). An ack that ends the consumer's dead-lettering
//! is handed to the broker instead: a `basic.nack` with requeue after a transient failure
//! whose return passes the limit (the broker's own count decides), a reject without requeue
//! otherwise. The broker dead-letters asynchronously: after each return dlqspec waits until
//! the dead-letter queue holds what the broker is due to dead-letter, reads it back (acked,
//! with its `x-death`) and keeps it beside the lesson's DLQ (`dead_letters.rs`). The ready
//! order is not looked at in this mode: a look is a delivery, which the broker counts against
//! the limit; where the broker's order parts from the lesson's, the next receive shows it.
//!
//! Names: every queue starts with `dlqspec.`. A world claims a slot, `dlqspec.N.lock`, an
//! exclusive queue that lives as long as its connection (a killed run's goes with it), and its
//! queues are `dlqspec.N.queue` and (dead-letter=broker) `dlqspec.N.dead`, deleted when the
//! spec ends; a killed run's are deleted by the next world that claims the slot, and by
//! `sweep` at the start of every run.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Message;
use super::dead_letters::{self, DeadLettered};
use super::fake::FakeQueue;
use super::{
    BrokerDeparture, DEAD_LETTERED_ON_RETURN, DELIVERY_COUNT, NO_DELIVERY_COUNT, ORDER, Property,
    Queue, RECOVER_AT_HEAD, REQUEUE_AT_HEAD,
};
use crate::amqp::death;
use crate::amqp::wire::{Field, Properties, Table};
use crate::amqp::{Connection, Error, QueueFlags};
use crate::model::implementation::Naming;
use crate::model::world::{DeadLettering, QueueType, RabbitMq};

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

/// The queue the broker dead-letters a slot's queue to (`dead-letter=broker`).
fn dead_name(slot: u32) -> String {
    format!("{PREFIX}{slot}.dead")
}

/// A slot's queue as reports show it: which slot a spec got is the run's chance.
const QUEUE_SHOWN: &str = "dlqspec.N.queue";

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
                    .and_then(|()| connection.delete_queue_nowait(channel, &dead_name(slot)))
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
    /// The broker's `x-delivery-count` at its last delivery (a quorum queue's; 0 on a
    /// classic queue, which keeps none): a return makes it one more.
    delivery_count: u64,
    /// Whether the consumer is dead-lettering it (an entry put while it was in flight), and
    /// if so whether the handler failed transiently: its ack is then handed to the broker.
    dead_lettering: Option<bool>,
}

/// What the broker dead-letters by itself, and how (`dead-letter=broker`).
#[derive(Debug)]
struct DeadLetterQueue {
    name: String,
    /// The main queue's `x-delivery-limit`; `None` on a classic queue, which has none.
    limit: Option<u64>,
    /// How many messages the broker is to dead-letter that have not been read back yet.
    due: usize,
    /// What it dead-lettered, read back, in order; an entry the lesson's DLQ removes is
    /// taken out here too.
    entries: Vec<DeadLettered>,
    /// Whether it dead-lettered something since the last comparison with the lesson's DLQ.
    fresh: bool,
    /// The lesson's DLQ and these entries, shown, as they were when they first parted.
    first_parted: Option<(String, String)>,
    /// Each difference from the lesson's DLQ noted so far, by property and detail: a DLQ read
    /// twice tells each once.
    noted: HashSet<(&'static str, String)>,
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
    /// Where the broker dead-letters too (`dead-letter=broker`).
    dead: Option<DeadLetterQueue>,
}

impl std::fmt::Debug for RabbitQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RabbitQueue({} at {})", self.name, self.rabbit.address)
    }
}

impl RabbitQueue {
    /// Connects, claims a slot, and declares a fresh queue of the world's type in it; with
    /// `dead-letter=broker`, its dead-letter queue too, for a consumer of `max_attempts`.
    pub(crate) fn open(rabbit: &RabbitMq, max_attempts: u64) -> Result<RabbitQueue, String> {
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
        let mut arguments = Table::default()
            .with("x-queue-type", Field::text(rabbit.queue_type.word()))
            .with("x-expires", Field::Int(EXPIRES_MS));
        let dead = match rabbit.dead_letter {
            DeadLettering::Consumer => None,
            DeadLettering::Broker => {
                // A classic queue refuses x-delivery-limit (406, measured on 3.10).
                let limit = match rabbit.queue_type {
                    QueueType::Quorum => Some(max_attempts.saturating_sub(1)),
                    QueueType::Classic => None,
                };
                arguments = arguments
                    .with("x-dead-letter-exchange", Field::text(""))
                    .with("x-dead-letter-routing-key", Field::text(&dead_name(slot)));
                if let Some(limit) = limit {
                    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
                    arguments = arguments.with("x-delivery-limit", Field::Int(limit));
                }
                Some(DeadLetterQueue {
                    name: dead_name(slot),
                    limit,
                    due: 0,
                    entries: Vec::new(),
                    fresh: false,
                    first_parted: None,
                    noted: HashSet::new(),
                })
            }
        };
        let durable = QueueFlags {
            durable: true,
            ..QueueFlags::default()
        };
        let expiring = Table::default()
            .with("x-queue-type", Field::text("classic"))
            .with("x-expires", Field::Int(EXPIRES_MS));
        connection
            .delete_queue(channel, &name)
            // What a killed run of either mode left; not waited for, as in `sweep`.
            .and_then(|()| connection.delete_queue_nowait(channel, &dead_name(slot)))
            .and_then(|()| match &dead {
                Some(dead) => connection
                    .declare_queue(channel, &dead.name, durable, &expiring)
                    .map(|_| ()),
                None => Ok(()),
            })
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
            dead,
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
        let name = self.name.clone();
        self.wait_for(&name, ready, |held| {
            format!(
                "the queue holds {held} ready messages {} s after the channel closed, where {ready} should be back",
                TIMEOUT.as_secs()
            )
        });
    }

    /// Waits until queue `name` holds `ready` messages ready; `late` says what the broker
    /// failed to do when it does not within `TIMEOUT`.
    fn wait_for(&mut self, name: &str, ready: usize, late: impl Fn(u32) -> String) {
        let channel = self.channel;
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
            match connection.declare_queue(channel, name, passive, &Table::default()) {
                Ok(declared) if declared.messages as usize >= ready => return,
                Ok(_) if started.elapsed() < TIMEOUT => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Ok(declared) => {
                    let error = Error::Lost(late(declared.messages));
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

/// How a message in flight is settled on the broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settle {
    /// `basic.ack`.
    Ack,
    /// `basic.nack` with requeue: back to the queue (or, past a delivery limit, dead-lettered).
    Requeue,
    /// `basic.nack` without requeue: dead-lettered, reason rejected.
    Reject,
}

impl Settle {
    /// How the consumer's ack (`retry` false) or retry of a message is performed on the
    /// broker, and whether the broker then dead-letters it. `dead_lettering`: whether the
    /// consumer put an entry for it (and if so whether the handler failed transiently);
    /// `passes_limit`: whether a return now passes the delivery limit. The ack that ends the
    /// consumer's dead-lettering is handed to the broker: a consumer that leaves the count to
    /// the broker returns every transient failure, which the broker dead-letters once its
    /// count passes the limit; anything else it rejects, which the broker dead-letters at once.
    fn of(retry: bool, dead_lettering: Option<bool>, passes_limit: bool) -> (Settle, bool) {
        match (retry, dead_lettering) {
            (true, _) => (Settle::Requeue, passes_limit),
            (false, None) => (Settle::Ack, false),
            (false, Some(true)) if passes_limit => (Settle::Requeue, true),
            (false, Some(_)) => (Settle::Reject, true),
        }
    }
}

impl RabbitQueue {
    /// Settles `copy`, settled in the fake already, on the broker; always `true` (the fake
    /// found it in flight).
    fn settle_copy(&mut self, copy: u64, how: Settle) -> bool {
        let channel = self.channel;
        let Some(facts) = self.copies.get_mut(&copy) else {
            return true;
        };
        let tag = facts.tag.take();
        if how == Settle::Requeue {
            facts.placed = Placed::Retried;
        }
        let (Some(tag), Some(connection)) = (tag, self.live()) else {
            return true;
        };
        let settled = match how {
            Settle::Ack => connection.ack(channel, tag),
            Settle::Requeue => connection.nack(channel, tag, true),
            Settle::Reject => connection.nack(channel, tag, false),
        };
        if let Err(error) = settled {
            self.broke(&error);
        }
        true
    }

    /// What the comparison with the lesson's DLQ needs to know of this queue.
    fn on<'a>(&'a self, naming: Naming, queued: &'a HashSet<&'a str>) -> dead_letters::Broker<'a> {
        dead_letters::Broker {
            naming,
            limit: self.dead.as_ref().and_then(|dead| dead.limit),
            queue: &self.name,
            queue_shown: QUEUE_SHOWN,
            queued,
        }
    }

    /// Whether a return of `copy` now (a nack with requeue, a closed channel) makes the broker
    /// dead-letter it: its delivery count, one more, passes the limit.
    fn passes_limit(&self, copy: u64) -> bool {
        let limit = self.dead.as_ref().and_then(|dead| dead.limit);
        let count = self.copies.get(&copy).map_or(0, |c| c.delivery_count);
        limit.is_some_and(|limit| count + 1 > limit)
    }

    /// Counts `n` more messages the broker is to dead-letter.
    fn due(&mut self, n: usize) {
        if let Some(dead) = &mut self.dead {
            dead.due += n;
        }
    }

    /// Waits until the broker has dead-lettered what it is due to, and reads it back.
    fn sync_dead_letters(&mut self) {
        let Some((name, due)) = self
            .dead
            .as_ref()
            .filter(|dead| dead.due > 0)
            .map(|dead| (dead.name.clone(), dead.due))
        else {
            return;
        };
        self.wait_for(&name, due, |held| {
            format!(
                "the dead-letter queue holds {held} messages {} s after dlqspec handed the broker {due} to dead-letter",
                TIMEOUT.as_secs()
            )
        });
        self.read_dead_letters();
    }

    /// Takes every message the dead-letter queue holds (acked: dlqspec keeps them), each with
    /// its `x-death`. One that the lesson's queue still has ready was dead-lettered as it came
    /// back, where the lesson's queue hands it out again: it leaves the fake too.
    fn read_dead_letters(&mut self) {
        let Some(name) = self.dead.as_ref().map(|dead| dead.name.clone()) else {
            return;
        };
        let channel = self.channel;
        // No more can come than dlqspec sent: a broker that hands out more is not believed.
        for _ in 0..=self.copies.len() {
            let Some(connection) = self.live() else {
                return;
            };
            let taken = connection.get(channel, &name).and_then(|delivery| {
                let Some(delivery) = delivery else {
                    return Ok(None);
                };
                connection.ack(channel, delivery.tag)?;
                Ok(Some(delivery))
            });
            let delivery = match taken {
                Ok(Some(delivery)) => delivery,
                Ok(None) => return,
                Err(error) => {
                    self.broke(&error);
                    return;
                }
            };
            let Some(copy) = copy_of(&delivery.properties).filter(|c| self.copies.contains_key(c))
            else {
                self.broke(&Error::Malformed(format!(
                    "queue {name} holds a message dlqspec did not send: is another program using it?"
                )));
                return;
            };
            let death = death::deaths(&delivery.properties.headers).and_then(|deaths| {
                deaths
                    .into_iter()
                    .next()
                    .ok_or_else(|| "no x-death header".to_owned())
            });
            let id = self.id(copy).to_owned();
            if self.shadow.remove_ready(copy) {
                let count = self.copies.get(&copy).map_or(0, |c| c.delivery_count + 1);
                let limit = self.dead.as_ref().and_then(|dead| dead.limit).unwrap_or(0);
                let reason = death.as_ref().map_or("no x-death", |d| d.reason.as_str());
                self.depart(
                    &DEAD_LETTERED_ON_RETURN,
                    format!(
                        "the broker dead-lettered {id} as it came back (x-death {reason}, its delivery count {count} past the limit {limit}), where the lesson's queue hands it out again"
                    ),
                );
            }
            if let Some(dead) = &mut self.dead {
                dead.due = dead.due.saturating_sub(1);
                dead.fresh = true;
                dead.entries.push(DeadLettered { id, death });
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
                delivery_count: 0,
                dead_lettering: None,
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
        let delivery_count = delivery
            .properties
            .headers
            .get("x-delivery-count")
            .and_then(Field::as_int)
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0);
        let facts = self.copies.get_mut(&copy)?;
        facts.delivered = true;
        facts.tag = Some(delivery.tag);
        facts.delivery_count = delivery_count;
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
        let dead_lettering = self.copies.get(&copy).and_then(|c| c.dead_lettering);
        let (how, dying) = Settle::of(retry, dead_lettering, self.passes_limit(copy));
        if dying {
            self.due(1);
        }
        let settled = self.settle_copy(copy, how);
        if how != Settle::Ack {
            self.sync_dead_letters();
        }
        settled
    }

    fn dead_lettering(&mut self, id: &str, transient: bool) {
        if self.dead.is_none() {
            return;
        }
        let Some(copy) = self.shadow.in_flight_copy(id) else {
            return;
        };
        if let Some(facts) = self.copies.get_mut(&copy) {
            facts.dead_lettering = Some(transient);
        }
    }

    fn dead_letters_by_itself(&self) -> bool {
        self.dead.is_some()
    }

    fn forget_dead_letter(&mut self, id: &str) {
        if let Some(dead) = &mut self.dead {
            dead.entries.retain(|entry| entry.id != id);
        }
    }

    fn compare_dead_letters(&mut self, entries: &[Arc<Value>], naming: Naming, fresh_only: bool) {
        if !fresh_only {
            // What the broker dead-lettered beyond what it was due to (none, on 3.10).
            self.read_dead_letters();
        }
        let Some(dead) = &self.dead else {
            return;
        };
        if fresh_only && !dead.fresh {
            return;
        }
        let queued: HashSet<&str> = self.shadow.queued_ids().collect();
        let on = self.on(naming, &queued);
        let found = dead_letters::compare(entries, &dead.entries, on);
        let mut parted = None;
        let mut noted = Vec::new();
        for departure in found {
            if !dead
                .noted
                .contains(&(departure.property.id, departure.detail.clone()))
            {
                // The two as they are when they first part: a replay may empty both later.
                if dead.first_parted.is_none() && parted.is_none() {
                    parted = Some(dead_letters::shown(entries, &dead.entries, on));
                }
                noted.push(departure);
            }
        }
        let Some(dead) = &mut self.dead else {
            return;
        };
        dead.fresh = false;
        if parted.is_some() {
            dead.first_parted = parted;
        }
        for departure in noted {
            dead.noted
                .insert((departure.property.id, departure.detail.clone()));
            self.departures.push(departure);
        }
    }

    fn dead_letters_shown(
        &self,
        entries: &[Arc<Value>],
        naming: Naming,
    ) -> Option<(String, String)> {
        let dead = self.dead.as_ref()?;
        let now = || dead_letters::shown(entries, &dead.entries, self.on(naming, &HashSet::new()));
        Some(dead.first_parted.clone().unwrap_or_else(now))
    }

    fn recover(&mut self) {
        let moving = self.shadow.in_flight_copies();
        if moving.is_empty() {
            return;
        }
        // Those whose count the return passes the limit of go to the dead-letter queue instead.
        let dying = moving
            .iter()
            .filter(|copy| self.passes_limit(**copy))
            .count();
        self.due(dying);
        let ready = self.shadow.lengths().0 + moving.len() - dying;
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
                self.sync_dead_letters();
            }
            Err(error) => self.broke(&error),
        }
    }

    fn pending(&mut self) -> Vec<String> {
        // A look is a delivery, which a delivery limit counts: not made where there is one.
        if self.dead.is_some() {
            return self.shadow.ready_ids();
        }
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
    /// The spec's queues are deleted, and the slot given back with the connection. After a
    /// fault nothing is tried: the next run's sweep deletes what is left.
    fn drop(&mut self) {
        let Some(mut connection) = self.connection.take() else {
            return;
        };
        if self.fault.is_some() {
            return;
        }
        let channel = self.channel;
        let dead = self.dead.as_ref().map(|dead| dead.name.as_str());
        let deleted = connection
            .delete_queue(channel, &self.name)
            .and_then(|()| dead.map_or(Ok(()), |dead| connection.delete_queue(channel, dead)))
            .and_then(|()| connection.delete_queue(channel, &lock_name(self.slot)));
        if deleted.is_ok() {
            connection.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_consumers_dead_lettering_is_handed_to_the_brokers_count_or_rejected() {
        // A plain ack or retry is what it is; a retry past the limit is dead-lettered.
        assert_eq!(Settle::of(false, None, true), (Settle::Ack, false));
        assert_eq!(Settle::of(true, None, false), (Settle::Requeue, false));
        assert_eq!(Settle::of(true, None, true), (Settle::Requeue, true));
        // Exhausted: returned, and the broker's count dead-letters it.
        assert_eq!(Settle::of(false, Some(true), true), (Settle::Requeue, true));
        // A transient failure the consumer dead-letters before the broker's limit, a
        // permanent error, a poison pill: rejected.
        assert_eq!(Settle::of(false, Some(true), false), (Settle::Reject, true));
        assert_eq!(Settle::of(false, Some(false), true), (Settle::Reject, true));
        assert_eq!(
            Settle::of(false, Some(false), false),
            (Settle::Reject, true)
        );
    }

    #[test]
    fn every_queue_of_a_slot_is_named_for_it_and_starts_with_the_prefix() {
        for name in [lock_name(3), queue_name(3), dead_name(3)] {
            assert!(name.starts_with(PREFIX) && name.contains(".3."), "{name}");
        }
        assert_eq!(dead_name(0), "dlqspec.0.dead");
        assert_eq!(QUEUE_SHOWN, queue_name(0).replace('0', "N"));
    }
}
