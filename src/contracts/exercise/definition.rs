//! An exercise folder's `exercise.yaml`: what a solution defines and what the specs may say,
//! read and checked with the same errors as a spec (`path:line:col`, a caret, did-you-mean).
//!
//! The file is data an author writes by hand: the class and its constructor, each method with
//! its arguments (and the values explore may draw for them), the state views, the given parts
//! the world provides, the errors, the rules and what decides each. Nothing here knows any
//! exercise by name.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::model::mistake::Mistake;
use crate::model::rule::Rule;
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::{SpecError, SpecErrors};
use crate::text::yaml::{self, Spanned};

/// The file name that makes a folder an exercise.
pub(crate) const EXERCISE_FILE: &str = "exercise.yaml";

/// The step kinds every exercise's specs have besides its methods, in the order errors list them.
pub(crate) const ENGINE_STEPS: &[&str] = &["create", "expect", "advance", "restart"];

/// `exercise.yaml` as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ExerciseFile")]
pub(crate) struct ExerciseFile {
    /// The exercise's name, as specs write it in `contract:` (lowercase words joined by `-`).
    pub(crate) exercise: Spanned<String>,
    /// What the exercise is about, in one line.
    pub(crate) title: String,
    /// The class a solution defines.
    pub(crate) class: Spanned<String>,
    /// The author's own solution, relative to this folder: a `.py`, `.js`, `.mjs`, `.cjs` or
    /// `.ts` file, or `cmd:COMMAND LINE` for a program in any language that speaks the protocol.
    pub(crate) reference: Spanned<String>,
    /// The constructor: its arguments in the order it takes them, and the errors it may raise.
    #[serde(default)]
    pub(crate) create: MethodDecl,
    /// The methods a spec may call, by their snake_case names (a JavaScript solution's are
    /// their camelCase spelling).
    #[serde(default)]
    pub(crate) methods: IndexMap<String, Spanned<MethodDecl>>,
    /// The state views: methods without arguments that return plain data, compared by `expect`
    /// and after every step when a failure is diagnosed.
    #[serde(default)]
    pub(crate) views: IndexMap<String, Spanned<ViewDecl>>,
    /// The given parts the world provides, by name: a clock, a log, a scripted callable.
    #[serde(default)]
    pub(crate) given: IndexMap<String, Spanned<GivenDecl>>,
    /// The errors of the exercise a solution may raise or must recognise, by class name.
    #[serde(default)]
    pub(crate) errors: IndexMap<String, Spanned<ErrorDecl>>,
    /// How a `restart` step makes the new instance from the old one's snapshot; without it a
    /// restart makes a fresh instance with the last `create`'s arguments.
    #[serde(default)]
    pub(crate) restart: Option<Spanned<RestartDecl>>,
    /// The rules, in the order reports list them.
    pub(crate) rules: Spanned<Vec<Spanned<RuleDecl>>>,
}

/// A method (or the constructor): its arguments and what it may raise.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MethodDecl {
    /// The arguments, in the order the method takes them; a spec names them.
    #[serde(default)]
    pub(crate) args: IndexMap<String, Spanned<ArgDecl>>,
    /// Words a spec may write for a returned value (`none: null`), besides the value itself;
    /// or `any`: what the method returns is left free, so no spec pins it and a diagnosis
    /// does not compare it (a raised error still counts).
    #[serde(default)]
    pub(crate) returns: Returns,
    /// Whether a spec may leave its arguments out from the last one on (the solution's
    /// defaults apply): the arguments that may be left out.
    #[serde(default)]
    pub(crate) optional: Vec<String>,
}

/// What a method's `returns:` says: the words a spec may write for its values, or `any`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Returns {
    /// `returns: {none: null}`: words for values; the value returned is pinned.
    Words(IndexMap<String, Value>),
    /// `returns: any`: the value returned is free.
    Free(AnyWord),
}

impl Default for Returns {
    fn default() -> Self {
        Returns::Words(IndexMap::new())
    }
}

/// The word `any`, and only it.
#[derive(Debug, Clone, Copy, JsonSchema)]
#[schemars(with = "String")]
pub(crate) struct AnyWord;

impl<'de> Deserialize<'de> for AnyWord {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = String::deserialize(deserializer)?;
        if word == "any" {
            Ok(AnyWord)
        } else {
            Err(serde::de::Error::custom(format!(
                "`returns` is a mapping of words to values (`{{none: null}}`) or `any`, not `{word}`"
            )))
        }
    }
}

/// One argument.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ArgDecl {
    /// The values `explore` draws for it.
    #[serde(default)]
    pub(crate) draw: Vec<Spanned<Value>>,
    /// Values the constructor refuses (`refused: [0]`): explore's first `create` draws them
    /// too, and, where an argument lists them, the instance a case uses is made from any of
    /// its `draw` values, which are then all accepted (else from the first).
    #[serde(default)]
    pub(crate) refused: Vec<Spanned<Value>>,
    /// Whether callers never pass the same value twice (`unique: true`: the contract makes
    /// it a caller's promise, as unique job ids), so `explore` draws each value once per case.
    #[serde(default)]
    pub(crate) unique: bool,
    /// The given part handed in its place (`given: clock`): a spec does not write it.
    #[serde(default)]
    pub(crate) given: Option<Spanned<String>>,
}

