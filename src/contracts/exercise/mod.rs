//! Exercises as folders: `exercise.yaml`, a reference solution in the author's own language,
//! specs and known mistakes, served by one machinery whatever the exercise. Nothing here
//! names an exercise: each is read from its folder at run time and registered
//! (`registry::register`), after which every command treats it as any other contract.
//!
//! An exercise is data. `exercise.yaml` declares the class, the constructor's and each method's
//! arguments (with the values explore draws), the state views, the given parts, the errors, the
//! rules and the patterns that decide each; this folder serves every exercise with one
//! vocabulary, one scenario player, one departure finder, one explorer and one teller of
//! smells (`smells.rs`, for the finder every contract shares). The reference is the
//! author's own program: a departure is the first step whose answer, or whose views after it,
//! differ from the reference's on the same scenario, and the rule named is the most specific
//! `decides` pattern matching that point. The reference and the known mistakes are pools of
//! programs (`programs.rs`) started by a launcher the command line hands in, since only
//! `external/` starts processes; a pool's process is lent only to the thread that started it, as
//! a child dies with the thread that started it. The shims learn each exercise from `hello` and
//! make it from `new`'s `class` and parameters (docs/protocol.md, "Exercises").
//!
//! What only the reference can tell about `exercise.yaml` (its constructor's `draw:` and
//! `refused:` values) is held to it by `draws.rs`, when a command that runs the reference
//! anyway asks (`Contract::reference_errors`: lint, explore, a failing smoke).

mod changes;
mod decisions;
pub(crate) mod definition;
pub(crate) mod departure;
mod draws;
pub(crate) mod explore;
mod panel;
pub(crate) mod programs;
pub(crate) mod scenario;
mod smells;
mod smoke;
pub(crate) mod types;
pub(crate) mod vocabulary;
pub(crate) mod world;

use std::path::Path;
use std::sync::{Arc, RwLock};

use indexmap::IndexMap;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use self::definition::Exercise;
use self::programs::Pool;
use self::scenario::ExerciseScenario;
use crate::contracts::builtin::{Builtin, Subject};
use crate::contracts::contract::{
    Contract, GivenPart, RunMode, Scenario, ScenarioRun, Smell, SpecHeader,
};
use crate::model::cause::Departure;
use crate::model::implementation::{ImplError, ImplInfo, Implementation, Reply, WorldHost};
use crate::model::mistake::Mistake;
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;
use crate::text::source::SourceFile;
use crate::text::spec_error::SpecError;

pub use self::programs::Launcher;

/// An exercise folder as a contract: its definition, and the pools of its programs.
pub(crate) struct ExerciseContract {
    pub(crate) exercise: Exercise,
    reference: Pool,
    mistakes: Vec<Pool>,
    /// Set once the contract has its place for good (`register`).
    explorer: std::sync::OnceLock<explore::ExerciseExplorer>,
}

impl std::fmt::Debug for ExerciseContract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExerciseContract")
            .field("exercise", &self.exercise.name)
            .finish()
    }
}

/// The exercises read so far, in the order they were registered.
static REGISTERED: RwLock<Vec<&'static ExerciseContract>> = RwLock::new(Vec::new());

/// Reads the exercise of `folder` (its `exercise.yaml`) and registers it, its programs to be
/// started by `launcher`; returns its name. The contract lives as long as the program, as the
/// built-in ones do. A folder registered already is not read again; another folder of the
/// same name, or one named as a built-in contract, is an error.
pub(crate) fn register(
    folder: &Path,
    launcher: Arc<Launcher>,
    built_in: &[&str],
) -> Result<&'static str, SpecError> {
    let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    if let Some(known) = registered()
        .into_iter()
        .find(|c| c.exercise.folder == folder)
    {
        return Ok(known.exercise.name);
    }
    let exercise = definition::read(&folder)?;
    let clash = |other: String| {
        SpecError::invalid(
            &SourceFile::from_text(folder.join(definition::EXERCISE_FILE), ""),
            crate::text::source::Position::new(1, 1),
            format!(
                "the exercise is named `{}`, as {other}: give one of them another name",
                exercise.name
            ),
        )
    };
    if built_in.contains(&exercise.name) {
        return Err(clash("a contract built into dlqspec".to_owned()));
    }
    if let Some(other) = find(exercise.name) {
        return Err(clash(format!(
            "the exercise in {}",
            other.exercise.folder.display()
        )));
    }
    let reference = Pool::new(exercise.reference_target(), Arc::clone(&launcher));
    let mistakes = exercise
        .mistake_files
        .iter()
        .map(|file| Pool::new(file.display().to_string(), Arc::clone(&launcher)))
        .collect();
    let contract: &'static ExerciseContract = Box::leak(Box::new(ExerciseContract {
        exercise,
        reference,
        mistakes,
        explorer: std::sync::OnceLock::new(),
    }));
    let _ = contract.explorer.set(explore::ExerciseExplorer {
        exercise: &contract.exercise,
    });
    if let Ok(mut all) = REGISTERED.write() {
        all.push(contract);
    }
    Ok(contract.exercise.name)
}

