//! What a contract is: a rule catalogue, a spec vocabulary, a reference implementation.
//!
//! Adding a contract means writing one type that implements `Contract` and listing it in
//! `contracts::registry::BUILT_IN` and the exercise folders registered at run time. The runner, the reporters and the CLI only see these traits.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

use crate::contracts::builtin::{Builtin, Subject};
use crate::contracts::timeline::{TimelineEvent, TimelineLine};
use crate::model::cause::Departure;
use crate::model::implementation::{Implementation, Reply};
use crate::model::mistake::Mistake;
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;
use crate::model::world::WorldChoice;
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::SpecError;
use crate::text::yaml::{self, Spanned};

pub trait Contract: Sync {
    /// The name specs give in `contract:`, e.g. `dlq-consumer`.
    fn name(&self) -> &'static str;

    /// One line saying what the contract is about.
    fn title(&self) -> &'static str;

    /// The class a solution defines for this contract, e.g. `DLQConsumer`.
    fn subject(&self) -> &'static str;

    /// The rule catalogue, in the order reports list it.
    fn rules(&self) -> &'static [Rule];

    /// The lanes the calls of an explained run go between (`timeline::TimelineEvent::Call`), left
    /// to right, as `explain --format html` draws them.
    fn lanes(&self) -> &'static [&'static str];

    /// The step kinds its specs write (`process`, `create`...), in the order the spec's
    /// errors list them: to tell a step of another contract as one.
    fn step_kinds(&self) -> &'static [&'static str];

    /// The words a step of `kind` takes written as `KIND: WORD` (`process: ok`), none for a
    /// kind that takes none: to tell a step written in another contract's way as one.
    fn step_words(&self, kind: &str) -> &'static [&'static str] {
        let _ = kind;
        &[]
    }

    /// Parses and checks a spec file that names this contract.
    fn load(&self, file: &SourceFile) -> Result<Box<dyn Scenario>, SpecError>;

    /// A fresh instance of the built-in reference implementation, made on the spec's world;
    /// `Ok(Err)` is its answer when it makes none, `Err` a reference that broke.
    fn create_builtin(
        &self,
        args: &Value,
        world: &mut dyn crate::model::implementation::WorldHost,
    ) -> Result<Result<Box<dyn Subject>, Reply>, crate::model::implementation::ImplError>;

    /// The catalogue of classic mistakes, each breaking one rule (see `crate::model::mistake`).
    fn mistakes(&self) -> &'static [Mistake];

    /// The built-in implementation making the one mistake `id` of the catalogue; `None` for
    /// an id the catalogue does not have. It is not the reference.
    fn mistaken(&self, id: &str) -> Option<Builtin>;

    /// The JSON Schema of one spec file of this contract (usually a `$ref` into `generator`'s
    /// definitions), for `dlqspec schema`.
    fn schema(&self, generator: &mut SchemaGenerator) -> Schema;

    /// A commented spec named `name` that passes as written, for `dlqspec new`.
    fn starter(&self, name: &str) -> String;

    /// The contract's side of `dlqspec explore`: its scenario generator and crash schedules;
    /// `None` for a contract that has none (it is then never explored).
    fn explorer(&self) -> Option<&'static dyn crate::generate::Explorer> {
        None
    }

    /// Type declarations of what a solution in `language` writes and is given, for a
    /// student's editor (`dlqspec types`): TypeScript's for JavaScript, Python's for Python;
    /// `None` for a language it has none for.
    fn types(&self, language: crate::model::language::Language) -> Option<String> {
        let _ = language;
        None
    }

    /// What a shim needs to serve this contract without knowing it, sent in `hello`
    /// (docs/protocol.md, "Exercises"): its class, its given parts (each a class whose methods
    /// are world calls `PART.METHOD`, or a callable whose calls are world calls `PART`), its
    /// errors, and the names its type declarations give `given` as types only. Its `new`
    /// requests carry the class and the constructor's parameters (`args.params`), whatever the
    /// contract: the shims know none by name.
    fn protocol_description(&self) -> Value;

    /// `dlqspec smoke`'s plan: a tiny world and a few requests whose right answers are beyond
    /// doubt, spelled for an implementation that spells keys `naming`'s way; `None` for a
    /// contract that has none.
    fn smoke_plan(
        &self,
        naming: crate::model::implementation::Naming,
    ) -> Option<crate::contracts::smoke::SmokePlan> {
        let _ = naming;
        None
    }

    /// Whether `--world` applies to this contract's specs: its world holds a queue a broker
    /// can stand in for. A contract whose queue is the implementation itself has none.
    fn takes_world(&self) -> bool {
        false
    }

    /// Readies `world` for a run, once, before any spec (a broker: reached, logged in to, and
    /// cleared of what a killed run left); what it cannot give the specs, one line each.
    /// `Err` is why it cannot be used: the run then runs nothing.
    fn prepare_world(&self, world: &WorldChoice) -> Result<Vec<String>, String> {
        let _ = world;
        Ok(Vec::new())
    }

    /// How messages name the contract's reference when it is a program an author wrote (an
    /// exercise's: `the reference (reference.py)`); `None` for a contract written in Rust,
    /// whose messages say `the built-in`.
    fn reference_name(&self) -> Option<String> {
        None
    }

    /// What the contract's own description claims and its reference denies, each an error at
    /// its place (an exercise's constructor draws: `draw:`'s first values make an instance,
    /// `refused:`'s are refused). It may run the reference, so the commands that run it anyway
    /// ask (`lint`, `explore`); a contract written in Rust has none.
    fn reference_errors(&self) -> Vec<SpecError> {
        Vec::new()
    }

    /// The file a known mistake of the catalogue is written in, where mistakes are files (an
    /// exercise's `mistakes/`); `None` for one compiled into dlqspec.
    fn mistake_file(&self, id: &str) -> Option<std::path::PathBuf> {
        let _ = id;
        None
    }
}

