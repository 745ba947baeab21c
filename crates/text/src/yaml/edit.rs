//! Rewriting values inside a YAML file in place, keeping every other byte as it was.
//!
//! `dlqspec bless` uses this to replace an expectation with what was observed. The file is
//! read into a tree of nodes with exact byte ranges (granit-parser events, the parser under
//! serde-saphyr), and a new value is laid over the old node as little as possible: equal parts
//! are left alone, a changed scalar keeps its quoting, a list of changed length in block style
//! gains or loses whole item lines, and only where the shape itself changed is a node written
//! anew, in the style (flow or block, indentation) of its surroundings. Comments, key order,
//! blank lines and everything outside the rewritten nodes stay byte for byte.

use std::ops::Range;

use serde_json::{Map, Value};
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, Span, StructureStyle};
use similar::{Algorithm, DiffOp, capture_diff_slices};

use crate::source::Position;
use crate::yaml;
use crate::yaml::locate::{self, Located};

/// Lines longer than this are written in block style when a new value has the choice.
const WIDTH: usize = 100;

/// Why a value could not be rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{}: {message}", position.line, position.column)]
pub struct EditError {
    pub(crate) position: Position,
    pub(crate) message: String,
}

impl EditError {
    fn new(position: Position, message: impl Into<String>) -> Self {
        EditError {
            position,
            message: message.into(),
        }
    }
}

/// Replace the bytes in `range` with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub(crate) range: Range<usize>,
    pub(crate) text: String,
}

/// A node of the document with the bytes it covers.
#[derive(Debug, Clone)]
pub struct Node {
    /// Where the node's content starts, as serde-saphyr's `Spanned` reports it.
    pub position: Position,
    /// The first byte of the node's text: a block scalar's `|` or `>`, a block sequence's first `-`.
    pub start: usize,
    /// One past the last byte; for a block collection, the end of its last item.
    pub end: usize,
    /// What the node hangs from, if anything: a mapping key or a sequence dash.
    pub lead: Option<Lead>,
    /// Inside a flow collection, where only flow style is allowed.
    pub(crate) in_flow: bool,
    /// It has an anchor or a tag, or is an alias: rewriting it could change other values.
    pub(crate) marked: bool,
    pub kind: Kind,
}

impl Node {
    /// One past the node's last byte or, for an empty value, past its key's `:` or its dash.
    fn reach(&self) -> usize {
        self.end.max(self.lead.map_or(0, |lead| lead.after))
    }
}

#[derive(Debug, Clone)]
pub enum Kind {
    Scalar {
        value: String,
        style: ScalarStyle,
    },
    Sequence {
        flow: bool,
        items: Vec<Node>,
    },
    Mapping {
        flow: bool,
        entries: Vec<(Node, Node)>,
    },
    Alias,
}

/// The key or dash a block node belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lead {
    /// The byte just after the key's `:` or the item's `-`.
    pub(crate) after: usize,
    /// The byte where the key or the dash starts.
    pub at: usize,
    /// The column (0-based, in characters) of the key or dash.
    pub(crate) column: usize,
    pub kind: LeadKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeadKind {
    Key,
    Dash,
}

/// A parsed YAML document, ready to have values rewritten.
pub struct Document<'t> {
    text: &'t str,
    root: Node,
    comments: Vec<Range<usize>>,
    /// How far a block sequence under a key is indented past the key (0 or 2, usually).
    sequence_indent: usize,
    /// How far a block mapping under a key is indented past the key.
    mapping_indent: usize,
    newline: &'static str,
}

impl<'t> Document<'t> {
    pub fn parse(text: &'t str) -> Result<Self, EditError> {
        let mut events = Vec::new();
        let mut comments = Vec::new();
        for event in Parser::new_from_str(text) {
            let (event, span) = event.map_err(|error| {
                let marker = error.marker();
                EditError::new(
                    Position::new(marker.line(), marker.col() + 1),
                    error.info().to_owned(),
                )
            })?;
            match event {
                Event::Comment(..) => comments.push(byte_range(&span)),
                Event::DocumentEnd => break,
                Event::StreamStart | Event::DocumentStart(..) => {}
                other => events.push((other, span)),
            }
        }
        let mut builder = DocumentBuilder {
            text,
            events,
            next: 0,
        };
        let root = builder.node(None, false)?;
        let mut document = Document {
            text,
            root,
            comments,
            sequence_indent: 2,
            mapping_indent: 2,
            newline: if text.contains("\r\n") { "\r\n" } else { "\n" },
        };
        let (sequence_indent, mapping_indent) = document.indentation();
        document.sequence_indent = sequence_indent.unwrap_or(2);
        document.mapping_indent = mapping_indent.unwrap_or(2);
        Ok(document)
    }