/// The exercises registered, in order.
pub(crate) fn registered() -> Vec<&'static ExerciseContract> {
    REGISTERED.read().map(|all| all.clone()).unwrap_or_default()
}

/// The registered exercise whose folder `path` (a spec, or a folder) is in.
pub(crate) fn of_path(path: &Path) -> Option<&'static ExerciseContract> {
    let folder = folder_of(path)?;
    registered()
        .into_iter()
        .find(|c| c.exercise.folder == folder)
}

/// The registered exercise named `name`.
pub(crate) fn find(name: &str) -> Option<&'static ExerciseContract> {
    registered().into_iter().find(|c| c.exercise.name == name)
}

/// Where an exercise folder is for `path` (a spec, or a folder of specs): the folder holding
/// `exercise.yaml` at `path` or above it.
pub(crate) fn folder_of(path: &Path) -> Option<std::path::PathBuf> {
    let start = if path.is_dir() { path } else { path.parent()? };
    let start = std::fs::canonicalize(start).ok()?;
    start
        .ancestors()
        .find(|dir| dir.join(definition::EXERCISE_FILE).is_file())
        .map(Path::to_path_buf)
}

impl ExerciseContract {
    /// The files besides its specs that a verdict of the exercise depends on: `exercise.yaml`
    /// and the reference, when it is a file (a `cmd:` reference is a line of `exercise.yaml`).
    pub(crate) fn verdict_files(&self) -> Vec<std::path::PathBuf> {
        let mut files = vec![self.exercise.folder.join(definition::EXERCISE_FILE)];
        if !self.exercise.reference.starts_with("cmd:") {
            files.push(self.exercise.folder.join(&self.exercise.reference));
        }
        files
    }

    /// The one error of a reference that does not load (or defines no class of the
    /// exercise's name), at `exercise.yaml`'s `reference:`: every spec, rule and case would
    /// fail on it alike, so a command tells this once and runs none of them.
    pub(crate) fn reference_error(&self) -> Option<SpecError> {
        let why = match self.reference.offer() {
            Err(error) => {
                let message = error.message.as_str();
                let why = message
                    .strip_prefix("the solution could not be loaded: ")
                    .unwrap_or(message);
                format!("does not load, so {UNJUDGED}: {why}")
            }
            Ok(Some(offer)) if !offer.contracts.iter().any(|c| c == self.exercise.name) => {
                format!(
                    "does not serve it, so {UNJUDGED}: {}",
                    offer.none_of(&[(self.exercise.name, self.exercise.class)])
                )
            }
            Ok(_) => return None,
        };
        Some(SpecError::invalid(
            &self.exercise.file,
            self.exercise.reference_at,
            format!(
                "{} of the exercise {} {why}",
                named(&self.exercise),
                self.exercise.name
            ),
        ))
    }

    /// The reference as an implementation, a process of the pool lent to each instance.
    fn reference(&'static self) -> Builtin {
        self.reference.builtin(ImplInfo {
            label: format!("reference of {}", self.exercise.name),
            language: "reference".into(),
            is_reference: true,
        })
    }
}

