//! The JSON-lines protocol between dlqspec and an external implementation (version 1), as serde
//! types: what dlqspec writes ([`Outgoing`]) and what an implementation writes back
//! ([`Incoming`]).
//!
//! docs/protocol.md is the description for shim writers; [`crate::schema::REQUEST`] and
//! [`crate::schema::REPLY`] are JSON Schemas of the same messages. Every message is one JSON
//! object on one line; every one carries `seq`. dlqspec reads a reply more strictly than these
//! types alone (every key known, bounded in size and depth): a reply is also checked against
//! the schema's keys.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::captured::{Frame, StreamName};

/// The protocol version this dlqspec speaks, sent in `hello` and required back.
pub const PROTOCOL_VERSION: u64 = 1;

/// A message dlqspec writes to the implementation's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outgoing {
    /// The request's number (1, 2, 3... per process); a world answer repeats the request's.
    pub seq: u64,
    #[serde(flatten)]
    pub body: Request,
}

/// What dlqspec asks, by its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    Hello {
        protocol: u64,
        /// The contracts the run may ask for (the built-in ones and the exercise folders), by
        /// name, each with what a shim needs to serve it without knowing it: its class, given
        /// parts and errors (docs/protocol.md, "Exercises"). Left out when there are none.
        #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
        exercises: serde_json::Map<String, Value>,
    },
    /// Make a fresh instance of a contract's subject, dropping any earlier one.
    New {
        contract: String,
        /// `{params: [{value: V} | {given: PART}], factory?: NAME}`: the constructor's (or
        /// the factory's) arguments in order.
        args: Value,
        /// The class to make, the one the contract's description in `hello` names.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<String>,
    },
    /// Call a method (snake_case, language-neutral) of the current instance.
    Call {
        method: String,
        args: Vec<Value>,
        /// The world calls it is foreseen to make, with their answers (an implementation whose
        /// `hello` lists the `foresight` feature).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        foresee: Vec<ForeseenCall>,
    },
    /// The answer to world call `n` of the request being served: what it returned...
    Result {
        n: u64,
        value: Value,
    },
    /// ...or what it raised.
    Raise {
        n: u64,
        error: Raised,
    },
    Bye,
}

/// A foreseen world call as the protocol writes it: `call`, `args`, and `value` or `raise`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeseenCall {
    pub call: String,
    pub args: Vec<Value>,
    /// Present when the call returns, even as `null`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raise: Option<Raised>,
}

impl ForeseenCall {
    /// Whether `answer` is the one foreseen.
    pub fn answers(&self, answer: &Result<Value, Raised>) -> bool {
        match answer {
            Ok(value) => self.raise.is_none() && self.value.as_ref() == Some(value),
            Err(raised) => self.value.is_none() && self.raise.as_ref() == Some(raised),
        }
    }
}

/// The features of protocol v1 beyond its core, which an implementation lists in its `hello`
/// (`features`) to have dlqspec use them (docs/protocol.md).
pub const FEATURES: &[&str] = &["foresight"];

/// A message the implementation writes to its stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Incoming {
    /// Echoes the request being answered or served.
    pub seq: u64,
    #[serde(flatten)]
    pub body: IncomingBody,
}

/// What the implementation answers or asks, by its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum IncomingBody {
    /// The answer to `hello`: who is speaking and which contracts it provides.
    Hello {
        protocol: u64,
        implementation: ImplementationInfo,
        contracts: Vec<String>,
        /// The names the solution defines at top level, so that a file without the contract's
        /// class can be told what it does define.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        defines: Option<Vec<String>>,
        /// How it spells multi-word keys; by default camelCase for JavaScript and TypeScript,
        /// snake_case for anything else.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        naming: Option<Naming>,
        /// The protocol's optional features it supports (`FEATURES`); names it does not know
        /// are ignored, so a shim may list a feature a later dlqspec has.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        features: Vec<String>,
    },
    /// The implementation could not do what was asked: the solution does not load (answering
    /// `hello`), the class has no such method, a result is not JSON...
    Errored {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<String>,
        /// Optional, on `new`/`call`: the frames of an error the solution's code raised where
        /// no call could catch it (a Node timer or promise after a call returned).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        traceback: Option<Vec<Frame>>,
    },
    /// A method or constructor finished normally, with its value.
    Return(Returned),
    Raised {
        error: Raised,
        /// Optional: for an error raised from the solution's own code, its frames in the
        /// solution's files, innermost first (shim frames removed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        traceback: Option<Vec<Frame>>,
    },
    /// While serving a request: what the solution printed since the last `output`, on one
    /// stream; `cut` counts bytes the shim dropped rather than hold. Never answered.
    Output {
        stream: StreamName,
        text: String,
        #[serde(default)]
        cut: u64,
    },
    /// The implementation does not provide what `new` asked for.
    Skipped {
        reason: String,
    },
    /// While serving a request: a call on the world (queue, DLQ, clock, handler); dlqspec answers
    /// with `result` or `raise` before the implementation goes on.
    World {
        n: u64,
        call: String,
        args: Vec<Value>,
        /// The implementation took the answer the request foresaw for this call and goes on
        /// without waiting: dlqspec performs the call and answers nothing.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        foreseen: bool,
    },
    Bye,
}

