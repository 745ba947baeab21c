//! The dlq-consumer contract (docs/contracts.md section 1), registered as one `Contract`.

use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

use std::sync::{Arc, Mutex};

use super::consumer::{DlqConsumer, GIVEN_PARTS, Globals, max_attempts_from};
use super::handler::{PERMANENT_ERROR, TRANSIENT_ERROR};
use super::mistakes::{MISTAKES, Slip};
use super::rules::RULES;
use super::spec;
use crate::contracts::builtin::Builtin;
use crate::contracts::builtin::Subject;
use crate::contracts::contract::{Contract, GivenPart, Scenario};
use crate::model::implementation::Reply;
use crate::model::mistake::Mistake;
use crate::model::rule::Rule;
use crate::model::world::{DeadLettering, QueueType, WorldChoice};
use crate::text::source::SourceFile;
use crate::text::spec_error::SpecError;

pub(crate) use super::NAME;

/// The TypeScript declarations of the lesson's `given` module, for a student's editor.
const GIVEN_D_TS: &str = include_str!("given.d.ts");

pub(crate) struct DlqConsumerContract;

impl Contract for DlqConsumerContract {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "the class DLQConsumer: retries transient errors and dead-letters the rest (docs/contracts.md, section 1)"
    }

    fn subject(&self) -> &'static str {
        "DLQConsumer"
    }

    fn rules(&self) -> &'static [Rule] {
        RULES
    }

    fn lanes(&self) -> &'static [&'static str] {
        super::journal::LANES
    }

    fn step_kinds(&self) -> &'static [&'static str] {
        spec::STEP_KINDS
    }

    fn step_words(&self, kind: &str) -> &'static [&'static str] {
        match kind {
            "process" => spec::PROCESS_RETURNS,
            _ => &[],
        }
    }

    fn load(&self, file: &SourceFile) -> Result<Box<dyn Scenario>, SpecError> {
        Ok(Box::new(super::loading::load(file)?))
    }

    fn create_builtin(
        &self,
        args: &Value,
        _world: &mut dyn crate::model::implementation::WorldHost,
    ) -> Result<Result<Box<dyn Subject>, Reply>, crate::model::implementation::ImplError> {
        Ok(Ok(Box::new(DlqConsumer::new(max_attempts_from(args)))))
    }

    /// The consumer is made as `DLQConsumer(queue, dlq, handler, clock[, max_attempts])`, its
    /// four given parts answered by the world (`world::CALLS`), under the class names the
    /// lesson's `given` module has always had.
    fn protocol_description(&self) -> Value {
        let part = |name: &'static str, class: Option<&'static str>| GivenPart {
            name,
            class,
            callable: class.is_none(),
            methods: super::world::CALLS
                .iter()
                .filter_map(|call| call.strip_prefix(name)?.strip_prefix('.'))
                .collect(),
        };
        crate::contracts::contract::protocol_description(
            self.subject(),
            &[
                part(GIVEN_PARTS[0], Some("FakeQueue")),
                part(GIVEN_PARTS[1], Some("FakeDLQ")),
                part(GIVEN_PARTS[2], None),
                part(GIVEN_PARTS[3], Some("FakeClock")),
            ],
            &[
                (PERMANENT_ERROR, "error"),
                (TRANSIENT_ERROR, "error"),
                ("Crash", "crash"),
                ("MisuseError", "error"),
            ],
            // given.d.ts's interfaces: names an import may give, with no value.
            &["Message", "Entry"],
        )
    }

    fn types(&self, language: crate::model::language::Language) -> Option<String> {
        match language {
            crate::model::language::Language::JavaScript => Some(GIVEN_D_TS.to_owned()),
            crate::model::language::Language::Python => None,
        }
    }

    fn takes_world(&self) -> bool {
        true
    }

    fn prepare_world(&self, world: &WorldChoice) -> Result<Vec<String>, String> {
        let WorldChoice::RabbitMq(rabbit) = world else {
            return Ok(Vec::new());
        };
        super::queue::rabbitmq::sweep(rabbit)?;
        let count = match rabbit.queue_type {
            QueueType::Quorum => {
                "receive_count is the broker's: x-delivery-count + 1 (dlqspec's own looks at the ready order are taken off)"
            }
            QueueType::Classic => {
                "receive_count: a classic queue keeps no delivery count, only the redelivered flag, so it is 1 on a first delivery and 2 on any later one; dlqspec does not count for it"
            }
        };
        let mut lines = vec![
            format!("dlq-consumer specs run with their queue on RabbitMQ ({} queue); the DLQ and the clock stay dlqspec's: the lesson's dlq.put/has/remove/entries have no equivalent on a plain queue", rabbit.queue_type.word()),
            "first_received_at: no RabbitMQ queue keeps when a message was first received; dlqspec fills it in from its clock at each message's first delivery".to_owned(),
            count.to_owned(),
        ];
        if rabbit.dead_letter == DeadLettering::Broker {
            let limit = match rabbit.queue_type {
                QueueType::Quorum => {
                    "x-delivery-limit max_attempts - 1, so that it delivers a message at most max_attempts times"
                }
                QueueType::Classic => "no delivery limit, which a classic queue does not have",
            };
            lines.push(format!("dead-letter=broker: the queue dead-letters by itself to dlqspec.N.dead ({limit}); an ack that ends the consumer's dead-lettering is handed to the broker instead (a nack after a transient failure, a reject otherwise), and what the broker dead-letters is compared with the lesson's DLQ where the spec reads it and at its end; the ready order is not looked at, a look being a delivery the limit counts"));
        }
        Ok(lines)
    }

    fn mistakes(&self) -> &'static [Mistake] {
        MISTAKES
    }

    fn mistaken(&self, id: &str) -> Option<Builtin> {
        let slip = Slip::of(id)?;
        let id = crate::model::mistake::find(MISTAKES, id)?.id;
        // One process's globals, shared by its consumer instances and reset for each spec.
        let globals = Arc::new(Mutex::new(Globals::default()));
        let shared = Arc::clone(&globals);
        let make = move |args: &Value| -> Result<Box<dyn Subject>, Reply> {
            let max_attempts = max_attempts_from(args);
            let consumer = DlqConsumer::with_slip(max_attempts, slip, Arc::clone(&shared));
            Ok(Box::new(consumer))
        };
        let reset = move || *globals.lock().unwrap_or_else(|p| p.into_inner()) = Globals::default();
        Some(Builtin::mistaken(NAME, id, make).on_begin_spec(Box::new(reset)))
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<spec::SpecFile>()
    }

    fn starter(&self, name: &str) -> String {
        super::starter::starter(name)
    }

    fn explorer(&self) -> Option<&'static dyn crate::generate::Explorer> {
        Some(&super::explorer::DlqExplorer)
    }

    fn smoke_plan(
        &self,
        naming: crate::model::implementation::Naming,
    ) -> Option<crate::contracts::smoke::SmokePlan> {
        Some(super::smoke::plan(naming))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hello's description names every world call the world answers, and no other: a part's
    /// method `M` is the call `PART.M`, a callable part the call `PART`.
    #[test]
    fn the_description_names_each_world_call_once() {
        let described = DlqConsumerContract.protocol_description();
        let mut calls = Vec::new();
        for (part, d) in described["given"].as_object().unwrap() {
            if d["callable"] == true {
                calls.push(part.clone());
            }
            for method in d["methods"].as_array().unwrap() {
                calls.push(format!("{part}.{}", method.as_str().unwrap()));
            }
        }
        calls.sort();
        let mut world: Vec<String> = super::super::world::CALLS
            .iter()
            .map(|c| (*c).to_owned())
            .collect();
        world.sort();
        assert_eq!(calls, world);
        assert_eq!(described["class"], "DLQConsumer");
        assert_eq!(described["errors"]["Crash"]["base"], "crash");
        // `new`'s given parts are the described parts, in the constructor's order.
        let params = super::super::consumer::new_args(None)["params"].clone();
        let given: Vec<&str> = params
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["given"].as_str().unwrap())
            .collect();
        assert_eq!(given, GIVEN_PARTS);
        assert!(
            given
                .iter()
                .all(|part| described["given"].get(part).is_some())
        );
        assert_eq!(
            max_attempts_from(&super::super::consumer::new_args(Some(7))),
            7
        );
    }
}