    pub fn root(&self) -> &Node {
        &self.root
    }

    #[cfg(test)]
    /// The outermost node (never a mapping key) whose content starts at `position`.
    pub(crate) fn node_at(&self, position: Position) -> Option<&Node> {
        locate::node_at(&self.root, position)
    }

    /// The node reached from the node at `at` through the mapping keys `path`.
    pub fn find(&self, at: Position, path: &[String]) -> Result<&Node, EditError> {
        locate::find(&self.root, at, path).map_err(|(position, why)| EditError::new(position, why))
    }

    /// Where a key of the top-level mapping is written.
    pub fn key_position(&self, key: &str) -> Option<Position> {
        let Kind::Mapping { entries, .. } = &self.root.kind else {
            return None;
        };
        entries
            .iter()
            .find(|(k, _)| k.key_name() == Some(key))
            .map(|(k, _)| k.position)
    }

    /// The value a node holds, as JSON; `None` when it involves an alias.
    pub fn value(&self, node: &Node) -> Option<Value> {
        match &node.kind {
            Kind::Scalar { value, style } => Some(scalar_value(value, *style)),
            Kind::Sequence { items, .. } => items
                .iter()
                .map(|item| self.value(item))
                .collect::<Option<Vec<_>>>()
                .map(Value::Array),
            Kind::Mapping { entries, .. } => {
                let mut map = Map::new();
                for (key, value) in entries {
                    map.insert(key.key_name()?.to_owned(), self.value(value)?);
                }
                Some(Value::Object(map))
            }
            Kind::Alias => None,
        }
    }

    /// Whether the node reads as `value` where a spec expects that kind of value: a plain
    /// scalar matches both its typed reading and its text (`n` is `false`, or the string "n").
    pub(crate) fn matches(&self, node: &Node, value: &Value) -> bool {
        match (&node.kind, value) {
            (Kind::Scalar { value: text, style }, value) => {
                scalar_value(text, *style) == *value
                    || (*style == ScalarStyle::Plain
                        && matches!(value, Value::String(s) if s == text))
            }
            (Kind::Sequence { items, .. }, Value::Array(values)) => {
                items.len() == values.len()
                    && items.iter().zip(values).all(|(i, v)| self.matches(i, v))
            }
            (Kind::Mapping { entries, .. }, Value::Object(map)) => {
                entries.len() == map.len()
                    && entries.iter().all(|(key, item)| {
                        key.key_name()
                            .and_then(|name| map.get(name))
                            .is_some_and(|v| self.matches(item, v))
                    })
            }
            _ => false,
        }
    }

    /// The edits that make the node at `at` (through `path`) hold `new`, touching as little as
    /// possible.
    pub fn rewrite(
        &self,
        at: Position,
        path: &[String],
        new: &Value,
    ) -> Result<Vec<Edit>, EditError> {
        let node = self.find(at, path)?;
        let mut edits = Vec::new();
        self.overlay(node, new, &mut edits)?;
        Ok(edits)
    }

    /// How many comments lie inside the bytes `edits` replace (they are lost with them).
    pub fn comments_replaced(&self, edits: &[Edit]) -> usize {
        self.comments
            .iter()
            .filter(|comment| {
                edits
                    .iter()
                    .any(|e| e.range.start <= comment.start && comment.end <= e.range.end)
            })
            .count()
    }

    fn overlay(&self, node: &Node, new: &Value, edits: &mut Vec<Edit>) -> Result<(), EditError> {
        if self.matches(node, new) {
            return Ok(());
        }
        if node.marked {
            return Err(EditError::new(
                node.position,
                "this value has an anchor, an alias or a tag; rewrite it by hand",
            ));
        }
        match (&node.kind, new) {
            (Kind::Mapping { entries, .. }, Value::Object(map))
                if entries.len() == map.len()
                    && entries
                        .iter()
                        .all(|(key, _)| key.key_name().is_some_and(|k| map.contains_key(k))) =>
            {
                for (key, value) in entries {
                    if let Some(name) = key.key_name() {
                        self.overlay(value, &map[name], edits)?;
                    }
                }
                Ok(())
            }
            // Item by item where the length stayed.
            (Kind::Sequence { items, .. }, Value::Array(new_items))
                if !items.is_empty() && items.len() == new_items.len() =>
            {
                for (item, new_item) in items.iter().zip(new_items) {
                    self.overlay(item, new_item, edits)?;
                }
                Ok(())
            }
            // Whole item lines in and out of a block list that stays non-empty.
            (Kind::Sequence { flow: false, items }, Value::Array(new_items))
                if !items.is_empty() && !new_items.is_empty() =>
            {
                self.overlay_items(node, items, new_items, edits)
            }
            (Kind::Scalar { style, .. }, new) if !is_compound(new) && node.start < node.end => {
                edits.push(Edit {
                    range: node.start..node.end,
                    text: scalar_in_style(new, *style),
                });
                Ok(())
            }
            _ => self.replace(node, new, edits),
        }
    }

