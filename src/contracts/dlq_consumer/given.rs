//! The given parts (queue, DLQ, clock, handler) as typed Rust calls over the world protocol.
//!
//! This is the Rust counterpart of the Python and Node shims' `given` module: the built-in
//! consumer makes the calls an external one does, one named call at a time, into the same
//! checks, faults and journal. Only the encoding differs: in this process the calls and their
//! answers stay typed, where the shims' travel as JSON.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::world::{Answer, Call, Message, World};
use crate::model::implementation::{Raised, WorldHost};

/// A DLQ entry as docs/contracts.md section 1 pins it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DlqEntry {
    pub(crate) id: String,
    pub(crate) body: String,
    pub(crate) reason: String,
    pub(crate) error: Option<String>,
    pub(crate) attempts: u64,
    pub(crate) first_attempt_at: Option<u64>,
    pub(crate) failed_at: u64,
}

pub(crate) struct Given<'w> {
    world: &'w mut dyn WorldHost,
}

impl<'w> Given<'w> {
    pub(crate) fn new(world: &'w mut dyn WorldHost) -> Self {
        Given { world }
    }

    /// Makes `call` on the world: typed when the world is the dlq-consumer world in this
    /// process (it checks, faults and journals the call just as a JSON one, without building
    /// and reading JSON on both sides), through the protocol's JSON otherwise. `read` takes
    /// the typed answer apart; a JSON answer is decoded into `T`.
    fn ask<T: DeserializeOwned>(
        &mut self,
        call: Call<'_>,
        read: impl FnOnce(Answer) -> Option<T>,
    ) -> Result<T, Raised> {
        let name = call.name();
        if let Some(world) = self
            .world
            .in_process()
            .and_then(|world| world.downcast_mut::<World>())
        {
            let answer = world.call(call)?;
            return read(answer).ok_or_else(|| {
                Raised::error(
                    "DecodeError",
                    format!("{name} answered something unexpected"),
                )
            });
        }
        self.call(name, &call.args())
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

    pub(crate) fn receive(&mut self) -> Result<Option<Message>, Raised> {
        self.ask(Call::Receive, |answer| match answer {
            Answer::Message(message) => Some(message),
            _ => None,
        })
    }

    pub(crate) fn send(&mut self, id: &str, body: &str) -> Result<(), Raised> {
        self.ask(Call::Send { id, body }, nothing)
    }

    pub(crate) fn ack(&mut self, id: &str) -> Result<(), Raised> {
        self.ask(Call::Ack(id), nothing)
    }

    pub(crate) fn retry(&mut self, id: &str) -> Result<(), Raised> {
        self.ask(Call::Retry(id), nothing)
    }

    pub(crate) fn recover(&mut self) -> Result<(), Raised> {
        self.ask(Call::Recover, nothing)
    }

    pub(crate) fn put(&mut self, entry: &DlqEntry) -> Result<(), Raised> {
        self.ask(Call::Put(json!(entry)), nothing)
    }

    pub(crate) fn has(&mut self, id: &str) -> Result<bool, Raised> {
        self.ask(Call::Has(id), yes_or_no)
    }

    pub(crate) fn remove(&mut self, id: &str) -> Result<bool, Raised> {
        self.ask(Call::Remove(id), yes_or_no)
    }

    pub(crate) fn entries(&mut self) -> Result<Vec<DlqEntry>, Raised> {
        self.ask(Call::Entries, |answer| match answer {
            Answer::Entries(entries) => entries
                .iter()
                .map(DlqEntry::deserialize)
                .collect::<Result<_, _>>()
                .ok(),
            _ => None,
        })
    }

    pub(crate) fn now(&mut self) -> Result<u64, Raised> {
        self.ask(Call::Now, |answer| match answer {
            Answer::Time(now) => Some(now),
            _ => None,
        })
    }

    /// Calls the handler with a message body; `Err` is what the handler raised.
    pub(crate) fn handle(&mut self, body: &str) -> Result<(), Raised> {
        self.ask::<Value>(Call::Handler(body), |answer| match answer {
            Answer::Nothing => Some(Value::Null),
            _ => None,
        })
        .map(drop)
    }
}

/// Reads the answer of a call that returns nothing.
fn nothing(answer: Answer) -> Option<()> {
    matches!(answer, Answer::Nothing).then_some(())
}

fn yes_or_no(answer: Answer) -> Option<bool> {
    match answer {
        Answer::Bool(yes) => Some(yes),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::dlq_consumer::handler;
    use crate::contracts::dlq_consumer::world::{CrashTiming, Fault, ScriptedOutcome};
    use crate::model::implementation::Naming;
    use crate::text::source::Position;

    /// The world seen only through the protocol, as an external implementation sees it.
    struct OverJson<'w>(&'w mut World);

    impl WorldHost for OverJson<'_> {
        fn world_call(&mut self, call: &str, args: &[Value]) -> Result<Value, Raised> {
            self.0.world_call(call, args)
        }
    }

