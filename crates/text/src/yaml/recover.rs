//! Every shape error of a spec in one run: after serde stops at the first, the part of the
//! file it is in is blanked out and the file decoded again, until nothing more is wrong.
//!
//! Why blanking: serde's derived decoding stops at its first error, and its messages (polished
//! in `yaml/errors.rs`) are the ones authors know. Overwriting the broken part with spaces keeps every
//! other line and column where it was, so each later error is serde's own, at its own place.
//! What is blanked is a whole list item (a step, a message, an outcome, an entry) or, outside
//! any list, a whole top-level key; a key unknown where it stands is blanked alone. A part left
//! empty by that is blanked with its parent, and a `missing field` that only the blanking made
//! (a cascade) is never told: the removal widens to the list item around it instead.
//! What decodes once every broken part is blanked is kept, so that the contract's own checks
//! run on the rest of the file too (`Recovery::recovered`, with the top-level keys a part was
//! blanked under, for the checks to skip what the blanked parts may have defined).
//! A part holding an anchor is not blanked (its aliases would break), and nothing more is
//! done for a limit of the parser reached, past `MAX_ERRORS` or once the bytes decoded again
//! would pass `REREAD_BUDGET`: there the errors found so far are told, and that more may follow
//! and why (`Recovery::untold`). The bound is the work, not the file's size, so that a big
//! file with few mistakes still has them all told.

use serde::de::DeserializeOwned;

use crate::source::{Position, SourceFile};
use crate::spec_error::{MAX_ERRORS, SpecError, Untold};
use crate::yaml::edit::{Document, Kind, LeadKind, Node};

/// The most bytes decoded again, in all, for a file's later errors: each later error costs
/// a few whole decodes, so a big file gets fewer of them. `Untold::Work` says 32 MiB.
pub(super) const REREAD_BUDGET: usize = 32 << 20;

/// The most decodes one round of the recovery makes of its text (the YAML tree, the
/// substitution's, the blanking's and the widened blanking's).
const DECODES_A_ROUND: usize = 4;

/// What reading a broken file again told.
pub(super) struct Recovery<T> {
    /// The errors after the first, in the order found.
    pub(crate) later: Vec<SpecError>,
    /// What decoded once every broken part was blanked, with the top-level key each part
    /// was under (an empty name for a part under none) and its text.
    pub(crate) recovered: Option<(T, Vec<(String, String)>)>,
    /// Why the file was not read to its end, when errors after these may be untold.
    pub(crate) untold: Option<Untold>,
    /// The words replaced by longer ones in the text `recovered` decoded from, to place the
    /// errors of its checks in the file as written.
    pub(crate) shifts: Shifts,
}

/// Words replaced by longer ones on their lines (`aftr` by `after`), in the order made: the
/// columns after each on its line moved right, and an error found there is moved back.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Shifts(Vec<Shift>);

/// One word replaced: on `line`, at character column `start`, `old` characters became `new`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shift {
    line: usize,
    start: usize,
    old: usize,
    new: usize,
}

impl Shifts {
    /// Where position `at` of the text with the replacements stands in the text as written:
    /// past a replaced word its column moves back by the characters it grew; inside one, at
    /// the word as written (its last character at most).
    pub(crate) fn original(&self, at: Position) -> Position {
        let mut column = at.column;
        for shift in self.0.iter().rev() {
            if shift.line != at.line || column < shift.start {
                continue;
            }
            column = if column >= shift.start + shift.new {
                column - shift.new + shift.old
            } else {
                shift.start + (column - shift.start).min(shift.old.saturating_sub(1))
            };
        }
        Position::new(at.line, column)
    }

    /// `error` and the others with it, found in the text with the replacements, placed in
    /// `file` as written, each with the line it is then on.
    pub(crate) fn place(&self, file: &SourceFile, error: SpecError) -> SpecError {
        if self.0.is_empty() {
            return error;
        }
        let one = |mut error: SpecError| {
            let at = self.original(error.position);
            if at != error.position {
                error.position = at;
                error.source_line = file.excerpt(at).map(Box::new);
            }
            error
        };
        let mut error = error;
        let more = std::mem::take(&mut error.more);
        let mut first = one(error);
        first.more = more.into_iter().map(one).collect();
        first
    }
}