    /// A block sequence whose length changed: keep the items that stay, delete and insert
    /// whole item lines for the others.
    fn overlay_items(
        &self,
        sequence: &Node,
        items: &[Node],
        new_items: &[Value],
        edits: &mut Vec<Edit>,
    ) -> Result<(), EditError> {
        let Some(lines) = items
            .iter()
            .map(|item| self.item_lines(item))
            .collect::<Option<Vec<_>>>()
        else {
            // Items that share lines with other text: write the sequence anew.
            return self.replace(sequence, &Value::Array(new_items.to_vec()), edits);
        };
        let dash_column = items[0].lead.map_or(0, |lead| lead.column);
        let flow_items = items
            .iter()
            .any(|item| matches!(item.kind, Kind::Mapping { flow: true, .. }));
        let new_keys: Vec<String> = new_items.iter().map(canonical).collect();
        // An old item that reads as a new one gets its key, so the two line up.
        let old_keys: Vec<String> = items
            .iter()
            .map(|item| {
                new_items
                    .iter()
                    .zip(&new_keys)
                    .find(|(value, _)| self.matches(item, value))
                    .map(|(_, key)| key.clone())
                    .unwrap_or_else(|| self.value(item).map_or_else(String::new, |v| canonical(&v)))
            })
            .collect();
        let ops = capture_diff_slices(Algorithm::Myers, &old_keys, &new_keys);
        for (old, new) in changed_blocks(&ops) {
            let paired = old.len().min(new.len());
            for offset in 0..paired {
                self.overlay(
                    &items[old.start + offset],
                    &new_items[new.start + offset],
                    edits,
                )?;
            }
            for gone in &lines[old.start + paired..old.end] {
                edits.push(Edit {
                    range: gone.clone(),
                    text: String::new(),
                });
            }
            if new.len() > paired {
                let (at, leading_newline) = if old.start + paired > 0 {
                    let previous = &lines[old.start + paired - 1];
                    (previous.end, !self.text[..previous.end].ends_with('\n'))
                } else {
                    (lines[0].start, false)
                };
                let mut text = String::new();
                for value in &new_items[new.start + paired..new.end] {
                    if leading_newline || !text.is_empty() {
                        text.push_str(self.newline);
                    }
                    text.push_str(&" ".repeat(dash_column));
                    text.push_str("- ");
                    text.push_str(&self.item_text(value, dash_column + 2, flow_items));
                }
                if !leading_newline {
                    text.push_str(self.newline);
                }
                edits.push(Edit {
                    range: at..at,
                    text,
                });
            }
        }
        Ok(())
    }

    /// The whole lines a block sequence item fills, from the start of its dash's line through
    /// its line break, when it shares them with nothing but blanks and a comment.
    fn item_lines(&self, item: &Node) -> Option<Range<usize>> {
        let lead = item.lead.filter(|lead| lead.kind == LeadKind::Dash)?;
        let line_start = self.text[..lead.at].rfind('\n').map_or(0, |i| i + 1);
        if !self.text[line_start..lead.at].chars().all(|c| c == ' ') {
            return None;
        }
        let end = item.reach();
        let rest_end = self.text[end..]
            .find('\n')
            .map_or(self.text.len(), |i| end + i);
        let rest = self.text[end..rest_end].trim();
        if !(rest.is_empty() || rest.starts_with('#')) {
            return None;
        }
        Some(line_start..(rest_end + 1).min(self.text.len()))
    }

