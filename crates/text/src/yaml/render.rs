//! Values written as YAML: a block for a person, a flow on one line when it fits, scalars
//! quoted only where they must be.

use super::*;

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

pub(super) fn render_block(value: &Value, indent: usize, out: &mut String) {
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

pub(super) fn render_nested(item: &Value, indent: usize, out: &mut String) {
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
pub(super) const FLOW_WIDTH: usize = 60;

pub(super) fn is_compound(value: &Value) -> bool {
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

pub(super) fn scalar(value: &Value) -> String {
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
pub(super) fn is_plain_safe(s: &str) -> bool {
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
