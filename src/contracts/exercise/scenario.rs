//! Plays an exercise's spec on any implementation: each step a call with the spec's arguments
//! in the order the method takes them, each answer compared with what the spec pins, `expect`
//! compared with the state views and the given parts' records. Two checks need no expectation:
//! a call the spec expects to raise must leave every view as it was, and a `mutate_VIEW` must
//! leave the instance's own state as it was.

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::definition::{Exercise, Point, raised_word};
use super::panel;
use super::vocabulary::{Answer, Loaded, Placed, Step};
use super::world::{ExerciseWorld, WorldCall};
use crate::contracts::contract::{Checkpoint, RunMode, ScenarioRun, WrittenValue};
use crate::contracts::recorder::Recorder;
use crate::contracts::timeline::{TimelineEvent, Tone};
use crate::model::implementation::{Implementation, Raised, Reply, UNDEFINED_IS_NOT_NULL};
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::SpecError;
use crate::text::yaml;

/// How a diff shows JavaScript's `undefined`.
const UNDEFINED: &str = "undefined";

const UNCHANGED_AFTER_ERROR: &str = "a call that raises must leave every state view as it was: the view differs before and after it";
const DEEP_COPY: &str =
    "the view must be a deep copy: changing the value it returned changed the instance";

/// A spec of an exercise, ready to run.
#[derive(Debug)]
pub(crate) struct ExerciseScenario {
    pub(crate) exercise: &'static Exercise,
    pub(crate) file: SourceFile,
    pub(crate) loaded: Loaded,
}

/// One step of a run, as a diagnosis compares it with the reference's: the call made and its
/// answer, and every view and record after the step (when the run probes them).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    /// The step, from 0; the final expect is the step after the last.
    pub(crate) step: usize,
    /// The method called (`create`, `restart`, `mutate_VIEW`, `expect`, `advance`).
    pub(crate) call: String,
    pub(crate) args: Map<String, Value>,
    /// The answer, for a step that calls the instance.
    pub(crate) reply: Option<Reply>,
    /// Each view and record after the step, by name.
    pub(crate) after: Vec<(String, Value)>,
    /// The clock after the step.
    pub(crate) now: Value,
    /// Whether the spec pins what the call returns: then JavaScript's `undefined` is not the
    /// `null` pinned, where elsewhere the two are one answer.
    pub(crate) pinned: bool,
}

impl ExerciseScenario {
    /// Runs the spec; with `probe`, asks every view after every step too (a diagnosis: reads
    /// the exercise declares free of effects), keeping a mark of each step.
    pub(crate) fn play(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
        probe: bool,
    ) -> Played {
        let telling = mode == RunMode::Explain;
        let mut play = Play {
            scenario: self,
            exercise: self.exercise,
            implementation,
            recorder: Recorder::new(mode),
            world: ExerciseWorld::new(self.exercise, self.loaded.scripts.clone(), telling),
            marks: Vec::new(),
            probe,
            created: None,
            alive: false,
            heading: String::new(),
            step_ends: Vec::new(),
        };
        let stopped = play.all().err();
        Played {
            calls: play.world.calls_made(),
            marks: std::mem::take(&mut play.marks),
            step_ends: std::mem::take(&mut play.step_ends),
            run: play.recorder.finish(stopped),
        }
    }

    /// The rule deciding a step, from what the spec pins for it (which the reference does).
    pub(crate) fn decision(&self, step: &Step) -> Option<&'static Rule> {
        let (call, args, answer) = match step {
            Step::Create { args, answer } => ("create", Some(args), Some(answer)),
            Step::Call {
                method,
                args,
                answer,
            } => (method.as_str(), Some(args), Some(answer)),
            Step::Mutate { view, .. } => {
                return self.exercise.rule_at(&Point {
                    mutate: Some(view),
                    ..Point::default()
                });
            }
            Step::Restart => ("restart", None, None),
            Step::Advance { .. } | Step::Expect { .. } => return None,
        };
        let pinned = answer.cloned().unwrap_or_default();
        self.exercise.rule_at(&Point {
            call: Some(call),
            args,
            returns: pinned.returns.as_ref(),
            raises: pinned.raises.as_deref().map(|r| (r, None)),
            ..Point::default()
        })
    }
}