    /// Writes `new` in place of the whole node, in a style that suits where it stands.
    fn replace(&self, node: &Node, new: &Value, edits: &mut Vec<Edit>) -> Result<(), EditError> {
        let block_node = matches!(
            node.kind,
            Kind::Sequence { flow: false, .. } | Kind::Mapping { flow: false, .. }
        );
        let on_own_line = match node.lead {
            Some(lead) => self
                .text
                .get(lead.after..node.start)
                .is_some_and(|between| between.contains('\n')),
            None => false,
        };
        let block = !node.in_flow && is_compound(new) && {
            let flow_node = matches!(
                &node.kind,
                Kind::Sequence { flow: true, items } if !items.is_empty()
            ) || matches!(
                &node.kind,
                Kind::Mapping { flow: true, entries } if !entries.is_empty()
            );
            if block_node {
                true
            } else if flow_node {
                false
            } else {
                // A scalar or an empty `[]`/`{}` gives no hint: flat and short stays on the line.
                let column = node.lead.map_or(0, |lead| lead.column);
                !(is_flat(new) && column + yaml::flow(new).len() + 8 <= WIDTH)
            }
        };
        let Some(lead) = node.lead else {
            // The document itself.
            let text = if block {
                self.block(new, 0, false)
            } else {
                yaml::flow(new)
            };
            edits.push(Edit {
                range: node.start..node.end,
                text,
            });
            return Ok(());
        };
        if node.start == node.end && !on_own_line {
            // An empty value (`key:`): write after the key.
            let text = if block {
                format!(
                    "{}{}",
                    self.newline,
                    self.block(new, self.child_indent(lead, new), true)
                )
            } else {
                format!(" {}", yaml::flow(new))
            };
            edits.push(Edit {
                range: lead.after..lead.after,
                text,
            });
            return Ok(());
        }
        let edit = match (block, on_own_line, lead.kind) {
            // Inline where it was inline.
            (false, false, _) => Edit {
                range: node.start..node.end,
                text: yaml::flow(new),
            },
            // A block node becomes inline: it moves up onto its key's line.
            (false, true, _) => Edit {
                range: lead.after..node.end,
                text: format!(" {}", yaml::flow(new)),
            },
            // A list as a sequence item stays on the dash's line, in flow style.
            (true, false, LeadKind::Dash) if !new.is_object() => Edit {
                range: node.start..node.end,
                text: yaml::flow(new),
            },
            // Block where it was block, or a mapping as a sequence item, which can start on
            // the dash's line: the first line starts where the node did.
            (true, true, _) | (true, false, LeadKind::Dash) => Edit {
                range: node.start..node.end,
                text: self.block(new, self.column_of(node.start), false),
            },
            // An inline value under a key becomes a block below it.
            (true, false, LeadKind::Key) => Edit {
                range: lead.after..node.end,
                text: format!(
                    "{}{}",
                    self.newline,
                    self.block(new, self.child_indent(lead, new), true)
                ),
            },
        };
        edits.push(edit);
        Ok(())
    }

    /// The indentation of a block value hung under `lead`.
    fn child_indent(&self, lead: Lead, new: &Value) -> usize {
        match lead.kind {
            LeadKind::Key if new.is_array() => lead.column + self.sequence_indent,
            LeadKind::Key => lead.column + self.mapping_indent,
            LeadKind::Dash => lead.column + 2,
        }
    }

    /// The column (0-based, in characters) of a byte.
    fn column_of(&self, offset: usize) -> usize {
        let line_start = self.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        self.text[line_start..offset].chars().count()
    }

    /// `value` in block style at `indent`; the first line is indented only if `indent_first`.
    fn block(&self, value: &Value, indent: usize, indent_first: bool) -> String {
        let mut lines = Vec::new();
        self.block_lines(value, indent, false, &mut lines);
        let mut out = String::new();
        for (index, line) in lines.iter().enumerate() {
            if index > 0 {
                out.push_str(self.newline);
            }
            if index == 0 && !indent_first {
                out.push_str(line.trim_start_matches(' '));
            } else {
                out.push_str(line);
            }
        }
        out
    }

    fn block_lines(&self, value: &Value, indent: usize, flow_items: bool, lines: &mut Vec<String>) {
        let pad = " ".repeat(indent);
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (key, item) in map {
                    let key = yaml::flow(&Value::String(key.clone()));
                    let inline = !is_compound(item)
                        || (is_flat(item)
                            && item.is_array()
                            && indent + key.len() + 2 + yaml::flow(item).len() <= WIDTH);
                    if inline {
                        lines.push(format!("{pad}{key}: {}", yaml::flow(item)));
                    } else {
                        lines.push(format!("{pad}{key}:"));
                        let deeper = if item.is_array() {
                            indent + self.sequence_indent
                        } else {
                            indent + self.mapping_indent
                        };
                        self.block_lines(item, deeper, false, lines);
                    }
                }
            }
            Value::Array(items) if !items.is_empty() => {
                for item in items {
                    lines.push(format!(
                        "{pad}- {}",
                        self.item_text(item, indent + 2, flow_items)
                    ));
                }
            }
            scalar => lines.push(format!("{pad}{}", yaml::flow(scalar))),
        }
    }

    /// A sequence item's text after its `- `, continuation lines indented to `indent`.
    fn item_text(&self, value: &Value, indent: usize, flow_items: bool) -> String {
        match value {
            Value::Object(map) if !map.is_empty() && !flow_items => {
                self.block(value, indent, false)
            }
            other => yaml::flow(other),
        }
    }

    /// The indentation habits of the document: (block sequence under a key, block mapping
    /// under a key), taken from the first of each.
    fn indentation(&self) -> (Option<usize>, Option<usize>) {
        fn walk(document: &Document, node: &Node, found: &mut (Option<usize>, Option<usize>)) {
            match &node.kind {
                Kind::Mapping { entries, .. } => {
                    for (_, value) in entries {
                        if let Some(lead) = value.lead.filter(|l| l.kind == LeadKind::Key) {
                            let column = document.column_of(value.start);
                            match &value.kind {
                                Kind::Sequence { flow: false, .. } if found.0.is_none() => {
                                    found.0 = Some(column.saturating_sub(lead.column));
                                }
                                Kind::Mapping { flow: false, .. } if found.1.is_none() => {
                                    found.1 = Some(column.saturating_sub(lead.column));
                                }
                                _ => {}
                            }
                        }
                        walk(document, value, found);
                    }
                }
                Kind::Sequence { items, .. } => {
                    for item in items {
                        walk(document, item, found);
                    }
                }
                _ => {}
            }
        }
        let mut found = (None, None);
        walk(self, &self.root, &mut found);
        found
    }
}

