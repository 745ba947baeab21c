//! The one module that reads and writes YAML: serde-saphyr behind a small API, so it can be swapped.

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
mod from_tree;
pub mod locate;
mod recover;
mod tree;

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

/// The file's YAML syntax error, if it has one (the parser reads nothing past it).
fn syntax_error(file: &SourceFile) -> Option<SpecError> {
    syntax_error_in(file, &file.text)
}

/// The YAML syntax error of `text` (the file's, or the file's with lines blanked), if it has
/// one, positioned in `file`.
fn syntax_error_in(file: &SourceFile, text: &str) -> Option<SpecError> {
    edit::Document::parse(text).err()?;
    let error = serde_saphyr::from_str_with_options::<de::IgnoredAny>(text, options()).err()?;
    Some(spec_error(file, text, &error))
}

/// What the words of a misindented line say (`misindented`), by which it is told apart.
const MISINDENTED: &str = "which lines it up with nothing above it";

/// The most lines blanked to read past a file's YAML syntax errors.
const MAX_SYNTAX_LINES: usize = 8;

/// Every error of a file with YAML syntax errors, where the rest of it can be read: the line
/// of each syntax error is blanked (spaces, so every other line and column stays where it
/// was) until the text is YAML again, and what that text holds is decoded and checked as
/// any broken file is, so that a bad indent, a key typo and a wrong value come in one run.
/// A `missing field` the blanking made (the blanked line held that key) is not told. `None`
/// when blanking does not make YAML of it within [`MAX_SYNTAX_LINES`] lines, or a blanked
/// line's trouble goes on at the next (an unclosed quote or bracket swallowing the rest, an
/// item's keys under a blanked item): then the syntax error is told as before, with those
/// before it, and that more may follow.
fn past_syntax_errors<T: DeserializeOwned>(
    file: &SourceFile,
    syntax: SpecError,
) -> Option<Box<Broken<T>>> {
    let mut text = file.text.clone();
    let mut syntax_errors = vec![syntax];
    let mut blanked: Vec<(String, String)> = Vec::new();
    let mut blanked_keys: Vec<String> = Vec::new();
    loop {
        // Only a line whose indentation lines it up with nothing is set aside: its meaning is
        // plain (the line, misplaced), where an unclosed quote or bracket, or a `: ` in a
        // value, leaves what the lines after it were meant to be unknown.
        if !syntax_errors.last()?.message.contains(MISINDENTED) {
            return None;
        }
        let line = syntax_errors.last()?.position.line;
        let (start, end) = line_range(&text, line)?;
        let written = text[start..end].to_owned();
        if written.trim().is_empty() || blanked.len() >= MAX_SYNTAX_LINES {
            return None;
        }
        blanked.push((top_level_key(&text, line), written.clone()));
        if let Some((key, _)) = written
            .trim_start()
            .trim_start_matches("- ")
            .split_once(':')
        {
            blanked_keys.push(key.trim().to_owned());
        }
        let spaces: String = written
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        text.replace_range(start..end, &spaces);
        match syntax_error_in(file, &text) {
            None => break,
            // On the line after the one blanked, or before it: what the blanked line began
            // goes on there (an unclosed bracket, an item's more-indented keys), and
            // blanking on would hide what is wrong in those lines.
            Some(next) if next.position.line <= line + 1 => return None,
            Some(next) => syntax_errors.push(next),
        }
    }
    // Whether `error` only follows from a blanked line: the key it misses was on one.
    let cascade = |error: &SpecError| {
        error
            .message
            .strip_prefix("missing field `")
            .is_some_and(|rest| {
                let field = rest.split('`').next().unwrap_or_default();
                blanked_keys.iter().any(|key| key == field)
            })
    };
    let decode = |text: &str| decode_slow::<T>(file, text);
    let (errors, recovered, untold, shifts) = match decode(&text) {
        Ok(value) => (
            Vec::new(),
            Some((value, Vec::new())),
            None,
            recover::Shifts::default(),
        ),
        Err(first) => {
            let blanked_file = SourceFile {
                path: file.path.clone(),
                text: text.clone(),
            };
            let recovery = recover::later_errors(&blanked_file, &first, decode);
            let errors: Vec<SpecError> = std::iter::once(first).chain(recovery.later).collect();
            (errors, recovery.recovered, recovery.untold, recovery.shifts)
        }
    };
    let all = syntax_errors
        .into_iter()
        .chain(errors.into_iter().filter(|error| !cascade(error)));
    let mut error = SpecError::combine(all)?;
    error.untold = untold.or(error.untold);
    Some(Box::new(Broken {
        error,
        recovered: recovered.map(|(value, mut blanked_under)| {
            blanked_under.extend(blanked);
            Recovered {
                value,
                blanked: Blanked(blanked_under),
                placing: (shifts != recover::Shifts::default())
                    .then(|| (shifts.clone(), Box::new(file.clone()))),
            }
        }),
    }))
}