struct Play<'a> {
    scenario: &'a ExerciseScenario,
    exercise: &'static Exercise,
    implementation: &'a mut dyn Implementation,
    recorder: Recorder,
    world: ExerciseWorld<'static>,
    marks: Vec<Mark>,
    probe: bool,
    /// The last `create`'s arguments, for a restart without a snapshot.
    created: Option<Map<String, Value>>,
    /// Whether an instance exists.
    alive: bool,
    /// How the timeline names the step running: `step 3 (line 11)`.
    heading: String,
    /// Where each step's lines end in the timeline, by step: where a diagnosis tells what
    /// the step decided.
    step_ends: Vec<(usize, usize)>,
}

/// A spec played: the run, each step's mark (when probed) and where each step's lines end in
/// its timeline (when told).
pub(crate) struct Played {
    pub(crate) run: ScenarioRun,
    pub(crate) marks: Vec<Mark>,
    /// How many calls the run made of each callable given part.
    pub(crate) calls: IndexMap<String, u64>,
    pub(crate) step_ends: Vec<(usize, usize)>,
}

impl Play<'_> {
    fn all(&mut self) -> Result<(), Outcome> {
        let scenario = self.scenario;
        for (index, placed) in scenario.loaded.steps.iter().enumerate() {
            self.heading = format!("step {} (line {})", index + 1, placed.position.line);
            self.recorder.begin_step();
            if let Some(rule) = scenario.decision(&placed.step) {
                self.recorder.decided(rule);
            }
            let label = format!("step {} ({})", index + 1, placed.step.kind());
            let mut ran = self.step(index, &label, placed);
            self.recorder
                .describe_step(&mut ran, || Some(placed.item.clone()));
            self.step_ends.push((index, self.recorder.told()));
            ran?;
        }
        if let Some((position, expected)) = &scenario.loaded.expect {
            let index = scenario.loaded.steps.len();
            self.recorder.begin_step();
            self.heading = format!("final expect (line {})", position.line);
            self.recorder
                .tell_event(self.heading.clone(), TimelineEvent::Step { kind: "expect" });
            self.expect(index, "final expect", *position, &[], expected)?;
        }
        Ok(())
    }

    fn step(&mut self, index: usize, label: &str, placed: &Placed) -> Result<(), Outcome> {
        let position = placed.position;
        if self.recorder.telling() && !matches!(placed.step, Step::Expect { .. }) {
            self.recorder.tell_event(
                format!("{}: {}", self.heading, placed.written),
                TimelineEvent::Step {
                    kind: static_kind(&placed.step),
                },
            );
        }
        match &placed.step {
            Step::Create { args, answer } => {
                let wire = self.constructor(args, None);
                self.construct(index, label, position, "create", args, &wire, Some(answer))?;
                if self.alive {
                    self.created = Some(args.clone());
                }
            }
            Step::Call {
                method,
                args,
                answer,
            } => {
                let before = match &answer.raises {
                    Some(_) => Some(self.views()?),
                    None => None,
                };
                let positional = self.positional(method, args);
                let reply = self.call(method, &positional)?;
                self.rules_of(method, Some(args), answer, &reply);
                self.mark(index, method, args.clone(), Some(reply.clone()))?;
                if let Some(mark) = self.marks.last_mut() {
                    mark.pinned = answer.returns.is_some();
                }
                self.answer(label, position, method, answer, &reply)?;
                if let (Some(before), Reply::Raised(_)) = (before, &reply) {
                    let after = self.views()?;
                    self.compare(
                        label,
                        position,
                        "state",
                        before,
                        after,
                        UNCHANGED_AFTER_ERROR,
                    )?;
                }
            }
            Step::Mutate { view, ops, .. } => {
                if let Some(rule) = self.scenario.decision(&placed.step) {
                    self.recorder.exercise(rule, rule.statement);
                }
                let before = self.view(view)?;
                let call = format!("mutate_{view}");
                // Changes the view cannot take are the step's difference (the spec's, where
                // the view is the reference's), not a request the implementation failed.
                if let Some(why) = super::changes::misfit(&before, ops) {
                    let expected = json!({ "applied": true });
                    let actual = json!({ "applied": false, "error": why });
                    let note =
                        format!("the changes cannot be made to what {view}() returned here: {why}");
                    return self.compare(label, position, &call, expected, actual, &note);
                }
                let reply = self.call("mutate_view", &[json!(view), Value::Array(ops.clone())])?;
                self.mark(index, &call, Map::new(), Some(reply.clone()))?;
                if let Reply::Raised(raised) = &reply {
                    let expected = json!({ "applied": true });
                    let actual = json!({ "applied": false, "error": raised.describe() });
                    let note = format!("the changes could not be made to what {view}() returned");
                    self.compare(label, position, &call, expected, actual, &note)?;
                }
                let after = self.view(view)?;
                self.compare(label, position, view, before, after, DEEP_COPY)?;
            }
            Step::Advance { by } => {
                // What the clock's move changes is decided by the rules of a view's key alone
                // (`{view: state, key: leased}`): the keys it changes exercise them.
                let before = if self.alive && self.exercise.has_clock_rules() {
                    Some(self.views()?)
                } else {
                    None
                };
                self.world.advance(by).map_err(|why| {
                    Outcome::SpecError(SpecError::invalid(&self.scenario.file, position, why))
                })?;
                if let Some(before) = before {
                    let after = self.views()?;
                    self.exercise_changed_keys(&before, &after);
                }
                if self.recorder.telling() {
                    let lane = self
                        .exercise
                        .clock()
                        .map_or("test", |c| lane(self.exercise, &c.name));
                    self.recorder.tell_event(
                        format!("    the clock is {}", self.world.now()),
                        TimelineEvent::Mark {
                            lane,
                            label: format!("now {}", self.world.now()),
                            tone: Tone::Clock,
                        },
                    );
                    // What the move made of the lists: a lease run out, a retry time reached.
                    if self.alive {
                        self.tell_lists()?;
                    }
                }
                self.mark(index, "advance", Map::new(), None)?;
            }
            Step::Restart => self.restart(index, label, position)?,
            Step::Expect { expected } => {
                self.expect(index, label, position, &[placed.step.kind()], expected)?;
            }
        }
        Ok(())
    }

    fn constructor(&self, args: &Map<String, Value>, snapshot: Option<(&str, Value)>) -> Value {
        constructor_wire(self.exercise, args, snapshot)
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one step's parts, each used once"
    )]
    fn construct(
        &mut self,
        index: usize,
        label: &str,
        position: Position,
        call: &str,
        args: &Map<String, Value>,
        wire: &Value,
        answer: Option<&Answer>,
    ) -> Result<(), Outcome> {
        let reply = self
            .implementation
            .create(self.exercise.name, wire, &mut self.world)
            .map_err(Outcome::Errored)?;
        if self.recorder.telling() {
            let shown: Vec<String> = wire["params"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|param| match (param.get("given"), param.get("value")) {
                    (Some(part), _) => part.as_str().unwrap_or_default().to_owned(),
                    (None, Some(value)) => yaml::flow(value),
                    _ => String::new(),
                })
                .collect();
            let made = match wire.get("factory").and_then(Value::as_str) {
                Some(factory) => format!("{}.{factory}", self.exercise.class),
                None => self.exercise.class.to_owned(),
            };
            let constructed = match &reply {
                Reply::Returned(_) | Reply::Undefined => Reply::Returned(json!("a new instance")),
                other => other.clone(),
            };
            self.tell_call(&format!("{made}({})", shown.join(", ")), &constructed);
        }
        if let Reply::Skipped(reason) = &reply {
            return Err(Outcome::Skipped(reason.clone()));
        }
        self.alive = matches!(reply, Reply::Returned(_) | Reply::Undefined);
        let pinned = answer.cloned().unwrap_or_default();
        self.rules_of(call, Some(args), &pinned, &reply);
        self.mark(index, call, args.clone(), Some(reply.clone()))?;
        // The constructor's value is no answer: `undefined` is as good as `null`.
        let actual = match &reply {
            Reply::Raised(raised) => raised_value(raised, pinned.raises.as_deref()),
            _ => json!({ "constructed": true }),
        };
        let expected = match &pinned.raises {
            Some(raises) => json!({ "raises": raises }),
            None => json!({ "constructed": true }),
        };
        let note = format!(
            "{} must be made from these arguments as the rules say",
            self.exercise.class
        );
        // What blessing writes: `raises` where the reference raised, nothing where it made one.
        let written = match (&reply, answer) {
            (Reply::Raised(raised), Some(answer)) if pinned.raises.is_none() => {
                vec![rewritten(
                    position,
                    call,
                    answer,
                    "raises",
                    json!(self.exercise.raised_name(raised)),
                )]
            }
            // A constructor returns nothing by nature: a `returns` written on it (explore's
            // placeholder, `null`, included) goes.
            (Reply::Returned(_) | Reply::Undefined, Some(answer))
                if pinned.raises.is_some() || answer.body.get("returns").is_some() =>
            {
                vec![rewritten(position, call, answer, "", Value::Null)]
            }
            _ => Vec::new(),
        };
        let placeholder = pinned.returns.is_some() && self.alive;
        let checkpoint = Checkpoint {
            position,
            label: call.to_owned(),
            // A constructor's placeholder answer (explore's) compares nothing.
            expected: if placeholder {
                actual.clone()
            } else {
                expected
            },
            actual,
            written,
        };
        self.recorder.compare(label, checkpoint, Some(note))?;
        if !self.alive && pinned.raises.is_none() && pinned.returns.is_none() {
            // No instance exists, so no later step can run, even when recording.
            return Err(self.recorder.stop());
        }
        Ok(())
    }

    fn restart(&mut self, index: usize, label: &str, position: Position) -> Result<(), Outcome> {
        // Only a made instance restarts: after a refused `create` there is none, and a
        // restart makes none (not one from the defaults the spec never asked for).
        let Some(args) = self.created.clone() else {
            self.recorder.tell_event(
                "    no instance to restart: create made none".to_owned(),
                TimelineEvent::Note,
            );
            return Ok(());
        };
        let wire = match self.exercise.restart.clone() {
            Some((snapshot, from)) => {
                let reply = self.call(&snapshot, &[])?;
                match reply {
                    Reply::Returned(taken) => self.constructor(&args, Some((&from, taken))),
                    other => {
                        let expected = json!({ "snapshot": "plain data" });
                        let actual = reply_value(&other);
                        let note = format!(
                            "{snapshot}() must return the instance's snapshot, plain data a new instance is made from"
                        );
                        self.compare(label, position, &snapshot, expected, actual, &note)?;
                        return Err(self.recorder.stop());
                    }
                }
            }
            None => self.constructor(&args, None),
        };
        self.construct(index, label, position, "restart", &args, &wire, None)
    }

    fn positional(&self, method: &str, args: &Map<String, Value>) -> Vec<Value> {
        positional(self.exercise, method, args)
    }

    /// Calls a method of the instance, telling the call and the world calls it made.
    fn call(&mut self, method: &str, args: &[Value]) -> Result<Reply, Outcome> {
        let reply = self
            .implementation
            .call(method, args, &mut self.world)
            .map_err(Outcome::Errored)?;
        if let Reply::Skipped(reason) = &reply {
            return Err(Outcome::Skipped(reason.clone()));
        }
        if self.recorder.telling() {
            let shown: Vec<String> = args.iter().map(yaml::flow).collect();
            self.tell_call(&format!("{method}({})", shown.join(", ")), &reply);
            if !self.exercise.views.contains_key(method) {
                self.tell_lists()?;
            }
        }
        Ok(reply)
    }

    /// Tells the lists each state view holds after a call, for the picture's side panel
    /// (`panel`).
    fn tell_lists(&mut self) -> Result<(), Outcome> {
        let names: Vec<String> = self.exercise.views.keys().cloned().collect();
        let mut values = Vec::with_capacity(names.len());
        for name in &names {
            values.push(self.view(name)?);
        }
        let lists = panel::lists(
            values
                .iter()
                .zip(self.exercise.views.values())
                .map(|(value, view)| (value, view.shown.as_slice())),
        );
        if !lists.is_empty() {
            let told: Vec<String> = lists
                .iter()
                .map(|(name, items)| format!("{name}: [{}]", items.join(", ")))
                .collect();
            self.recorder.tell_event(
                format!("      {}", told.join("; ")),
                TimelineEvent::Lists(lists),
            );
        }
        Ok(())
    }

    fn tell_call(&mut self, call: &str, reply: &Reply) {
        if !self.recorder.telling() {
            return;
        }
        let class = lane(self.exercise, self.exercise.class);
        for world in self.world.take_calls() {
            let to = lane(self.exercise, &world.part);
            let label = world_label(&world);
            self.recorder.tell_event(
                format!("    {}: {label}", self.exercise.class),
                TimelineEvent::Call {
                    from: class,
                    to,
                    label,
                    tone: if world.answer.is_err() {
                        Tone::Dead
                    } else {
                        Tone::Plain
                    },
                },
            );
        }
        let label = format!("{call} -> {}", shown_reply(reply));
        let tone = match reply {
            Reply::Raised(_) => Tone::Dead,
            _ => Tone::Plain,
        };
        self.recorder.tell_event(
            format!("    {label}"),
            TimelineEvent::Call {
                from: "test",
                to: class,
                label,
                tone,
            },
        );
    }

    /// Notes the rules a call decided: from what the spec pins, else what it answered.
    fn rules_of(
        &mut self,
        call: &str,
        args: Option<&Map<String, Value>>,
        pinned: &Answer,
        reply: &Reply,
    ) {
        let (returns, raises) = match (&pinned.returns, &pinned.raises, reply) {
            (Some(value), _, _) => (Some(value.clone()), None),
            (None, Some(raises), _) => (None, Some((raises.clone(), None))),
            (None, None, Reply::Returned(value)) => (Some(value.clone()), None),
            (None, None, Reply::Raised(raised)) => (
                None,
                Some((raised_word(raised).to_owned(), Some(raised.clone()))),
            ),
            _ => (None, None),
        };
        // What a method returns where the exercise leaves it free says nothing of its rules.
        let returns = returns.filter(|_| !self.exercise.method(call).is_some_and(|m| m.free));
        let point = Point {
            call: Some(call),
            args,
            returns: returns.as_ref(),
            raises: raises
                .as_ref()
                .map(|(word, raised)| (word.as_str(), raised.as_ref())),
            ..Point::default()
        };
        for rule in self.exercise.rules_reached(&point) {
            self.recorder.exercise(rule, rule.statement);
        }
    }

    /// Keeps a step's mark, with every view after it when probing.
    fn mark(
        &mut self,
        step: usize,
        call: &str,
        args: Map<String, Value>,
        reply: Option<Reply>,
    ) -> Result<(), Outcome> {
        if !self.probe {
            return Ok(());
        }
        // A value the exercise leaves free is no departure: every return reads the same.
        let free = self.exercise.method(call).is_some_and(|m| m.free);
        let reply = match reply {
            Some(Reply::Returned(_) | Reply::Undefined) if free => {
                Some(Reply::Returned(Value::Null))
            }
            reply => reply,
        };
        let after = if self.alive {
            self.views_and_records()?
        } else {
            Vec::new()
        };
        self.marks.push(Mark {
            pinned: false,
            step,
            call: call.to_owned(),
            args,
            reply,
            after,
            now: self.world.now(),
        });
        Ok(())
    }

    fn views_and_records(&mut self) -> Result<Vec<(String, Value)>, Outcome> {
        let mut after = Vec::new();
        for view in self.exercise.views.keys() {
            after.push((view.clone(), self.view(view)?));
        }
        for part in self.exercise.recorded_parts() {
            if let Some(record) = self.world.record(&part.name) {
                after.push((part.name.clone(), record));
            }
        }
        Ok(after)
    }

    /// Every view now, as one value (for the check that a raising call changed nothing).
    /// Notes the rules of each view key that differs from `before` to `after` (both as `views`
    /// returns them), as a move of the clock decides them.
    fn exercise_changed_keys(&mut self, before: &Value, after: &Value) {
        for (view, now) in after.as_object().into_iter().flatten() {
            let was = before.get(view);
            if was == Some(now) {
                continue;
            }
            let keys: Vec<String> = match (was, now) {
                (Some(Value::Object(was)), Value::Object(now)) => now
                    .iter()
                    .filter(|(key, value)| was.get(*key) != Some(*value))
                    .map(|(key, _)| key.clone())
                    .collect(),
                _ => Vec::new(),
            };
            for key in keys {
                let point = Point {
                    call: Some("advance"),
                    view: Some(view),
                    key: Some(&key),
                    ..Point::default()
                };
                if let Some(rule) = self.exercise.rule_at(&point) {
                    self.recorder.exercise(rule, rule.statement);
                }
            }
        }
    }

    fn views(&mut self) -> Result<Value, Outcome> {
        let mut all = Map::new();
        for view in self.exercise.views.keys() {
            let value = self.view(view)?;
            all.insert(view.clone(), value);
        }
        Ok(Value::Object(all))
    }

    /// A view as the instance returns it; an error or `undefined` is a value that differs from
    /// every expected one, and the diff shows why.
    fn view(&mut self, name: &str) -> Result<Value, Outcome> {
        let reply = self
            .implementation
            .call(name, &[], &mut self.world)
            .map_err(Outcome::Errored)?;
        let _ = self.world.take_calls();
        match reply {
            Reply::Returned(value) => Ok(value),
            Reply::Undefined => Ok(json!(UNDEFINED)),
            Reply::Raised(raised) => Ok(raised_value(&raised, None)),
            Reply::Skipped(reason) => Err(Outcome::Skipped(reason)),
        }
    }

    /// `value` as a spec writes it for `method`: the first word its `returns:` gives that
    /// value (`none` for null), else the value itself.
    fn worded(&self, method: &str, value: Value) -> Value {
        self.exercise
            .method(method)
            .and_then(|declared| declared.words.iter().find(|(_, v)| **v == value))
            .map_or(value, |(word, _)| json!(word))
    }

    /// A call's answer against what the spec pins: `returns` (rewritten by `bless`), `raises`,
    /// or, when it pins neither, no error.
    fn answer(
        &mut self,
        label: &str,
        position: Position,
        method: &str,
        answer: &Answer,
        reply: &Reply,
    ) -> Result<(), Outcome> {
        let actual = reply_value(reply);
        match (&answer.returns, &answer.raises) {
            (Some(expected), _) => {
                let got = match reply {
                    Reply::Returned(value) => value.clone(),
                    Reply::Undefined => json!(UNDEFINED),
                    _ => actual.clone(),
                };
                let note = match reply {
                    Reply::Undefined if expected.is_null() => {
                        Some(UNDEFINED_IS_NOT_NULL.to_owned())
                    }
                    _ => None,
                };
                let written = match reply {
                    Reply::Raised(raised) => vec![rewritten(
                        position,
                        method,
                        answer,
                        "raises",
                        json!(self.exercise.raised_name(raised)),
                    )],
                    // A value the method has a word for is written as that word (`none`).
                    _ => vec![WrittenValue::new(
                        position,
                        &[method, "returns"],
                        self.worded(method, expected.clone()),
                        self.worded(method, got),
                    )],
                };
                let checkpoint = Checkpoint {
                    position,
                    label: method.to_owned(),
                    expected: json!({ "returns": expected }),
                    actual: match reply {
                        Reply::Raised(raised) => raised_value(raised, None),
                        _ => actual,
                    },
                    written,
                };
                self.recorder.compare(label, checkpoint, note)
            }
            (None, Some(raises)) => {
                let actual = match reply {
                    Reply::Raised(raised) => raised_value(raised, Some(raises)),
                    _ => actual,
                };
                let note = format!("{method} must raise {raises} here");
                let written = match reply {
                    Reply::Returned(value) => vec![rewritten(
                        position,
                        method,
                        answer,
                        "returns",
                        value.clone(),
                    )],
                    _ => Vec::new(),
                };
                let checkpoint = Checkpoint {
                    position,
                    label: method.to_owned(),
                    expected: json!({ "raises": raises }),
                    actual,
                    written,
                };
                self.recorder.compare(label, checkpoint, Some(note))
            }
            (None, None) => match reply {
                Reply::Raised(raised) => {
                    let note = format!("{method} raised where the spec expects an answer");
                    let actual = raised_value(raised, None);
                    self.compare(
                        label,
                        position,
                        method,
                        json!({ "raises": null }),
                        actual,
                        &note,
                    )
                }
                _ => Ok(()),
            },
        }
    }

    /// Checks an `expect` written at `position`; `path` leads from there to its mapping.
    fn expect(
        &mut self,
        index: usize,
        label: &str,
        position: Position,
        path: &[&str],
        expected: &[(String, Value)],
    ) -> Result<(), Outcome> {
        if self.probe {
            self.mark(index, "expect", Map::new(), None)?;
        }
        let inline = self.exercise.inline_expect();
        let mut want = Map::new();
        let mut got = Map::new();
        let mut written = Vec::new();
        for (name, value) in expected {
            let actual = if self.exercise.views.contains_key(name) {
                self.view(name)?
            } else {
                self.world.record(name).unwrap_or(Value::Null)
            };
            if inline {
                match (value, &actual) {
                    // The same keys: each value rewritten where it stands.
                    (Value::Object(want_keys), Value::Object(got_keys))
                        if want_keys.len() == got_keys.len()
                            && want_keys.keys().all(|k| got_keys.contains_key(k)) =>
                    {
                        for (key, part) in want_keys {
                            let mut at = path.to_vec();
                            at.push(key);
                            let actual_part = got_keys.get(key).cloned().unwrap_or(Value::Null);
                            written.push(WrittenValue::new(
                                position,
                                &at,
                                part.clone(),
                                actual_part,
                            ));
                        }
                    }
                    // Other keys (an `expect: {}` to be blessed): the whole view.
                    _ => written.push(WrittenValue::new(
                        position,
                        path,
                        value.clone(),
                        actual.clone(),
                    )),
                }
                want = value.as_object().cloned().unwrap_or_default();
                let ordered = ordered_like(value, &actual);
                got = ordered.as_object().cloned().unwrap_or_default();
                if !value.is_object() || !actual.is_object() {
                    return self.compare(label, position, "expect", value.clone(), actual, "");
                }
            } else {
                let mut at = path.to_vec();
                at.push(name);
                written.push(WrittenValue::new(
                    position,
                    &at,
                    value.clone(),
                    actual.clone(),
                ));
                want.insert(name.clone(), value.clone());
                got.insert(name.clone(), ordered_like(value, &actual));
            }
        }
        let checkpoint = Checkpoint {
            position,
            label: "expect".to_owned(),
            expected: Value::Object(want),
            actual: Value::Object(got),
            written,
        };
        self.recorder.compare(label, checkpoint, None)
    }

    /// Compares a whole value the spec does not write out for `bless` to rewrite.
    fn compare(
        &mut self,
        step: &str,
        position: Position,
        key: &str,
        expected: Value,
        actual: Value,
        note: &str,
    ) -> Result<(), Outcome> {
        let checkpoint = Checkpoint {
            position,
            label: key.to_owned(),
            expected,
            actual,
            written: Vec::new(),
        };
        let note = (!note.is_empty()).then(|| note.to_owned());
        self.recorder.compare(step, checkpoint, note)
    }
}