/// A given part of a contract's `protocol_description`: an object (of the class `class`, as
/// the solution's language names it) whose methods are world calls `NAME.METHOD`, or a
/// callable whose calls are world calls `NAME`.
pub(crate) struct GivenPart<'a> {
    pub(crate) name: &'a str,
    pub(crate) class: Option<&'a str>,
    pub(crate) callable: bool,
    pub(crate) methods: Vec<&'a str>,
}

/// A contract's `protocol_description` (docs/protocol.md, "Exercises"): its class, its given
/// parts in order, its errors with their base (`error`, or `crash`: one ordinary handlers do
/// not catch) and the names `given` declares as types only (none: the key is left out).
pub(crate) fn protocol_description(
    class: &str,
    given: &[GivenPart<'_>],
    errors: &[(&str, &str)],
    types: &[&str],
) -> Value {
    let parts: serde_json::Map<String, Value> = given
        .iter()
        .map(|part| {
            (
                part.name.to_owned(),
                serde_json::json!({
                    "class": part.class,
                    "callable": part.callable,
                    "methods": part.methods,
                }),
            )
        })
        .collect();
    let errors: serde_json::Map<String, Value> = errors
        .iter()
        .map(|(name, base)| ((*name).to_owned(), serde_json::json!({ "base": base })))
        .collect();
    let mut described = serde_json::json!({ "class": class, "given": parts, "errors": errors });
    if !types.is_empty() {
        described["types"] = serde_json::json!(types);
    }
    described
}

/// Who sees a spec's result on an autograding platform; the values are Gradescope's.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Visibility {
    /// The student sees the result with its diff and output.
    #[default]
    Visible,
    /// The student sees only whether it passed.
    Hidden,
    /// Shown after the assignment's due date (Gradescope), only pass or fail before.
    AfterDueDate,
    /// Shown once grades are published (Gradescope), only pass or fail before.
    AfterPublished,
}

