//! The one module that reads and writes YAML: serde-saphyr behind a small API, so it can be swapped.
//!
//! This entry file loads a spec (fast, else by serde-saphyr, recovering what it can); its
//! children word a parser's errors in the project's terms (`errors.rs`), carry a value's place
//! (`spanned.rs`: `Spanned`, `SingleKey`), write values back as YAML (`render.rs`), read a
//! document's structure (`locate.rs`, `tree.rs`, `from_tree.rs`), rewrite it in place
//! (`edit.rs`) and find the errors past the first (`recover.rs`).
//!
//! The one door to the YAML libraries (serde-saphyr and its parser): every other module reads
//! YAML through what this offers, and the compiler holds it, serde-saphyr being a dependency of
//! `dlqspec-text` only (the root has it as a dev-dependency, for its tests and benchmarks).
//!
//! Loading is exact or it defers. A spec is decoded straight from parser events (`tree.rs`,
//! `from_tree.rs`); whatever that path does not read exactly as serde-saphyr does, every broken
//! spec included, is loaded by serde-saphyr, which alone words the errors. A unit test of each
//! contract holds the two loads to the same values and positions (docs/performance.md, "The
//! parser decision").
//!
//! Why serde-saphyr and not serde_yaml: serde_yaml is archived and sits on unmaintained
//! unsafe-libyaml. serde-saphyr is pure Rust, rejects duplicate keys (every libyaml fork keeps the
//! later value silently) and gives the line of any parsed value, which is what lets a diff, a spec
//! error or a CI annotation point at the expectation. One quirk is guarded here: it decodes a bare
//! variant name that needs a value by swallowing the next list item, so tagged enums go through
//! `SingleKey`.

use std::fmt::{self, Write as _};
use std::marker::PhantomData;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeOwned, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::source::{Position, SourceFile};
use crate::spec_error::{SpecError, SpecErrorKind, Untold};

// The agreement of the two loads is checked by dlqspec's tests over its bundled specs (the
// root's dev-dependency turns the feature on); no build of the program carries it.
#[cfg(any(test, feature = "agreement"))]
pub mod agreement;
pub mod edit;
mod errors;
mod from_tree;
pub mod locate;
mod recover;
mod render;
mod spanned;
mod tree;

pub use errors::not_indented_under;
use errors::*;
pub use render::{flow, render, value};
use spanned::position;
pub use spanned::{SingleKey, Spanned, at};

/// The most YAML values (mappings, lists and scalars) a spec may hold: about three times what
/// a plain spec of 10^5 messages has. What stops a YAML bomb is not this but the limits on
/// nesting and on what aliases expand to, which stay serde-saphyr's.
pub const MAX_NODES: usize = 4_000_000;

/// How deep lists and mappings may nest (serde-saphyr's default).
pub(crate) const MAX_DEPTH: usize = 64;

/// How many values aliases may expand to in one spec (serde-saphyr's default).
pub(crate) const MAX_ALIAS_EXPANSION: usize = 1_000_000;

/// The parser's options: serde-saphyr's defaults with room for specs of 10^5 messages.
fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = MAX_NODES;
    budget.max_events = 2 * MAX_NODES;
    budget.max_depth = MAX_DEPTH;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_ALIAS_EXPANSION;
    // Nothing reads comments; emitted, they would also cap how many may stand together.
    options.emit_comments = false;
    options
}

/// The parser options serde-saphyr derives from [`options`] (its `Options::parser_options`,
/// which is not public), so the fast path reads the text with the very same parser settings.
/// Worked out once: every spec of a run is read with them.
fn parser_options() -> serde_saphyr::granit_parser::Options {
    static OPTIONS: LazyLock<serde_saphyr::granit_parser::Options> =
        LazyLock::new(derived_parser_options);
    OPTIONS.clone()
}

fn derived_parser_options() -> serde_saphyr::granit_parser::Options {
    let serde_options = options();
    let budget = serde_options.budget.unwrap_or_default();
    let mut parser = serde_saphyr::granit_parser::Options::default();
    parser.simple_key_max_lookahead = budget.simple_key_max_lookahead;
    parser.flow_nesting_limit = budget.flow_nesting_limit;
    parser.block_nesting_limit = parser.block_nesting_limit.max(budget.max_depth + 1);
    parser.set_emit_comments(serde_options.emit_comments);
    parser.strict_indentation = serde_options.strict_indentation;
    parser.bom_inside_document_as_content = serde_options.bom_inside_document_as_content;
    parser
}