/// Applies non-overlapping edits to `text`.
pub fn apply(text: &str, mut edits: Vec<Edit>) -> Result<String, String> {
    edits.sort_by_key(|edit| (edit.range.start, edit.range.end));
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for edit in &edits {
        if edit.range.start < copied {
            return Err(format!(
                "two rewrites overlap at byte {}; rewrite one of them by hand",
                edit.range.start
            ));
        }
        out.push_str(&text[copied..edit.range.start]);
        out.push_str(&edit.text);
        copied = edit.range.end;
    }
    out.push_str(&text[copied..]);
    Ok(out)
}

/// Builds nodes from the parser's events, one document.
struct DocumentBuilder<'t> {
    text: &'t str,
    events: Vec<(Event<'t>, Span)>,
    next: usize,
}

impl<'t> DocumentBuilder<'t> {
    fn take(&mut self) -> Result<(Event<'t>, Span), EditError> {
        let Some((event, span)) = self.events.get(self.next).cloned() else {
            return Err(EditError::new(Position::START, "the document ends early"));
        };
        self.next += 1;
        Ok((event, span))
    }

    fn node(&mut self, lead: Option<Lead>, in_flow: bool) -> Result<Node, EditError> {
        let (event, span) = self.take()?;
        let position = Position::new(span.start.line(), span.start.col() + 1);
        let range = byte_range(&span);
        match event {
            Event::Scalar(value, style, anchor, tag) => {
                let (start, end) = match style {
                    ScalarStyle::Literal | ScalarStyle::Folded => (
                        self.block_indicator(range.start).unwrap_or(range.start),
                        range.start + self.text[range.clone()].trim_end().len(),
                    ),
                    _ => (range.start, range.end),
                };
                Ok(Node {
                    position,
                    start,
                    end,
                    lead,
                    in_flow,
                    marked: anchor != 0 || tag.is_some(),
                    kind: Kind::Scalar {
                        value: value.into_owned(),
                        style,
                    },
                })
            }
            Event::Alias(_) => Ok(Node {
                position,
                start: range.start,
                end: range.end,
                lead,
                in_flow,
                marked: true,
                kind: Kind::Alias,
            }),
            Event::SequenceStart(style, anchor, tag) => {
                let flow = style == StructureStyle::Flow;
                let mut items = Vec::new();
                let end = loop {
                    if let Some((Event::SequenceEnd, end_span)) = self.events.get(self.next) {
                        let end = byte_range(end_span).end;
                        self.next += 1;
                        break end;
                    }
                    let dash = if flow {
                        None
                    } else {
                        self.dash_before(self.peek_start())
                    };
                    items.push(self.node(dash, in_flow || flow)?);
                };
                let (start, end) = if flow {
                    (range.start, end)
                } else {
                    let start = items
                        .first()
                        .and_then(|item| item.lead.map(|lead| lead.at))
                        .unwrap_or(range.start);
                    (start, items.last().map_or(range.start, |item| item.reach()))
                };
                Ok(Node {
                    position,
                    start,
                    end,
                    lead,
                    in_flow,
                    marked: anchor != 0 || tag.is_some(),
                    kind: Kind::Sequence { flow, items },
                })
            }
            Event::MappingStart(style, anchor, tag) => {
                let flow = style == StructureStyle::Flow;
                let mut entries = Vec::new();
                let end = loop {
                    if let Some((Event::MappingEnd, end_span)) = self.events.get(self.next) {
                        let end = byte_range(end_span).end;
                        self.next += 1;
                        break end;
                    }
                    let key = self.node(None, in_flow || flow)?;
                    let value_lead = if flow { None } else { self.colon_after(&key) };
                    let value = self.node(value_lead, in_flow || flow)?;
                    entries.push((key, value));
                };
                let (position, start, end) = if flow {
                    (position, range.start, end)
                } else {
                    match (entries.first(), entries.last()) {
                        (Some((first, _)), Some((_, last))) => {
                            (first.position, first.start, last.reach())
                        }
                        _ => (position, range.start, range.start),
                    }
                };
                Ok(Node {
                    position,
                    start,
                    end,
                    lead,
                    in_flow,
                    marked: anchor != 0 || tag.is_some(),
                    kind: Kind::Mapping { flow, entries },
                })
            }
            _ => Err(EditError::new(position, "unexpected YAML structure")),
        }
    }