/// A constructor's (or factory's) wire arguments: each argument a spec's value or a given
/// part, in the order the constructor takes them; arguments left out from the end are not sent.
pub(crate) fn constructor_wire(
    exercise: &Exercise,
    args: &Map<String, Value>,
    snapshot: Option<(&str, Value)>,
) -> Value {
    let mut params: Vec<Value> = Vec::new();
    if let Some((_, snapshot)) = &snapshot {
        params.push(json!({ "value": snapshot }));
    }
    let mut left_out = 0;
    for arg in &exercise.create.args {
        if let Some(part) = &arg.given {
            params.push(json!({ "given": part }));
        } else if snapshot.is_some() {
            continue;
        } else if let Some(value) = args.get(&arg.name) {
            for _ in 0..left_out {
                params.push(json!({ "value": null }));
            }
            left_out = 0;
            params.push(json!({ "value": value }));
        } else {
            left_out += 1;
        }
    }
    let mut wire = json!({ "params": params });
    if let Some((factory, _)) = snapshot {
        wire["factory"] = json!(factory);
    }
    wire
}

/// The spec's arguments of `method` in the order it takes them; those left out from the
/// end are not sent, so the solution's defaults apply.
pub(crate) fn positional(
    exercise: &Exercise,
    method: &str,
    args: &Map<String, Value>,
) -> Vec<Value> {
    let Some(declared) = exercise.method(method) else {
        return Vec::new();
    };
    let mut values = Vec::new();
    let mut left_out = 0;
    for arg in declared.written_args() {
        match args.get(&arg.name) {
            Some(value) => {
                values.extend(std::iter::repeat_n(Value::Null, left_out));
                left_out = 0;
                values.push(value.clone());
            }
            None => left_out += 1,
        }
    }
    values
}

