//! `dlqspec smoke`: a quick check that an implementation starts, speaks the protocol and
//! answers a few obvious calls, before any spec is run against it.
//!
//! It greets the implementation, and for each contract the implementation claims makes an
//! instance and a handful of calls against a tiny world whose right answers are beyond doubt.
//! The result is data (`SmokeReport`); `report::smoke` renders it.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::process::{
    ExternalImplementation, Handshake, Launch, ProcessExit, describe_call, describe_exit,
};
use crate::contracts::smoke::{SmokeAnswer, SmokeRequest};
use crate::model::captured::Captured;
use crate::model::implementation::{
    ImplError, Implementation, Offer, Raised, RaisedKind, Reply, WorldHost,
};

/// Everything a smoke run found out.
#[derive(Debug)]
pub(crate) struct SmokeReport {
    pub(crate) label: String,
    pub(crate) command: String,
    pub(crate) handshake: Result<Handshake, ImplError>,
    pub(crate) contracts: Vec<ContractCheck>,
    /// The contracts dlqspec checks, each with the class it expects, for a hint when none is
    /// claimed.
    pub(crate) known_contracts: Vec<(&'static str, &'static str)>,
    pub(crate) departure: Option<ProcessExit>,
    pub(crate) took: Duration,
    /// What the box held around it on this machine; `None` with `--sandbox off`.
    pub(crate) sandbox: Option<Vec<super::sandbox::Protection>>,
}

/// The calls made on one claimed contract.
#[derive(Debug)]
pub(crate) struct ContractCheck {
    pub(crate) contract: String,
    /// `false` for a contract dlqspec does not know: nothing is called.
    pub(crate) known: bool,
    pub(crate) steps: Vec<SmokeStep>,
}

#[derive(Debug)]
pub(crate) struct SmokeStep {
    /// The request, e.g. `process_one()`.
    pub(crate) request: String,
    pub(crate) took: Duration,
    /// World calls the implementation made while serving it.
    pub(crate) world_calls: usize,
    pub(crate) verdict: SmokeVerdict,
    /// What the implementation printed and raised while serving it.
    pub(crate) output: Option<Captured>,
}

#[derive(Debug)]
pub(crate) enum SmokeVerdict {
    /// It answered as expected; the answer as written in a spec.
    Ok(String),
    /// It answered something else.
    Wrong {
        actual: String,
        expected: String,
        why: String,
    },
    /// The process broke.
    Broke(ImplError),
    /// It said it does not provide this after all.
    Skipped(String),
}

impl SmokeReport {
    /// What is wrong, one sentence each; empty when all is well.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Err(error) = &self.handshake {
            problems.push(format!(
                "no handshake: {}",
                error.message.lines().next().unwrap_or_default()
            ));
            return problems;
        }
        for check in &self.contracts {
            for step in &check.steps {
                let contract = &check.contract;
                let request = &step.request;
                match &step.verdict {
                    SmokeVerdict::Ok(_) => {}
                    SmokeVerdict::Wrong {
                        actual, expected, ..
                    } => problems.push(format!(
                        "{contract}: {request} answered {actual}, expected {expected}"
                    )),
                    SmokeVerdict::Broke(error) => problems.push(format!(
                        "{contract}: {}",
                        error.message.lines().next().unwrap_or_default()
                    )),
                    SmokeVerdict::Skipped(reason) => problems.push(format!(
                        "{contract}: claimed in hello, but `new` was skipped: {reason}"
                    )),
                }
            }
        }
        if let (false, Ok(handshake)) = (self.contracts.iter().any(|c| c.known), &self.handshake) {
            let offer = Offer {
                contracts: handshake.contracts.clone(),
                defines: handshake.defines.clone(),
            };
            problems.push(format!(
                "it provides none of the contracts dlqspec checks: {}",
                offer.none_of(&self.known_contracts)
            ));
        }
        if let Some(departure) = &self.departure {
            if !departure.said_bye {
                problems.push("it did not answer `bye`".to_owned());
            }
            match departure.status {
                None => problems.push("it did not exit within 1 s of `bye`".to_owned()),
                Some(status) if !status.success() => problems.push(format!(
                    "after `bye` it {}, expected status 0",
                    describe_exit(status)
                )),
                Some(_) => {}
            }
        }
        problems
    }

    pub(crate) fn ok(&self) -> bool {
        self.problems().is_empty()
    }

    pub(crate) fn requests(&self) -> usize {
        self.contracts.iter().map(|c| c.steps.len()).sum()
    }
}

