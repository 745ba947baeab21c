//! What `dlqspec smoke` asks of a contract: a tiny world and a few requests, each with the
//! answer any correct implementation gives. The contract writes its plan; `external::smoke`
//! plays it on the implementation and knows no contract.

use serde_json::Value;

use crate::model::implementation::WorldHost;

/// A contract's smoke test: the world the calls act on, and the requests in order, the first
/// of them `new`.
pub struct SmokePlan {
    pub(crate) world: Box<dyn WorldHost>,
    pub(crate) requests: Vec<SmokeRequest>,
}

/// One request and what a correct implementation answers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SmokeRequest {
    /// `new` for the instance (its one argument the request's `args`, as `create` sends it),
    /// else the method called.
    pub(crate) method: String,
    pub(crate) args: Vec<Value>,
    pub(crate) answer: SmokeAnswer,
    /// Why that answer is the right one, as the report tells it.
    pub(crate) why: String,
}

/// What a request must answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SmokeAnswer {
    /// Any return (JavaScript's `undefined` included): the contract pins no value here.
    Any,
    /// This value.
    Returns(Value),
    /// An error raised, of this kind's word (`invalid_argument`, `error`) or class.
    Raises(String),
}

impl SmokeRequest {
    /// The `new` request, with the arguments `create` sends.
    pub(crate) fn new_instance(args: Value, why: impl Into<String>) -> SmokeRequest {
        SmokeRequest {
            method: "new".to_owned(),
            args: vec![args],
            answer: SmokeAnswer::Any,
            why: why.into(),
        }
    }

    /// A call of `method` that must give `answer`.
    pub(crate) fn call(
        method: &str,
        args: Vec<Value>,
        answer: SmokeAnswer,
        why: impl Into<String>,
    ) -> SmokeRequest {
        SmokeRequest {
            method: method.to_owned(),
            args,
            answer,
            why: why.into(),
        }
    }
}
