//! The built-in implementation: each contract's reference subject, behind `Implementation`.

use serde_json::Value;

use crate::contract::Subject;
use crate::contracts;
use crate::implementation::{ImplError, ImplErrorKind, ImplInfo, Implementation, Reply, WorldHost};

#[derive(Default)]
pub struct Builtin {
    current: Option<Box<dyn Subject>>,
}

impl Builtin {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Implementation for Builtin {
    fn info(&self) -> ImplInfo {
        ImplInfo {
            label: "builtin".into(),
            language: "rust".into(),
            is_reference: true,
        }
    }

    fn begin_spec(&mut self) -> Result<(), ImplError> {
        self.current = None;
        Ok(())
    }

    fn create(
        &mut self,
        contract: &str,
        args: &Value,
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        let Some(contract) = contracts::find(contract) else {
            return Ok(Reply::Skipped(format!(
                "no built-in implementation of `{contract}`"
            )));
        };
        self.current = None;
        match contract.create_builtin(args, world) {
            Ok(subject) => {
                self.current = Some(subject);
                Ok(Reply::Returned(Value::Null))
            }
            Err(reply) => Ok(reply),
        }
    }

    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        match &mut self.current {
            Some(subject) => subject.call(method, args, world),
            None => Err(ImplError::new(
                ImplErrorKind::Protocol,
                format!("`{method}` called before an instance was created"),
            )),
        }
    }
}