/// Starts the implementation, greets it, exercises each contract it claims, says `bye`.
pub(crate) fn smoke(launch: Launch, timeout: Duration) -> SmokeReport {
    let started = Instant::now();
    let command = launch.command_line();
    let label = launch.label.clone();
    let boxed = launch.limits.sandbox == super::sandbox::Sandbox::On;
    let mut implementation = ExternalImplementation::new(launch, timeout);
    let handshake = implementation.start().cloned();
    let mut contracts = Vec::new();
    if let Ok(handshake) = &handshake {
        for contract in &handshake.contracts {
            let plan = crate::contracts::find(contract)
                .and_then(|known| known.smoke_plan(implementation.naming()));
            let Some(mut plan) = plan else {
                contracts.push(ContractCheck {
                    contract: contract.clone(),
                    known: false,
                    steps: Vec::new(),
                });
                continue;
            };
            let steps = exercise(
                &mut implementation,
                contract,
                plan.world.as_mut(),
                plan.requests,
            );
            contracts.push(ContractCheck {
                contract: contract.clone(),
                known: true,
                steps,
            });
        }
    }
    let departure = implementation.shutdown();
    // Known once the implementation has started: the uid it ran as, or why it kept uid 0.
    let sandbox = boxed.then(|| {
        let mut protections = super::sandbox::features().protections();
        if let Some((held, text)) = super::sandbox::last_user() {
            protections.push(super::sandbox::Protection { held, text });
        }
        protections
    });
    SmokeReport {
        sandbox,
        label,
        command,
        handshake,
        contracts,
        known_contracts: crate::contracts::registry::all()
            .iter()
            .map(|c| (c.name(), c.subject()))
            .collect(),
        departure,
        took: started.elapsed(),
    }
}

/// Counts the world calls made through it.
struct Counting<'a> {
    world: &'a mut dyn WorldHost,
    calls: usize,
}

impl WorldHost for Counting<'_> {
    fn world_call(&mut self, call: &str, args: &[Value]) -> Result<Value, Raised> {
        self.calls += 1;
        self.world.world_call(call, args)
    }
}

fn exercise(
    implementation: &mut ExternalImplementation,
    contract: &str,
    world: &mut dyn WorldHost,
    plan: Vec<SmokeRequest>,
) -> Vec<SmokeStep> {
    let mut steps = Vec::new();
    // What the request before returned: a factory's snapshot.
    let mut previous: Option<Value> = None;
    for expected in plan {
        let mut counting = Counting { world, calls: 0 };
        let started = Instant::now();
        let sent = expected.args_after(previous.as_ref());
        let (request, reply) = if expected.method == "new" {
            let args = sent.first().cloned().unwrap_or(Value::Null);
            // Its parameters are told by `why`: the given parts and a value.
            let request = match args.get("factory").and_then(Value::as_str) {
                Some(factory) => format!("new {contract} by {factory}(its snapshot)"),
                None => format!("new {contract}"),
            };
            (
                request,
                implementation.create(contract, &args, &mut counting),
            )
        } else {
            (
                describe_call(&expected.method, &sent),
                implementation.call(&expected.method, &sent, &mut counting),
            )
        };
        previous = match &reply {
            Ok(Reply::Returned(value)) => Some(value.clone()),
            _ => None,
        };
        let took = started.elapsed();
        let world_calls = counting.calls;
        let output = implementation.take_output();
        let verdict = judge(reply, &expected);
        let stop = !matches!(verdict, SmokeVerdict::Ok(_));
        steps.push(SmokeStep {
            request,
            took,
            world_calls,
            verdict,
            output,
        });
        if stop {
            break;
        }
    }
    steps
}

