//! Finding a value in a positioned YAML tree, whichever tree holds it: the node that starts at
//! a position, the node under some keys of it, and where two values first differ in it.
//!
//! Two trees share this: `edit`'s, which keeps every byte range for rewriting, and the
//! lighter tree of the fast load, which pinpoints a mismatch in a big spec without the memory
//! of the other.

use serde_json::Value;

use crate::source::Position;

/// A YAML node as the searches below see it.
pub trait Located: Sized {
    /// Where the node's content starts, as `yaml::Spanned` reports it.
    fn position(&self) -> Position;
    /// The text of a scalar, as a mapping key is compared.
    fn key_name(&self) -> Option<&str>;
    /// A mapping's keys and values, in order.
    fn entries(&self) -> Option<&[(Self, Self)]>;
    /// A list's items.
    fn items(&self) -> Option<&[Self]>;
}

/// The outermost node (never a mapping key) whose content starts at `position`.
pub(crate) fn node_at<N: Located>(node: &N, position: Position) -> Option<&N> {
    if node.position() == position {
        return Some(node);
    }
    if let Some(items) = node.items() {
        return items.iter().find_map(|item| node_at(item, position));
    }
    node.entries()?
        .iter()
        .find_map(|(_, value)| node_at(value, position))
}

/// The node reached from the node at `at` through the mapping keys `path`; or where the search
/// stopped and why.
pub(crate) fn find<'n, N: Located>(
    root: &'n N,
    at: Position,
    path: &[String],
) -> Result<&'n N, (Position, String)> {
    let mut node = node_at(root, at).ok_or_else(|| (at, "no value starts here".to_owned()))?;
    for key in path {
        let entries = node.entries().ok_or_else(|| {
            (
                node.position(),
                format!("expected a mapping with the key `{key}`"),
            )
        })?;
        node = entries
            .iter()
            .find(|(k, _)| k.key_name() == Some(key))
            .map(|(_, value)| value)
            .ok_or_else(|| (node.position(), format!("no key `{key}` in this mapping")))?;
    }
    Ok(node)
}

/// Where the entry `last` of the mapping reached from the node at `at` through `parents` is
/// written: its key (`key`), else its value.
pub(crate) fn entry<N: Located>(
    root: &N,
    at: Position,
    parents: &[String],
    last: &str,
    key: bool,
) -> Option<Position> {
    let (name, value) = find(root, at, parents)
        .ok()?
        .entries()?
        .iter()
        .find(|(name, _)| name.key_name() == Some(last))?;
    Some(if key { name } else { value }.position())
}

/// The innermost node under `node` where `expected` and `actual` first differ, following
/// mapping keys and list indexes while both sides have the same shape there.
pub fn first_difference<'n, N: Located>(
    mut node: &'n N,
    mut expected: &Value,
    mut actual: &Value,
) -> &'n N {
    loop {
        let next = match (expected, actual) {
            (Value::Object(want), Value::Object(got)) => node.entries().and_then(|entries| {
                let (key, value) = want
                    .iter()
                    .find(|(key, value)| got.get(*key) != Some(*value))?;
                let child = entries.iter().find(|(k, _)| k.key_name() == Some(key))?;
                Some((&child.1, value, got.get(key)?))
            }),
            (Value::Array(want), Value::Array(got)) => node.items().and_then(|items| {
                if want.len() != got.len() || want.len() != items.len() {
                    return None;
                }
                (0..want.len())
                    .find(|&i| want[i] != got[i])
                    .map(|i| (&items[i], &want[i], &got[i]))
            }),
            _ => None,
        };
        match next {
            Some((child, want, got)) => (node, expected, actual) = (child, want, got),
            None => return node,
        }
    }
}