impl Contract for ExerciseContract {
    fn name(&self) -> &'static str {
        self.exercise.name
    }

    fn title(&self) -> &'static str {
        self.exercise.title
    }

    fn subject(&self) -> &'static str {
        self.exercise.class
    }

    fn rules(&self) -> &'static [Rule] {
        self.exercise.rules
    }

    fn lanes(&self) -> &'static [&'static str] {
        self.exercise.lanes
    }

    fn step_kinds(&self) -> &'static [&'static str] {
        self.exercise.step_kinds
    }

    fn load(&self, file: &SourceFile) -> Result<Box<dyn Scenario>, SpecError> {
        let loaded = vocabulary::load(&self.exercise, file)?;
        // Contracts live as long as the program (`read` leaks them), so a scenario may keep one.
        let this: &'static ExerciseContract = find(self.name()).ok_or_else(|| {
            SpecError::invalid(
                file,
                crate::text::source::Position::new(1, 1),
                format!("the exercise `{}` is not registered", self.name()),
            )
        })?;
        Ok(Box::new(Checked {
            contract: this,
            scenario: ExerciseScenario {
                exercise: &this.exercise,
                file: file.clone(),
                loaded,
            },
        }))
    }

    fn create_builtin(
        &self,
        args: &Value,
        world: &mut dyn WorldHost,
    ) -> Result<Result<Box<dyn Subject>, Reply>, ImplError> {
        let Some(this) = find(self.name()) else {
            return Ok(Err(Reply::Skipped(format!(
                "the exercise `{}` is not registered",
                self.name()
            ))));
        };
        let mut reference = this.reference();
        Ok(match reference.create(self.name(), args, world)? {
            Reply::Returned(_) | Reply::Undefined => Ok(Box::new(Held(reference))),
            other => Err(other),
        })
    }

    fn mistakes(&self) -> &'static [Mistake] {
        self.exercise.mistakes
    }

    fn mistaken(&self, id: &str) -> Option<Builtin> {
        let this = find(self.name())?;
        let at = this.exercise.mistakes.iter().position(|m| m.id == id)?;
        Some(this.mistakes[at].builtin(ImplInfo {
            label: format!("known mistake `{id}`"),
            language: "reference".into(),
            is_reference: false,
        }))
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        schema(&self.exercise, generator)
    }

    fn starter(&self, name: &str) -> String {
        starter(&self.exercise, name)
    }

    fn smoke_plan(
        &self,
        _naming: crate::model::implementation::Naming,
    ) -> Option<crate::contracts::smoke::SmokePlan> {
        smoke::plan(find(self.name())?)
    }

    fn explorer(&self) -> Option<&'static dyn crate::generate::Explorer> {
        let this = find(self.name())?;
        this.explorer
            .get()
            .map(|explorer| explorer as &'static dyn crate::generate::Explorer)
    }

    fn types(&self, language: crate::model::language::Language) -> Option<String> {
        use crate::model::language::Language;
        match language {
            Language::JavaScript => Some(types::typescript(&self.exercise)),
            Language::Python => Some(types::python(&self.exercise)),
        }
    }

    fn protocol_description(&self) -> Value {
        protocol_description(&self.exercise)
    }

    fn reference_name(&self) -> Option<String> {
        Some(named(&self.exercise))
    }

    fn reference_errors(&self) -> Vec<SpecError> {
        let Some(this) = find(self.name()) else {
            return Vec::new();
        };
        let exercise = &this.exercise;
        let mut reference = this.reference();
        draws::errors(exercise, &mut |args| {
            let wire = scenario::constructor_wire(exercise, args, None);
            let mut world = world::ExerciseWorld::new(exercise, Default::default(), false);
            reference.create(exercise.name, &wire, &mut world).ok()
        })
    }

    fn mistake_file(&self, id: &str) -> Option<std::path::PathBuf> {
        let at = self.exercise.mistakes.iter().position(|m| m.id == id)?;
        self.exercise.mistake_files.get(at).cloned()
    }
}

/// The reference as its author knows it: `the reference (reference.py)`.
fn named(exercise: &Exercise) -> String {
    format!("the reference ({})", exercise.reference)
}

/// What a reference that cannot serve its exercise keeps from being done.
const UNJUDGED: &str = "no spec, rule or case of the exercise can be judged";

/// An instance of the reference made through the contract (`create_builtin`): the reference
/// implementation itself, whose `call`s go to its instance.
struct Held(Builtin);