/// The byte range of line `line` (1-based) of `text`, without its line break.
fn line_range(text: &str, line: usize) -> Option<(usize, usize)> {
    let mut start = 0;
    for (index, content) in text.split_inclusive('\n').enumerate() {
        if index + 1 == line {
            let body = content.trim_end_matches(['\n', '\r']);
            return Some((start, start + body.len()));
        }
        start += content.len();
    }
    None
}

/// The top-level key line `line` (1-based) of `text` stands under: the nearest content line
/// at column 0 at or above it, by its key; empty when there is none.
fn top_level_key(text: &str, line: usize) -> String {
    text.lines()
        .take(line)
        .filter(|l| !l.is_empty() && !l.starts_with([' ', '\t', '#', '-']))
        .last()
        .and_then(|l| l.split_once(':'))
        .map(|(key, _)| key.trim().to_owned())
        .unwrap_or_default()
}

/// A file's errors when it has the YAML syntax error `syntax`: `first`, the first error
/// decoding found, too when it is certainly not a cascade of the syntax error (it stands
/// before the part of the file the syntax error may have swallowed), then `syntax`; and that
/// further errors may follow, as nothing past a syntax error is read.
fn with_syntax_error(first: SpecError, syntax: SpecError, text: &str) -> SpecError {
    let same = first.position == syntax.position && first.message == syntax.message;
    let independent = first.position.line < swallowed_from(text, syntax.position.line);
    let mut errors = Vec::new();
    if !same && independent {
        errors.push(first);
    }
    errors.push(syntax.clone());
    let mut error = SpecError::combine(errors).unwrap_or(syntax);
    error.untold = Some(Untold::Syntax);
    error
}

/// The first line (1-based) a YAML syntax error at line `error_line` may have swallowed: the
/// top-level key the error is under or, when a flow list or mapping is open there (`[` left
/// unclosed reads every line after it as part of it), the top-level key that opened it.
fn swallowed_from(text: &str, error_line: usize) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let from = match open_flow(text, Position::new(error_line + 1, 1)) {
        Some(opener) => opener.line - 1,
        None => error_line.saturating_sub(1),
    };
    // Up to the top-level key above: a content line at column 0.
    let top = (0..=from.min(lines.len().saturating_sub(1)))
        .rev()
        .find(|&index| {
            lines.get(index).is_some_and(|line| {
                !line.is_empty() && !line.starts_with([' ', '\t', '#']) && line.trim() != "---"
            })
        })
        .unwrap_or(0);
    top + 1
}

/// Where the outermost flow list or mapping still open at `at` was opened (its `[` or `{`),
/// if one is: read from the text, past quoted scalars and comments, counting a bracket that
/// starts a value or stands inside a flow collection (not one inside a plain scalar).
fn open_flow(text: &str, at: Position) -> Option<Position> {
    let mut depth = 0usize;
    let mut opened_at = None;
    let mut quote: Option<char> = None;
    'lines: for (index, line) in text.lines().enumerate().take(at.line) {
        let mut previous: Option<char> = None;
        let mut raw_previous: Option<char> = None;
        let mut chars = line.chars().enumerate().peekable();
        while let Some((column, c)) = chars.next() {
            if index + 1 == at.line && column + 1 >= at.column {
                break 'lines;
            }
            let after_space = raw_previous.is_none_or(char::is_whitespace);
            raw_previous = Some(c);
            if let Some(q) = quote {
                if c == '\\' && q == '"' {
                    chars.next();
                } else if c == q {
                    if q == '\'' && chars.peek().map(|(_, c)| *c) == Some('\'') {
                        chars.next();
                    } else {
                        quote = None;
                    }
                }
                previous = Some(c);
                continue;
            }
            let at_value_start = matches!(previous, None | Some(':' | '-' | '[' | '{' | ','));
            match c {
                '#' if after_space => continue 'lines,
                '"' | '\'' if at_value_start => quote = Some(c),
                '[' | '{' if depth > 0 || at_value_start => {
                    if depth == 0 {
                        opened_at = Some(Position::new(index + 1, column + 1));
                    }
                    depth += 1;
                }
                ']' | '}' if depth > 0 => depth -= 1,
                _ => {}
            }
            if !c.is_whitespace() {
                previous = Some(c);
            }
        }
    }
    (depth > 0).then_some(opened_at).flatten()
}