    fn peek_start(&self) -> usize {
        self.events
            .get(self.next)
            .map_or(self.text.len(), |(_, span)| byte_range(span).start)
    }

    /// The `-` of a block sequence item whose content starts at `start`: the first non-blank
    /// byte before it.
    fn dash_before(&self, start: usize) -> Option<Lead> {
        let before = self.text[..start].trim_end_matches([' ', '\t', '\r', '\n']);
        if !before.ends_with('-') {
            return None;
        }
        let at = before.len() - 1;
        let line_start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        Some(Lead {
            after: at + 1,
            at,
            column: self.text[line_start..at].chars().count(),
            kind: LeadKind::Dash,
        })
    }

    /// The `:` after a block mapping key.
    fn colon_after(&self, key: &Node) -> Option<Lead> {
        let rest = &self.text[key.end..];
        let skipped = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if !rest[skipped..].starts_with(':') {
            return None;
        }
        let line_start = self.text[..key.start].rfind('\n').map_or(0, |i| i + 1);
        Some(Lead {
            after: key.end + skipped + 1,
            at: key.start,
            column: self.text[line_start..key.start].chars().count(),
            kind: LeadKind::Key,
        })
    }

    /// A block scalar's `|` or `>`: on the last non-blank line before its content.
    fn block_indicator(&self, content_start: usize) -> Option<usize> {
        let before = self.text[..content_start].trim_end_matches([' ', '\t', '\r', '\n']);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let header = &before[line_start..];
        let header = header.find(" #").map_or(header, |cut| &header[..cut]);
        header.rfind(['|', '>']).map(|index| line_start + index)
    }
}

impl Located for Node {
    fn position(&self) -> Position {
        self.position
    }

    /// A mapping key's text: keys are names, never typed.
    fn key_name(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    fn entries(&self) -> Option<&[(Node, Node)]> {
        match &self.kind {
            Kind::Mapping { entries, .. } => Some(entries),
            _ => None,
        }
    }

    fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Sequence { items, .. } => Some(items),
            _ => None,
        }
    }
}

fn byte_range(span: &Span) -> Range<usize> {
    span.byte_range()
        .unwrap_or(span.start.index()..span.end.index())
}

/// A scalar's value as serde-saphyr reads it: plain scalars are typed, quoted ones are strings.
fn scalar_value(value: &str, style: ScalarStyle) -> Value {
    match style {
        ScalarStyle::Plain if value == "~" || value.is_empty() => Value::Null,
        ScalarStyle::Plain => serde_saphyr::from_str::<Value>(value)
            .ok()
            .filter(|v| !is_compound(v))
            .unwrap_or_else(|| Value::String(value.to_owned())),
        _ => Value::String(value.to_owned()),
    }
}

/// A scalar in the quoting style the old one used, when that style can hold it.
fn scalar_in_style(value: &Value, style: ScalarStyle) -> String {
    let Value::String(text) = value else {
        return yaml::flow(value);
    };
    match style {
        ScalarStyle::SingleQuoted if !text.chars().any(char::is_control) => {
            format!("'{}'", text.replace('\'', "''"))
        }
        ScalarStyle::DoubleQuoted | ScalarStyle::Literal | ScalarStyle::Folded => {
            Value::String(text.clone()).to_string()
        }
        _ => yaml::flow(value),
    }
}

fn is_compound(value: &Value) -> bool {
    match value {
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
        _ => false,
    }
}

/// A list or mapping of scalars only.
fn is_flat(value: &Value) -> bool {
    match value {
        Value::Array(items) => !items.iter().any(is_compound),
        Value::Object(map) => !map.values().any(is_compound),
        _ => true,
    }
}

