//! What the world will answer to the calls every consumer makes first, foreseen on a copy of
//! the world and sent with each request, so a shim need not wait for those answers.
//!
//! Every world call of an external implementation is a round trip. Before a `process_one`,
//! the world is asked, on a copy of it, what it answers to the calls the lesson's consumer
//! makes first, in that order: `queue.receive()`, then `dlq.has(id)` of the message it
//! returns; before a `replay`, `dlq.entries()`. Those calls and answers go
//! with the request (docs/protocol.md, Foresight). An implementation that makes the same
//! calls, in the same order with the same arguments, takes those answers without waiting; the
//! world performs each call when it arrives, as any other, and the answer is the same (the
//! world is deterministic, and the copy was made from its state at the request).
//!
//! The script is the same whatever the solution and whatever the reference would do: it holds
//! only what the world answers, never what a consumer should do next (whether to retry, to
//! dead-letter, what entry to put). A solution that reads it, as a hostile one may, learns
//! only the answers it gets by making those calls, a little earlier. That is why the handler
//! is not in it: its answer to a delivery the reference never hands it (a poison message's) is
//! that the spec scripts no outcome, which would tell a solution not to call it. A solution
//! that calls the world in another order waits for each answer from there on, and nothing
//! else changes. The calls foreseen all come before the handler's, so a handler call that
//! takes time moves the clock only after every answer foreseen was given.
//!
//! Foresight saves waits, never answers: `external/process.rs` checks each answer is the one
//! foreseen, and it changes no report (a test compares every solution's with and without it).

use serde_json::Value;

use super::world::World;
use crate::model::implementation::{Foreseen, WorldHost};

/// The most messages, entries, counts and faults a world may hold for its answers to be
/// foreseen: the copy is made per request, and a run's cost must stay linear in its size.
pub(crate) const WORLD_LIMIT: usize = 256;

/// The world's answers to the calls a consumer makes first when it serves `method`, from
/// `world`'s state, as an implementation spelling keys as the world's naming gets them.
/// Empty for another method, and when the world is too big to copy.
pub(crate) fn foresee(world: &World, method: &str) -> Vec<Foreseen> {
    if !matches!(method, "process_one" | "replay") {
        return Vec::new();
    }
    let Some(mut copy) = world.foresight_copy(WORLD_LIMIT) else {
        return Vec::new();
    };
    let mut foreseen = Vec::new();
    if method == "replay" {
        ask(&mut copy, &mut foreseen, "dlq.entries", Vec::new());
        return foreseen;
    }
    ask(&mut copy, &mut foreseen, "queue.receive", Vec::new());
    let received_id = foreseen[0]
        .answer
        .as_ref()
        .ok()
        .and_then(|message| Some(message.get("id")?.as_str()?.to_owned()));
    if let Some(id) = received_id {
        ask(&mut copy, &mut foreseen, "dlq.has", vec![Value::String(id)]);
    }
    foreseen
}