/// The fast path's limits: serde-saphyr's, less a margin, so that a spec near one is loaded
/// (and, past it, refused) by serde-saphyr alone.
const TREE_LIMITS: tree::TreeLimits = tree::TreeLimits {
    max_nodes: MAX_NODES - 1024,
    max_events: 2 * MAX_NODES - 2048,
    max_depth: MAX_DEPTH - 2,
    max_scalar_bytes: 32 << 20,
};

/// Decodes a spec straight from parser events when it uses only plain YAML, or `None` for
/// serde-saphyr to load (and, for a broken spec, to explain).
fn parse_fast<T: DeserializeOwned>(text: &str) -> Option<T> {
    let root = tree::build(text, parser_options(), &TREE_LIMITS)?;
    T::deserialize(from_tree::NodeDeserializer(&root)).ok()
}

/// Longest message quoted from the parser: its messages may quote a value from the spec.
const MAX_MESSAGE_CHARS: usize = 300;

/// Parses a whole spec file into `T`, turning any YAML or shape error into a positioned spec error.
pub fn parse<T: DeserializeOwned>(file: &SourceFile) -> Result<T, SpecError> {
    parse_recovering(file).map_err(|broken| broken.error)
}

/// A file that does not decode as `T`: every error found, and what decodes past them.
pub struct Broken<T> {
    pub(crate) error: SpecError,
    /// The file decoded with every broken part blanked, for checks of what the shape allows
    /// to tell their errors in the same run. `None` when it could not be decoded.
    pub(crate) recovered: Option<Recovered<T>>,
}

/// What decoded of a broken file, and where parts were blanked for it to decode.
pub(crate) struct Recovered<T> {
    pub(crate) value: T,
    pub(crate) blanked: Blanked,
    /// The words replaced by longer ones in the text `value` decoded from, and the file as
    /// written, to place the errors of its checks where they are in the file.
    placing: Option<(recover::Shifts, Box<SourceFile>)>,
}

/// The broken parts blanked for a file to decode: the top-level key each was under (an empty
/// name: under none known) and its text. Empty for a file that decoded whole.
#[derive(Debug, Default)]
pub struct Blanked(Vec<(String, String)>);

impl Blanked {
    /// Whether a broken part was blanked under one of `keys` (or under a key not known) whose
    /// text holds `word`: then what it may have defined (an id, a queue) may be missing, and
    /// a check that relies on it would report a mistake that follows from the blanking. Such
    /// a check is skipped. An empty `word`: any part under those keys.
    pub fn any(&self, keys: &[&str], word: &str) -> bool {
        self.0.iter().any(|(key, text)| {
            (key.is_empty() || keys.contains(&key.as_str())) && text.contains(word)
        })
    }
}

impl<T> Broken<T> {
    /// The file's errors: the shape errors and, when the rest decoded, those `check` (the
    /// checks of what the shape allows) finds in it, in source order.
    pub fn checked<S>(self, check: impl FnOnce(T, &Blanked) -> Result<S, SpecError>) -> SpecError {
        let Broken { error, recovered } = self;
        let Some(recovered) = recovered else {
            return error;
        };
        match check(recovered.value, &recovered.blanked) {
            Ok(_) => error,
            Err(more) => {
                let more = match &recovered.placing {
                    Some((shifts, file)) => shifts.place(file, more),
                    None => more,
                };
                SpecError::combine([error.clone(), more]).unwrap_or(error)
            }
        }
    }
}

/// [`parse`], and for a broken file, what decodes once its broken parts are blanked.
pub fn parse_recovering<T: DeserializeOwned>(file: &SourceFile) -> Result<T, Box<Broken<T>>> {
    if FAST_PATH.load(Ordering::Relaxed)
        && let Some(parsed) = parse_fast(&file.text)
    {
        return Ok(parsed);
    }
    parse_slow(file)
}

/// Whether [`parse`] tries the fast path first (it always does, unless told otherwise).
static FAST_PATH: AtomicBool = AtomicBool::new(true);

/// Turns the fast path off (or on again) for the whole process, so that every spec is loaded
/// by serde-saphyr alone: for the parser benchmark, which measures both.
pub fn set_fast_path(enabled: bool) {
    FAST_PATH.store(enabled, Ordering::Relaxed);
}

