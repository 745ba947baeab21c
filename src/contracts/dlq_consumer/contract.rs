//! The dlq-consumer contract (CONTRACTS.md section 1), registered as one `Contract`.

use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

use super::consumer::{DlqConsumer, max_attempts_from};
use super::rules::RULES;
use super::spec;
use crate::contract::{Contract, Scenario, Subject};
use crate::implementation::Reply;
use crate::rule::Rule;
use crate::source::SourceFile;
use crate::spec_error::SpecError;

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

    fn load(&self, file: &SourceFile) -> Result<Box<dyn Scenario>, SpecError> {
        Ok(Box::new(spec::load(file)?))
    }

    fn create_builtin(&self, args: &Value) -> Result<Box<dyn Subject>, Reply> {
        Ok(Box::new(DlqConsumer::new(max_attempts_from(args))))
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<spec::SpecFile>()
    }

    fn starter(&self, name: &str) -> String {
        crate::contract::starter_named(super::starter::TEMPLATE, name)
    }
}