fn judge(reply: Result<Reply, ImplError>, expected: &SmokeRequest) -> SmokeVerdict {
    let shown = |value: &Value| crate::text::yaml::flow(value);
    let wrong = |actual: String| SmokeVerdict::Wrong {
        actual,
        expected: match &expected.answer {
            SmokeAnswer::Any if expected.method == "new" => "an instance".to_owned(),
            SmokeAnswer::Any => "a return".to_owned(),
            SmokeAnswer::Data => "plain data".to_owned(),
            SmokeAnswer::Returns(value) => shown(value),
            SmokeAnswer::Raises(error) => format!("raises {error}"),
        },
        why: expected.why.clone(),
    };
    let made = |value: String| match expected.method.as_str() {
        "new" => SmokeVerdict::Ok("made".to_owned()),
        _ => SmokeVerdict::Ok(value),
    };
    match reply {
        Err(error) => SmokeVerdict::Broke(error),
        Ok(Reply::Skipped(reason)) => SmokeVerdict::Skipped(reason),
        Ok(Reply::Raised(raised)) => match &expected.answer {
            SmokeAnswer::Raises(error) if raised.is_named(error) => {
                SmokeVerdict::Ok(format!("raised {}", raised.describe()))
            }
            _ => wrong(match raised.kind {
                RaisedKind::Crash => format!("raised Crash: {}", raised.message),
                _ => format!("raised {}", raised.describe()),
            }),
        },
        Ok(Reply::Returned(value)) => match &expected.answer {
            SmokeAnswer::Any | SmokeAnswer::Data => made(shown(&value)),
            SmokeAnswer::Returns(want) if *want == value => SmokeVerdict::Ok(shown(&value)),
            _ => wrong(shown(&value)),
        },
        // JavaScript's `undefined`: right where any value will do, wrong where one is pinned
        // or plain data is asked for.
        Ok(Reply::Undefined) => match &expected.answer {
            SmokeAnswer::Any => made("undefined".to_owned()),
            _ => wrong("undefined".to_owned()),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn asked(answer: SmokeAnswer) -> SmokeRequest {
        SmokeRequest::call("take", vec![], answer, "why")
    }

    #[test]
    fn undefined_is_a_return_only_where_no_value_is_pinned() {
        let ok = |verdict: SmokeVerdict| matches!(verdict, SmokeVerdict::Ok(_));
        assert!(ok(judge(Ok(Reply::Undefined), &asked(SmokeAnswer::Any))));
        assert!(!ok(judge(
            Ok(Reply::Undefined),
            &asked(SmokeAnswer::Returns(Value::Null))
        )));
        assert!(ok(judge(
            Ok(Reply::Returned(json!(1))),
            &asked(SmokeAnswer::Returns(json!(1)))
        )));
        assert!(!ok(judge(
            Ok(Reply::Returned(json!(2))),
            &asked(SmokeAnswer::Returns(json!(1)))
        )));
    }

    #[test]
    fn a_raised_error_matches_by_word_class_or_base_and_a_crash_never() {
        let error = Raised::error("StaleLease", "old").extending("LeaseError");
        assert!(error.is_named("StaleLease"));
        assert!(error.is_named("LeaseError"));
        assert!(error.is_named("error"));
        assert!(!error.is_named("invalid_argument"));
        assert!(Raised::invalid_argument("RangeError", "x").is_named("error"));
        assert!(!Raised::crash("boom").is_named("error"));
        let raised = judge(
            Ok(Reply::Raised(error.clone())),
            &asked(SmokeAnswer::Raises("LeaseError".into())),
        );
        assert!(matches!(raised, SmokeVerdict::Ok(_)), "{raised:?}");
        let verdict = judge(
            Ok(Reply::Returned(json!(true))),
            &asked(SmokeAnswer::Raises("StaleLease".into())),
        );
        let SmokeVerdict::Wrong { expected, .. } = verdict else {
            panic!("{verdict:?}");
        };
        assert_eq!(expected, "raises StaleLease");
    }
}
