//! dlq-consumer's smoke plan: one message that fails once transiently then succeeds, a
//! consumer of budget 3, and the answers that leaves no doubt about.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::handler;
use super::world::{ScriptedOutcome, World};
use crate::contracts::smoke::{SmokeAnswer, SmokePlan, SmokeRequest};
use crate::model::implementation::Naming;

pub(super) fn plan(naming: Naming) -> SmokePlan {
    let mut script = HashMap::new();
    script.insert(
        "m1".to_owned(),
        handler::instant([
            ScriptedOutcome::Transient("db timeout".into()),
            ScriptedOutcome::Ok,
        ]),
    );
    let mut world = World::new(script, naming);
    world.send("m1", "hello");
    let process = |returns: Value, why: &str| {
        SmokeRequest::call("process_one", vec![], SmokeAnswer::Returns(returns), why)
    };
    SmokePlan {
        world: Box::new(world),
        requests: vec![
            SmokeRequest::new_instance(
                super::consumer::new_args(Some(3)),
                "a consumer is made with max_attempts 3",
            ),
            process(
                json!("retry"),
                "the handler raised TransientError on the first of 3 attempts",
            ),
            process(json!("ok"), "the handler succeeded on the retry"),
            process(Value::Null, "the queue is empty"),
            SmokeRequest::call(
                "replay",
                vec![],
                SmokeAnswer::Returns(json!([])),
                "the DLQ is empty",
            ),
        ],
    }
}