/// The errors after `first`, the first error serde found in `file`, and what decodes past them.
/// `decode` decodes a text as the spec's type and positions its error, as `parse_slow` does.
pub(super) fn later_errors<T: DeserializeOwned>(
    file: &SourceFile,
    first: &SpecError,
    decode: impl Fn(&str) -> Result<T, SpecError>,
) -> Recovery<T> {
    let mut recovery = Recovery {
        later: Vec::new(),
        recovered: None,
        untold: None,
        shifts: Shifts::default(),
    };
    let mut blanked_under: Vec<(String, String)> = Vec::new();
    let mut text = file.text.clone();
    let mut found: Vec<SpecError> = Vec::new();
    // The keys blanked and the bytes of the mappings they were in.
    let mut removed: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    let mut error = first.clone();
    // The error found last, told once the text it was found in proves to read as YAML: a
    // blanking that broke the YAML would make an error that is none of the author's.
    let mut pending: Option<SpecError> = None;
    // The bytes decoded so far, counting the decode that found `first`.
    let mut reread = text.len();
    for _ in 0..MAX_ERRORS * 2 {
        let current = std::mem::take(&mut text);
        if !within_budget(reread, current.len(), 1) {
            recovery.untold = Some(Untold::Work);
            break;
        }
        reread += current.len();
        let Ok(document) = Document::parse(&current) else {
            break;
        };
        if let Some(error) = pending.take() {
            found.push(recovery.shifts.place(file, error));
            if found.len() + 1 >= MAX_ERRORS {
                recovery.untold = Some(Untold::Many);
                break;
            }
        }
        if !within_budget(reread, current.len(), DECODES_A_ROUND - 1) {
            recovery.untold = Some(Untold::Work);
            break;
        }
        reread += current.len() * (DECODES_A_ROUND - 1);
        // A word that is not one of a list is replaced by the nearest that fits in its place,
        // so that the rest of its item is read too (`{process: okay, extra: 1}`); unless the
        // word put there is itself wrong there, which only blanking the item can tell.
        let substituted = substitution(&document, &current, &error).and_then(|(range, word)| {
            let text = replace(&current, range.clone(), &word);
            let old = current[range.clone()].chars().count();
            let range = range.start..range.start + word.len();
            match decode(&text) {
                Err(next)
                    if byte_offset(&text, next.position).is_some_and(|at| range.contains(&at)) =>
                {
                    None
                }
                result => Some((text, result, range, old)),
            }
        });
        if let Some((substituted, result, range, old)) = substituted {
            let line_start = substituted[..range.start]
                .rfind('\n')
                .map_or(0, |at| at + 1);
            let new = substituted[range.clone()].chars().count();
            if new != old {
                recovery.shifts.0.push(Shift {
                    line: error.position.line,
                    start: substituted[line_start..range.start].chars().count() + 1,
                    old,
                    new,
                });
            }
            text = substituted;
            match result {
                Ok(value) => {
                    recovery.recovered = Some((value, blanked_under));
                    break;
                }
                Err(next) => error = next,
            }
            if already_told(
                first,
                &found,
                recovery.shifts.original(error.position),
                &error,
            ) {
                break;
            }
            pending = Some(error.clone());
            continue;
        }
        let Some(part) = part_to_blank(&document, &current, &error, Scope::Least) else {
            break;
        };
        if anchor_in_the_way(&current, part.range.clone()) {
            // Blanking an anchor would break its aliases: an error that is none of the author's.
            recovery.untold = Some(Untold::Anchor);
            break;
        }
        if let Some(key) = part.key {
            removed.push(key);
        }
        let under = (
            top_level_key(&document, part.range.start),
            current[part.range.clone()].to_owned(),
        );
        text = blank(&current, part.range);
        let next = match decode(&text) {
            Ok(value) => {
                blanked_under.push(under);
                recovery.recovered = Some((value, blanked_under));
                break;
            }
            Err(next) => next,
        };
        let cascade = missing_field(&next.message).filter(|missing| {
            let at = byte_offset(&text, next.position).unwrap_or(usize::MAX);
            removed
                .iter()
                .any(|(key, mapping)| key == missing || mapping.contains(&at))
        });
        if let Some(missing) = cascade {
            // A cascade of the removal: blank the whole item the removed key was in instead.
            let Some(wider) = part_to_blank(&document, &current, &error, Scope::Item) else {
                break;
            };
            if anchor_in_the_way(&current, wider.range.clone()) {
                recovery.untold = Some(Untold::Anchor);
                break;
            }
            let under = (
                top_level_key(&document, wider.range.start),
                current[wider.range.clone()].to_owned(),
            );
            text = blank(&current, wider.range);
            match decode(&text) {
                Ok(value) => {
                    blanked_under.push(under);
                    recovery.recovered = Some((value, blanked_under));
                    break;
                }
                Err(again) if missing_field(&again.message) == Some(missing) => break,
                Err(again) => {
                    blanked_under.push(under);
                    error = again;
                }
            }
        } else {
            blanked_under.push(under);
            error = next;
        }
        if already_told(
            first,
            &found,
            recovery.shifts.original(error.position),
            &error,
        ) {
            break;
        }
        pending = Some(error.clone());
    }
    recovery.later = found;
    recovery
}