/// Where, under the value at `at` and its keys `path`, `expected` and `actual` first differ:
/// read from the fast load's tree, which takes a fraction of the memory of `edit`'s.
/// `None` when that tree declines the text (then `edit` can tell) or the value is not found.
pub fn first_difference(
    text: &str,
    at: Position,
    path: &[String],
    expected: &Value,
    actual: &Value,
) -> Option<Position> {
    let root = tree::build(text, parser_options(), &TREE_LIMITS)?;
    let node = locate::find(&root, at, path).ok()?;
    Some(locate::first_difference(node, expected, actual).at())
}

/// What of a mapping's entry [`place`] finds: its key, or its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Key,
    Value,
}

/// Where, under the value at `at`, the entry reached through the mapping keys `path` is
/// written: its key or its value, for an error about that entry to point at it rather than at
/// the value that holds it. `None` when `path` is empty, the text does not read as YAML or
/// the entry is not there.
pub fn place(text: &str, at: Position, path: &[String], part: Part) -> Option<Position> {
    let (last, parents) = path.split_last()?;
    if let Some(root) = tree::build(text, parser_options(), &TREE_LIMITS) {
        return locate::entry(&root, at, parents, last, part == Part::Key);
    }
    let document = edit::Document::parse(text).ok()?;
    locate::entry(document.root(), at, parents, last, part == Part::Key)
}

/// [`place`] from the top of the document: where the entry reached from its top mapping
/// through `path` is written.
pub fn place_top(text: &str, path: &[String], part: Part) -> Option<Position> {
    use locate::Located;
    let top = match tree::build(text, parser_options(), &TREE_LIMITS) {
        Some(root) => root.position(),
        None => edit::Document::parse(text).ok()?.root().position(),
    };
    place(text, top, path, part)
}

/// Loads with serde-saphyr: every spec the fast path declines, and every broken one, with
/// every error of a broken one whose YAML reads (`recover`), not only the first.
fn parse_slow<T: DeserializeOwned>(file: &SourceFile) -> Result<T, Box<Broken<T>>> {
    let error = match serde_saphyr::from_str_with_options::<T>(&file.text, options()) {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error,
    };
    let first = spec_error(file, &file.text, &error);
    let alone = |error: SpecError| {
        Box::new(Broken {
            error,
            recovered: None,
        })
    };
    // A limit is about the whole file.
    if limit_message(&error).is_some() {
        return Err(alone(first));
    }
    if let Some(syntax) = syntax_error(file) {
        if let Some(broken) = past_syntax_errors::<T>(file, syntax.clone()) {
            return Err(broken);
        }
        return Err(alone(with_syntax_error(first, syntax, &file.text)));
    }
    let decode = |text: &str| decode_slow::<T>(file, text);
    let recovery = recover::later_errors(file, &first, decode);
    let all = std::iter::once(first.clone()).chain(recovery.later);
    let mut error = SpecError::combine(all).unwrap_or(first);
    error.untold = recovery.untold.or(error.untold);
    Err(Box::new(Broken {
        error,
        recovered: recovery.recovered.map(|(value, blanked_under)| Recovered {
            value,
            blanked: Blanked(blanked_under),
            placing: (recovery.shifts != recover::Shifts::default())
                .then(|| (recovery.shifts.clone(), Box::new(file.clone()))),
        }),
    }))
}

/// `text` (the file's, or the file's with parts blanked) decoded by serde-saphyr, its error
/// positioned in `file`.
fn decode_slow<T: DeserializeOwned>(file: &SourceFile, text: &str) -> Result<T, SpecError> {
    serde_saphyr::from_str_with_options(text, options())
        .map_err(|error| spec_error(file, text, &error))
}

/// `Spanned<T>` and `SingleKey<T>` describe themselves to schemars as `T`: a spanned value
/// looks exactly like the value in a spec, and a `SingleKey<T>` is written exactly like `T`
/// externally tagged, which already allows a bare name for a unit variant and a one-key
/// mapping for the others.
macro_rules! schema_of_inner {
    ($($wrapper:ident),*) => {$(
        impl<T: JsonSchema> JsonSchema for $wrapper<T> {
            fn inline_schema() -> bool {
                T::inline_schema()
            }

            fn schema_name() -> Cow<'static, str> {
                T::schema_name()
            }

            fn schema_id() -> Cow<'static, str> {
                T::schema_id()
            }

            fn json_schema(generator: &mut SchemaGenerator) -> Schema {
                T::json_schema(generator)
            }
        }
    )*};
}

