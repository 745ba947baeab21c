//! A YAML parser's errors in the project's words: where the problem is (not where the parser
//! gave up), what it is in plain terms, and the fix; a syntax error, a limit reached, a key
//! missing its colon, a flow left open.

use super::*;

/// The file's YAML syntax error, if it has one (the parser reads nothing past it).
pub(super) fn syntax_error(file: &SourceFile) -> Option<SpecError> {
    syntax_error_in(file, &file.text)
}

/// A file's errors when it has the YAML syntax error `syntax`: `first`, the first error
/// decoding found, too when it is certainly not a cascade of the syntax error (it stands
/// before the part of the file the syntax error may have swallowed), then `syntax`; and that
/// further errors may follow, as nothing past a syntax error is read.
pub(super) fn with_syntax_error(first: SpecError, syntax: SpecError, text: &str) -> SpecError {
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
pub(super) fn swallowed_from(text: &str, error_line: usize) -> usize {
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
pub(super) fn open_flow(text: &str, at: Position) -> Option<Position> {
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

/// serde-saphyr's error in `text`, in a spec author's words, positioned in `file`.
pub(super) fn spec_error(file: &SourceFile, text: &str, error: &serde_saphyr::Error) -> SpecError {
    let position = error
        .location()
        .map(|l| position(&l))
        .unwrap_or(Position::START);
    let message = limit_message(error)
        .unwrap_or_else(|| polish(&strip_location(&error.without_snippet().to_string())));
    let (position, message) = plain_words(text, position, &message)
        .or_else(|| wrong_type(text, position, &message))
        .unwrap_or((position, message));
    SpecError::at(file, position, SpecErrorKind::Syntax, cut(&message))
}

/// What the parser means, in a spec author's words, for the mistakes it words as parser
/// internals: a `: ` inside a value that is not quoted, and a key not indented under the
/// step or key it belongs to. `None` for anything else.
pub(super) fn plain_words(text: &str, at: Position, message: &str) -> Option<(Position, String)> {
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
        return Some((at, not_indented_under(inner, key)));
    }
    None
}

/// A value of the wrong type (`deep_copy: yes please`), told with the key it is the value of,
/// what that key takes and what is written; `None` for any other message, or where the value
/// is under no key.
pub(super) fn wrong_type(text: &str, at: Position, message: &str) -> Option<(Position, String)> {
    let takes = match message {
        _ if message.starts_with("invalid boolean") => "`true` or `false`",
        "expected a whole number, 0 or more" => "a whole number, 0 or more",
        _ if message.starts_with("invalid i") => "a whole number",
        _ if message.starts_with("invalid f") => "a number",
        _ => return None,
    };
    let (key, item, written) = match tree::build(text, parser_options(), &TREE_LIMITS) {
        Some(root) => entry_at(&root, at)?,
        None => entry_at(edit::Document::parse(text).ok()?.root(), at)?,
    };
    // As written, unless it holds a control character: then quoted, escapes and all.
    let shown = |text: String| {
        if text.chars().any(char::is_control) {
            flow(&Value::String(text))
        } else {
            text
        }
    };
    let (key, written) = (shown(key), shown(written));
    let told = if item {
        format!("each item of `{key}` is {takes}, not `{written}`")
    } else if takes.starts_with('`') {
        format!("`{key}` takes {takes}, not `{written}`: write `{key}: true` or `{key}: false`")
    } else {
        format!("`{key}` takes {takes}, not `{written}`")
    };
    Some((at, told))
}

/// The key whose value (or whose list's item, `true`) is the scalar at `at`, and its text.
fn entry_at<N: locate::Located>(node: &N, at: Position) -> Option<(String, bool, String)> {
    if let Some(items) = node.items() {
        return items.iter().find_map(|item| entry_at(item, at));
    }
    node.entries()?.iter().find_map(|(key, value)| {
        let scalar = |node: &N| {
            (node.position() == at && node.entries().is_none() && node.items().is_none())
                .then(|| node.key_name().map(str::to_owned))
                .flatten()
        };
        if let Some(written) = scalar(value) {
            return Some((key.key_name()?.to_owned(), false, written));
        }
        if let Some(written) = value
            .items()
            .and_then(|items| items.iter().find_map(scalar))
        {
            return Some((key.key_name()?.to_owned(), true, written));
        }
        entry_at(value, at)
    })
}

/// What to tell when `inner`, meant as a key of `key:`, stands at `key`'s own column: YAML
/// reads it as `key`'s sibling, and `key` as empty.
pub fn not_indented_under(inner: &str, key: &str) -> String {
    format!(
        "`{inner}` is not indented under `{key}:`, so it is read as a sibling of `{key}`, which is left empty: indent `{inner}` (and the keys after it) two spaces more than `{key}`"
    )
}

/// A flow list or mapping opened on an earlier line and still open at `at`, a line that
/// stands no deeper than the opener's (a key of its own, read into the list): the opener is
/// the mistake, and told at its place. `None` for anything else.
pub(super) fn unclosed_flow(
    text: &str,
    lines: &[&str],
    at: Position,
) -> Option<(Position, String)> {
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
pub(super) fn second_key(lines: &[&str], at: Position, key: &str) -> Option<Position> {
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
pub(super) fn colon_at(line: &str, column: usize) -> Option<(&str, &str)> {
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
pub(super) fn colon_in_value(line: &str) -> Option<(&str, &str)> {
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
pub(super) fn cut(message: &str) -> String {
    if message.chars().count() <= MAX_MESSAGE_CHARS {
        return message.to_owned();
    }
    let kept: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
    format!("{kept}... (cut)")
}

/// What a limit of the parser means for a spec author, in place of the library's wording
/// (`budget breached: Nodes { nodes: 250001 }`, `use from_str_multiple`).
pub(super) fn limit_message(error: &serde_saphyr::Error) -> Option<String> {
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

/// serde-saphyr appends " at line N, column M"; the position is reported separately.
pub(super) fn strip_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(cut) if message[cut..].contains(", column ") => message[..cut].to_owned(),
        _ => message.to_owned(),
    }
}

/// Rewords the few serde messages that would puzzle a spec author.
pub(super) fn polish(message: &str) -> String {
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
pub(super) fn did_you_mean(message: &str) -> String {
    let Some((head, list)) = message.split_once(", expected one of ") else {
        return message.to_owned();
    };
    let unknown = head.split('`').nth(1).unwrap_or_default();
    let choices: Vec<&str> = list.split(", ").map(|c| c.trim_matches('`')).collect();
    let hint = crate::suggest::hint(unknown, &choices);
    format!("{head}{hint}, expected one of {list}")
}

/// The YAML syntax error of `text` (the file's, or the file's with lines blanked), if it has
/// one, positioned in `file`.
fn syntax_error_in(file: &SourceFile, text: &str) -> Option<SpecError> {
    edit::Document::parse(text).err()?;
    let error = serde_saphyr::from_str_with_options::<de::IgnoredAny>(text, options()).err()?;
    Some(spec_error(file, text, &error))
}

/// The most lines blanked to read past a file's YAML syntax errors.
const MAX_SYNTAX_LINES: usize = 8;

/// What the words of a misindented line say (`misindented`), by which it is told apart.
const MISINDENTED: &str = "which lines it up with nothing above it";

/// Every error of a file with YAML syntax errors, where the rest of it can be read: the line
/// of each syntax error is blanked (spaces, so every other line and column stays where it
/// was) until the text is YAML again, and what that text holds is decoded and checked as
/// any broken file is, so that a bad indent, a key typo and a wrong value come in one run.
/// A `missing field` the blanking made (the blanked line held that key) is not told. `None`
/// when blanking does not make YAML of it within [`MAX_SYNTAX_LINES`] lines, or a blanked
/// line's trouble goes on at the next (an unclosed quote or bracket swallowing the rest, an
/// item's keys under a blanked item): then the syntax error is told as before, with those
/// before it, and that more may follow.
pub(super) fn past_syntax_errors<T: DeserializeOwned>(
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