    fn world() -> World {
        let script = [
            ("a", vec![ScriptedOutcome::Transient("t".into())]),
            ("b", vec![ScriptedOutcome::Ok]),
        ]
        .into_iter()
        .map(|(id, outcomes)| (id.to_owned(), handler::instant(outcomes)))
        .chain([(
            "c".to_owned(),
            vec![handler::ScriptedCall::taking(ScriptedOutcome::Ok, 4)].into(),
        )])
        .collect();
        let mut world = World::new(script, Naming::Snake);
        world.send("a", "x");
        world.send("b", "y");
        world.send("c", "z");
        world.arm(Fault {
            timing: CrashTiming::After,
            call: "queue.retry".into(),
            remaining: 1,
            armed_at: Position::START,
        });
        world
    }

    /// Every call `Given` makes, the faulted, the misused and the unscripted ones included,
    /// with what each answered.
    fn every_call(given: &mut Given) -> Vec<String> {
        let entry = DlqEntry {
            id: "b".into(),
            body: "y".into(),
            reason: "permanent".into(),
            error: Some("PermanentError: p".into()),
            attempts: 1,
            first_attempt_at: Some(0),
            failed_at: 0,
        };
        vec![
            format!("{:?}", given.receive()),
            format!("{:?}", given.handle("x")),
            format!("{:?}", given.handle("x")),
            format!("{:?}", given.retry("a")),
            format!("{:?}", given.ack("a")),
            format!("{:?}", given.receive()),
            format!("{:?}", given.handle("y")),
            format!("{:?}", given.has("b")),
            format!("{:?}", given.put(&entry)),
            format!("{:?}", given.ack("b")),
            format!("{:?}", given.now()),
            format!("{:?}", given.entries()),
            format!("{:?}", given.send("b", "y")),
            format!("{:?}", given.remove("b")),
            format!("{:?}", given.remove("b")),
            format!("{:?}", given.receive()),
            format!("{:?}", given.handle("z")),
            format!("{:?}", given.now()),
            format!("{:?}", given.recover()),
        ]
    }

    #[test]
    fn typed_calls_answer_and_journal_as_the_same_calls_in_json() {
        let mut typed = world();
        let typed_answers = every_call(&mut Given::new(&mut typed));
        let mut json = world();
        let json_answers = every_call(&mut Given::new(&mut OverJson(&mut json)));
        assert_eq!(typed_answers, json_answers);
        assert_eq!(typed.journal(), json.journal());
        assert_eq!(typed.dlq(), json.dlq());
        assert_eq!(typed.pending(), json.pending());
        assert_eq!(typed.handler_calls(), json.handler_calls());
        assert_eq!(typed.handler_call_total(), 4);
        // A call that takes time moves the clock on both ways in, before `now` reads it.
        assert_eq!(typed_answers[17], "Ok(4)");
        // The calls did reach every branch: a crash, a misuse and an unscripted handler call.
        assert!(typed_answers[2].contains("Crash"), "{}", typed_answers[2]);
        assert!(typed_answers[3].contains("injected crash after queue.retry"));
        assert_eq!(typed.misuse(), ["queue.ack(a): a is not in flight"]);
    }
}