schema_of_inner!(Spanned, SingleKey);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case", deny_unknown_fields)]
    enum SampleStep {
        Process(String),
        Recover,
    }

    #[derive(Debug, Deserialize)]
    struct Steps {
        steps: Vec<SingleKey<SampleStep>>,
    }

    fn parse_text<T: DeserializeOwned>(text: &str) -> Result<T, SpecError> {
        parse(&SourceFile::from_text("t.yaml", text))
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Named {
        name: String,
        steps: Vec<SingleKey<SampleStep>>,
    }

    #[test]
    fn a_bad_indent_is_said_in_plain_words_and_the_errors_past_it_are_told_too() {
        // A step indented one space less than the list it belongs to, a key typo before it
        // and a wrong value after it: all three, in one run, and nothing said to follow.
        let text = "name: x\ncolour: red\nsteps:\n  - process: a\n - process: b\n  - recovr\n";
        let error = parse_text::<Named>(text).unwrap_err();
        let all: Vec<(usize, &str)> = std::iter::once(&error)
            .chain(&error.more)
            .map(|e| (e.position.line, e.message.as_str()))
            .collect();
        assert_eq!(all.len(), 3, "{all:#?}");
        assert!(all[0].1.starts_with("unknown field `colour`"), "{all:#?}");
        assert_eq!(
            all[1],
            (
                5,
                "this list item is indented 1 space, which lines it up with nothing above it: YAML reads what a line belongs to from its indentation alone; indent it 2 spaces, as the list item on line 4 is (`- process: a`)"
            )
        );
        assert!(all[2].1.contains("recovr"), "{all:#?}");
        assert_eq!(error.untold, None);
        // No parser jargon anywhere.
        assert!(all.iter().all(|(_, m)| !m.contains("while parsing")));
    }

    #[test]
    fn a_syntax_error_that_swallows_the_rest_is_told_with_what_may_follow() {
        // An unclosed flow list reads every line after it: blanking lines cannot end it.
        let text = "name: x\nsteps: [\n  {process: a},\n  {process: b}\n";
        let error = parse_text::<Named>(text).unwrap_err();
        assert_eq!(error.untold, Some(Untold::Syntax), "{error:?}");
    }

    #[test]
    fn a_bare_name_that_needs_a_value_is_an_error_not_a_swallowed_item() {
        let error = parse_text::<Steps>("steps:\n  - process\n  - recover\n").unwrap_err();
        assert_eq!(
            error.message,
            "`process` needs a value: write `process: ...`"
        );
        assert_eq!(error.position, Position::new(2, 5));
    }

    #[test]
    fn every_shape_error_is_told_unless_an_anchor_could_break() {
        let error =
            parse_text::<Steps>("steps:\n  - proces: ok\n  - recover\n  - restat\n").unwrap_err();
        let places: Vec<Position> = error.all().map(|e| e.position).collect();
        assert_eq!(
            places,
            [Position::new(2, 5), Position::new(4, 5)],
            "{error}"
        );
        let anchored = "steps:\n  - &x {proces: ok}\n  - restat\n  - *x\n";
        assert_eq!(parse_text::<Steps>(anchored).unwrap_err().count(), 1);
    }

    #[test]
    fn names_and_one_key_mappings_decode() {
        let steps = parse_text::<Steps>("steps: [recover, {process: ok}]\n").unwrap();
        assert_eq!(steps.steps[0].0, SampleStep::Recover);
        assert_eq!(steps.steps[1].0, SampleStep::Process("ok".into()));
    }

    #[test]
    fn a_tab_in_the_indentation_is_told_in_plain_words() {
        let error = parse_text::<Value>("steps:\n\t- send: a\n").unwrap_err();
        assert_eq!(
            error.message,
            "a tab indents this line, and YAML indents with spaces only: replace the tab with spaces"
        );
        assert_eq!(error.position.line, 2);
    }

    #[test]
    fn duplicate_keys_are_reported_in_plain_words() {
        let error = parse_text::<Value>("a: 1\na: 2\n").unwrap_err();
        assert_eq!(error.message, "duplicate key `a`: each key may appear once");
        assert_eq!(error.position, Position::new(2, 1));
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Shapes {
        #[serde(default)]
        count: u64,
        #[serde(default)]
        numbers: Vec<u64>,
        #[serde(default)]
        flag: bool,
        #[serde(default)]
        nested: Option<Box<Shapes>>,
        #[serde(default)]
        ratio: f64,
        #[serde(default)]
        items: Vec<String>,
        #[serde(default)]
        table: std::collections::BTreeMap<String, u64>,
        #[serde(default)]
        text: String,
    }

    #[test]
    fn wrong_types_are_told_in_yaml_words_not_rust_types() {
        let cases = [
            (
                "count: three\n",
                "`count` takes a whole number, 0 or more, not `three`",
                (1, 8),
            ),
            (
                "count: -1\n",
                "`count` takes a whole number, 0 or more, not `-1`",
                (1, 8),
            ),
            (
                "numbers: [1, x]\n",
                "each item of `numbers` is a whole number, 0 or more, not `x`",
                (1, 14),
            ),
            (
                "flag: yes please\n",
                "`flag` takes `true` or `false`, not `yes please`: write `flag: true` or `flag: false`",
                (1, 7),
            ),
            (
                "nested: {flag: \"a\\u0007b\"}\n",
                "`flag` takes `true` or `false`, not `\"a\\u0007b\"`: write `flag: true` or `flag: false`",
                (1, 16),
            ),
            (
                "ratio: many\n",
                "`ratio` takes a number, not `many`",
                (1, 8),
            ),
            ("items: x\n", "expected a list", (1, 8)),
            (
                "text:\n",
                "expected text, found nothing (empty text is written \"\")",
                (1, 5),
            ),
            (
                "table: [1]\n",
                "expected a mapping (`key: value` lines)",
                (1, 8),
            ),
        ];
        for (text, message, (line, column)) in cases {
            let error = parse_text::<Shapes>(text).unwrap_err();
            assert_eq!(error.message, message, "{text:?}");
            assert_eq!(error.position, Position::new(line, column), "{text:?}");
        }
        let error = parse_text::<Steps>("steps: [recover, {proces: ok}]\n").unwrap_err();
        assert_eq!(
            error.message,
            "unknown value `proces` (did you mean `process`?), expected one of process, recover"
        );
    }

    #[test]
    fn the_parsers_limits_are_told_in_a_spec_authors_words() {
        let deep = format!("v: {}{}\n", "[".repeat(80), "]".repeat(80));
        let laughs = format!("a: &a [x, x]\nb: [{}]\n", vec!["*a"; 200].join(", "));
        let cases = [
            (
                "a: 1\n---\nb: 2\n",
                "a spec is one YAML document, and a line `---` here starts another",
            ),
            (
                deep.as_str(),
                "lists and mappings nest here more than 64 levels deep",
            ),
            (
                laughs.as_str(),
                "the spec uses aliases (`*name`) more than dlqspec allows",
            ),
        ];
        for (text, says) in cases {
            let error = parse_text::<Value>(text).unwrap_err();
            assert!(
                error.message.starts_with(says),
                "{text:.60}: {}",
                error.message
            );
            for internal in ["budget", "Budget", "from_str", "{ ", "_bytes"] {
                assert!(!error.message.contains(internal), "{}", error.message);
            }
        }
    }

    #[test]
    fn the_colon_in_a_value_is_found_in_block_and_flow_collections() {
        let cases = [
            (
                "    - permanent: Error: bad",
                23,
                Some(("permanent", "Error: bad")),
            ),
            (
                "  a: [{permanent: Error: bad}, x]",
                24,
                Some(("permanent", "Error: bad")),
            ),
            ("  a: [permanent: x: y]", 19, Some(("permanent", "x: y"))),
            ("  a: [permanent: \"x: y\"]", 20, None),
            ("  a: b", 4, None),
        ];
        for (line, column, expected) in cases {
            assert_eq!(colon_at(line, column), expected, "{line}");
        }
    }

    #[test]
    fn a_syntax_error_swallows_from_the_top_level_key_of_an_open_flow_collection() {
        let text = "a: 1\nsteps: [process: ok,\n  'x]' # ]\nexpect:\n  b: 2\n";
        assert_eq!(
            open_flow(text, Position::new(4, 7)),
            Some(Position::new(2, 8))
        );
        assert_eq!(swallowed_from(text, 4), 2);
        let closed = "a: 1\nsteps: [x]\nexpect: x: y\n";
        assert_eq!(open_flow(closed, Position::new(3, 10)), None);
        assert_eq!(swallowed_from(closed, 3), 3);
        // A bracket inside a plain scalar opens nothing.
        assert_eq!(open_flow("a: x[1\nb: 2\n", Position::new(2, 2)), None);
    }

    #[test]
    fn a_message_quoting_a_long_value_is_cut() {
        // A long value: a key past 1024 characters is a YAML syntax error of its own.
        let text = format!("steps: [{}]\n", "z".repeat(10_000));
        let error = parse_text::<Steps>(&text).unwrap_err();
        assert!(error.message.ends_with("... (cut)"), "{}", error.message);
        assert!(error.message.chars().count() < 400, "{}", error.message);
    }

    #[test]
    fn both_trees_pinpoint_the_same_first_difference() {
        let text = "steps:\n  - expect:\n      dlq:\n        - {id: a, attempts: 1}\n        - {id: b, attempts: 2}\n      pending: []\n";
        let at = Position::new(3, 7);
        let path = ["dlq".to_owned()];
        let expected = json!([{"id": "a", "attempts": 1}, {"id": "b", "attempts": 2}]);
        let actual = json!([{"id": "a", "attempts": 1}, {"id": "b", "attempts": 3}]);
        let fast = first_difference(text, at, &path, &expected, &actual);
        assert_eq!(fast, Some(Position::new(5, 29)));
        let document = super::edit::Document::parse(text).unwrap();
        let node = document.find(at, &path).unwrap();
        assert_eq!(
            Some(locate::first_difference(node, &expected, &actual).position),
            fast
        );
        // A tree the fast load declines leaves it to `edit`.
        let anchored = text.replace("pending: []", "pending: &p []");
        assert_eq!(
            first_difference(&anchored, at, &path, &expected, &actual),
            None
        );
    }

    #[test]
    fn render_uses_block_maps_and_flow_scalar_lists() {
        let value = json!({"pending": ["b", "a"], "dlq": [{"id": "a", "error": null}], "n": {}});
        assert_eq!(
            render(&value),
            "pending: [b, a]\ndlq:\n- id: a\n  error: null\nn: {}\n"
        );
    }

    #[test]
    fn render_writes_long_lists_one_item_per_line() {
        let trace: Vec<String> = (0..8).map(|n| format!("queue.receive() -> m{n}")).collect();
        let shown = render(&json!({ "trace": trace, "pending": ["a"] }));
        assert!(
            shown.starts_with("trace:\n- queue.receive() -> m0\n- queue.receive() -> m1\n"),
            "{shown}"
        );
        assert!(shown.ends_with("pending: [a]\n"), "{shown}");
    }

    #[test]
    fn render_quotes_strings_that_would_read_back_differently() {
        for s in ["", "3", "null", "true", "a: b", "- x", " pad", "yes"] {
            let shown = flow(&Value::String(s.into()));
            let back: Value = serde_saphyr::from_str(&format!("v: {shown}\n")).unwrap();
            assert_eq!(
                back["v"],
                Value::String(s.into()),
                "{s:?} rendered as {shown}"
            );
        }
        assert_eq!(flow(&json!("TypeError: bad")), "\"TypeError: bad\"");
        assert_eq!(flow(&json!("db timeout")), "db timeout");
    }

    #[test]
    fn place_finds_an_entrys_key_or_value_under_a_value() {
        let text = "steps:\n  - seen: {key: a, kye: b}\n  - advance:\n      x\n";
        let path = |keys: &[&str]| keys.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>();
        let step = Position::new(2, 5);
        assert_eq!(
            place(text, step, &path(&["seen", "kye"]), Part::Key),
            Some(Position::new(2, 20))
        );
        assert_eq!(
            place(text, step, &path(&["seen", "kye"]), Part::Value),
            Some(Position::new(2, 25))
        );
        assert_eq!(
            place(text, Position::new(3, 5), &path(&["advance"]), Part::Value),
            Some(Position::new(4, 7))
        );
        assert_eq!(place(text, step, &path(&["seen", "no"]), Part::Key), None);
        assert_eq!(place(text, step, &[], Part::Key), None);
        let commented = "# a comment\n\nsteps: [1]\ncreate:\n  optional: [x]\n";
        assert_eq!(
            place_top(commented, &path(&["create", "optional"]), Part::Value),
            Some(Position::new(5, 13))
        );
        // An alias sends the text past the fast tree: the editing tree finds it.
        let aliased = "a: &x {k: 1}\nb: *x\nc: {k: 2, j: 3}\n";
        assert_eq!(
            place(aliased, Position::new(3, 4), &path(&["j"]), Part::Key),
            Some(Position::new(3, 11))
        );
    }
}
