//! What an implementation's next request will likely ask of the world, and what the world
//! will answer: the reference consumer's calls, made on a copy of the world.
//!
//! Every world call of an external implementation is a round trip, and waiting for the
//! answers costs more than everything else a run does. Before a `process_one` or `replay`,
//! the reference consumer makes the same request on a copy of the world; the calls it made,
//! with their answers, go with the request (docs/protocol.md, Foresight). An implementation
//! that makes the same calls, in the same order with the same arguments, takes those answers
//! without waiting, and the world performs each call when it arrives, as any other. The
//! world is deterministic, so the answer to the same calls from the same state is the same:
//! a foresight followed is exact, and one not followed (another solution's habits) costs only
//! the round trips it would have saved. No verdict reads it.

use serde_json::{Map, Value};

use super::consumer::DlqConsumer;
use super::world::World;
use crate::contracts::contract::Subject;
use crate::model::implementation::{Foreseen, Naming, Raised, WorldHost};

/// The most messages, entries, counts and faults a world may hold for its calls to be
/// foreseen: the copy is made per request, and a run's cost must stay linear in its size.
pub const WORLD_LIMIT: usize = 256;

/// The most calls foreseen for one request: a request that makes more (a `replay` of a big
/// DLQ) waits for the rest.
pub const CALL_LIMIT: usize = 64;

/// The world calls `method(args)` of the reference consumer, with budget `max_attempts`,
/// makes from `world`'s state, with their answers as an implementation spelling keys as
/// `naming` would send and get them. Empty when the world is too big to copy.
pub fn foresee(world: &World, max_attempts: u64, method: &str, args: &[Value]) -> Vec<Foreseen> {
    let Some(copy) = world.foresight_copy(WORLD_LIMIT) else {
        return Vec::new();
    };
    let naming = copy.naming();
    let mut recorder = Recorder {
        world: copy,
        naming,
        seen: Vec::new(),
    };
    // What the reference answers is not needed: only the calls it made on the way.
    let _ = DlqConsumer::new(max_attempts).call(method, args, &mut recorder);
    recorder.seen
}

/// The copy of the world, seen through the protocol as an external implementation sees it,
/// keeping each call and its answer.
struct Recorder {
    world: World,
    naming: Naming,
    seen: Vec<Foreseen>,
}

impl WorldHost for Recorder {
    fn world_call(&mut self, call: &str, args: &[Value]) -> Result<Value, Raised> {
        if self.seen.len() == CALL_LIMIT {
            // Enough is foreseen: the reference's run ends here, its calls so far kept.
            return Err(Raised::crash("foresight ends"));
        }
        // The reference writes keys as the contract does (snake_case); the implementation
        // sends them in its own spelling, which is what the world is given.
        let args: Vec<Value> = args.iter().map(|arg| spelled(arg, self.naming)).collect();
        let answer = self.world.world_call(call, &args);
        self.seen.push(Foreseen {
            call: call.to_owned(),
            args,
            answer: answer.clone(),
        });
        answer.map(|value| snake_case(&value))
    }
}

/// `value` with the keys of its objects (and of the objects in a list) spelled as `naming`
/// spells them: a DLQ entry as a JavaScript consumer writes it.
fn spelled(value: &Value, naming: Naming) -> Value {
    match (naming, value) {
        (Naming::Snake, _) => value.clone(),
        (Naming::Camel, Value::Object(object)) => Value::Object(
            object
                .iter()
                .map(|(key, value)| (naming.key(key).into_owned(), value.clone()))
                .collect::<Map<_, _>>(),
        ),
        (Naming::Camel, Value::Array(items)) => {
            Value::Array(items.iter().map(|item| spelled(item, naming)).collect())
        }
        _ => value.clone(),
    }
}

/// `value` with the keys of its objects (and of the objects in a list) in snake_case, as the
/// reference reads a message or an entry.
fn snake_case(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, value)| (snake_key(key), value.clone()))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(snake_case).collect()),
        _ => value.clone(),
    }
}

