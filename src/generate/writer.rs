//! The one writer of generated spec text: a case's typed value (any `Serialize`) written out as
//! YAML, block mappings at the top and flow style below, as the bundled specs are written.
//!
//! The layout follows the value's shape: the top is a block mapping; under a top key a
//! non-empty mapping is a block too, and so is a list of mappings or lists or one too long for
//! its line; everything else is written on one line in flow style. A mapping of one key is
//! written as a pair (`process: ok`) where YAML allows one, as an item of a list. Where the
//! shape does not say, the value does: `Block` keeps a mapping or list a block wherever it is
//! (a `steps` list, an `expect` that blessing fills in line by line), `Folded` makes text a
//! folded scalar in lines of a readable width. Scalars are written by `text::yaml`, quoted
//! exactly where a plain one would read back as something else.

use std::fmt::Write as _;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::text::yaml;

/// The widest line a flow list under a top key may take before it is written as a block.
const WIDTH: usize = 96;

/// The widest line of a folded scalar's text, after its indentation.
const FOLDED_WIDTH: usize = WIDTH - 2;

/// The keys the markers serialize under: no spec key starts with a NUL, so none is mistaken
/// for one.
const BLOCK: &str = "\0block";
const FOLDED: &str = "\0folded";

/// A mapping or list written as a block wherever it stands, one entry a line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Block<T>(pub(crate) T);

impl<T: Serialize> Serialize for Block<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(BLOCK, &self.0)?;
        map.end()
    }
}

/// Text written as a folded scalar (`>`), its words in lines of at most `FOLDED_WIDTH`
/// characters; control characters are written as spaces.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Folded<'a>(pub(crate) &'a str);

impl Serialize for Folded<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(FOLDED, self.0)?;
        map.end()
    }
}

/// `value` as spec text. A value that is not a mapping is written on one line.
pub(crate) fn write(value: &impl Serialize) -> String {
    // Serializing to a JSON value fails only on a map with keys that are not strings, which no
    // spec has.
    write_value(&serde_json::to_value(value).unwrap_or_default())
}

/// `value`, already serialized, as spec text: `write` without a copy of the value.
pub(crate) fn write_value(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if marker(value).is_none() => {
            for (key, item) in map {
                let head = key_text(key);
                if let Some(text) = marked(item, FOLDED).and_then(Value::as_str) {
                    folded(&head, text, &mut out);
                } else if let Some(inner) = marked(item, BLOCK).or(top_block(&head, item)) {
                    block(&head, inner, 0, &mut out);
                } else {
                    let _ = writeln!(out, "{head}: {}", flow(item));
                }
            }
        }
        other => {
            let _ = writeln!(out, "{}", flow(other));
        }
    }
    out
}

/// `item` when, under the top key `head`, it is written as a block: a non-empty mapping, or a
/// list of mappings or lists or one too long for its line.
fn top_block<'v>(head: &str, item: &'v Value) -> Option<&'v Value> {
    let block = match item {
        Value::Object(map) => !map.is_empty(),
        Value::Array(items) => {
            items.iter().any(|item| item.is_object() || item.is_array())
                || head.len() + 2 + flow(item).len() > WIDTH
        }
        _ => false,
    };
    block.then_some(item)
}

/// `value` as a block under `head` (its key, already indented by `indent`): a mapping's
/// entries or a list's items, one a line, indented by two more.
fn block(head: &str, value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent + 2);
    match value {
        Value::Object(map) if !map.is_empty() && marker(value).is_none() => {
            let _ = writeln!(out, "{head}:");
            for (key, item) in map {
                below(&format!("{pad}{}", key_text(key)), item, indent + 2, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let _ = writeln!(out, "{head}:");
            for item in items {
                match pair(item) {
                    Some((key, inner)) => {
                        below(&format!("{pad}- {}", key_text(key)), inner, indent + 4, out);
                    }
                    None => {
                        let _ = writeln!(out, "{pad}- {}", flow(item));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{head}: {}", flow(other));
        }
    }
}

/// `value` under `head` (a key, already indented by `indent`) inside a block: on its line in
/// flow style, unless it is a `Block`.
fn below(head: &str, value: &Value, indent: usize, out: &mut String) {
    match marked(value, BLOCK) {
        Some(inner) => block(head, inner, indent, out),
        None => {
            let _ = writeln!(out, "{head}: {}", flow(value));
        }
    }
}

/// `text` as a folded scalar under `head`, or nothing when it has no words.
fn folded(head: &str, text: &str, out: &mut String) {
    let printable: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let lines = wrap(&printable, FOLDED_WIDTH);
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "{head}: >");
    for line in lines {
        let _ = writeln!(out, "  {line}");
    }
}

/// The words of `text` in lines of at most `width` characters (a longer word has a line of
/// its own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `value` on one line: a list's items of one key as pairs (`[ok, transient: e]`), mappings
/// in braces, scalars as `text::yaml` writes them. A marker here is written as what it holds.
fn flow(value: &Value) -> String {
    let mut out = String::new();
    flow_into(value, &mut out);
    out
}

/// `flow(value)`, pushed onto `out`.
fn flow_into(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                match pair(item) {
                    Some((key, inner)) => {
                        out.push_str(&key_text(key));
                        out.push_str(": ");
                        flow_into(inner, out);
                    }
                    None => flow_into(item, out),
                }
            }
            out.push(']');
        }
        Value::Object(map) => match marker(value) {
            Some((_, inner)) => flow_into(inner, out),
            None => {
                out.push('{');
                for (index, (key, item)) in map.iter().enumerate() {
                    if index > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&key_text(key));
                    out.push_str(": ");
                    flow_into(item, out);
                }
                out.push('}');
            }
        },
        scalar => out.push_str(&yaml::flow(scalar)),
    }
}