/// A value as text with mapping keys sorted, so equal values compare equal whatever their order.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<_> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// The runs of changes in a diff, as (old range, new range), adjacent deletes and inserts joined.
fn changed_blocks(ops: &[DiffOp]) -> Vec<(Range<usize>, Range<usize>)> {
    let mut blocks: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    let mut open: Option<(Range<usize>, Range<usize>)> = None;
    for op in ops {
        if let DiffOp::Equal { .. } = op {
            blocks.extend(open.take());
            continue;
        }
        let (old, new) = (op.old_range(), op.new_range());
        open = Some(match open.take() {
            Some((o, n)) => (o.start..old.end.max(o.end), n.start..new.end.max(n.end)),
            None => (old, new),
        });
    }
    blocks.extend(open);
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Rewrites the node at `line:column` (through `path`) to `new` and returns the text.
    fn rewrite(text: &str, line: usize, column: usize, path: &[&str], new: Value) -> String {
        let document = Document::parse(text).unwrap();
        let path: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
        let edits = document
            .rewrite(Position::new(line, column), &path, &new)
            .unwrap();
        let out = apply(text, edits).unwrap();
        // Whatever was rewritten must read back as the new value.
        let reread = Document::parse(&out).unwrap();
        let node = reread.find(Position::new(line, column), &path);
        if let Ok(node) = node {
            assert!(reread.matches(node, &new), "{out}");
        }
        out
    }

    #[test]
    fn an_equal_value_changes_nothing() {
        let text = "a: [1, 2] # c\n";
        assert_eq!(rewrite(text, 1, 1, &["a"], json!([1, 2])), text);
    }

    #[test]
    fn a_scalar_keeps_its_quoting() {
        let text = "a: 'x' # c\nb: \"y\"\nc: z\n";
        assert_eq!(
            rewrite(text, 1, 1, &["a"], json!("it's")),
            "a: 'it''s' # c\nb: \"y\"\nc: z\n"
        );
        assert_eq!(
            rewrite(text, 1, 1, &["b"], json!("q: r")),
            "a: 'x' # c\nb: \"q: r\"\nc: z\n"
        );
        assert_eq!(
            rewrite(text, 1, 1, &["c"], json!("3")),
            "a: 'x' # c\nb: \"y\"\nc: \"3\"\n"
        );
        assert_eq!(
            rewrite(text, 1, 1, &["c"], json!(3)),
            "a: 'x' # c\nb: \"y\"\nc: 3\n"
        );
    }

    #[test]
    fn items_of_a_flow_list_are_rewritten_one_by_one() {
        let text = "p: [b,  a]  # two spaces\n";
        assert_eq!(
            rewrite(text, 1, 1, &["p"], json!(["a", "a"])),
            "p: [a,  a]  # two spaces\n"
        );
        assert_eq!(
            rewrite(text, 1, 1, &["p"], json!(["c"])),
            "p: [c]  # two spaces\n"
        );
    }

    #[test]
    fn fields_of_flow_entries_in_a_block_list_are_rewritten_in_place() {
        let text = "dlq:\n  - {id: a, failed_at: 0}   # note\n";
        assert_eq!(
            rewrite(text, 1, 1, &["dlq"], json!([{"failed_at": 7, "id": "a"}])),
            "dlq:\n  - {id: a, failed_at: 7}   # note\n"
        );
    }

    #[test]
    fn a_block_list_gains_and_loses_whole_item_lines() {
        let text = "t:\n  # first\n  - a\n  - b # keep\n  - c\nn: 1\n";
        assert_eq!(
            rewrite(text, 1, 1, &["t"], json!(["a", "x", "b", "c", "d"])),
            "t:\n  # first\n  - a\n  - x\n  - b # keep\n  - c\n  - d\nn: 1\n"
        );
        assert_eq!(
            rewrite(text, 1, 1, &["t"], json!(["a", "c"])),
            "t:\n  # first\n  - a\n  - c\nn: 1\n"
        );
        assert_eq!(
            rewrite(text, 1, 1, &["t"], json!(["z", "b"])),
            "t:\n  # first\n  - z\n  - b # keep\nn: 1\n"
        );
    }

    #[test]
    fn a_block_list_at_the_end_of_a_file_without_a_newline_gains_items() {
        let text = "t:\n- a";
        assert_eq!(
            rewrite(text, 1, 1, &["t"], json!(["a", "b"])),
            "t:\n- a\n- b"
        );
    }

    #[test]
    fn an_empty_list_becomes_a_block_of_entries_in_the_documents_indentation() {
        let text = "x:\n  - 1\nexpect:\n  dlq: []\n  pending: []\n";
        assert_eq!(
            rewrite(
                text,
                1,
                1,
                &["expect", "dlq"],
                json!([{"id": "p", "error": null, "attempts": 2}])
            ),
            "x:\n  - 1\nexpect:\n  dlq:\n    - id: p\n      error: null\n      attempts: 2\n  pending: []\n"
        );
        let unindented = "x:\n- 1\nd: []\n";
        assert_eq!(
            rewrite(unindented, 1, 1, &["d"], json!([{"id": "p", "n": 1}])),
            "x:\n- 1\nd:\n- id: p\n  n: 1\n"
        );
    }

    #[test]
    fn a_short_flat_list_stays_on_its_line_and_a_long_one_becomes_a_block() {
        let text = "e:\n  pending: []\n  trace: []\n";
        assert_eq!(
            rewrite(text, 2, 3, &["pending"], json!(["b", "a"])),
            "e:\n  pending: [b, a]\n  trace: []\n"
        );
        let long: Vec<String> = (0..12)
            .map(|i| format!("queue.receive() -> m{i}"))
            .collect();
        let out = rewrite(text, 2, 3, &["trace"], json!(long));
        assert!(
            out.starts_with("e:\n  pending: []\n  trace:\n    - queue.receive() -> m0\n    - queue.receive() -> m1\n"),
            "{out}"
        );
    }

    #[test]
    fn a_block_list_emptied_moves_up_as_brackets() {
        let text = "a:\n  b:\n    - 1\n    - 2\n  c: 3\n";
        assert_eq!(
            rewrite(text, 2, 3, &["b"], json!([])),
            "a:\n  b: []\n  c: 3\n"
        );
    }

    #[test]
    fn a_block_entry_keeps_its_block_style_when_its_keys_change() {
        let text = "dlq:\n  - id: p\n    n: 1\nz: 0\n";
        assert_eq!(
            rewrite(text, 1, 1, &["dlq"], json!([{"id": "q", "m": 2}])),
            "dlq:\n  - id: q\n    m: 2\nz: 0\n"
        );
    }

    #[test]
    fn a_literal_block_scalar_becomes_a_quoted_string() {
        let text = "a: |\n  one\n  two\nb: 1\n";
        assert_eq!(rewrite(text, 1, 1, &["a"], json!("x")), "a: \"x\"\nb: 1\n");
    }

    #[test]
    fn an_empty_value_gets_its_value_after_the_key() {
        let text = "a:\nb: 1\n";
        assert_eq!(rewrite(text, 1, 1, &["a"], json!(5)), "a: 5\nb: 1\n");
    }

    #[test]
    fn crlf_files_stay_crlf() {
        let text = "t:\r\n  - a\r\nn: 1\r\n";
        assert_eq!(
            rewrite(text, 1, 1, &["t"], json!(["a", "b"])),
            "t:\r\n  - a\r\n  - b\r\nn: 1\r\n"
        );
    }

    #[test]
    fn anchored_values_are_not_rewritten() {
        let text = "a: &x 1\nb: *x\n";
        let document = Document::parse(text).unwrap();
        let error = document
            .rewrite(Position::new(1, 1), &["a".to_owned()], &json!(2))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "1:7: this value has an anchor, an alias or a tag; rewrite it by hand"
        );
    }

    #[test]
    fn a_missing_key_is_reported_where_the_mapping_starts() {
        let document = Document::parse("# c\na: 1\n").unwrap();
        let error = document
            .rewrite(Position::new(2, 1), &["b".to_owned()], &json!(2))
            .unwrap_err();
        assert_eq!(error.to_string(), "2:1: no key `b` in this mapping");
    }

    #[test]
    fn nodes_are_found_where_serde_saphyr_says_they_start() {
        let text = "# c\nsteps:\n  - process: ok\n  - expect:\n      pending: [a]\nd:\n- x\n";
        let document = Document::parse(text).unwrap();
        let step = document.node_at(Position::new(4, 5)).unwrap();
        assert!(matches!(step.kind, Kind::Mapping { flow: false, .. }));
        assert_eq!(document.key_position("d"), Some(Position::new(6, 1)));
        #[derive(serde::Deserialize)]
        struct Doc {
            steps: Vec<yaml::Spanned<Value>>,
            d: yaml::Spanned<Vec<String>>,
        }
        let doc: Doc = serde_saphyr::from_str(text).unwrap();
        for spanned in doc.steps {
            assert!(document.node_at(yaml::at(&spanned)).is_some());
        }
        let list = document.node_at(yaml::at(&doc.d)).unwrap();
        assert!(matches!(list.kind, Kind::Sequence { flow: false, .. }));
    }

    #[test]
    fn overlapping_edits_are_refused() {
        let edits = vec![
            Edit {
                range: 0..3,
                text: "x".into(),
            },
            Edit {
                range: 2..4,
                text: "y".into(),
            },
        ];
        assert!(apply("abcdef", edits).is_err());
    }
}