/// `firstReceivedAt` as `first_received_at`; a key without capitals as it is.
fn snake_key(key: &str) -> String {
    let mut snake = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    snake
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contracts::dlq_consumer::world::{CrashTiming, Fault, Outcomes, ScriptedOutcome};
    use crate::text::source::Position;

    fn world(naming: Naming) -> World {
        let script = [
            ("a", vec![ScriptedOutcome::Transient("t".into())]),
            ("b", vec![ScriptedOutcome::Permanent("p".into())]),
        ]
        .into_iter()
        .map(|(id, outcomes)| (id.to_owned(), Outcomes::from(outcomes.as_slice())))
        .collect();
        let mut world = World::new(script, naming);
        world.send("a", "x");
        world.send("b", "y");
        world
    }

    /// Plays the foreseen calls on `world` itself, as the runner does when they arrive, and
    /// says whether every answer is the one foreseen.
    fn followed(world: &mut World, foreseen: &[Foreseen]) -> bool {
        foreseen
            .iter()
            .all(|call| world.world_call(&call.call, &call.args) == call.answer)
    }

    #[test]
    fn the_foreseen_calls_are_what_the_world_then_answers_in_either_spelling() {
        for naming in [Naming::Snake, Naming::Camel] {
            let mut world = world(naming);
            world.arm(Fault {
                timing: CrashTiming::After,
                call: "dlq.put".into(),
                remaining: 1,
                armed_at: Position::START,
            });
            // a: received, handled (transient), retried; b: received, handled (permanent),
            // put (the crash after it), and then the crash's next delivery.
            let mut names = Vec::new();
            for _ in 0..4 {
                let foreseen = foresee(&world, 3, "process_one", &[]);
                assert!(!foreseen.is_empty(), "{naming:?}");
                names.extend(foreseen.iter().map(|call| call.call.clone()));
                assert!(followed(&mut world, &foreseen), "{naming:?}: {foreseen:?}");
            }
            assert!(names.contains(&"dlq.put".to_owned()), "{names:?}");
            // The copy left the world itself as it was: the calls were made once, above.
            assert_eq!(world.journal().len(), names.len(), "{naming:?}");
        }
    }

    #[test]
    fn an_entry_is_foreseen_in_the_implementations_spelling() {
        let mut world = world(Naming::Camel);
        // a's handler raises a transient error: retried. Then b's is permanent: put.
        let first = foresee(&world, 3, "process_one", &[]);
        assert!(followed(&mut world, &first));
        let second = foresee(&world, 3, "process_one", &[]);
        let put = second
            .iter()
            .find(|call| call.call == "dlq.put")
            .expect("b is dead-lettered");
        let keys: Vec<&str> = put.args[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert!(keys.contains(&"firstAttemptAt"), "{keys:?}");
        assert!(keys.contains(&"failedAt"), "{keys:?}");
        let receive = &second[0];
        assert_eq!(receive.answer.as_ref().unwrap()["receiveCount"], json!(1));
    }

    #[test]
    fn a_crash_is_foreseen_as_the_raise_the_world_makes() {
        let mut world = world(Naming::Snake);
        world.arm(Fault {
            timing: CrashTiming::Before,
            call: "handler".into(),
            remaining: 1,
            armed_at: Position::START,
        });
        let foreseen = foresee(&world, 3, "process_one", &[]);
        let last = foreseen.last().unwrap();
        assert_eq!(last.call, "handler");
        assert!(
            last.answer
                .as_ref()
                .is_err_and(|raised| raised.message.contains("injected crash"))
        );
        assert!(followed(&mut world, &foreseen));
    }

    #[test]
    fn a_world_too_big_to_copy_foresees_nothing_and_a_long_request_is_cut() {
        let mut world = World::new(Default::default(), Naming::Snake);
        for i in 0..=WORLD_LIMIT {
            world.send(&format!("m{i}"), "x");
        }
        assert!(foresee(&world, 3, "process_one", &[]).is_empty());
        assert!(world.journal().is_empty());

        // A replay of a big DLQ: the first CALL_LIMIT calls are foreseen, and followed.
        let mut world = World::new(Default::default(), Naming::Snake);
        for i in 0..40 {
            let entry = json!({"id": format!("m{i}"), "body": "x", "reason": "permanent",
                "error": "PermanentError: p", "attempts": 1, "first_attempt_at": 0, "failed_at": 0});
            world.world_call("dlq.put", &[entry]).unwrap();
        }
        let foreseen = foresee(&world, 3, "replay", &[]);
        assert_eq!(foreseen.len(), CALL_LIMIT);
        assert!(followed(&mut world, &foreseen));
    }

    #[test]
    fn keys_are_spelled_back_for_the_reference() {
        assert_eq!(snake_key("firstReceivedAt"), "first_received_at");
        assert_eq!(snake_key("id"), "id");
        assert_eq!(
            snake_case(&json!([{"receiveCount": 1, "body": "x"}])),
            json!([{"receive_count": 1, "body": "x"}])
        );
        assert_eq!(
            spelled(&json!({"failed_at": 1}), Naming::Camel),
            json!({"failedAt": 1})
        );
    }
}