/// Makes `call` on the copy and keeps it with its answer.
fn ask(copy: &mut World, foreseen: &mut Vec<Foreseen>, call: &str, args: Vec<Value>) {
    let answer = copy.world_call(call, &args);
    foreseen.push(Foreseen {
        call: call.to_owned(),
        args,
        answer,
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contracts::dlq_consumer::handler;
    use crate::contracts::dlq_consumer::world::{CrashTiming, Fault, ScriptedOutcome};
    use crate::model::implementation::Naming;
    use crate::text::source::Position;

    fn world(naming: Naming) -> World {
        let script = [
            ("a", vec![ScriptedOutcome::Transient("t".into())]),
            ("b", vec![ScriptedOutcome::Permanent("p".into())]),
        ]
        .into_iter()
        .map(|(id, outcomes)| (id.to_owned(), handler::instant(outcomes)))
        .collect();
        let mut world = World::new(script, naming);
        world.send("a", "x");
        world.send("b", "y");
        world
    }

    /// Makes the foreseen calls on `world` itself, as the runner does when they arrive, and
    /// says whether every answer is the one foreseen.
    fn followed(world: &mut World, foreseen: &[Foreseen]) -> bool {
        foreseen
            .iter()
            .all(|call| world.world_call(&call.call, &call.args) == call.answer)
    }

    fn calls(foreseen: &[Foreseen]) -> Vec<String> {
        foreseen
            .iter()
            .map(|call| format!("{}({})", call.call, Value::from(call.args.clone())))
            .collect()
    }

    #[test]
    fn the_first_calls_are_foreseen_with_what_the_world_then_answers() {
        for naming in [Naming::Snake, Naming::Camel] {
            let mut world = world(naming);
            let foreseen = foresee(&world, "process_one");
            assert_eq!(
                calls(&foreseen),
                ["queue.receive([])", "dlq.has([\"a\"])"],
                "{naming:?}"
            );
            let received = foreseen[0].answer.as_ref().unwrap();
            let count = naming.key("receive_count");
            assert_eq!(received[count.as_ref()], json!(1), "{naming:?}");
            assert_eq!(foreseen[1].answer, Ok(json!(false)));
            // The copy left the world as it was; made on the world, the calls answer the same.
            assert!(world.journal().is_empty());
            assert!(followed(&mut world, &foreseen), "{naming:?}");
            // The next request starts from the world those calls left.
            world.world_call("queue.retry", &[json!("a")]).unwrap();
            let next = foresee(&world, "process_one");
            assert_eq!(next[0].answer.as_ref().unwrap()["id"], json!("b"));
            assert!(followed(&mut world, &next));
        }
    }

    #[test]
    fn the_script_is_the_worlds_not_a_consumers_decisions() {
        // A message already dead-lettered: the same calls are foreseen, with what the world
        // answers, whatever a consumer should do with it. No handler call is ever foreseen:
        // the world's answer to one the reference would not make (a poison message's, which
        // the spec scripts no outcome for) would tell a consumer not to make it.
        let mut world = world(Naming::Snake);
        world.world_call("dlq.put", &[json!({"id": "a"})]).unwrap();
        let foreseen = foresee(&world, "process_one");
        assert_eq!(calls(&foreseen), ["queue.receive([])", "dlq.has([\"a\"])"]);
        assert_eq!(foreseen[1].answer, Ok(json!(true)));
        // An empty queue: only the receive, answered null.
        let empty = World::new(Default::default(), Naming::Snake);
        assert_eq!(
            calls(&foresee(&empty, "process_one")),
            ["queue.receive([])"]
        );
        assert_eq!(foresee(&empty, "process_one")[0].answer, Ok(Value::Null));
        // A replay: the entries; no other method has a script.
        assert_eq!(calls(&foresee(&world, "replay")), ["dlq.entries([])"]);
        assert!(foresee(&world, "state").is_empty());
    }

    #[test]
    fn a_crash_is_foreseen_as_the_raise_the_world_makes() {
        let mut world = world(Naming::Snake);
        world.arm(Fault {
            timing: CrashTiming::Before,
            call: "queue.receive".into(),
            remaining: 1,
            armed_at: Position::START,
        });
        let foreseen = foresee(&world, "process_one");
        assert_eq!(foreseen.len(), 1);
        assert!(
            foreseen[0]
                .answer
                .as_ref()
                .is_err_and(|raised| raised.message.contains("injected crash"))
        );
        assert!(followed(&mut world, &foreseen));
    }

    #[test]
    fn a_world_too_big_to_copy_foresees_nothing() {
        let mut world = World::new(Default::default(), Naming::Snake);
        for i in 0..=WORLD_LIMIT {
            world.send(&format!("m{i}"), "x");
        }
        assert!(foresee(&world, "process_one").is_empty());
        assert!(world.journal().is_empty());
    }
}
