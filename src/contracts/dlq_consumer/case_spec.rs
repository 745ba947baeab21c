//! A dlq-consumer case as a spec: the typed value `generate::writer` writes out, key for key
//! and step for step as the spec vocabulary (`spec.rs`) reads it back.
//!
//! Explore builds one from a case (`explore.rs`, `DlqCase::spec`); blessing fills in its
//! placeholders (`returns: []`, an `expect`'s empty lists and maps).

use indexmap::IndexMap;
use serde::Serialize;

use super::world::{ScriptedCall, ScriptedOutcome};
use crate::generate::writer::Block;

/// The spec after its header.
#[derive(Debug, Serialize)]
pub(crate) struct DlqSpec<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_attempts: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) messages: Vec<MessageSpec<'a>>,
    /// Each id's handler calls, in the order the case lists them.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) handler: IndexMap<&'a str, Vec<CallSpec<'a>>>,
    pub(crate) steps: Block<Vec<StepSpec<'a>>>,
}

/// A message of the queue, or one a step sends.
#[derive(Debug, Serialize)]
pub(crate) struct MessageSpec<'a> {
    pub(crate) id: &'a str,
    pub(crate) body: &'a str,
}

/// One step.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StepSpec<'a> {
    /// `process: ok` (a placeholder) or `process: any` (a probe compares nothing).
    Process(&'static str),
    Replay(ReplaySpec<'a>),
    Recover,
    Restart,
    Advance(u64),
    Send(MessageSpec<'a>),
    Fault(FaultSpec),
    /// The observations asked for, each an empty placeholder, one a line.
    Expect(Block<IndexMap<&'static str, Placeholder>>),
}

/// A replay of every entry (`ids` left out) or of the ids given.
#[derive(Debug, Serialize)]
pub(crate) struct ReplaySpec<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ids: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) crash: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) returns: Option<Placeholder>,
}

/// A crash armed for a call: `crash: before` or `after`, its `nth` left out when it is 1.
#[derive(Debug, Serialize)]
pub(crate) struct FaultSpec {
    pub(crate) crash: &'static str,
    pub(crate) call: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) nth: Option<u32>,
}

/// An empty answer for blessing to fill in: `[]` or `{}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placeholder {
    List,
    Map,
}

impl Serialize for Placeholder {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Placeholder::List => serializer.collect_seq(std::iter::empty::<()>()),
            Placeholder::Map => serializer.collect_map(std::iter::empty::<((), ())>()),
        }
    }
}

/// A scripted handler call: its word alone (`ok`, `crash`), or its word and what it holds.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum CallSpec<'a> {
    Bare(&'static str),
    Detailed(Detailed<'a>),
}

/// A call written with its word as the key: `transient: db timeout`, `ok: {takes: 3}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Detailed<'a> {
    Ok(Takes),
    Crash(Takes),
    Transient(GivenSpec<'a>),
    Permanent(GivenSpec<'a>),
    Error(UnexpectedSpec<'a>),
}

/// How long a call takes.
#[derive(Debug, Serialize)]
pub(crate) struct Takes {
    pub(crate) takes: u64,
}

/// A given error: its message alone, or with its subclass and time.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum GivenSpec<'a> {
    Message(&'a str),
    Full {
        message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        class: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        takes: Option<u64>,
    },
}

/// An error of a class of its own.
#[derive(Debug, Serialize)]
pub(crate) struct UnexpectedSpec<'a> {
    pub(crate) class: &'a str,
    pub(crate) message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) takes: Option<u64>,
}

impl<'a> CallSpec<'a> {
    /// `call` as a spec scripts it.
    pub(crate) fn of(call: &'a ScriptedCall) -> Self {
        let takes = (call.takes > 0).then_some(call.takes);
        match &call.outcome {
            ScriptedOutcome::Ok => match takes {
                None => CallSpec::Bare("ok"),
                Some(takes) => CallSpec::Detailed(Detailed::Ok(Takes { takes })),
            },
            ScriptedOutcome::Crash => match takes {
                None => CallSpec::Bare("crash"),
                Some(takes) => CallSpec::Detailed(Detailed::Crash(Takes { takes })),
            },
            ScriptedOutcome::Transient(error) | ScriptedOutcome::Permanent(error) => {
                let given = match (&error.subclass, takes) {
                    (None, None) => GivenSpec::Message(&error.message),
                    (class, takes) => GivenSpec::Full {
                        message: &error.message,
                        class: class.as_deref(),
                        takes,
                    },
                };
                CallSpec::Detailed(if call.outcome.is_permanent() {
                    Detailed::Permanent(given)
                } else {
                    Detailed::Transient(given)
                })
            }
            ScriptedOutcome::Error { class, message } => {
                CallSpec::Detailed(Detailed::Error(UnexpectedSpec {
                    class,
                    message,
                    takes,
                }))
            }
        }
    }
}