/// The step's whole mapping as blessing writes it: `returns` and `raises` taken out, and `key`
/// put in with `value` (no key: neither).
fn rewritten(
    position: Position,
    call: &str,
    answer: &Answer,
    key: &str,
    value: Value,
) -> WrittenValue {
    let mut body = answer.body.as_object().cloned().unwrap_or_default();
    body.shift_remove("returns");
    body.shift_remove("raises");
    if !key.is_empty() {
        body.insert(key.to_owned(), value);
    }
    WrittenValue::new(position, &[call], answer.body.clone(), Value::Object(body))
}

/// The lane of `name` (the class, or a given part), `test` when it has none.
fn lane(exercise: &Exercise, name: &str) -> &'static str {
    exercise
        .lanes
        .iter()
        .copied()
        .find(|l| *l == name)
        .unwrap_or("test")
}

/// A step's kind for the picture, as a static word.
fn static_kind(step: &Step) -> &'static str {
    match step {
        Step::Create { .. } => "create",
        Step::Call { .. } => "call",
        Step::Mutate { .. } => "mutate",
        Step::Advance { .. } => "advance",
        Step::Restart => "restart",
        Step::Expect { .. } => "expect",
    }
}

fn world_label(call: &WorldCall) -> String {
    let args: Vec<String> = call.args.iter().map(yaml::flow).collect();
    let name = match &call.method {
        Some(method) => format!("{}.{method}", call.part),
        None => call.part.clone(),
    };
    let answer = match &call.answer {
        Ok(Value::Null) => String::new(),
        Ok(value) => format!(" -> {}", yaml::flow(value)),
        Err(raised) => format!(" raised {}", raised.describe()),
    };
    format!("{name}({}){answer}", args.join(", "))
}