/// Whether `decodes` more decodes of a text of `length` bytes keep the bytes decoded, now
/// `reread`, within [`REREAD_BUDGET`].
fn within_budget(reread: usize, length: usize, decodes: usize) -> bool {
    length
        .checked_mul(decodes)
        .and_then(|more| more.checked_add(reread))
        .is_some_and(|total| total <= REREAD_BUDGET)
}

/// For an `unknown value `WORD`, expected one of ...` error at a plain scalar that is a value
/// (not a key, whose word decides how its value is read), the bytes of the word and the
/// listed word nearest to it, padded to its length with spaces (which a plain scalar drops)
/// when shorter; a longer one moves the rest of its line right (`Shifts`).
fn substitution(
    document: &Document,
    text: &str,
    error: &SpecError,
) -> Option<(std::ops::Range<usize>, String)> {
    let rest = error.message.strip_prefix("unknown value `")?;
    let (word, after) = rest.split_once('`')?;
    let (_, list) = after.split_once("expected one of ")?;
    let offset = byte_offset(text, error.position)?;
    let mut path = Vec::new();
    descend(document.root(), offset, &mut path);
    let step = path.last()?;
    let node = match &step.parent.kind {
        Kind::Sequence { items, .. } => &items[step.index],
        Kind::Mapping { entries, .. } => {
            let (key, value) = &entries[step.index];
            if key.start <= offset && offset < key.end.max(key.start + 1) {
                return None;
            }
            value
        }
        _ => return None,
    };
    if !matches!(node.kind, Kind::Scalar { .. })
        || node.start != offset
        || text.get(node.start..node.end) != Some(word)
    {
        return None;
    }
    let length = word.chars().count();
    let fitting: Vec<&str> = list
        .split(", ")
        .filter(|choice| {
            !choice.is_empty()
                && choice
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        })
        .collect();
    let nearest = crate::suggest::closest(word, &fitting)?;
    Some((node.start..node.end, format!("{nearest:<length$}")))
}

/// `text` with the bytes of `range` replaced by `with`.
fn replace(text: &str, range: std::ops::Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..range.start]);
    out.push_str(with);
    out.push_str(&text[range.end..]);
    out
}

/// Whether blanking the bytes `range` of `text` would break an anchor: they define one an
/// alias uses, or one stands before them on their line (`- &s {...}`, where the node starts
/// at `{`), which blanking them would leave naming nothing.
fn anchor_in_the_way(text: &str, range: std::ops::Range<usize>) -> bool {
    let line_start = text[..range.start].rfind('\n').map_or(0, |at| at + 1);
    text[line_start..range.start].contains('&') || defines_used_anchor(text, range)
}

/// Whether the bytes `range` of `text` define an anchor (`&name`) that an alias (`*name`)
/// outside them uses: blanking them would break that alias. Read from the text, so anything
/// that looks like one counts.
fn defines_used_anchor(text: &str, range: std::ops::Range<usize>) -> bool {
    let part = &text[range.clone()];
    part.match_indices('&').any(|(at, _)| {
        let name: String = part[at + 1..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
            .collect();
        let alias = format!("*{name}");
        name.is_empty()
            || text[..range.start].contains(&alias)
            || text[range.end..].contains(&alias)
    })
}

/// The name of the top-level key whose entry holds byte `offset`, or an empty name.
fn top_level_key(document: &Document, offset: usize) -> String {
    let Kind::Mapping { entries, .. } = &document.root().kind else {
        return String::new();
    };
    entries
        .iter()
        .find(|(key, value)| key.start <= offset && offset < reach(value).max(key.end))
        .and_then(|(key, _)| crate::yaml::locate::Located::key_name(key))
        .unwrap_or_default()
        .to_owned()
}

/// The key a `missing field `KEY`` error names.
fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.split('`').next()
}

/// How much of the file around an error to blank.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// An unknown key alone; any other error, its list item.
    Least,
    /// Always the list item (or top-level key) around the error.
    Item,
}

/// The bytes of a document blanked to recover from an error.
struct BlankedPart {
    range: std::ops::Range<usize>,
    /// The mapping key blanked, if a key and its value are what is blanked, and the bytes of
    /// the mapping it is in.
    key: Option<(String, std::ops::Range<usize>)>,
}