/// `text` (the file's, or the file's with parts blanked) decoded by serde-saphyr, its error
/// positioned in `file`.
fn decode_slow<T: DeserializeOwned>(file: &SourceFile, text: &str) -> Result<T, SpecError> {
    serde_saphyr::from_str_with_options(text, options())
        .map_err(|error| spec_error(file, text, &error))
}

/// serde-saphyr's error in `text`, in a spec author's words, positioned in `file`.
fn spec_error(file: &SourceFile, text: &str, error: &serde_saphyr::Error) -> SpecError {
    let position = error
        .location()
        .map(|l| position(&l))
        .unwrap_or(Position::START);
    let message = limit_message(error)
        .unwrap_or_else(|| polish(&strip_location(&error.without_snippet().to_string())));
    let (position, message) = plain_words(text, position, &message).unwrap_or((position, message));
    SpecError::at(file, position, SpecErrorKind::Syntax, cut(&message))
}

/// What the parser means, in a spec author's words, for the mistakes it words as parser
/// internals: a `: ` inside a value that is not quoted, and a key not indented under the
/// step or key it belongs to. `None` for anything else.
fn plain_words(text: &str, at: Position, message: &str) -> Option<(Position, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let line = *lines.get(at.line.checked_sub(1)?)?;
    if message.starts_with("tabs disallowed") {
        // A tab where YAML reads indentation: the fix is in the file, not in YAML's terms.
        return Some((
            at,
            "a tab indents this line, and YAML indents with spaces only: replace the tab with spaces".to_owned(),
        ));
    }
    if message.contains("mapping values are not allowed")
        || message.contains("did not find expected ',' or '}'")
        || message.contains("did not find expected ',' or ']'")
    {
        let Some((key, value)) = colon_at(line, at.column).or_else(|| colon_in_value(line)) else {
            return unclosed_flow(text, &lines, at);
        };
        let quoted = serde_json::to_string(value).ok()?;
        return Some((
            at,
            format!(
                "the value of `{key}` holds `: `, which YAML reads as a new key: quote the value, `{key}: {quoted}`"
            ),
        ));
    }
    if let Some(rest) = message.strip_prefix('`')
        && let Some((second, _)) = rest.split_once("` is a second key beside `")
    {
        // serde-saphyr places it at the item; the key itself is the place to fix.
        let key = second_key(&lines, at, second).unwrap_or(at);
        return Some((key, message.to_owned()));
    }
    if message.contains("did not find expected key")
        || message.contains("did not find expected '-' indicator")
        || message.starts_with("while parsing a block")
    {
        return misindented(&lines, at);
    }
    if message.starts_with("expected a mapping") || message.starts_with("expected a list") {
        // `- create:` with its keys on the next line at the key's own column, not under it.
        let content = line.trim_end();
        let key_start = content.len() - content.trim_start_matches([' ', '-']).len();
        let key = content[key_start..].strip_suffix(':')?;
        if key.is_empty() || key.contains([' ', ':', '{', '[']) {
            return None;
        }
        let next = lines[at.line..]
            .iter()
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
        let next_start = next.len() - next.trim_start().len();
        if next_start != key_start || next.trim_start().starts_with('-') {
            return None;
        }
        let inner = next.trim().split(':').next().unwrap_or_default();
        return Some((
            at,
            format!(
                "`{inner}` is not indented under `{key}:`, so it is read as a sibling of `{key}`, which is left empty: indent `{inner}` (and the keys after it) two spaces more than `{key}`"
            ),
        ));
    }
    None
}

