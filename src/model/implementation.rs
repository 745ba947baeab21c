//! The interface every implementation under test offers the runner, built-in or external.
//!
//! A contract's scenario drives an implementation through `create` and `call`; while a call
//! runs, the implementation acts on the scenario's world only through `WorldHost`. The
//! built-in implementation and an external process therefore make the same calls on the same
//! world, and every one of them is seen, ordered and can be faulted.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a raised error is classified, independent of language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RaisedKind {
    /// The process died (`Crash`): it must propagate, never be handled.
    Crash,
    /// The language's invalid-argument error (Python `ValueError`, JS `RangeError`).
    InvalidArgument,
    /// Any other error.
    Error,
}

/// An error raised by an implementation, or by the world into an implementation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Raised {
    pub(crate) kind: RaisedKind,
    pub(crate) class: String,
    pub(crate) message: String,
    /// The given class this one is a subclass of (`PermanentError`, `TransientError`), when the
    /// world raises a subclass a spec names: the protocol's `extends`, which a shim raises as a
    /// real subclass, so that `except PermanentError` / `instanceof PermanentError` holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) extends: Option<String>,
}

impl Raised {
    pub(crate) fn new(
        kind: RaisedKind,
        class: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Raised {
            kind,
            class: class.into(),
            message: message.into(),
            extends: None,
        }
    }

    /// The same error, of a subclass of the given class `given`.
    pub(crate) fn extending(mut self, given: impl Into<String>) -> Self {
        self.extends = Some(given.into());
        self
    }

    /// Whether it is an error of class `class`, or of a subclass of it: what `except class`
    /// catches.
    pub(crate) fn is_a(&self, class: &str) -> bool {
        self.class == class || self.extends.as_deref() == Some(class)
    }

    pub(crate) fn crash(message: impl Into<String>) -> Self {
        Self::new(RaisedKind::Crash, "Crash", message)
    }

    pub(crate) fn error(class: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(RaisedKind::Error, class, message)
    }

    #[cfg(test)]
    pub(crate) fn invalid_argument(class: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(RaisedKind::InvalidArgument, class, message)
    }

    /// `Class: message`, the form docs/contracts.md pins for DLQ entries.
    pub(crate) fn describe(&self) -> String {
        format!("{}: {}", self.class, self.message)
    }
}

/// The note under a difference where `null` was expected and `undefined` returned: the diff
/// shows the two words, this says which one the contract wants and how to write it.
pub(crate) const UNDEFINED_IS_NOT_NULL: &str = "JavaScript's undefined is not null: the contract pins null here, so write `return null;`, not a bare `return;`";

/// What an implementation answered to `create` or `call`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Returned(Value),
    /// Returned the language's "no value" that is not its null: JavaScript's `undefined`
    /// (a bare `return;`, or none at all). Where a contract pins `null` this is a wrong
    /// answer; where it pins nothing (a constructor, `submit`) it is as good as any.
    Undefined,
    Raised(Raised),
    /// The implementation does not provide this contract (e.g. no class of the name the contract declares).
    Skipped(String),
}

/// Why an implementation could not be asked at all: it broke, hung or spoke garbage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ImplError {
    pub(crate) kind: ImplErrorKind,
    pub(crate) message: String,
    /// The grader's option that would have allowed more (`--timeout SECS allows more`): told
    /// to whoever runs dlqspec, never in a result a student reads (Gradescope, Exercism, a
    /// grade's pages and reports), where it is no step the student can take.
    pub(crate) hint: Option<&'static str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ImplErrorKind {
    /// The process could not be started, or its solution could not be loaded.
    Startup,
    /// No answer within the timeout.
    Timeout,
    /// The process exited while a spec was running.
    Exited,
    /// A line on stdout that is not a protocol message.
    Garbage,
    /// A well-formed message that breaks the protocol (wrong sequence number, unknown type...).
    Protocol,
    /// The implementation reported that it could not do what was asked.
    Errored,
}

impl ImplError {
    /// The message is bounded (`truncate::MAX_SHOWN_BYTES`): parts of it come from the
    /// implementation, which may send megabytes.
    pub(crate) fn new(kind: ImplErrorKind, message: impl Into<String>) -> Self {
        ImplError {
            kind,
            message: crate::text::truncate::text(
                message.into(),
                crate::text::truncate::MAX_SHOWN_BYTES,
            ),
            hint: None,
        }
    }

    /// The error, with the grader's option that would have allowed more.
    pub(crate) fn with_hint(self, hint: &'static str) -> Self {
        ImplError {
            hint: Some(hint),
            ..self
        }
    }

    /// Whether it is a request that never returned: the implementation hung (an infinite loop,
    /// a wait on something that never comes), and the specs after it are not run.
    pub(crate) fn hung(&self) -> bool {
        self.kind == ImplErrorKind::Timeout
    }
}

/// The world as an implementation sees it during a call: named calls with JSON arguments.
pub trait WorldHost {
    fn world_call(&mut self, call: &str, args: &[Value]) -> Result<Value, Raised>;