/// A key as YAML writes it: plain, or quoted where it must be.
fn key_text(key: &str) -> String {
    yaml::flow(&Value::String(key.to_owned()))
}

/// The key and value of a mapping of one key, not a marker: what a list writes as a pair.
fn pair(value: &Value) -> Option<(&str, &Value)> {
    let map = single(value)?;
    let (key, inner) = map.iter().next()?;
    (marker(value).is_none()).then_some((key.as_str(), inner))
}

/// The mapping `value` is when it has one key.
fn single(value: &Value) -> Option<&Map<String, Value>> {
    value.as_object().filter(|map| map.len() == 1)
}

/// The marker `value` is, and what it holds.
fn marker(value: &Value) -> Option<(&str, &Value)> {
    let (key, inner) = single(value)?.iter().next()?;
    [BLOCK, FOLDED]
        .contains(&key.as_str())
        .then_some((key.as_str(), inner))
}

/// What `value` holds when it is the marker `kind`.
fn marked<'v>(value: &'v Value, kind: &str) -> Option<&'v Value> {
    marker(value)
        .filter(|(key, _)| *key == kind)
        .map(|(_, inner)| inner)
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde_json::json;

    use super::*;
    use crate::text::source::SourceFile;

    #[derive(Serialize)]
    #[serde(rename_all = "lowercase")]
    enum Step {
        Recover,
        Process(&'static str),
        Replay { ids: Vec<&'static str> },
        Expect(Block<Map<String, Value>>),
    }

    #[derive(Serialize)]
    struct Spec {
        name: &'static str,
        description: Folded<'static>,
        rules: Vec<&'static str>,
        handler: Map<String, Value>,
        messages: Vec<Value>,
        steps: Block<Vec<Step>>,
    }

    fn spec(rules: Vec<&'static str>) -> Spec {
        let expect = json!({"dlq": [], "handler_calls": {}});
        Spec {
            name: "a: tricky name",
            description: Folded("one two\nthree"),
            rules,
            handler: json!({"a": ["ok", {"transient": "db: down"}]})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            messages: vec![json!({"id": "a", "body": "yes"})],
            steps: Block(vec![
                Step::Recover,
                Step::Process("ok"),
                Step::Replay { ids: vec!["a"] },
                Step::Expect(Block(expect.as_object().cloned().unwrap_or_default())),
            ]),
        }
    }

    #[test]
    fn a_value_is_written_in_blocks_at_the_top_and_flow_below() {
        assert_eq!(
            write(&spec(vec!["r/one", "r/two"])),
            "name: \"a: tricky name\"\n\
             description: >\n  one two three\n\
             rules: [r/one, r/two]\n\
             handler:\n  a: [ok, transient: \"db: down\"]\n\
             messages:\n  - {id: a, body: \"yes\"}\n\
             steps:\n  - recover\n  - process: ok\n  - replay: {ids: [a]}\n  - expect:\n      dlq: []\n      handler_calls: {}\n"
        );
    }

    #[test]
    fn a_list_too_long_for_its_line_is_a_block_and_long_text_folds() {
        let long = "word ".repeat(40);
        let rule = "some-contract/a-rule-with-a-long-name";
        let text = write(&json!({
            "description": Folded(&long),
            "rules": [rule, rule, rule],
            "empty": Folded(" \n "),
            "steps": Block(Vec::<Value>::new()),
        }));
        assert!(
            text.contains(&format!("rules:\n  - {rule}\n  - {rule}\n")),
            "{text}"
        );
        assert!(!text.contains("empty"), "{text}");
        assert!(text.ends_with("steps: []\n"), "{text}");
        assert!(
            text.lines().all(|line| line.chars().count() <= WIDTH),
            "{text}"
        );
    }

    #[test]
    fn what_it_writes_reads_back_as_the_value_without_its_markers() {
        let text = write(&spec(vec!["r/one"]));
        let read: Value =
            crate::text::yaml::parse(&SourceFile::from_text("t.yaml", text)).expect("it reads");
        assert_eq!(read["name"], "a: tricky name");
        assert_eq!(
            read["description"].as_str().map(str::trim_end),
            Some("one two three")
        );
        assert_eq!(read["handler"]["a"][1], json!({"transient": "db: down"}));
        assert_eq!(read["messages"][0]["body"], "yes");
        assert_eq!(
            read["steps"],
            json!(["recover", {"process": "ok"}, {"replay": {"ids": ["a"]}}, {"expect": {"dlq": [], "handler_calls": {}}}])
        );
    }
}
