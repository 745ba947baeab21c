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
    /// A `new` by a factory from a snapshot (a restart's): the value the request before it
    /// returned goes first in its `params`, so the instance is made from the implementation's
    /// own snapshot, whose shape is its own.
    pub(crate) from_snapshot: bool,
}

/// What a request must answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SmokeAnswer {
    /// Any return (JavaScript's `undefined` included): the contract pins no value here.
    Any,
    /// Plain data: any value returned, not JavaScript's `undefined` nor an error (a snapshot,
    /// whose shape is the implementation's own).
    Data,
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
            from_snapshot: false,
        }
    }

    /// A `new` by a factory: `args` as `create` sends it, the first of its `params` a
    /// placeholder for the snapshot the request before it returns.
    pub(crate) fn from_snapshot(args: Value, why: impl Into<String>) -> SmokeRequest {
        SmokeRequest {
            from_snapshot: true,
            ..SmokeRequest::new_instance(args, why)
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
            from_snapshot: false,
        }
    }

    /// The arguments to send, `previous` being what the request before it returned: a
    /// factory's snapshot put in its place.
    pub(crate) fn args_after(&self, previous: Option<&Value>) -> Vec<Value> {
        let mut args = self.args.clone();
        if self.from_snapshot
            && let Some(slot) = args
                .first_mut()
                .and_then(|wire| wire.get_mut("params"))
                .and_then(|params| params.get_mut(0))
        {
            *slot = serde_json::json!({ "value": previous.cloned().unwrap_or(Value::Null) });
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_factory_is_handed_the_snapshot_the_request_before_it_returned() {
        let wire =
            json!({"params": [{"value": null}, {"given": "clock"}], "factory": "from_snapshot"});
        let restart = SmokeRequest::from_snapshot(wire.clone(), "why");
        let taken = json!({"ttl": 3, "keys": []});
        assert_eq!(
            restart.args_after(Some(&taken)),
            [
                json!({"params": [{"value": {"ttl": 3, "keys": []}}, {"given": "clock"}], "factory": "from_snapshot"})
            ]
        );
        // Any other request's arguments are sent as written.
        let made = SmokeRequest::new_instance(wire.clone(), "why");
        assert_eq!(made.args_after(Some(&taken)), [wire]);
    }
}