/// A line whose indentation lines it up with no list or mapping above it (the parser's "while
/// parsing a block mapping, did not find expected key"), in an author's words: how far it is
/// indented, how far the nearest line above of its kind (a list item, or a key) is, and to
/// indent it so. `None` when no such line is found.
fn misindented(lines: &[&str], at: Position) -> Option<(Position, String)> {
    let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let is_item = |line: &str| {
        let content = line.trim_start();
        content == "-" || content.starts_with("- ")
    };
    let content = |line: &&str| {
        let trimmed = line.trim();
        !trimmed.is_empty() && !trimmed.starts_with('#') && trimmed != "---"
    };
    // The line in error: the parser's, or the first content line after it when it points
    // at the end of the one before.
    let index = (at.line.checked_sub(1)?..lines.len()).find(|&i| content(&lines[i]))?;
    let line = lines[index];
    let (item, spaces) = (is_item(line), indent(line));
    let (sibling, sibling_line) = (0..index)
        .rev()
        .map(|i| (i, lines[i]))
        .filter(|(_, l)| content(l) && indent(l) != spaces)
        .find(|(_, l)| is_item(l) == item)?;
    let what = if item { "list item" } else { "key" };
    let spaces_text = |n: usize| {
        if n == 1 {
            "1 space".to_owned()
        } else {
            format!("{n} spaces")
        }
    };
    Some((
        Position::new(index + 1, spaces + 1),
        format!(
            "this {what} is indented {}, {MISINDENTED}: YAML reads what a line belongs to from its indentation alone; indent it {}, as the {what} on line {} is (`{}`)",
            spaces_text(spaces),
            spaces_text(indent(sibling_line)),
            sibling + 1,
            sibling_line.trim()
        ),
    ))
}

/// A flow list or mapping opened on an earlier line and still open at `at`, a line that
/// stands no deeper than the opener's (a key of its own, read into the list): the opener is
/// the mistake, and told at its place. `None` for anything else.
fn unclosed_flow(text: &str, lines: &[&str], at: Position) -> Option<(Position, String)> {
    let opener = open_flow(text, at)?;
    let indent = |line: &str| line.len() - line.trim_start().len();
    let opener_line = lines.get(opener.line.checked_sub(1)?)?;
    let error_line = lines.get(at.line.checked_sub(1)?)?;
    if opener.line >= at.line || indent(error_line) > indent(opener_line) {
        return None;
    }
    let (open, close, what) = match opener_line.chars().nth(opener.column.checked_sub(1)?)? {
        '[' => ('[', ']', "list"),
        _ => ('{', '}', "mapping"),
    };
    Some((
        opener,
        format!(
            "this `{open}` starts a flow {what} that is never closed, so the lines after it are read into it: close it with `{close}` where the {what} ends, or write it as a block {what}"
        ),
    ))
}

/// Where key `key` is written at or after `at`, as a key (`key:` after a space, `{` or `,`).
fn second_key(lines: &[&str], at: Position, key: &str) -> Option<Position> {
    let pattern = format!("{key}:");
    for (index, line) in lines.iter().enumerate().skip(at.line.saturating_sub(1)) {
        let skip = if index + 1 == at.line {
            line.char_indices()
                .nth(at.column.saturating_sub(1))
                .map_or(line.len(), |(i, _)| i)
        } else {
            0
        };
        let found = line[skip..].match_indices(&pattern).find(|(i, _)| {
            let before = line[..skip + i].chars().next_back();
            before.is_none_or(|c| c.is_whitespace() || matches!(c, '{' | ',' | '-'))
        });
        if let Some((i, _)) = found {
            return Some(Position::new(
                index + 1,
                line[..skip + i].chars().count() + 1,
            ));
        }
    }
    None
}