impl Visibility {
    /// Whether the student may see more than pass or fail right away.
    pub(crate) fn shows_details(self) -> bool {
        self == Visibility::Visible
    }
}

/// What a spec is worth when a submission is graded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Grading {
    pub(crate) points: f64,
    pub(crate) visibility: Visibility,
}

impl Default for Grading {
    fn default() -> Self {
        Grading {
            points: 1.0,
            visibility: Visibility::Visible,
        }
    }
}

impl Grading {
    /// From a spec's optional `points` and `visibility` keys; points are finite, not negative.
    pub(crate) fn from_keys(
        file: &SourceFile,
        points: Option<&Spanned<f64>>,
        visibility: Option<Visibility>,
    ) -> Result<Grading, SpecError> {
        let points = match points {
            None => 1.0,
            Some(p) if p.value.is_finite() && p.value >= 0.0 => p.value,
            Some(p) => {
                return Err(SpecError::invalid(
                    file,
                    yaml::at(p),
                    format!("`points` must be a number of at least 0, not {}", p.value),
                ));
            }
        };
        Ok(Grading {
            points,
            visibility: visibility.unwrap_or_default(),
        })
    }
}

/// The parts every spec has, whatever its contract.
#[derive(Debug, Clone)]
pub struct SpecHeader {
    pub(crate) name: String,
    pub description: String,
    /// Rule ids with where each is written, so an unknown id can be pointed at.
    pub rules: Vec<(String, Position)>,
    /// Points and visibility, for autograder results.
    pub(crate) grading: Grading,
    /// The smells `dlqspec lint` is not to report in this spec, each with its reason.
    pub(crate) allow: Vec<crate::contracts::smell::Allow>,
}

impl SpecHeader {
    /// The header of a spec from the fields every vocabulary has, checking what YAML cannot:
    /// a name that is not blank.
    pub(crate) fn new(
        file: &SourceFile,
        name: Spanned<String>,
        description: String,
        rules: &[Spanned<String>],
        grading: Grading,
    ) -> Result<Self, SpecError> {
        if name.value.trim().is_empty() {
            return Err(SpecError::invalid(file, yaml::at(&name), "`name` is empty"));
        }
        Ok(SpecHeader {
            name: name.value,
            description,
            rules: rules
                .iter()
                .map(|r| (r.value.clone(), yaml::at(r)))
                .collect(),
            grading,
            allow: Vec::new(),
        })
    }

    pub(crate) fn rule_ids(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|(id, _)| id.as_str())
    }
}

/// A loaded spec, ready to run against any implementation.
pub trait Scenario: Send + Sync {
    fn header(&self) -> &SpecHeader;

    fn run(&self, implementation: &mut dyn Implementation, mode: RunMode) -> ScenarioRun;

    /// Runs the scenario on `world` (`--world`); a contract that takes no world
    /// (`Contract::takes_world`) runs it as `run` does.
    fn run_in(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
        world: &WorldChoice,
    ) -> ScenarioRun {
        let _ = world;
        self.run(implementation, mode)
    }

    /// `run`, and when the run is a mismatch, where `implementation` first departed from the
    /// reference on this scenario: its cause. The diagnosis runs the built-in reference (and
    /// the classic mistakes of the contract's catalogue) again, never `implementation`, so it
    /// changes no verdict. `None` from a contract that cannot tell.
    fn diagnose(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
    ) -> (ScenarioRun, Option<Departure>) {
        (self.run(implementation, mode), None)
    }

    /// Where `implementation` first departs from the reference on this scenario, as
    /// `diagnose` finds it but without matching the catalogue's mistakes: the rule a failure
    /// is told under, for `strength`, at the cost of the reference's run alone. `None` when it
    /// passes or departs nowhere a contract can tell.
    fn departure(&self, implementation: &mut dyn Implementation) -> Option<Departure> {
        self.diagnose(implementation, RunMode::Check).1
    }

