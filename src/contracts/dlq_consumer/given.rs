//! The given parts (queue, DLQ, clock, handler) as typed Rust calls over the world protocol.
//!
//! This is the Rust counterpart of the Python and Node shims' `given` module: the built-in
//! consumer talks to the world exactly as an external one does, one named call at a time.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::world::Message;
use crate::implementation::{Raised, WorldHost};

/// A DLQ entry as CONTRACTS.md section 1 pins it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    pub body: String,
    pub reason: String,
    pub error: Option<String>,
    pub attempts: u64,
    pub first_attempt_at: Option<u64>,
    pub failed_at: u64,
}

pub struct Given<'w> {
    world: &'w mut dyn WorldHost,
}

impl<'w> Given<'w> {
    pub fn new(world: &'w mut dyn WorldHost) -> Self {
        Given { world }
    }

    fn call<T: DeserializeOwned>(&mut self, call: &str, args: &[Value]) -> Result<T, Raised> {
        let value = self.world.world_call(call, args)?;
        serde_json::from_value(value).map_err(|error| {
            Raised::error(
                "DecodeError",
                format!("{call} answered something unexpected: {error}"),
            )
        })
    }

    pub fn receive(&mut self) -> Result<Option<Message>, Raised> {
        self.call("queue.receive", &[])
    }

    pub fn send(&mut self, id: &str, body: &str) -> Result<(), Raised> {
        self.call("queue.send", &[json!(id), json!(body)])
    }

    pub fn ack(&mut self, id: &str) -> Result<(), Raised> {
        self.call("queue.ack", &[json!(id)])
    }

    pub fn retry(&mut self, id: &str) -> Result<(), Raised> {
        self.call("queue.retry", &[json!(id)])
    }

    pub fn recover(&mut self) -> Result<(), Raised> {
        self.call("queue.recover", &[])
    }

    pub fn pending(&mut self) -> Result<Vec<String>, Raised> {
        self.call("queue.pending", &[])
    }

    pub fn put(&mut self, entry: &Entry) -> Result<(), Raised> {
        self.call("dlq.put", &[json!(entry)])
    }

    pub fn has(&mut self, id: &str) -> Result<bool, Raised> {
        self.call("dlq.has", &[json!(id)])
    }

    pub fn remove(&mut self, id: &str) -> Result<bool, Raised> {
        self.call("dlq.remove", &[json!(id)])
    }

    pub fn entries(&mut self) -> Result<Vec<Entry>, Raised> {
        self.call("dlq.entries", &[])
    }

    pub fn now(&mut self) -> Result<u64, Raised> {
        self.call("clock.now", &[])
    }

    /// Calls the handler with a message body; `Err` is what the handler raised.
    pub fn handle(&mut self, body: &str) -> Result<(), Raised> {
        self.call::<Value>("handler", &[json!(body)]).map(drop)
    }
}