/// One state view.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ViewDecl {
    /// Whether the view must be a deep copy: a spec may `mutate_VIEW` it, and the instance's
    /// own state must not change.
    #[serde(default = "yes")]
    pub(crate) deep_copy: bool,
    /// Changes `explore` may make to the view (each a list, as `mutate_VIEW` takes it), to
    /// find a view that is no deep copy.
    #[serde(default)]
    pub(crate) draw: Vec<Value>,
    /// The view's keys of more than one word, in snake_case as specs write them
    /// (`dead_letter`): a JavaScript or TypeScript solution may spell each in camelCase
    /// (`deadLetter`), at any depth of the view, and the Node shim hands it back as written here.
    #[serde(default)]
    pub(crate) keys: Vec<String>,
    /// The fields of a listed item an explained run's list panel shows beside its `id`
    /// (`shown: [until, due]` draws a leased job as `a (until 17)`); none by default.
    #[serde(default)]
    pub(crate) shown: Vec<String>,
}

fn yes() -> bool {
    true
}

/// What kind of given part the world provides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GivenKind {
    /// `now()`: the world's time, starting at 0, moved only by the specs' `advance` steps (a
    /// solution reads the clock; it does not move the world's time).
    Clock,
    /// `apply(key, value)` records an effect under a key, `entries()` reads them back; a
    /// spec's `expect` compares each key's effects in the order applied.
    Log,
    /// A function whose answer on each call the spec scripts (`script:`): a value, or an error.
    Callable,
}

impl GivenKind {
    /// The methods a part of this kind answers to, as the wire names them (`part.method`).
    pub(crate) fn methods(self) -> &'static [&'static str] {
        match self {
            GivenKind::Clock => &["now"],
            GivenKind::Log => &["apply", "entries"],
            GivenKind::Callable => &[],
        }
    }
}

/// A given part.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GivenDecl {
    pub(crate) kind: GivenKind,
    /// The class name a solution's language sees (`Clock`), where the part is an object.
    #[serde(default)]
    pub(crate) class: Option<String>,
    /// For a clock: the moves `explore` draws for `advance` steps, each a whole number of at
    /// least 1 (`advance: [1, 2, 3]`: those that meet the exercise's own times). Left out:
    /// 1, 2, 5, 10 and 30.
    #[serde(default)]
    pub(crate) advance: Option<Spanned<Vec<u64>>>,
}

/// The clock's moves `explore` draws where `exercise.yaml` names none.
pub(crate) const ADVANCES: [u64; 5] = [1, 2, 5, 10, 30];

/// What an error of the exercise is in a solution's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ErrorBase {
    /// An ordinary error (Python `Exception`, JavaScript `Error`).
    #[default]
    Error,
    /// A crash: Python `BaseException`, so `except Exception` does not catch it.
    Crash,
}

/// An error class of the exercise.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ErrorDecl {
    #[serde(default)]
    pub(crate) base: ErrorBase,
}

/// How a restart makes an instance from a snapshot.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RestartDecl {
    /// The method that returns the snapshot (plain data).
    pub(crate) snapshot: String,
    /// The class's static factory that makes an instance from it: it takes the snapshot, then
    /// the constructor's given parts.
    pub(crate) from: String,
}

/// A rule as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleDecl {
    /// `slug` (the exercise's name is put before it) or `exercise/slug`.
    pub(crate) id: Spanned<String>,
    /// What the rule demands, in one line a student reads.
    pub(crate) says: String,
    /// What decides the rule: a departure that matches one of these is told as breaking it.
    #[serde(default)]
    pub(crate) decides: Vec<Spanned<Pattern>>,
}

/// A point of a run a rule decides: each key given must match, the most specific rule wins.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pattern {
    /// The method called (`create` for the constructor, `restart`).
    #[serde(default)]
    pub(crate) call: Option<String>,
    /// Arguments of the call, by name, with the value they must have.
    #[serde(default)]
    pub(crate) args: IndexMap<String, Value>,
    /// What the reference returned there (`null` too).
    #[serde(default, deserialize_with = "present")]
    pub(crate) returns: Option<Value>,
    /// What the reference raised there: `invalid_argument`, `error`, or an error class.
    #[serde(default)]
    pub(crate) raises: Option<String>,
    /// A state view (or a given part's record) that differs after the call.
    #[serde(default)]
    pub(crate) view: Option<String>,
    /// The view's top-level key that differs.
    #[serde(default)]
    pub(crate) key: Option<String>,
    /// A `mutate_VIEW` step that reached the instance's own state.
    #[serde(default)]
    pub(crate) mutate: Option<String>,
}

/// Whether a pattern's condition `want` holds of `got`: it is not set, or they are equal.
fn same(want: &Option<String>, got: Option<&str>) -> bool {
    want.as_deref().is_none_or(|want| Some(want) == got)
}

/// A key that is written is `Some`, even as `null`.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl Pattern {
    /// How it ranks among the patterns that match a point: one naming the step (its call or
    /// the view a `mutate_VIEW` changed) outranks any that does not, whatever they name
    /// besides, so that a view's key alone (`{view: state, key: leased}`, written for the
    /// clock's moves) never takes a call's departure from the rule of that call; then the
    /// more conditions, the more specific.
    pub(crate) fn rank(&self) -> (bool, usize) {
        (self.call.is_some() || self.mutate.is_some(), self.weight())
    }

    /// How many conditions it sets: the more, the more specific.
    pub(crate) fn weight(&self) -> usize {
        usize::from(self.call.is_some())
            + self.args.len()
            + usize::from(self.returns.is_some())
            + usize::from(self.raises.is_some())
            + usize::from(self.view.is_some())
            + usize::from(self.key.is_some())
            + usize::from(self.mutate.is_some())
    }
}

