//! The lesson's fake queue, pinned by docs/contracts.md section 1: a ready list and the
//! messages in flight, a receive count and a first receive time per message.

use std::collections::VecDeque;

use super::Message;
use super::Queue;

/// A message in the queue, with the number of the copy it is (each send makes one), by which
/// a broker's queue matches the fake's messages to its own.
#[derive(Debug, Clone)]
pub(super) struct Queued {
    pub(super) message: Message,
    pub(super) copy: u64,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct FakeQueue {
    ready: VecDeque<Queued>,
    /// In the order the messages were received, which is the order `recover` restores.
    in_flight: Vec<Queued>,
    copies: u64,
}

impl FakeQueue {
    /// Sends a message and returns its copy number.
    pub(super) fn send_copy(&mut self, id: &str, body: &str) -> u64 {
        self.copies += 1;
        self.ready.push_back(Queued {
            message: Message {
                id: id.to_owned(),
                body: body.to_owned(),
                receive_count: 0,
                first_received_at: None,
            },
            copy: self.copies,
        });
        self.copies
    }

    /// The copy at the ready head.
    pub(super) fn head(&self) -> Option<u64> {
        self.ready.front().map(|queued| queued.copy)
    }

    /// Receives copy `copy` from wherever it is in the ready list; `None` when it is not ready.
    pub(super) fn receive_copy(&mut self, copy: u64, now: u64) -> Option<Message> {
        let index = self.ready.iter().position(|queued| queued.copy == copy)?;
        let mut queued = self.ready.remove(index)?;
        queued.message.receive_count += 1;
        queued.message.first_received_at.get_or_insert(now);
        let message = queued.message.clone();
        self.in_flight.push(queued);
        Some(message)
    }

    /// Settles the first copy in flight with id `id`, returning its copy number.
    pub(super) fn settle_copy(&mut self, id: &str, retry: bool) -> Option<u64> {
        let index = self.in_flight.iter().position(|q| q.message.id == id)?;
        let queued = self.in_flight.remove(index);
        let copy = queued.copy;
        if retry {
            self.ready.push_back(queued);
        }
        Some(copy)
    }

    /// The first copy in flight with id `id`: the one `settle_copy` would settle.
    pub(super) fn in_flight_copy(&self, id: &str) -> Option<u64> {
        self.in_flight
            .iter()
            .find(|q| q.message.id == id)
            .map(|q| q.copy)
    }

    /// The ready copies, head first.
    pub(super) fn ready_copies(&self) -> Vec<u64> {
        self.ready.iter().map(|queued| queued.copy).collect()
    }

    /// The copies in flight, in receive order.
    pub(super) fn in_flight_copies(&self) -> Vec<u64> {
        self.in_flight.iter().map(|queued| queued.copy).collect()
    }

    /// Takes copy `copy` out of the ready list (a broker dead-lettered it there); `false` when
    /// it is not ready.
    pub(super) fn remove_ready(&mut self, copy: u64) -> bool {
        let index = self.ready.iter().position(|queued| queued.copy == copy);
        index.and_then(|index| self.ready.remove(index)).is_some()
    }

    /// Puts the ready copies in the order given (the same copies, as a broker showed them).
    pub(super) fn reorder(&mut self, order: &[u64]) {
        let mut ready: Vec<Queued> = self.ready.drain(..).collect();
        for copy in order {
            if let Some(index) = ready.iter().position(|queued| queued.copy == *copy) {
                self.ready.push_back(ready.swap_remove(index));
            }
        }
        self.ready.extend(ready);
    }
}

impl Queue for FakeQueue {
    fn send(&mut self, id: &str, body: &str) {
        self.send_copy(id, body);
    }

    fn receive(&mut self, now: u64) -> Option<Message> {
        let copy = self.head()?;
        self.receive_copy(copy, now)
    }

    fn settle(&mut self, id: &str, retry: bool) -> bool {
        self.settle_copy(id, retry).is_some()
    }

    fn recover(&mut self) {
        self.ready.extend(self.in_flight.drain(..));
    }

    fn pending(&mut self) -> Vec<String> {
        self.ready_ids()
    }

    fn ready_ids(&self) -> Vec<String> {
        self.ready.iter().map(|q| q.message.id.clone()).collect()
    }

    fn lengths(&self) -> (usize, usize) {
        (self.ready.len(), self.in_flight.len())
    }

    fn in_flight(&self) -> Vec<String> {
        self.in_flight
            .iter()
            .map(|q| q.message.id.clone())
            .collect()
    }

    fn in_flight_with_body(&self, body: &str) -> Option<String> {
        self.in_flight
            .iter()
            .rev()
            .find(|q| q.message.body == body)
            .map(|q| q.message.id.clone())
    }

    fn queued_ids(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        Box::new(
            self.in_flight
                .iter()
                .chain(&self.ready)
                .map(|queued| queued.message.id.as_str()),
        )
    }

    fn copy(&self) -> Option<Box<dyn Queue>> {
        Some(Box::new(self.clone()))
    }
}