/// A step down from a collection to one of its parts, with what is needed to blank it.
struct Descent<'d> {
    /// The collection.
    parent: &'d Node,
    /// Which of its items or entries.
    index: usize,
}

/// What to blank for `error`: see the module's comment.
fn part_to_blank(
    document: &Document,
    text: &str,
    error: &SpecError,
    scope: Scope,
) -> Option<BlankedPart> {
    let offset = byte_offset(text, error.position)?;
    let mut path = Vec::new();
    descend(document.root(), offset, &mut path);
    let unknown_key = scope == Scope::Least && error.message.starts_with("unknown field `");
    let mut depth = if unknown_key {
        // The entry whose key is at the error.
        path.iter().rposition(|step| {
            matches!(&step.parent.kind, Kind::Mapping { entries, .. }
                if entries[step.index].0.position == error.position)
        })?
    } else {
        path.iter()
            .rposition(|step| matches!(step.parent.kind, Kind::Sequence { .. }))
            .unwrap_or(0)
    };
    // A part that is all its collection holds takes the collection with it: an empty mapping
    // or list left behind would be an error of its own.
    while depth > 0 && parts(path[depth].parent) == 1 {
        depth -= 1;
    }
    let step = path.get(depth)?;
    if parts(step.parent) == 1 {
        return None;
    }
    Some(BlankedPart {
        range: range_of(step.parent, step.index, text),
        key: match &step.parent.kind {
            Kind::Mapping { entries, .. } => {
                crate::yaml::locate::Located::key_name(&entries[step.index].0)
                    .map(|key| (key.to_owned(), item_start(step.parent)..reach(step.parent)))
            }
            _ => None,
        },
    })
}

/// How many items or entries a collection holds.
fn parts(node: &Node) -> usize {
    match &node.kind {
        Kind::Sequence { items, .. } => items.len(),
        Kind::Mapping { entries, .. } => entries.len(),
        _ => 0,
    }
}

/// The steps from `node` down to the deepest part whose bytes hold `offset`.
fn descend<'d>(node: &'d Node, offset: usize, path: &mut Vec<Descent<'d>>) {
    let (index, child) = match &node.kind {
        Kind::Sequence { items, .. } => match items
            .iter()
            .position(|item| item_start(item) <= offset && offset < reach(item))
        {
            Some(index) => (index, &items[index]),
            None => return,
        },
        Kind::Mapping { entries, .. } => match entries
            .iter()
            .position(|(key, value)| key.start <= offset && offset < reach(value).max(key.end))
        {
            Some(index) => (index, &entries[index].1),
            None => return,
        },
        _ => return,
    };
    path.push(Descent {
        parent: node,
        index,
    });
    descend(child, offset, path);
}

/// Where a list item starts: at its dash, in a block list.
fn item_start(item: &Node) -> usize {
    match item.lead {
        Some(lead) if lead.kind == LeadKind::Dash => lead.at,
        _ => item.start,
    }
}

/// One past a node's last byte, or past its key's `:` for an empty value.
fn reach(node: &Node) -> usize {
    node.end.max(node.lead.map_or(0, |lead| lead.after))
}

/// The bytes of part `index` of `parent`; in a flow collection with the comma that parts it
/// from a neighbour, so that what is left still reads as YAML.
fn range_of(parent: &Node, index: usize, text: &str) -> std::ops::Range<usize> {
    let bounds = |i: usize| -> (usize, usize) {
        match &parent.kind {
            Kind::Sequence { items, .. } => (item_start(&items[i]), reach(&items[i])),
            Kind::Mapping { entries, .. } => {
                let (key, value) = &entries[i];
                (key.start, reach(value).max(key.end))
            }
            _ => (0, 0),
        }
    };
    let (start, end) = bounds(index);
    let flow = matches!(
        parent.kind,
        Kind::Sequence { flow: true, .. } | Kind::Mapping { flow: true, .. }
    ) || parent.in_flow;
    if !flow {
        return start..end;
    }
    if index + 1 < parts(parent) {
        start..bounds(index + 1).0
    } else if index > 0 {
        bounds(index - 1).1..end
    } else {
        start..end.min(text.len())
    }
}

/// The byte where a 1-based line and character column is.
fn byte_offset(text: &str, at: Position) -> Option<usize> {
    let line_start = if at.line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(at.line - 2)?.0 + 1
    };
    let line = &text[line_start..];
    let column = line
        .char_indices()
        .nth(at.column.saturating_sub(1))
        .map_or(line.len(), |(i, _)| i);
    Some(line_start + column)
}