/// A method or the constructor, checked: arguments in order.
#[derive(Debug, Clone)]
pub(crate) struct Method {
    pub(crate) name: String,
    /// Each argument: its name, the given part it is (none for a spec's value), its draws.
    pub(crate) args: Vec<Arg>,
    pub(crate) words: IndexMap<String, Value>,
    pub(crate) optional: Vec<String>,
    /// Whether what it returns is left free (`returns: any`).
    pub(crate) free: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Arg {
    pub(crate) name: String,
    pub(crate) given: Option<String>,
    pub(crate) draw: Vec<Value>,
    /// Drawn once per case (`unique: true`).
    pub(crate) unique: bool,
    /// The values that make an instance, where the argument lists those refused apart.
    pub(crate) accepted: Option<Vec<Value>>,
    /// Where each of `draw` is written in `exercise.yaml`, in the same order.
    pub(crate) at: Vec<Position>,
}

impl Method {
    /// The arguments a spec writes (the given parts are the world's).
    pub(crate) fn written_args(&self) -> impl Iterator<Item = &Arg> {
        self.args.iter().filter(|arg| arg.given.is_none())
    }

    /// Each written argument's first draw, by name: the call a starter spec and `smoke` make.
    pub(crate) fn first_draws(&self) -> serde_json::Map<String, Value> {
        self.written_args()
            .filter_map(|arg| arg.draw.first().map(|v| (arg.name.clone(), v.clone())))
            .collect()
    }
}

/// A state view, checked.
#[derive(Debug, Clone)]
pub(crate) struct View {
    /// Whether it must be a deep copy (`mutate_VIEW` then checks that it is).
    pub(crate) deep_copy: bool,
    /// Its keys of more than one word (`keys:`), which a JavaScript solution may spell in
    /// camelCase.
    pub(crate) keys: Vec<String>,
    /// The changes `explore` may make to it, where it is a deep copy.
    pub(crate) draws: Vec<Value>,
    /// The fields of a listed item the list panel shows beside its `id`.
    pub(crate) shown: Vec<String>,
}

/// A given part, checked.
#[derive(Debug, Clone)]
pub(crate) struct Given {
    pub(crate) name: String,
    pub(crate) kind: GivenKind,
    pub(crate) class: Option<String>,
    /// A clock's moves for `explore` (`ADVANCES` unless `exercise.yaml` names them).
    pub(crate) advance: Vec<u64>,
}

/// An exercise, checked and ready to serve specs; its names live as long as the program.
#[derive(Debug)]
pub(crate) struct Exercise {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) class: &'static str,
    pub(crate) folder: PathBuf,
    /// `exercise.yaml` itself, for errors found after it is read (its draws, on the reference).
    pub(crate) file: SourceFile,
    /// The reference as written (`reference.py`, `cmd:...`), relative to `folder`.
    pub(crate) reference: String,
    /// Where `exercise.yaml` names it, for an error of the reference itself.
    pub(crate) reference_at: crate::text::source::Position,
    pub(crate) create: Method,
    pub(crate) methods: IndexMap<String, Method>,
    pub(crate) views: IndexMap<String, View>,
    pub(crate) given: Vec<Given>,
    pub(crate) errors: IndexMap<String, ErrorBase>,
    pub(crate) restart: Option<(String, String)>,
    pub(crate) rules: &'static [Rule],
    /// What decides each rule: the rule's place in `rules`, and the pattern.
    pub(crate) decides: Vec<(usize, Pattern)>,
    pub(crate) step_kinds: &'static [&'static str],
    /// The lanes an explained run's calls go between: the spec, the class, each given part.
    pub(crate) lanes: &'static [&'static str],
    /// The known mistakes (`mistakes/`), each with its solution file, in the same order.
    pub(crate) mistakes: &'static [Mistake],
    pub(crate) mistake_files: Vec<PathBuf>,
}

impl Exercise {
    /// The reference as an `--impl` value: a path made absolute, or the `cmd:` line.
    pub(crate) fn reference_target(&self) -> String {
        program_target(&self.folder, &self.reference)
    }

    /// The given parts that keep a record `expect` compares (logs, callables).
    pub(crate) fn recorded_parts(&self) -> impl Iterator<Item = &Given> {
        self.given
            .iter()
            .filter(|g| matches!(g.kind, GivenKind::Log | GivenKind::Callable))
    }

    /// Whether a spec's `expect` is the one view itself (`expect: {ready: ...}`) rather than
    /// a mapping of view names: an exercise of one view and no recorded given part.
    pub(crate) fn inline_expect(&self) -> bool {
        self.views.len() == 1 && self.recorded_parts().next().is_none()
    }

    /// Whether a rule is decided by what a move of the clock changes: a view's key alone, with
    /// no call named (`{view: state, key: leased}`), or the move itself (`{call: advance}`).
    pub(crate) fn has_clock_rules(&self) -> bool {
        self.clock().is_some()
            && self.decides.iter().any(|(_, p)| {
                (p.call.is_none() && p.mutate.is_none() && p.view.is_some())
                    || p.call.as_deref() == Some("advance")
            })
    }

    /// The clocks among the given parts.
    pub(crate) fn clock(&self) -> Option<&Given> {
        self.given.iter().find(|g| g.kind == GivenKind::Clock)
    }

    /// The method of this name, the constructor as `create`.
    pub(crate) fn method(&self, name: &str) -> Option<&Method> {
        if name == "create" {
            Some(&self.create)
        } else {
            self.methods.get(name)
        }
    }
}

/// A program of an exercise folder as an `--impl` value.
pub(crate) fn program_target(folder: &Path, written: &str) -> String {
    if written.starts_with("cmd:") {
        written.to_owned()
    } else {
        folder.join(written).display().to_string()
    }
}