impl Subject for Held {
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        self.0.call(method, args, world)
    }
}

/// A loaded spec of an exercise behind `Scenario`.
struct Checked {
    contract: &'static ExerciseContract,
    scenario: ExerciseScenario,
}

impl Scenario for Checked {
    fn header(&self) -> &SpecHeader {
        &self.scenario.loaded.header
    }

    fn run(&self, implementation: &mut dyn Implementation, mode: RunMode) -> ScenarioRun {
        self.scenario.play(implementation, mode, false).run
    }

    fn diagnose(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
    ) -> (ScenarioRun, Option<Departure>) {
        let played = self.scenario.play(implementation, mode, true);
        if !matches!(played.run.outcome, Outcome::Mismatch(_)) {
            return (played.run, None);
        }
        let found = departure::find(self, &played);
        let mut run = played.run;
        let Some((departure, parted)) = found else {
            return (run, None);
        };
        if mode == RunMode::Explain {
            decisions::tell(
                &self.scenario,
                &mut run,
                &played.marks,
                &played.step_ends,
                &departure,
                &parted,
            );
        }
        (run, Some(departure))
    }

    fn departure(&self, implementation: &mut dyn Implementation) -> Option<Departure> {
        let played = self.scenario.play(implementation, RunMode::Check, true);
        if !matches!(played.run.outcome, Outcome::Mismatch(_)) {
            return None;
        }
        departure::find_alone(self, &played)
    }

    fn smells(
        &self,
        implementation: &mut dyn Implementation,
    ) -> Result<(Vec<Smell>, ScenarioRun), Outcome> {
        // Probed: every view and record after every step shows which steps changed anything.
        let played = self.scenario.play(implementation, RunMode::Record, true);
        match played.run.outcome {
            Outcome::Passed | Outcome::Mismatch(_) => {
                Ok((smells::find(&self.scenario, &played), played.run))
            }
            cut_short => Err(cut_short),
        }
    }
}

/// What a shim needs to serve the exercise without knowing it: the class, the given parts
/// (each with its wire methods), the errors, and the views with their keys of more than one
/// word (docs/protocol.md, "Exercises").
fn protocol_description(exercise: &Exercise) -> Value {
    let parts: Vec<GivenPart<'_>> = exercise
        .given
        .iter()
        .map(|part| GivenPart {
            name: &part.name,
            class: part.class.as_deref(),
            callable: part.kind == definition::GivenKind::Callable,
            methods: part.kind.methods().to_vec(),
        })
        .collect();
    let errors: Vec<(&str, &str)> = exercise
        .errors
        .iter()
        .map(|(class, base)| {
            let base = match base {
                definition::ErrorBase::Crash => "crash",
                definition::ErrorBase::Error => "error",
            };
            (class.as_str(), base)
        })
        .collect();
    let mut described =
        crate::contracts::contract::protocol_description(exercise.class, &parts, &errors, &[]);
    let keys: IndexMap<&str, &[String]> = exercise
        .views
        .iter()
        .map(|(name, view)| (name.as_str(), view.keys.as_slice()))
        .collect();
    described["views"] = json!(keys);
    described
}