/// The value an expected one is compared with, its keys put in the expected value's order
/// first, so a diff lines up whatever order the implementation used (JSON objects are equal
/// whatever their order).
fn ordered_like(expected: &Value, actual: &Value) -> Value {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            let mut out = Map::new();
            for (key, part) in want {
                if let Some(value) = got.get(key) {
                    out.insert(key.clone(), ordered_like(part, value));
                }
            }
            for (key, value) in got {
                if !out.contains_key(key) {
                    out.insert(key.clone(), value.clone());
                }
            }
            Value::Object(out)
        }
        (Value::Array(want), Value::Array(got)) => Value::Array(
            got.iter()
                .enumerate()
                .map(|(i, value)| {
                    want.get(i)
                        .map_or_else(|| value.clone(), |w| ordered_like(w, value))
                })
                .collect(),
        ),
        _ => actual.clone(),
    }
}

/// A reply as a diff shows it: `{returns: value}`, or `{raises: kind, error: "Class: message"}`.
pub(crate) fn reply_value(reply: &Reply) -> Value {
    match reply {
        Reply::Returned(Value::String(text)) if text == UNDEFINED => {
            json!({ "returns": format!("the string {text:?}") })
        }
        Reply::Returned(value) => json!({ "returns": value }),
        Reply::Undefined => json!({ "returns": UNDEFINED }),
        Reply::Raised(raised) => raised_value(raised, None),
        Reply::Skipped(reason) => json!({ "skipped": reason }),
    }
}

/// A raised error as a diff shows it; as the spec wrote it (`{raises: invalid_argument}`)
/// where it is the error `expected`, so that a match is equal.
fn raised_value(raised: &Raised, expected: Option<&str>) -> Value {
    let word = raised_word(raised);
    match expected {
        Some(want) if raised.is_named(want) => {
            json!({ "raises": want })
        }
        _ => json!({ "raises": word, "error": raised.describe() }),
    }
}

/// A reply in a timeline line.
pub(crate) fn shown_reply(reply: &Reply) -> String {
    match reply {
        Reply::Returned(value) => yaml::flow(value),
        Reply::Undefined => UNDEFINED.to_owned(),
        Reply::Raised(raised) => format!("raised {}", raised.describe()),
        Reply::Skipped(reason) => format!("skipped: {reason}"),
    }
}