fn qualified(exercise: &str, slug: &str) -> String {
    if slug.contains('/') {
        slug.to_owned()
    } else {
        format!("{exercise}/{slug}")
    }
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// Reads and checks `exercise.yaml` in `folder`, with its known mistakes; every error of the
/// file at once.
pub(crate) fn read(folder: &Path) -> Result<Exercise, SpecError> {
    let path = folder.join(EXERCISE_FILE);
    let file = SourceFile::read(&path).map_err(|error| {
        SpecError::at(
            &SourceFile::from_text(&path, ""),
            Position::new(1, 1),
            crate::text::spec_error::SpecErrorKind::Unreadable,
            format!("cannot read the exercise: {error}"),
        )
    })?;
    let decl: ExerciseFile = match yaml::parse_recovering::<ExerciseFile>(&file) {
        Ok(decl) => decl,
        Err(broken) => return Err(broken.checked(|_, _| Ok::<(), SpecError>(()))),
    };
    check(folder, &file, decl)
}

/// The checks YAML's shape cannot make.
pub(crate) fn check(
    folder: &Path,
    file: &SourceFile,
    decl: ExerciseFile,
) -> Result<Exercise, SpecError> {
    let mut errors = SpecErrors::default();
    let invalid = |at: Position, message: String| SpecError::invalid(file, at, message);
    let name = decl.exercise.value.clone();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        errors.push(invalid(
            yaml::at(&decl.exercise),
            format!("`exercise` is the name specs write in `contract:`: lowercase letters, digits and `-`, not `{name}`"),
        ));
    }
    if !is_identifier(&decl.class.value) {
        errors.push(invalid(
            yaml::at(&decl.class),
            format!(
                "`class` is a class name a solution defines (a word such as `Queue`), not `{}`",
                decl.class.value
            ),
        ));
    }
    if decl.reference.value.trim().is_empty() {
        errors.push(invalid(
            yaml::at(&decl.reference),
            "`reference` names the author's solution: a file in this folder (`reference.py`) or `cmd:COMMAND LINE`".into(),
        ));
    } else if !decl.reference.value.starts_with("cmd:")
        && !folder.join(&decl.reference.value).is_file()
    {
        errors.push(invalid(
            yaml::at(&decl.reference),
            format!(
                "the reference `{}` is not a file in {}: write the path of the author's solution, relative to this folder",
                decl.reference.value,
                folder.display()
            ),
        ));
    }

    let given: Vec<Given> = decl
        .given
        .iter()
        .map(|(part, spanned)| {
            if !is_identifier(part) {
                errors.push(invalid(
                    yaml::at(spanned),
                    format!("a given part's name is a word a solution's argument could be called (`clock`), not `{part}`"),
                ));
            }
            let advance = match &spanned.value.advance {
                None => ADVANCES.to_vec(),
                Some(moves) => {
                    if spanned.value.kind != GivenKind::Clock {
                        errors.push(invalid(
                            yaml::at(moves),
                            format!("`advance` lists a clock's moves, and `{part}` is no clock: leave it out"),
                        ));
                    } else if moves.value.is_empty() || moves.value.contains(&0) {
                        errors.push(invalid(
                            yaml::at(moves),
                            "`advance` lists the moves explore draws, each a whole number of at least 1 (`advance: [1, 2, 5]`)".into(),
                        ));
                    }
                    moves.value.clone()
                }
            };
            Given {
                name: part.clone(),
                kind: spanned.value.kind,
                class: spanned.value.class.clone(),
                advance,
            }
        })
        .collect();
    let part_names: Vec<&str> = given.iter().map(|g| g.name.as_str()).collect();
    // Where the method `name`'s entry `key` is written, its mapping being at `at` (the
    // constructor's, `create`, under the top of the file): its key, or its value.
    let within = |name: &str, at: Option<Position>, key: &[&str], part: yaml::Part| {
        let mut path: Vec<String> = key.iter().map(|k| (*k).to_owned()).collect();
        let found = match at {
            Some(at) => yaml::place(&file.text, at, &path, part),
            None => {
                path.insert(0, name.to_owned());
                yaml::place_top(&file.text, &path, part)
            }
        };
        found.or(at).unwrap_or(Position::START)
    };
    let method = |name: &str,
                  at: Option<Position>,
                  decl: &MethodDecl,
                  errors: &mut SpecErrors|
     -> Method {
        let args = decl
            .args
            .iter()
            .map(|(arg, spanned)| {
                let given = spanned.value.given.as_ref().map(|g| {
                    if !part_names.contains(&g.value.as_str()) {
                        errors.push(invalid(
                            yaml::at(g),
                            format!(
                                "`{}` is not a given part{}; the given parts are {}",
                                g.value,
                                crate::text::suggest::hint(&g.value, &part_names),
                                listed(&part_names)
                            ),
                        ));
                    }
                    g.value.clone()
                });
                Arg {
                    name: arg.clone(),
                    given,
                    draw: spanned
                        .value
                        .draw
                        .iter()
                        .chain(&spanned.value.refused)
                        .map(|v| v.value.clone())
                        .collect(),
                    accepted: (!spanned.value.refused.is_empty())
                        .then(|| spanned.value.draw.iter().map(|v| v.value.clone()).collect()),
                    at: spanned
                        .value
                        .draw
                        .iter()
                        .chain(&spanned.value.refused)
                        .map(yaml::at)
                        .collect(),
                    unique: spanned.value.unique,
                }
            })
            .collect::<Vec<_>>();
        for optional in &decl.optional {
            if !args.iter().any(|a| &a.name == optional) {
                let names: Vec<&str> = args.iter().map(|a| a.name.as_str()).collect();
                errors.push(invalid(
                    within(name, at, &["optional"], yaml::Part::Value),
                    format!(
                        "`{name}`'s optional argument `{}` is not one of its arguments{}; expected one of {}",
                        yaml::flow(&Value::String(optional.clone())),
                        crate::text::suggest::hint(optional, &names),
                        listed(&names)
                    ),
                ));
            }
        }
        Method {
            name: name.to_owned(),
            args,
            words: match &decl.returns {
                Returns::Words(words) => words.clone(),
                Returns::Free(_) => IndexMap::new(),
            },
            optional: decl.optional.clone(),
            free: matches!(decl.returns, Returns::Free(_)),
        }
    };
    let create = method("create", None, &decl.create, &mut errors);
    let mut methods = IndexMap::new();
    for (name, spanned) in &decl.methods {
        if !is_identifier(name)
            || ENGINE_STEPS.contains(&name.as_str())
            || name.starts_with("mutate_")
        {
            errors.push(invalid(
                yaml::at(spanned),
                format!("`{name}` cannot be a method's name here: a spec's steps `create`, `expect`, `advance`, `restart` and `mutate_VIEW` are the engine's"),
            ));
        }
        if let Some((arg, _)) = spanned
            .value
            .args
            .iter()
            .find(|(_, a)| a.value.given.is_some())
        {
            errors.push(invalid(
                within(name, Some(yaml::at(spanned)), &["args", arg], yaml::Part::Key),
                format!("`{name}`'s argument `{arg}` is a given part: given parts are handed to the constructor (`create`), which keeps them"),
            ));
        }
        methods.insert(
            name.clone(),
            method(name, Some(yaml::at(spanned)), &spanned.value, &mut errors),
        );
    }
    let views: IndexMap<String, View> = decl
        .views
        .iter()
        .map(|(view, spanned)| {
            let decl = &spanned.value;
            let view_of = View {
                deep_copy: decl.deep_copy,
                keys: decl.keys.clone(),
                draws: decl.draw.clone(),
                shown: decl.shown.clone(),
            };
            (view.clone(), view_of)
        })
        .collect();
    for (view, spanned) in &decl.views {
        for key in &spanned.value.keys {
            if !is_snake_key(key) {
                errors.push(invalid(
                    within(view, Some(yaml::at(spanned)), &["keys"], yaml::Part::Value),
                    format!("`{view}`'s key `{key}` is not snake_case: `keys` names each as specs write it (`dead_letter`), and a JavaScript solution may then write it in camelCase (`deadLetter`)"),
                ));
            }
        }
    }
    let restart = decl
        .restart
        .as_ref()
        .map(|r| (r.value.snapshot.clone(), r.value.from.clone()));

    // Rules and what decides them.
    let mut rules = Vec::new();
    let mut decides = Vec::new();
    // Where a pattern's `key` is given: its value, else the pattern.
    let at_value = |pattern: &Spanned<Pattern>, key: &str| {
        let at = yaml::at(pattern);
        yaml::place(&file.text, at, &[key.to_owned()], yaml::Part::Value).unwrap_or(at)
    };
    // The calls a departure is found at: the constructor, a restart, a move of the clock
    // (where there is one) and the methods; an `expect` calls nothing.
    let clock = given.iter().any(|g| g.kind == GivenKind::Clock);
    let method_names: Vec<&str> = std::iter::once("create")
        .chain(["restart"])
        .chain(clock.then_some("advance"))
        .chain(methods.keys().map(String::as_str))
        .collect();
    let record_names: Vec<&str> = views
        .keys()
        .map(String::as_str)
        .chain(
            given
                .iter()
                .filter(|g| g.kind != GivenKind::Clock)
                .map(|g| g.name.as_str()),
        )
        .collect();
    if decl.rules.value.is_empty() {
        errors.push(invalid(
            yaml::at(&decl.rules),
            "`rules` is empty: an exercise states at least one rule its specs check".into(),
        ));
    }
    for (index, rule) in decl.rules.value.iter().enumerate() {
        let id = qualified(&name, &rule.value.id.value);
        if rules.iter().any(|r: &Rule| r.id == id) {
            errors.push(invalid(
                yaml::at(&rule.value.id),
                format!("the rule `{id}` is stated twice"),
            ));
        }
        for pattern in &rule.value.decides {
            let p = &pattern.value;
            if let Some(call) = &p.call
                && !method_names.contains(&call.as_str())
            {
                errors.push(invalid(
                    at_value(pattern, "call"),
                    no_call(call, &method_names),
                ));
            }
            for (key, view) in [("view", &p.view), ("mutate", &p.mutate)] {
                let Some(view) = view else { continue };
                if !record_names.contains(&view.as_str()) {
                    errors.push(invalid(
                        at_value(pattern, key),
                        format!(
                            "`{view}` is not a state view{}; expected one of {}",
                            crate::text::suggest::hint(view, &record_names),
                            listed(&record_names)
                        ),
                    ));
                }
            }
            if p.weight() == 0 {
                errors.push(invalid(
                    yaml::at(pattern),
                    "an empty pattern decides everything: give at least `call`, `view` or `mutate`"
                        .into(),
                ));
            }
            decides.push((index, p.clone()));
        }
        rules.push(Rule {
            id: leak(id),
            statement: leak(rule.value.says.clone()),
        });
    }
    let rules: &'static [Rule] = Box::leak(rules.into_boxed_slice());

    let mut step_kinds: Vec<&'static str> = vec!["create"];
    step_kinds.extend(methods.keys().map(|m| leak(m.clone())));
    step_kinds.extend(
        views
            .keys()
            .filter(|v| views[*v].deep_copy)
            .map(|v| leak(format!("mutate_{v}"))),
    );
    if given.iter().any(|g| g.kind == GivenKind::Clock) {
        step_kinds.push("advance");
    }
    step_kinds.push("restart");
    step_kinds.push("expect");

    let mut lanes: Vec<&'static str> = vec!["test", leak(decl.class.value.clone())];
    lanes.extend(given.iter().map(|g| leak(g.name.clone())));
    let lanes: &'static [&'static str] = Box::leak(lanes.into_boxed_slice());

    let (mistakes, mistake_files) = match read_mistakes(folder, &name, rules) {
        Ok(found) => found,
        Err(error) => {
            errors.push(error);
            (&[][..], Vec::new())
        }
    };
    errors.check()?;
    Ok(Exercise {
        name: leak(name),
        title: leak(decl.title),
        class: leak(decl.class.value),
        folder: folder.to_path_buf(),
        file: file.clone(),
        reference_at: yaml::at(&decl.reference),
        reference: decl.reference.value,
        create,
        methods,
        views,
        given,
        errors: decl
            .errors
            .into_iter()
            .map(|(class, decl)| (class, decl.value.base))
            .collect(),
        restart,
        rules,
        decides,
        step_kinds: Box::leak(step_kinds.into_boxed_slice()),
        lanes,
        mistakes,
        mistake_files,
    })
}