/// The key and the unquoted value of the `key: value: more` whose second `: ` is at `column`
/// (the parser's place for it), block or flow, nested in flow lists and mappings too
/// (`a: [{permanent: Error: bad}]`, `a: [permanent: x: y]`).
fn colon_at(line: &str, column: usize) -> Option<(&str, &str)> {
    let colon = line.char_indices().nth(column.checked_sub(1)?)?.0;
    if !line[colon..].starts_with(": ") {
        return None;
    }
    let before = &line[..colon];
    // The separator of the key before: the last `: ` before the offending one.
    let separator = before.rfind(": ")?;
    let key_start = before[..separator]
        .rfind(['{', '[', ','])
        .map_or(0, |at| at + 1);
    let key = before[key_start..separator]
        .trim()
        .trim_start_matches("- ")
        .trim();
    let in_flow = before.contains(['{', '[']);
    let value_start = separator + 2;
    let value_end = if in_flow {
        line[colon..]
            .find([',', '}', ']'])
            .map_or(line.len(), |at| colon + at)
    } else {
        line[colon..].find(" #").map_or(line.len(), |at| colon + at)
    };
    let value = line[value_start..value_end].trim();
    let quoted = value.starts_with(['"', '\'', '{', '[']);
    let plain_key = !key.is_empty() && !key.contains([':', '"', '\'', '{', '[', ']', '}']);
    (plain_key && !quoted && !value.is_empty()).then_some((key, value))
}

/// The key and the unquoted value of the first `key: value: more` on a line, block or flow.
fn colon_in_value(line: &str) -> Option<(&str, &str)> {
    let body = line.trim().trim_start_matches("- ").trim();
    let items: Vec<&str> = match body.strip_prefix('{') {
        Some(flow) => flow.trim_end_matches('}').split(", ").collect(),
        None => vec![body],
    };
    items.into_iter().find_map(|item| {
        let (key, value) = item.trim().split_once(": ")?;
        let value = value.trim();
        let quoted = value.starts_with(['"', '\'', '{', '[']);
        (!quoted && value.contains(": ")).then_some((key.trim(), value))
    })
}

/// Cuts a message that quotes too much of the spec.
fn cut(message: &str) -> String {
    if message.chars().count() <= MAX_MESSAGE_CHARS {
        return message.to_owned();
    }
    let kept: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
    format!("{kept}... (cut)")
}

/// What a limit of the parser means for a spec author, in place of the library's wording
/// (`budget breached: Nodes { nodes: 250001 }`, `use from_str_multiple`).
fn limit_message(error: &serde_saphyr::Error) -> Option<String> {
    use serde_saphyr::Error;
    use serde_saphyr::budget::BudgetBreach;
    let mut error = error;
    while let Error::WithSnippet { error: inner, .. } | Error::AliasError { error: inner, .. } =
        error
    {
        error = inner;
    }
    let too_many_aliases = || {
        format!(
            "the spec uses aliases (`*name`) more than dlqspec allows (at most 10 per anchor, 50000 in all, expanding to {MAX_ALIAS_EXPANSION} values): write the values out, or alias less"
        )
    };
    let message = match error {
        Error::MultipleDocuments { .. }
        | Error::Budget {
            breach: BudgetBreach::Documents { .. },
            ..
        } => "a spec is one YAML document, and a line `---` here starts another: remove it, or put the second document in a file of its own".to_owned(),
        Error::Budget { breach, .. } => match breach {
            BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. } => format!(
                "the spec holds more than {MAX_NODES} YAML values, the most a spec may hold: write many similar messages and steps in the compact form (`generate`, `repeat`, `counts`; docs/spec-format.md, \"Big scenarios\"), or split it into several specs"
            ),
            BudgetBreach::Depth { .. } => format!(
                "lists and mappings nest here more than {MAX_DEPTH} levels deep, the most dlqspec reads: flatten the value"
            ),
            BudgetBreach::Aliases { .. }
            | BudgetBreach::Anchors { .. }
            | BudgetBreach::AliasAnchorRatio { .. }
            | BudgetBreach::RecordedAnchorEvents { .. }
            | BudgetBreach::RecordedAnchorBytes { .. }
            | BudgetBreach::MergeKeys { .. } => too_many_aliases(),
            BudgetBreach::ScalarBytes { .. } => format!(
                "the spec's values add up to more than {} MiB of text, the most a spec may hold: split it into several specs",
                crate::source::MAX_SPEC_BYTES >> 20
            ),
            _ => format!(
                "the spec is larger or more intricate than dlqspec reads (at most {} MiB, {MAX_NODES} values, nesting {MAX_DEPTH} deep): split it into several specs",
                crate::source::MAX_SPEC_BYTES >> 20
            ),
        },
        Error::AliasReplayLimitExceeded { .. }
        | Error::AliasExpansionLimitExceeded { .. }
        | Error::AliasReplayStackDepthExceeded { .. }
        | Error::AliasReplayCounterOverflow { .. } => too_many_aliases(),
        _ => return None,
    };
    Some(message)
}