    /// What is odd about this scenario when it runs on `implementation` (the built-in one for
    /// `dlqspec lint`): messages never delivered, outcomes never used, steps that do nothing;
    /// with the recorded run they were read from, for the smells every contract shares.
    /// `Err` is the outcome of a run that ended too early to judge (e.g. a spec error).
    fn smells(
        &self,
        implementation: &mut dyn Implementation,
    ) -> Result<(Vec<Smell>, ScenarioRun), Outcome>;
}

/// Something legal but suspicious in a spec, found by `dlqspec lint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Smell {
    /// Stable id, e.g. `never-delivered`, for people and scripts to refer to.
    pub(crate) id: &'static str,
    /// Where in the spec the smell is.
    pub(crate) position: Position,
    pub(crate) message: String,
}

/// How much a run keeps: each mode adds to the one before, and costs more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// Stops at the first difference (`run`), and keeps only the checkpoint that differs.
    Check,
    /// Goes on to record every expectation's actual value (`bless`, `lint`).
    Record,
    /// Records, and tells the timeline of the run with every world call in full (`explain`):
    /// the only mode whose cost may grow faster than the scenario.
    Explain,
}

/// One compared expectation: where it is written, what it says, what was observed.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Where the expected value starts in the spec file.
    pub(crate) position: Position,
    /// What is compared, e.g. `process` or `expect`.
    pub(crate) label: String,
    pub(crate) expected: Value,
    pub(crate) actual: Value,
    /// The parts of `expected` as the spec writes them, so `dlqspec bless` can rewrite each one
    /// with what was observed. Empty when the expectation cannot be rewritten in place.
    pub written: Vec<WrittenValue>,
}

/// One value of an expectation as written in the spec, and what was observed in its place.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenValue {
    /// Where a node of the spec starts: a value, or a mapping that holds it (see `path`).
    pub at: Position,
    /// Mapping keys leading from the node at `at` to the value; empty for the node itself.
    pub path: Vec<String>,
    /// The value as the scenario compares it.
    pub(crate) expected: Value,
    /// What blessing writes instead when it differs from `expected`.
    pub(crate) actual: Value,
}

impl WrittenValue {
    pub(crate) fn new(at: Position, path: &[&str], expected: Value, actual: Value) -> Self {
        WrittenValue {
            at,
            path: path.iter().map(|key| (*key).to_owned()).collect(),
            expected,
            actual,
        }
    }

    pub(crate) fn matches(&self) -> bool {
        self.expected == self.actual
    }
}

impl Checkpoint {
    pub(crate) fn matches(&self) -> bool {
        self.expected == self.actual
    }

    /// The check in a timeline, one event per written value (or one for the whole), told
    /// `✓ key: value`, or `✗ key: expected ..., got ...`.
    pub(crate) fn timeline_lines(&self) -> Vec<TimelineLine> {
        let parts: Vec<(&str, &Value, &Value)> = if self.written.is_empty() {
            vec![(self.label.as_str(), &self.expected, &self.actual)]
        } else {
            self.written
                .iter()
                .map(|w| {
                    let key = w.path.last().map_or(self.label.as_str(), String::as_str);
                    (key, &w.expected, &w.actual)
                })
                .collect()
        };
        parts
            .into_iter()
            .map(|(key, expected, actual)| {
                let (shown_expected, shown_actual) = (told_value(expected), told_value(actual));
                let line = if expected == actual {
                    format!("\u{2713} {key}: {shown_expected}")
                } else {
                    format!("\u{2717} {key}: expected {shown_expected}, got {shown_actual}")
                };
                // Equal values are shown alike; different ones may still be shown alike (a
                // long list's middle), and the picture must not take them for a match.
                let actual = if expected != actual && shown_expected == shown_actual {
                    format!("{shown_actual} (differs in what is not shown)")
                } else {
                    shown_actual
                };
                TimelineLine {
                    line,
                    event: TimelineEvent::Check {
                        expected: shown_expected,
                        actual,
                    },
                }
            })
            .collect()
    }
}