impl IncomingBody {
    /// The `type` as written on the wire, for messages about a reply out of place.
    pub fn type_name(&self) -> &'static str {
        match self {
            IncomingBody::Hello { .. } => "hello",
            IncomingBody::Errored { .. } => "errored",
            IncomingBody::Return(_) => "return",
            IncomingBody::Raised { .. } => "raised",
            IncomingBody::Skipped { .. } => "skipped",
            IncomingBody::World { .. } => "world",
            IncomingBody::Output { .. } => "output",
            IncomingBody::Bye => "bye",
        }
    }
}

/// What a `return` carries: a JSON value, or the language's "no value" that is not its null
/// (JavaScript's `undefined`), which JSON cannot write: `"undefined": true` in place of `value`.
/// Exactly one of the two: a `return` without either is a shim that lost the value, one with
/// both says two things.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ReturnFields", into = "ReturnFields")]
pub enum Returned {
    Value(Value),
    Undefined,
}

/// A `return` as written on the wire, before [`Returned`] decides what it says.
#[derive(Serialize, Deserialize)]
struct ReturnFields {
    /// Present when written, even as `null`: `null` is a value, absence is not.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    undefined: Option<bool>,
}

/// A field that was written, `null` included.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl TryFrom<ReturnFields> for Returned {
    type Error = String;

    fn try_from(fields: ReturnFields) -> Result<Self, String> {
        match (fields.value, fields.undefined) {
            (Some(value), None) => Ok(Returned::Value(value)),
            (None, Some(true)) => Ok(Returned::Undefined),
            (None, None) => Err(
                "a `return` message has no `value`: a method that returns nothing sends \"value\":null, and JavaScript's undefined \"undefined\":true".to_owned(),
            ),
            (Some(_), Some(_)) => Err(
                "a `return` message carries `value` or \"undefined\":true, not both".to_owned(),
            ),
            (None, Some(false)) => Err(
                "`undefined` in a `return` message is true or left out: a value is sent as `value`"
                    .to_owned(),
            ),
        }
    }
}

impl From<Returned> for ReturnFields {
    fn from(returned: Returned) -> Self {
        match returned {
            Returned::Value(value) => ReturnFields {
                value: Some(value),
                undefined: None,
            },
            Returned::Undefined => ReturnFields {
                value: None,
                undefined: Some(true),
            },
        }
    }
}

/// Who answered `hello`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplementationInfo {
    pub name: String,
    pub language: String,
    pub version: String,
}

/// How a raised error is classified, independent of language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RaisedKind {
    /// The process died (`Crash`): it must propagate, never be handled.
    Crash,
    /// The language's invalid-argument error (Python `ValueError`, JS `RangeError`).
    InvalidArgument,
    /// Any other error.
    Error,
}

impl RaisedKind {
    /// The kind as a spec names it: `crash`, `invalid_argument`, `error`.
    pub fn word(self) -> &'static str {
        match self {
            RaisedKind::Crash => "crash",
            RaisedKind::InvalidArgument => "invalid_argument",
            RaisedKind::Error => "error",
        }
    }
}

/// An error raised by an implementation, or by the world into an implementation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Raised {
    pub kind: RaisedKind,
    pub class: String,
    pub message: String,
    /// The given class this one is a subclass of (`PermanentError`, `TransientError`), when the
    /// world raises a subclass a spec names: the protocol's `extends`, which a shim raises as a
    /// real subclass, so that `except PermanentError` / `instanceof PermanentError` holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
}

impl Raised {
    pub fn new(kind: RaisedKind, class: impl Into<String>, message: impl Into<String>) -> Self {
        Raised {
            kind,
            class: class.into(),
            message: message.into(),
            extends: None,
        }
    }

    /// The same error, of a subclass of the given class `given`.
    pub fn extending(mut self, given: impl Into<String>) -> Self {
        self.extends = Some(given.into());
        self
    }

    /// Whether it is an error of class `class`, or of a subclass of it: what `except class`
    /// catches.
    pub fn is_a(&self, class: &str) -> bool {
        self.class == class || self.extends.as_deref() == Some(class)
    }

    /// Whether it is the error a spec names `name`: its kind's word (`error` being any but a
    /// crash), or its class or a class it extends.
    pub fn is_named(&self, name: &str) -> bool {
        let word = self.kind.word();
        word == name || (name == "error" && word != "crash") || self.is_a(name)
    }

    pub fn crash(message: impl Into<String>) -> Self {
        Self::new(RaisedKind::Crash, "Crash", message)
    }

    pub fn error(class: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(RaisedKind::Error, class, message)
    }

    pub fn invalid_argument(class: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(RaisedKind::InvalidArgument, class, message)
    }

    /// `Class: message`, the form docs/contracts.md pins for DLQ entries.
    pub fn describe(&self) -> String {
        format!("{}: {}", self.class, self.message)
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
    pub fn key<'k>(self, key: &'k str) -> std::borrow::Cow<'k, str> {
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