/// The known mistakes of `folder/mistakes/`: each file one mistake, its first line a comment
/// `breaks RULE: what the student reads`.
fn read_mistakes(
    folder: &Path,
    exercise: &str,
    rules: &'static [Rule],
) -> Result<(&'static [Mistake], Vec<PathBuf>), SpecError> {
    let dir = folder.join("mistakes");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok((&[], Vec::new()));
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    let mut mistakes = Vec::new();
    let mut files = Vec::new();
    let mut errors = SpecErrors::default();
    for path in paths {
        let file = match SourceFile::read(&path) {
            Ok(file) => file,
            Err(error) => {
                errors.push(SpecError::invalid(
                    &SourceFile::from_text(&path, ""),
                    Position::new(1, 1),
                    format!("cannot read the known mistake: {error}"),
                ));
                continue;
            }
        };
        let first = file.text.lines().next().unwrap_or_default();
        let words = first.trim_start_matches(['#', '/', ' ', '*', '-']).trim();
        let Some((rule, what)) = words
            .strip_prefix("breaks ")
            .and_then(|rest| rest.split_once(':'))
        else {
            errors.push(SpecError::invalid(
                &file,
                Position::new(1, 1),
                "a known mistake's first line is a comment `breaks RULE: what the student reads`, e.g. `# breaks take-in-order: take hands out the newest item`",
            ));
            continue;
        };
        let id = qualified(exercise, rule.trim());
        let Some(rule) = rules.iter().find(|r| r.id == id) else {
            let ids: Vec<&str> = rules.iter().map(|r| r.id).collect();
            errors.push(SpecError::invalid(
                &file,
                Position::new(1, 1),
                format!(
                    "`{id}` is not a rule of the exercise{}; expected one of {}",
                    crate::text::suggest::hint(&id, &ids),
                    ids.join(", ")
                ),
            ));
            continue;
        };
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        mistakes.push(Mistake {
            id: leak(stem),
            rule,
            what: leak(what.trim().to_owned()),
        });
        files.push(path);
    }
    errors.check()?;
    Ok((Box::leak(mistakes.into_boxed_slice()), files))
}