/// The position of a parsed value.
fn position(location: &serde_saphyr::Location) -> Position {
    Position::new(location.line() as usize, location.column() as usize)
}

/// The position where a spanned value starts in the file.
pub fn at<T>(spanned: &Spanned<T>) -> Position {
    spanned.referenced
}

/// serde-saphyr appends " at line N, column M"; the position is reported separately.
fn strip_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(cut) if message[cut..].contains(", column ") => message[..cut].to_owned(),
        _ => message.to_owned(),
    }
}

/// Rewords the few serde messages that would puzzle a spec author.
fn polish(message: &str) -> String {
    let message = message.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        return format!("duplicate key `{rest}`: each key may appear once");
    }
    // serde names Rust enum variants, types and parser events; spec authors think in YAML values.
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        return did_you_mean(&format!("unknown value {rest}"));
    }
    if message.starts_with("unknown field ") {
        return did_you_mean(&message);
    }
    match message.as_str() {
        "invalid u8" | "invalid u16" | "invalid u32" | "invalid u64" | "invalid usize" => {
            "expected a whole number, 0 or more".to_owned()
        }
        "expected sequence start" => "expected a list".to_owned(),
        "expected mapping start" => "expected a mapping (`key: value` lines)".to_owned(),
        "cannot deserialize null into string; use Option<String>" => {
            "expected text, found nothing (empty text is written \"\")".to_owned()
        }
        _ => message,
    }
}

/// `unknown value|field `X`, expected one of a, b, c`, with the nearest of them suggested
/// after `X` when one is near enough to be a typo.
fn did_you_mean(message: &str) -> String {
    let Some((head, list)) = message.split_once(", expected one of ") else {
        return message.to_owned();
    };
    let unknown = head.split('`').nth(1).unwrap_or_default();
    let choices: Vec<&str> = list.split(", ").map(|c| c.trim_matches('`')).collect();
    let hint = crate::suggest::hint(unknown, &choices);
    format!("{head}{hint}, expected one of {list}")
}

/// A parsed value with where it is written: serde-saphyr's `Spanned`, under our own name so that
/// it can describe itself to schemars (a spanned value looks exactly like the value in a spec).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    pub value: T,
    /// Where the value is used (for an alias: the alias).
    pub(crate) referenced: Position,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<T>::deserialize(deserializer)?;
        Ok(Spanned {
            value: spanned.value,
            referenced: position(&spanned.referenced),
        })
    }
}

/// A value written either as a bare name (`recover`) or as a mapping with exactly one key
/// (`process: ok`), decoded into the externally tagged enum `T`.
///
/// serde-saphyr decodes a bare name of a variant that takes a value by swallowing the *next*
/// list item as that value (`- process` then `- recover` became `process: recover`). Going
/// through `deserialize_any` makes a bare name a plain string, so that case is an error.
#[derive(Debug, Clone, PartialEq)]
pub struct SingleKey<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SingleKey<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SingleKeyVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for SingleKeyVisitor<T> {
            type Value = SingleKey<T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a name, or a mapping with one key")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
                let as_name: de::value::StrDeserializer<'_, E> = name.into_deserializer();
                T::deserialize(as_name).map(SingleKey).map_err(|error| {
                    let text = error.to_string();
                    if text.contains("expected newtype variant")
                        || text.contains("expected struct variant")
                        || text.contains("expected tuple variant")
                    {
                        E::custom(format!("`{name}` needs a value: write `{name}: ...`"))
                    } else {
                        error
                    }
                })
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let Some(first) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(
                        "expected a name, or a mapping with one key; found an empty mapping `{}`",
                    ));
                };
                let one = OneEntry {
                    key: Some(first.clone()),
                    map: &mut map,
                };
                let value = T::deserialize(de::value::MapAccessDeserializer::new(one))?;
                // serde's externally tagged enums read one entry and ignore the rest, so a
                // second key (`- process: ok` with `restart: 1` under it) would pass unread.
                if let Some(second) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "`{second}` is a second key beside `{first}`: an item holds one key; put `{second}` in an item of its own (`- {second}: ...`), or remove it"
                    )));
                }
                Ok(SingleKey(value))
            }
        }

        deserializer.deserialize_any(SingleKeyVisitor(PhantomData))
    }
}

