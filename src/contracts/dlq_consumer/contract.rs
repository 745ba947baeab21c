//! The dlq-consumer contract (docs/contracts.md section 1), registered as one `Contract`.

use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

use std::sync::{Arc, Mutex};

use super::consumer::{DlqConsumer, Globals, max_attempts_from};
use super::mistakes::{MISTAKES, Slip};
use super::rules::RULES;
use super::spec;
use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{Contract, Scenario, Subject};
use crate::model::implementation::Reply;
use crate::model::mistake::Mistake;
use crate::model::rule::Rule;
use crate::text::source::SourceFile;
use crate::text::spec_error::SpecError;

pub const NAME: &str = "dlq-consumer";

pub struct DlqConsumerContract;

impl Contract for DlqConsumerContract {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "a consumer that retries transient errors and dead-letters the rest (lesson 000)"
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
        Ok(Box::new(spec::load(file)?))
    }

    fn create_builtin(&self, args: &Value) -> Result<Box<dyn Subject>, Reply> {
        Ok(Box::new(DlqConsumer::new(max_attempts_from(args))))
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
        crate::contracts::contract::starter_named(super::starter::TEMPLATE, name)
    }

    fn explorer(&self) -> Option<&'static dyn crate::generate::Explorer> {
        Some(&super::explore::DlqExplorer)
    }
}
