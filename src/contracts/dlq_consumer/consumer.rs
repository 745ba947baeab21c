//! The built-in reference `DLQConsumer`, exactly as CONTRACTS.md section 1 pins it.

use serde_json::{Value, json};

use super::given::{Entry, Given};
use super::world::Message;
use crate::contract::Subject;
use crate::implementation::{ImplError, ImplErrorKind, Raised, RaisedKind, Reply, WorldHost};

pub const DEFAULT_MAX_ATTEMPTS: u64 = 3;

/// The reference consumer. It keeps no count of its own: attempts come from `receive_count`.
#[derive(Debug, Clone)]
pub struct DlqConsumer {
    pub max_attempts: u64,
}

impl DlqConsumer {
    pub fn new(max_attempts: u64) -> Self {
        DlqConsumer { max_attempts }
    }

    pub fn process_one(&mut self, given: &mut Given) -> Result<Option<&'static str>, Raised> {
        let Some(message) = given.receive()? else {
            return Ok(None);
        };
        // An earlier delivery died between dlq.put and queue.ack: finish that ack only.
        if given.has(&message.id)? {
            given.ack(&message.id)?;
            return Ok(Some("dead"));
        }
        // Every earlier delivery died mid-handler: do not call it again.
        if message.receive_count > self.max_attempts {
            let attempts = message.receive_count - 1;
            return dead_letter(given, &message, "poison", None, attempts);
        }
        match given.handle(&message.body) {
            Ok(()) => {
                given.ack(&message.id)?;
                Ok(Some("ok"))
            }
            Err(error) if error.kind == RaisedKind::Crash => Err(error),
            Err(error) if error.class == "PermanentError" => dead_letter(
                given,
                &message,
                "permanent",
                Some(error.describe()),
                message.receive_count,
            ),
            Err(_) if message.receive_count < self.max_attempts => {
                given.retry(&message.id)?;
                Ok(Some("retry"))
            }
            Err(error) => dead_letter(
                given,
                &message,
                "exhausted",
                Some(error.describe()),
                message.receive_count,
            ),
        }
    }

    /// Replays the given ids in their order (all entries in put order when `None`), skipping
    /// ids not in the DLQ. Send first, then remove: a crash between the two loses nothing.
    pub fn replay(
        &mut self,
        given: &mut Given,
        ids: Option<Vec<String>>,
    ) -> Result<Vec<String>, Raised> {
        let entries = given.entries()?;
        let ids = ids.unwrap_or_else(|| entries.iter().map(|e| e.id.clone()).collect());
        let mut replayed: Vec<String> = Vec::new();
        for id in ids {
            if replayed.contains(&id) {
                continue;
            }
            let Some(entry) = entries.iter().find(|e| e.id == id) else {
                continue;
            };
            given.send(&entry.id, &entry.body)?;
            given.remove(&entry.id)?;
            replayed.push(id);
        }
        Ok(replayed)
    }
}

fn dead_letter(
    given: &mut Given,
    message: &Message,
    reason: &str,
    error: Option<String>,
    attempts: u64,
) -> Result<Option<&'static str>, Raised> {
    let entry = Entry {
        id: message.id.clone(),
        body: message.body.clone(),
        reason: reason.to_owned(),
        error,
        attempts,
        first_attempt_at: message.first_received_at,
        failed_at: given.now()?,
    };
    given.put(&entry)?;
    given.ack(&message.id)?;
    Ok(Some("dead"))
}

/// Reads `{"max_attempts": n}` as the constructor's arguments.
pub fn max_attempts_from(args: &Value) -> u64 {
    args.get("max_attempts")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_ATTEMPTS)
}

/// Maps a consumer's result onto a protocol reply.
pub fn reply<T: serde::Serialize>(result: Result<T, Raised>) -> Reply {
    match result {
        Ok(value) => Reply::Returned(json!(value)),
        Err(raised) => Reply::Raised(raised),
    }
}

/// Decodes `replay`'s protocol arguments: `[]` is "no argument", `[ids]` a list.
pub fn replay_ids(args: &[Value]) -> Result<Option<Vec<String>>, ImplError> {
    match args {
        [] | [Value::Null] => Ok(None),
        [ids] => serde_json::from_value(ids.clone())
            .map(Some)
            .map_err(|e| ImplError::new(ImplErrorKind::Errored, format!("replay: bad ids: {e}"))),
        _ => Err(ImplError::new(
            ImplErrorKind::Errored,
            "replay takes at most one argument",
        )),
    }
}

impl Subject for DlqConsumer {
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        let mut given = Given::new(world);
        match method {
            "process_one" => Ok(reply(self.process_one(&mut given))),
            "replay" => Ok(reply(self.replay(&mut given, replay_ids(args)?))),
            other => Err(ImplError::new(
                ImplErrorKind::Errored,
                format!("DLQConsumer has no method `{other}`"),
            )),
        }
    }
}