/// Whether `key` is lowercase words and digits joined by `_`, as a view's key in `keys:`.
fn is_snake_key(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_lowercase())
        && key.split('_').all(|word| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why `call: CALL` in a `decides` pattern names no call a departure is found at, and the fix.
fn no_call(call: &str, calls: &[&str]) -> String {
    let why = match call {
        "expect" => " (`expect` calls nothing: what differs there already differs after the step before it, so name that step's call, or a view and its key alone)".to_owned(),
        "advance" => " (`advance` moves the clock, and this exercise has no clock among its given parts)".to_owned(),
        _ => match call.strip_prefix("mutate_") {
            Some(view) => format!(
                " (a change to a view is `mutate: {}`, not a call)",
                yaml::flow(&Value::String(view.to_owned()))
            ),
            None => crate::text::suggest::hint(call, calls),
        },
    };
    format!(
        "`call: {}` names no call a departure is found at{why}; expected one of {}",
        yaml::flow(&Value::String(call.to_owned())),
        calls.join(", ")
    )
}

fn listed(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// A point of a run, as `decides` patterns match it: the call made there, what the reference
/// answered (or the spec pins), and which view or record differs after it.
#[derive(Debug, Default)]
pub(crate) struct Point<'p> {
    pub(crate) call: Option<&'p str>,
    pub(crate) args: Option<&'p serde_json::Map<String, Value>>,
    pub(crate) returns: Option<&'p Value>,
    /// The error raised there, as a spec names it (`invalid_argument`, `error`) and its class.
    pub(crate) raises: Option<(&'p str, Option<&'p crate::model::implementation::Raised>)>,
    pub(crate) view: Option<&'p str>,
    pub(crate) key: Option<&'p str>,
    pub(crate) mutate: Option<&'p str>,
}

impl<'p> Point<'p> {
    /// The point of a call of `call` with `args` that answered `reply`: what it returned or
    /// raised, and the view a `mutate_VIEW` changes; no view or key differs there.
    pub(crate) fn answered(
        call: &'p str,
        args: &'p serde_json::Map<String, Value>,
        reply: Option<&'p crate::model::implementation::Reply>,
    ) -> Self {
        use crate::model::implementation::Reply;
        Point {
            call: Some(call),
            args: Some(args),
            returns: match reply {
                Some(Reply::Returned(value)) => Some(value),
                _ => None,
            },
            raises: match reply {
                Some(Reply::Raised(raised)) => Some((raised.kind.word(), Some(raised))),
                _ => None,
            },
            mutate: call.strip_prefix("mutate_"),
            ..Point::default()
        }
    }
}

impl Pattern {
    /// Whether every condition the pattern sets holds at `point`.
    pub(crate) fn matches(&self, point: &Point) -> bool {
        self.matches_call(point) && same(&self.view, point.view) && same(&self.key, point.key)
    }

    /// Whether it matches `point` in all but the view and key it names: what the call decides.
    pub(crate) fn matches_call(&self, point: &Point) -> bool {
        same(&self.call, point.call)
            && same(&self.mutate, point.mutate)
            && self
                .args
                .iter()
                .all(|(name, value)| point.args.and_then(|args| args.get(name)) == Some(value))
            && self
                .returns
                .as_ref()
                .is_none_or(|want| point.returns == Some(want))
            && self
                .raises
                .as_deref()
                .is_none_or(|want| match point.raises {
                    None => false,
                    Some((written, raised)) => {
                        written == want
                            || (want == "error" && written != "crash")
                            || raised.is_some_and(|raised| raised.is_a(want))
                    }
                })
    }
}

impl Exercise {
    /// The rule that decides `point`: of the patterns that match it, those naming the step
    /// (its call or `mutate`) first, then the most specific, the first written among equals.
    /// Every rule a call at `point` reaches: those with a pattern naming a call that matches
    /// it, whatever view the pattern names (a call decides what it changes), the most specific
    /// first. A method that raised or returned nothing (`null`) changed nothing, so it reaches
    /// only the rules whose pattern names that answer (a constructor returns nothing by nature,
    /// and its rules decide whether it raises). What a spec exercises, where `rule_at` names
    /// the one rule a departure breaks.
    pub(crate) fn rules_reached(&self, point: &Point) -> Vec<&'static Rule> {
        let constructs = matches!(point.call, Some("create" | "restart"));
        let answered_nothing =
            !constructs && (point.raises.is_some() || point.returns == Some(&Value::Null));
        let mut reached: Vec<(usize, usize)> = Vec::new();
        for (rule, pattern) in &self.decides {
            if pattern.call.is_none() || pattern.mutate.is_some() {
                continue;
            }
            if answered_nothing && pattern.returns.is_none() && pattern.raises.is_none() {
                continue;
            }
            if !pattern.matches_call(point) {
                continue;
            }
            let weight = pattern.weight();
            match reached.iter_mut().find(|(r, _)| r == rule) {
                Some((_, w)) => *w = (*w).max(weight),
                None => reached.push((*rule, weight)),
            }
        }
        reached.sort_by_key(|(rule, weight)| (std::cmp::Reverse(*weight), *rule));
        reached
            .into_iter()
            .map(|(rule, _)| &self.rules[rule])
            .collect()
    }

    pub(crate) fn rule_at(&self, point: &Point) -> Option<&'static Rule> {
        let mut best: Option<(usize, (bool, usize))> = None;
        for (rule, pattern) in &self.decides {
            if pattern.matches(point) {
                let weight = pattern.rank();
                if best.is_none_or(|(_, w)| weight > w) {
                    best = Some((*rule, weight));
                }
            }
        }
        best.map(|(rule, _)| &self.rules[rule])
    }
}