    /// The world itself, for an implementation in this process that knows its type to call it
    /// without encoding every call in JSON. Such calls must go through the same checks, faults
    /// and journal as `world_call`; `None` (the default) leaves JSON as the only way in.
    fn in_process(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}

/// A world call an implementation is expected to make next, with the world's answer to it:
/// foreseen by dlqspec, so that an implementation which makes exactly that call need not wait
/// for the answer (docs/protocol.md, Foresight). The world still performs the call when it
/// arrives, in order; a foresight only saves the wait, and one not followed costs nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct Foreseen {
    pub(crate) call: String,
    /// As the implementation's language spells them (`Naming`), as its call will carry them.
    pub(crate) args: Vec<Value>,
    pub(crate) answer: Result<Value, Raised>,
}

/// A world for contracts that have none: any call is refused.
pub(crate) struct NoWorld;

impl WorldHost for NoWorld {
    fn world_call(&mut self, call: &str, _args: &[Value]) -> Result<Value, Raised> {
        Err(Raised::error(
            "MisuseError",
            format!("this contract has no world; `{call}` is not available"),
        ))
    }
}

/// How an implementation's language spells the contract's multi-word keys: the lessons give
/// Python `receive_count` / `first_attempt_at` and JavaScript `receiveCount` / `firstAttemptAt`.
/// The world speaks to each implementation in its own spelling and never translates what the
/// implementation writes, so a JavaScript entry with `first_attempt_at` is a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Naming {
    #[default]
    #[serde(rename = "snake_case")]
    Snake,
    #[serde(rename = "camelCase")]
    Camel,
}

impl Naming {
    /// `key` (written in snake_case, as specs and docs/contracts.md write it) in this spelling.
    pub(crate) fn key<'k>(self, key: &'k str) -> std::borrow::Cow<'k, str> {
        match self {
            Naming::Snake => std::borrow::Cow::Borrowed(key),
            Naming::Camel if !key.contains('_') => std::borrow::Cow::Borrowed(key),
            Naming::Camel => {
                let mut camel = String::with_capacity(key.len());
                let mut upper = false;
                for c in key.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        camel.extend(c.to_uppercase());
                        upper = false;
                    } else {
                        camel.push(c);
                    }
                }
                std::borrow::Cow::Owned(camel)
            }
        }
    }
}

/// Who is answering: shown in reports and the conformance matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplInfo {
    /// Short label, e.g. `builtin` or `python:solution.py`.
    pub(crate) label: String,
    pub(crate) language: String,
    /// The reference implementation: a scenario it cannot satisfy is a broken spec.
    pub is_reference: bool,
}

/// What an external implementation provides, from its handshake.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Offer {
    /// The contracts it provides, by name.
    pub(crate) contracts: Vec<String>,
    /// The names its solution file defines at top level (classes, functions), when it says.
    pub(crate) defines: Option<Vec<String>>,
}

/// An implementation under test. One value lives for a whole run and serves spec after spec.
pub trait Implementation {
    fn info(&self) -> ImplInfo;

    /// How the implementation spells multi-word keys of messages and entries.
    fn naming(&self) -> Naming {
        Naming::Snake
    }

    /// Starts what takes long to start (an external implementation's process) without
    /// waiting for it to be ready, so that what the run does meanwhile (loading its specs)
    /// overlaps the interpreter's start; the first call that needs it waits for it.
    fn begin_start(&mut self) {}

    /// What the implementation says it provides, before any spec runs; `None` when it provides
    /// whatever it is asked for (an in-process implementation). Starts an external one.
    fn offer(&mut self) -> Result<Option<Offer>, ImplError> {
        Ok(None)
    }

    /// Called before each spec; an implementation that died is restarted here.
    fn begin_spec(&mut self) -> Result<(), ImplError> {
        Ok(())
    }

    /// Makes a fresh instance of the contract's subject, dropping any earlier one.
    fn create(
        &mut self,
        contract: &str,
        args: &Value,
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError>;

    /// Calls a method of the current instance.
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError>;

    /// Whether the implementation can use what the world foresees (`foresee`): asking the
    /// world, on a copy of it, what it answers costs that copy, paid only when it is used.
    fn foresees(&self) -> bool {
        false
    }

    /// The world calls the next `call` is foreseen to make, in order, with their answers; an
    /// implementation that cannot use them ignores them.
    fn foresee(&mut self, _calls: Vec<Foreseen>) {}

    /// What the implementation printed and raised during the spec that just ran, if it
    /// reports that (external implementations do, through their shims).
    fn take_output(&mut self) -> Option<crate::model::captured::Captured> {
        None
    }

    /// Called after a spec whose details the student may not see (a hidden spec): ends
    /// whatever would carry what that spec showed into later ones (an external
    /// implementation's process, its stderr, its memory), so no visible spec's report can
    /// hold any of it.
    fn forget_spec(&mut self) {}
}

/// Makes implementations for a run: one per worker, since each serves one spec at a time.
pub trait ImplementationFactory: Sync {
    fn create(&self) -> Box<dyn Implementation + Send>;
}

impl<F> ImplementationFactory for F
where
    F: Fn() -> Box<dyn Implementation + Send> + Sync,
{
    fn create(&self) -> Box<dyn Implementation + Send> {
        self()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_follows_the_lessons_javascript_names() {
        let camel: Vec<_> = ["id", "receive_count", "first_received_at", "failed_at"]
            .iter()
            .map(|k| Naming::Camel.key(k).into_owned())
            .collect();
        assert_eq!(camel, ["id", "receiveCount", "firstReceivedAt", "failedAt"]);
        assert_eq!(Naming::Snake.key("first_attempt_at"), "first_attempt_at");
    }
}