/// `text` with the bytes of `range` overwritten by spaces (one a character, line breaks kept),
/// so that every line and column after them stays where it was.
fn blank(text: &str, range: std::ops::Range<usize>) -> String {
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..range.start]);
    out.extend(text[range.clone()].chars().map(|c| match c {
        '\n' | '\r' => c,
        _ => ' ',
    }));
    out.push_str(&text[range.end..]);
    out
}

/// Whether `error`, at `at` in the file as written, is one already told: recovering again would
/// only go round.
fn already_told(
    first: &SpecError,
    found: &[SpecError],
    at: crate::source::Position,
    error: &SpecError,
) -> bool {
    std::iter::once(first)
        .chain(found)
        .any(|told| told.position == at && told.message == error.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_past_a_longer_word_is_moved_back_to_the_text_as_written() {
        // `{crash: aftr, x: befre}`: `aftr` (column 9) became `after`, then `befre` (column
        // 20 as written, 21 after the first) became `before`.
        let shifts = Shifts(vec![
            Shift {
                line: 1,
                start: 9,
                old: 4,
                new: 5,
            },
            Shift {
                line: 1,
                start: 21,
                old: 5,
                new: 6,
            },
        ]);
        let original = |line, column| shifts.original(Position::new(line, column));
        assert_eq!(original(1, 8), Position::new(1, 8), "before the words");
        assert_eq!(original(1, 9), Position::new(1, 9), "at the first word");
        assert_eq!(original(1, 13), Position::new(1, 12), "in it, at its last");
        assert_eq!(original(1, 14), Position::new(1, 13), "past the first");
        assert_eq!(original(1, 21), Position::new(1, 20), "at the second");
        assert_eq!(original(1, 27), Position::new(1, 25), "past both");
        assert_eq!(original(2, 27), Position::new(2, 27), "another line");
        let text = "steps: [{crash: aftr, call: dlq.pt}]\n";
        let file = SourceFile::from_text("a.yaml", text);
        let shifts = Shifts(vec![Shift {
            line: 1,
            start: 17,
            old: 4,
            new: 5,
        }]);
        let found = SpecError::invalid(&file, Position::new(1, 30), "bad call");
        let placed = shifts.place(&file, found);
        assert_eq!(placed.position, Position::new(1, 29));
        assert_eq!(
            placed.source_line,
            file.excerpt(Position::new(1, 29)).map(Box::new)
        );
    }

    #[test]
    fn the_budget_is_the_one_told() {
        assert_eq!(REREAD_BUDGET, 32 << 20);
        assert!(Untold::Work.says().contains(" 32 MiB "));
        assert!(Untold::Many.says().contains(&format!(" {MAX_ERRORS} ")));
    }

    #[test]
    fn the_budget_bounds_the_bytes_decoded_again() {
        assert!(within_budget(0, REREAD_BUDGET, 1));
        assert!(!within_budget(1, REREAD_BUDGET, 1));
        assert!(within_budget(REREAD_BUDGET / 2, REREAD_BUDGET / 6, 3));
        assert!(!within_budget(REREAD_BUDGET / 2, REREAD_BUDGET / 6 + 1, 3));
        assert!(!within_budget(0, usize::MAX, 2), "no overflow");
    }

    #[test]
    fn only_an_anchor_an_alias_uses_stops_the_blanking() {
        let text = "a: &x [1]\nb: &y [2]\nc: *x\n";
        let line = |n: usize| {
            let start = match n {
                1 => 0,
                _ => text
                    .match_indices('\n')
                    .nth(n - 2)
                    .map_or(0, |(i, _)| i + 1),
            };
            start..start + text[start..].find('\n').unwrap()
        };
        assert!(defines_used_anchor(text, line(1)));
        assert!(!defines_used_anchor(text, line(2)));
        assert!(!defines_used_anchor(text, line(3)));
        let flow = "a: [x, y]\nb: &z {c: d}\n";
        let mapping = flow.find('{').unwrap()..flow.len() - 1;
        assert!(anchor_in_the_way(flow, mapping));
        assert!(!anchor_in_the_way(flow, 0..9));
    }

    #[test]
    fn blanking_keeps_every_line_and_column() {
        let text = "a: [x, é, y]\nb: 1\n";
        let start = text.find('é').unwrap();
        let blanked = blank(text, start..start + 'é'.len_utf8());
        assert_eq!(blanked, "a: [x,  , y]\nb: 1\n");
        assert_eq!(byte_offset(text, Position::new(2, 1)), Some(14));
        assert_eq!(byte_offset(text, Position::new(1, 9)), Some(9));
    }
}