/// The JSON Schema of a spec of `exercise`, derived from its `exercise.yaml`.
fn schema(exercise: &Exercise, generator: &mut SchemaGenerator) -> Schema {
    // An allow is every contract's: the smells a spec may allow, each with its reason.
    let allow = generator.subschema_for::<crate::contracts::smell::AllowSpec>();
    let call = |method: &definition::Method| {
        let mut properties = Map::new();
        for arg in method.written_args() {
            let mut arg_schema = Map::new();
            if !arg.draw.is_empty() {
                arg_schema.insert("examples".into(), Value::Array(arg.draw.clone()));
            }
            properties.insert(arg.name.clone(), Value::Object(arg_schema));
        }
        if !method.free {
            properties.insert(
                "returns".into(),
                json!({ "description": "what the call must return" }),
            );
        }
        properties.insert(
            "raises".into(),
            json!({ "type": "string", "description": "the error the call must raise: invalid_argument, error or a class" }),
        );
        let required: Vec<&str> = method
            .written_args()
            .filter(|a| !method.optional.contains(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        json!({ "type": ["object", "null"], "properties": properties, "required": required, "additionalProperties": false })
    };
    let mut steps = vec![
        json!({ "type": "object", "properties": { "create": call(&exercise.create) }, "required": ["create"], "additionalProperties": false }),
    ];
    for (name, method) in &exercise.methods {
        steps.push(json!({ "type": "object", "properties": { name: call(method) }, "required": [name], "additionalProperties": false }));
        if method.written_args().next().is_none() {
            steps.push(json!({ "const": name }));
        }
    }
    for (view, shape) in &exercise.views {
        if shape.deep_copy {
            let kind = format!("mutate_{view}");
            steps.push(json!({ "type": "object", "properties": { &kind: { "type": "array" } }, "required": [kind], "additionalProperties": false }));
        }
    }
    steps.push(json!({ "const": "restart" }));
    steps.push(json!({ "type": "object", "properties": { "expect": {} }, "required": ["expect"], "additionalProperties": false }));
    if exercise.clock().is_some() {
        steps.push(json!({ "type": "object", "properties": { "advance": { "type": "number", "minimum": 0 } }, "required": ["advance"], "additionalProperties": false }));
    }
    let rules: Vec<&str> = exercise.rules.iter().map(|r| r.id).collect();
    let schema = json!({
        "type": "object",
        "description": exercise.title,
        "properties": {
            "contract": { "const": exercise.name },
            "name": { "type": "string" },
            "description": { "type": "string" },
            "rules": { "type": "array", "items": { "enum": rules } },
            "points": { "type": "number", "minimum": 0 },
            "visibility": { "enum": ["visible", "hidden", "after_due_date", "after_published"] },
            "allow": { "type": "array", "items": allow },
            "script": { "type": "object" },
            "steps": { "type": "array", "items": { "anyOf": steps } },
            "expect": {}
        },
        "required": ["contract", "name", "steps"],
        "additionalProperties": false
    });
    Schema::try_from(schema).unwrap_or_default()
}

/// A spec that passes as written: the constructor with the first value each argument draws,
/// each method once, and comments listing the vocabulary; `dlqspec bless` writes what the
/// reference answers where `returns` is added.
fn starter(exercise: &Exercise, name: &str) -> String {
    let first = |method: &definition::Method| Value::Object(method.first_draws());
    let rules: Vec<&str> = exercise.rules.first().map(|r| r.id).into_iter().collect();
    let mut text = crate::contracts::spec_file::starter_header(exercise.name, name, &rules);
    text.push_str("# The steps, in order; the first one makes the instance. Each call may pin its answer\n# (`returns: VALUE`, or `raises: invalid_argument | error | CLASS`):\n");
    for (method_name, method) in std::iter::once(("create", &exercise.create))
        .chain(exercise.methods.iter().map(|(n, m)| (n.as_str(), m)))
    {
        let args: Vec<String> = method
            .written_args()
            .map(|a| format!("{}: ...", a.name))
            .collect();
        text.push_str(&format!("#   {method_name}: {{{}}}\n", args.join(", ")));
    }
    for (view, shape) in &exercise.views {
        if shape.deep_copy {
            text.push_str(&format!("#   mutate_{view}: [{{set: {{path: [KEY, 0], value: X}}}}]   (the instance must not change)\n"));
        }
    }
    if exercise.clock().is_some() {
        text.push_str("#   advance: N   (the clock moves on)\n");
    }
    text.push_str("#   restart   (the instance ends; a new one is made");
    text.push_str(if exercise.restart.is_some() {
        " from its snapshot)\n"
    } else {
        " with the same arguments)\n"
    });
    text.push_str("#   expect: {...}   (the state views now)\nsteps:\n");
    text.push_str(&format!(
        "  - create: {}\n",
        crate::text::yaml::flow(&first(&exercise.create))
    ));
    for (method_name, method) in &exercise.methods {
        let args = first(method);
        if args.as_object().is_some_and(Map::is_empty) {
            text.push_str(&format!("  - {method_name}\n"));
        } else {
            text.push_str(&format!(
                "  - {method_name}: {}\n",
                crate::text::yaml::flow(&args)
            ));
        }
    }
    text
}