/// How a spec names a raised error: its kind's word.
pub(crate) fn raised_word(raised: &crate::model::implementation::Raised) -> &'static str {
    raised.kind.word()
}

impl Exercise {
    /// How blessing writes a raised error: the error `exercise.yaml` declares that it is
    /// (`StaleLease`, as the bundled specs write it), else its kind's word.
    pub(crate) fn raised_name(&self, raised: &crate::model::implementation::Raised) -> String {
        self.errors
            .keys()
            .find(|declared| raised.is_a(declared))
            .cloned()
            .unwrap_or_else(|| raised_word(raised).to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(given: &str) -> Result<Exercise, SpecError> {
        let text = format!(
            "exercise: toy\ntitle: t\nclass: Toy\nreference: \"cmd:toy\"\ngiven:\n{given}\
             methods:\n  tick: {{}}\nrules:\n  - id: r\n    says: s\n    decides: [{{call: tick}}]\n"
        );
        let file = SourceFile::from_text("exercise.yaml", text);
        let decl = yaml::parse(&file).expect("it parses");
        check(Path::new("."), &file, decl)
    }

    /// A toy exercise whose rule `by-key` is decided by a view's key alone, written first,
    /// and `by-call` by the call of `tick` alone.
    fn keyed() -> Exercise {
        let text = "exercise: toy\ntitle: t\nclass: Toy\nreference: \"cmd:toy\"\n\
             methods:\n  tick: {}\nviews:\n  state: {}\nrules:\n\
             \x20 - id: by-key\n    says: s\n    decides: [{view: state, key: items}]\n\
             \x20 - id: by-call\n    says: s\n    decides: [{call: tick}, {mutate: state}]\n";
        let file = SourceFile::from_text("exercise.yaml", text);
        let decl = yaml::parse(&file).expect("it parses");
        check(Path::new("."), &file, decl).expect("it checks")
    }

    #[test]
    fn a_pattern_naming_the_step_outranks_a_more_specific_one_that_does_not() {
        let exercise = keyed();
        let args = serde_json::Map::new();
        let at_tick = Point {
            view: Some("state"),
            key: Some("items"),
            ..Point::answered("tick", &args, None)
        };
        assert_eq!(
            exercise.rule_at(&at_tick).map(|r| r.id),
            Some("toy/by-call")
        );
        let at_mutate = Point {
            view: Some("state"),
            key: Some("items"),
            ..Point::answered("mutate_state", &args, None)
        };
        assert_eq!(
            exercise.rule_at(&at_mutate).map(|r| r.id),
            Some("toy/by-call")
        );
        // Where no pattern names the step (a move of the clock), the key alone decides.
        let at_advance = Point {
            view: Some("state"),
            key: Some("items"),
            ..Point::answered("advance", &args, None)
        };
        assert_eq!(
            exercise.rule_at(&at_advance).map(|r| r.id),
            Some("toy/by-key")
        );
    }

    #[test]
    fn a_clock_draws_the_moves_it_names_else_the_defaults() {
        let named = checked("  clock: {kind: clock, advance: [1, 3]}\n").expect("it checks");
        assert_eq!(named.clock().expect("a clock").advance, [1, 3]);
        let plain = checked("  clock: {kind: clock}\n").expect("it checks");
        assert_eq!(plain.clock().expect("a clock").advance, ADVANCES);
    }

    #[test]
    fn moves_are_a_clocks_and_at_least_one() {
        let error = checked("  log: {kind: log, advance: [1]}\n").expect_err("refused");
        assert!(
            error.message.contains("`log` is no clock"),
            "{}",
            error.message
        );
        assert_eq!(error.position, Position::new(6, 29));
        let error = checked("  clock: {kind: clock, advance: [2, 0]}\n").expect_err("refused");
        assert!(
            error.message.contains("each a whole number of at least 1"),
            "{}",
            error.message
        );
    }

    /// The errors of a toy exercise with `given` and the patterns `decides` of its one rule.
    fn decided_by(given: &str, decides: &str) -> Result<Exercise, SpecError> {
        let text = format!(
            "exercise: toy\ntitle: t\nclass: Toy\nreference: \"cmd:toy\"\ngiven:\n{given}\
             methods:\n  tick: {{}}\nviews:\n  state: {{}}\nrules:\n  - id: r\n    says: s\n    decides: {decides}\n"
        );
        let file = SourceFile::from_text("exercise.yaml", text);
        let decl = yaml::parse(&file).expect("it parses");
        check(Path::new("."), &file, decl)
    }

    #[test]
    fn a_call_no_departure_is_found_at_is_refused_at_its_value_with_why() {
        let clock = "  clock: {kind: clock}\n";
        let error = decided_by(clock, "[{call: expect}]").expect_err("refused");
        assert_eq!(error.position, Position::new(14, 22));
        assert!(
            error.message.starts_with(
                "`call: expect` names no call a departure is found at (`expect` calls nothing"
            ) && error
                .message
                .ends_with("expected one of create, restart, advance, tick"),
            "{}",
            error.message
        );
        let error = decided_by("  log: {kind: log}\n", "[{call: advance}]").expect_err("refused");
        assert!(
            error.message.contains("this exercise has no clock"),
            "{}",
            error.message
        );
        let error = decided_by(clock, "[{call: mutate_state}]").expect_err("refused");
        assert!(
            error.message.contains("`mutate: state`"),
            "{}",
            error.message
        );
        let error = decided_by(clock, "[{call: tik}]").expect_err("refused");
        assert!(
            error.message.contains("(did you mean `tick`?)"),
            "{}",
            error.message
        );
        let error = decided_by(clock, "[{call: tick, view: stat}]").expect_err("refused");
        assert_eq!(error.position, Position::new(14, 34));
    }

    #[test]
    fn a_clock_move_is_a_call_a_rule_may_name() {
        let exercise =
            decided_by("  clock: {kind: clock}\n", "[{call: advance}]").expect("it checks");
        assert!(exercise.has_clock_rules());
        let args = serde_json::Map::new();
        let at_advance = Point {
            view: Some("state"),
            key: Some("items"),
            ..Point::answered("advance", &args, None)
        };
        assert_eq!(exercise.rule_at(&at_advance).map(|r| r.id), Some("toy/r"));
        let at_tick = Point::answered("tick", &args, None);
        assert_eq!(exercise.rule_at(&at_tick), None);
    }

    #[test]
    fn an_error_of_a_methods_entry_points_at_that_entry() {
        let text = "# the toy\nexercise: toy\ntitle: t\nclass: Toy\nreference: \"cmd:toy\"\n\
             given:\n  clock: {kind: clock}\ncreate:\n  args:\n    clock: {given: clock}\n    size: {}\n  optional: [sise]\n\
             methods:\n  tick:\n    args: {by: {}, clock: {given: clock}}\n    optional: [b]\n\
             views:\n  state: {keys: [deadLetter]}\nrules:\n  - id: r\n    says: s\n    decides: [{call: tick}]\n";
        let file = SourceFile::from_text("exercise.yaml", text);
        let decl = yaml::parse(&file).expect("it parses");
        let error = check(Path::new("."), &file, decl).expect_err("refused");
        // The constructor's `optional`, a method's given part and its `optional`, a view's key.
        let places = [(12, 13), (15, 20), (16, 15), (18, 17)].map(|(l, c)| Position::new(l, c));
        assert!(error.all().map(|e| e.position).eq(places), "{error:#?}");
        let wanted = "`create`'s optional argument `sise` is not one of its arguments (did you mean `size`?)";
        assert!(error.message.contains(wanted), "{}", error.message);
    }
}
