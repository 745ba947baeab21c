//! The outcome-queue contract (docs/contracts.md section 2), registered as one `Contract`.

use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

use super::mistakes::{MISTAKES, Slip};
use super::queue::{RetryQueue, max_attempts_of};
use super::rules::RULES;
use super::spec;
use crate::contracts::builtin::Builtin;
use crate::contracts::builtin::Subject;
use crate::contracts::contract::{Contract, Scenario};
use crate::model::implementation::Reply;
use crate::model::mistake::Mistake;
use crate::model::rule::Rule;
use crate::text::source::SourceFile;
use crate::text::spec_error::SpecError;

pub(crate) use super::NAME;

pub(crate) struct OutcomeQueueContract;

impl Contract for OutcomeQueueContract {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "the class RetryQueue: applies each attempt's reported outcome: retry, quarantine, replay (docs/contracts.md, section 2)"
    }

    fn subject(&self) -> &'static str {
        "RetryQueue"
    }

    fn rules(&self) -> &'static [Rule] {
        RULES
    }

    fn lanes(&self) -> &'static [&'static str] {
        &["test", "queue"]
    }

    fn step_kinds(&self) -> &'static [&'static str] {
        spec::STEP_KINDS
    }

    fn load(&self, file: &SourceFile) -> Result<Box<dyn Scenario>, SpecError> {
        Ok(Box::new(super::loading::load(file)?))
    }

    /// `RetryQueue(max_attempts)`, no given part (docs/protocol.md, "Exercises").
    fn protocol_description(&self) -> Value {
        crate::contracts::contract::protocol_description(self.subject(), &[], &[], &[])
    }

    /// `RetryQueue(max_attempts)` with the raw value; an invalid one raises, as in Python.
    fn create_builtin(
        &self,
        args: &Value,
        _world: &mut dyn crate::model::implementation::WorldHost,
    ) -> Result<Result<Box<dyn Subject>, Reply>, crate::model::implementation::ImplError> {
        let max_attempts = max_attempts_of(args);
        Ok(match RetryQueue::new(max_attempts) {
            Ok(queue) => Ok(Box::new(queue)),
            Err(raised) => Err(Reply::Raised(raised)),
        })
    }

    fn mistakes(&self) -> &'static [Mistake] {
        MISTAKES
    }

    fn mistaken(&self, id: &str) -> Option<Builtin> {
        let slip = Slip::of(id)?;
        let id = crate::model::mistake::find(MISTAKES, id)?.id;
        let make = move |args: &Value| -> Result<Box<dyn Subject>, Reply> {
            let max_attempts = max_attempts_of(args);
            match RetryQueue::with_slip(max_attempts, slip) {
                Ok(queue) => Ok(Box::new(queue)),
                Err(raised) => Err(Reply::Raised(raised)),
            }
        };
        Some(Builtin::mistaken(NAME, id, make))
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<spec::SpecFile>()
    }

    fn starter(&self, name: &str) -> String {
        crate::contracts::contract::starter_named(super::starter::TEMPLATE, name)
    }

    fn explorer(&self) -> Option<&'static dyn crate::generate::Explorer> {
        Some(&super::explore::QueueExplorer)
    }
}