/// A value in a timeline line: in flow style, each long list (at any depth) by its ends and
/// how many between (a big scenario's DLQ would otherwise make a line of megabytes).
pub(crate) fn told_value(value: &Value) -> String {
    match value {
        Value::Array(items) if items.len() > crate::text::listing::MAX_LISTED => {
            format!(
                "[{}]",
                crate::text::listing::shown(items, told_value).join(", ")
            )
        }
        Value::Array(items) if holds_long_list(value) => format!(
            "[{}]",
            items.iter().map(told_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) if holds_long_list(value) => format!(
            "{{{}}}",
            map.iter()
                .map(|(key, item)| format!(
                    "{}: {}",
                    crate::text::yaml::flow(&Value::String(key.clone())),
                    told_value(item)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        // Cut before it is rendered (a long string, a mapping of many keys): an
        // implementation's value may be as long as a protocol line.
        _ => crate::text::yaml::flow(&crate::text::truncate::value(value)),
    }
}

/// Whether a list longer than a timeline line shows is anywhere in `value`.
fn holds_long_list(value: &Value) -> bool {
    match value {
        Value::Array(items) => {
            items.len() > crate::text::listing::MAX_LISTED || items.iter().any(holds_long_list)
        }
        Value::Object(map) => map.values().any(holds_long_list),
        _ => false,
    }
}

impl ScenarioRun {
    /// A run that ended before its first step, with `outcome`.
    pub(crate) fn ended(outcome: Outcome) -> ScenarioRun {
        ScenarioRun {
            outcome,
            checkpoints: Vec::new(),
            timeline: Vec::new(),
            exercised: Vec::new(),
            later_spec_error: None,
        }
    }
}

/// What running one scenario produced.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    pub outcome: Outcome,
    /// Every checkpoint compared, in order; a `RunMode::Check` run keeps only the one that
    /// differs, if any.
    pub checkpoints: Vec<Checkpoint>,
    /// A person-readable account of what happened, one line per event (`RunMode::Explain`
    /// only), each with what it is, for a picture.
    pub(crate) timeline: Vec<TimelineLine>,
    /// The ids of the rules that decided something in this run, in the order first met: what
    /// the spec really exercises (on the built-in implementation), whatever its `rules:` claim.
    pub exercised: Vec<&'static str>,
    /// A spec error a recording run met after its first difference (a fault that never fired,
    /// say). The verdict stays that difference, in step order; `bless` reads this, since
    /// rewriting expectations cannot mend the scenario itself.
    pub later_spec_error: Option<Box<SpecError>>,
}

/// For the tests of a contract's loading: that `loaded` failed with an error whose last words
/// list `expected`, what the spec could have written there.
#[cfg(test)]
pub(crate) fn assert_error_lists<T>(loaded: Result<T, SpecError>, expected: &[&str]) {
    let error = loaded.err().expect("a spec error");
    assert!(
        error
            .message
            .ends_with(&format!(", expected one of {}", expected.join(", "))),
        "{error}"
    );
}

/// For the tests of a contract's loading: that the fast path reads the bundled specs of
/// `folder` (in `specs/`) and their variations as serde_saphyr does, and decoded more than
/// `at_least` variations, so the check had teeth.
#[cfg(test)]
pub(crate) fn assert_fast_load_agrees<T: serde::de::DeserializeOwned + std::fmt::Debug>(
    folder: &str,
    at_least: usize,
) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let decoded = crate::text::yaml::agreement::check_bundled::<T>(
        &root.join("specs").join(folder),
        &root.join("tests/fixtures/broken"),
        16,
    );
    assert!(
        decoded > at_least,
        "only {decoded} variations were decoded by the fast path"
    );
}
