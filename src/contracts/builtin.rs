//! Implementations that run in this process: subjects made by a factory, behind `Implementation`.
//! The built-in reference is one of them, made from each contract's reference subject by the
//! registry (`registry.rs`), which lists the contracts.

use serde_json::Value;

use crate::model::implementation::{
    ImplError, ImplErrorKind, ImplInfo, Implementation, Reply, WorldHost,
};

/// Makes a subject of the named contract from the spec's arguments, on the spec's world;
/// `Ok(Err)` is the reply when it cannot (a raise for bad arguments, a skip for a contract it
/// does not implement), `Err` an implementation that broke (a reference that is a program).
pub(crate) type SubjectFactory = dyn FnMut(&str, &Value, &mut dyn WorldHost) -> Result<Result<Box<dyn Subject>, Reply>, ImplError>
    + Send;

/// An implementation whose subjects come from a factory, one at a time.
pub struct Builtin {
    info: ImplInfo,
    factory: Box<SubjectFactory>,
    /// Run before each spec, as a fresh process would start: resets what subjects share.
    fresh_process: Option<Box<dyn FnMut() + Send>>,
    current: Option<Box<dyn Subject>>,
}

impl Builtin {
    /// An implementation described by `info` whose subjects `factory` makes.
    pub(crate) fn from_subjects(info: ImplInfo, factory: Box<SubjectFactory>) -> Self {
        Builtin {
            info,
            factory,
            fresh_process: None,
            current: None,
        }
    }

    /// The built-in implementation of `contract` making the catalogue mistake `mistake`, whose
    /// subjects `make` builds from a spec's arguments. It is not the reference; specs of another
    /// contract are skipped.
    pub(crate) fn mistaken(
        contract: &'static str,
        mistake: &'static str,
        mut make: impl FnMut(&Value) -> Result<Box<dyn Subject>, Reply> + Send + 'static,
    ) -> Self {
        let info = ImplInfo {
            label: format!("builtin with mistake `{mistake}`"),
            language: "rust".into(),
            is_reference: false,
        };
        let factory = move |asked: &str, args: &Value, _world: &mut dyn WorldHost| {
            Ok(if asked == contract {
                make(args)
            } else {
                Err(Reply::Skipped(format!(
                    "the mistake `{mistake}` is one of {contract}"
                )))
            })
        };
        Self::from_subjects(info, Box::new(factory))
    }

    /// Runs `reset` before each spec, for subjects that share state the way a process's
    /// globals are shared by its instances.
    pub(crate) fn on_begin_spec(mut self, reset: Box<dyn FnMut() + Send>) -> Self {
        self.fresh_process = Some(reset);
        self
    }
}

/// An instance of a contract's subject (a consumer, a queue...) inside the built-in implementation.
/// `Send` so a built-in implementation can serve specs on a worker thread.
pub trait Subject: Send {
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError>;
}

impl Implementation for Builtin {
    fn info(&self) -> ImplInfo {
        self.info.clone()
    }

    fn begin_spec(&mut self) -> Result<(), ImplError> {
        self.current = None;
        if let Some(reset) = &mut self.fresh_process {
            reset();
        }
        Ok(())
    }

    fn create(
        &mut self,
        contract: &str,
        args: &Value,
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        self.current = None;
        match (self.factory)(contract, args, world)? {
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