/// The first entry of a mapping whose key is already read: a mapping of that one entry, so
/// that an enum decodes from it and the entries after it are left for [`SingleKey`] to see.
struct OneEntry<'m, A> {
    key: Option<String>,
    map: &'m mut A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for OneEntry<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.key.take() {
            Some(key) => seed.deserialize(key.into_deserializer()).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
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

/// A short YAML text (a scalar, a flow list or map) read as a JSON value, or `None` when it
/// is no YAML: for the values an explorer draws, never for a spec file (that is [`parse`]).
pub fn value(text: &str) -> Option<Value> {
    serde_saphyr::from_str(text).ok()
}

/// Renders a JSON value as YAML for people: block mappings, flow lists of scalars, quoting only
/// where a plain scalar would read back as something else. Deterministic, so diffs are stable.
pub fn render(value: &Value) -> String {
    let mut out = String::new();
    render_block(value, 0, &mut out);
    out
}

fn render_block(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, item) in map {
                let _ = write!(out, "{pad}{}:", scalar(&Value::String(key.clone())));
                render_nested(item, indent, out);
            }
        }
        Value::Array(items) if is_compound(value) => {
            for item in items {
                let _ = write!(out, "{pad}-");
                match item {
                    Value::Object(map) if !map.is_empty() => {
                        // The first key shares the dash's line, the rest align under it.
                        let mut nested = String::new();
                        render_block(item, indent + 2, &mut nested);
                        out.push(' ');
                        out.push_str(&nested[indent + 2..]);
                    }
                    _ => render_nested(item, indent, out),
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", flow(other));
        }
    }
}

fn render_nested(item: &Value, indent: usize, out: &mut String) {
    if is_compound(item) {
        out.push('\n');
        let deeper = if item.is_array() { indent } else { indent + 2 };
        render_block(item, deeper, out);
    } else {
        let _ = writeln!(out, " {}", flow(item));
    }
}

/// A list longer than this on one line is written one item per line, so that a diff of two
/// long lists (a call trace, say) shows the item that changed rather than one changed line.
const FLOW_WIDTH: usize = 60;

fn is_compound(value: &Value) -> bool {
    match value {
        Value::Object(map) => !map.is_empty(),
        Value::Array(items) => items.iter().any(is_compound) || flow(value).len() > FLOW_WIDTH,
        _ => false,
    }
}

/// A value on one line: scalars, `[a, b]`, `{}`.
pub fn flow(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", scalar(&Value::String(k.clone())), flow(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => scalar(other),
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if is_plain_safe(s) => s.clone(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        compound => flow(compound),
    }
}

/// Whether a string can be written unquoted and still read back as the same string.
fn is_plain_safe(s: &str) -> bool {
    let reserved = [
        "null", "Null", "NULL", "~", "true", "True", "TRUE", "false", "False",
    ];
    let Some(first) = s.chars().next() else {
        return false;
    };
    !reserved.contains(&s)
        && !s.eq_ignore_ascii_case("yes")
        && !s.eq_ignore_ascii_case("no")
        && !s.eq_ignore_ascii_case("on")
        && !s.eq_ignore_ascii_case("off")
        && s.parse::<f64>().is_err()
        && !s.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%',
            '@', '`',
        ])
        && !first.is_whitespace()
        && !s.ends_with(char::is_whitespace)
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && !s.contains([',', '[', ']', '{', '}'])
        && !s.chars().any(char::is_control)
}

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
                "expected a whole number, 0 or more",
                (1, 8),
            ),
            ("count: -1\n", "expected a whole number, 0 or more", (1, 8)),
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
}
