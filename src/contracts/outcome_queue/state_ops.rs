//! Changes a spec makes to a `state()` view, to prove the view is a deep copy.
//!
//! A spec writes each op as a one-key mapping (`clear: [quarantine]`); on the wire it is
//! `{"op": "clear", "path": ["quarantine"]}` (protocol v1, method `mutate_state`). Every
//! implementation applies the ops to the view its own `state()` returned: the shims to the
//! language's objects, the built-in through `apply` here. The scenario also applies them to a
//! copy first, so a path that does not exist is reported before anything is asked.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};

use crate::model::implementation::Raised;

/// The lists a state view holds; every path starts with one of them.
pub(crate) const STATE_KEYS: [&str; 3] = ["ready", "done", "quarantine"];

/// One step of a path into a state view: a mapping key or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathSegment {
    Key(String),
    Index(usize),
}

impl fmt::Display for PathSegment {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            PathSegment::Key(key) => f.write_str(key),
            PathSegment::Index(index) => write!(f, "{index}"),
        }
    }
}

impl Serialize for PathSegment {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            PathSegment::Key(key) => serializer.serialize_str(key),
            PathSegment::Index(index) => serializer.serialize_u64(*index as u64),
        }
    }
}

impl<'de> Deserialize<'de> for PathSegment {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SegmentVisitor;

        impl Visitor<'_> for SegmentVisitor {
            type Value = PathSegment;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key or an index from 0")
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<PathSegment, E> {
                Ok(PathSegment::Key(key.to_owned()))
            }

            fn visit_u64<E: de::Error>(self, index: u64) -> Result<PathSegment, E> {
                usize::try_from(index)
                    .map(PathSegment::Index)
                    .map_err(|_| E::custom(format!("the index {index} is too large")))
            }

            fn visit_i64<E: de::Error>(self, index: i64) -> Result<PathSegment, E> {
                match u64::try_from(index) {
                    Ok(index) => self.visit_u64(index),
                    Err(_) => Err(E::custom(format!(
                        "a path index counts from 0; got {index}"
                    ))),
                }
            }
        }

        deserializer.deserialize_any(SegmentVisitor)
    }
}

/// A path segment is written as a key or as a list index.
impl schemars::JsonSchema for PathSegment {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PathSegment".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A mapping key, or a list index counting from 0.",
            "type": ["string", "integer"],
            "minimum": 0
        })
    }
}

/// A path as a spec writes it: `[quarantine, 0, payload]`.
pub(crate) fn show_path(path: &[PathSegment]) -> String {
    let parts: Vec<String> = path.iter().map(ToString::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// One change to a state view.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum StateOp {
    /// Sets a mapping key (adding it if absent) or replaces a list item.
    Set {
        path: Vec<PathSegment>,
        value: Value,
    },
    /// Removes a list item or a mapping key.
    Delete(Vec<PathSegment>),
    /// Appends to a list.
    Append {
        path: Vec<PathSegment>,
        value: Value,
    },
    /// Empties a list or a mapping.
    Clear(Vec<PathSegment>),
}

impl StateOp {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            StateOp::Set { .. } => "set",
            StateOp::Delete(_) => "delete",
            StateOp::Append { .. } => "append",
            StateOp::Clear(_) => "clear",
        }
    }

    pub(crate) fn path(&self) -> &[PathSegment] {
        match self {
            StateOp::Set { path, .. } | StateOp::Append { path, .. } => path,
            StateOp::Delete(path) | StateOp::Clear(path) => path,
        }
    }

    fn value(&self) -> Option<&Value> {
        match self {
            StateOp::Set { value, .. } | StateOp::Append { value, .. } => Some(value),
            StateOp::Delete(_) | StateOp::Clear(_) => None,
        }
    }

    /// The op as protocol v1 sends it.
    pub(crate) fn to_wire(&self) -> Value {
        let mut wire = json!({ "op": self.name(), "path": self.path() });
        if let Some(value) = self.value() {
            wire["value"] = value.clone();
        }
        wire
    }

    /// Reads an op as protocol v1 sends it.
    pub(crate) fn from_wire(wire: &Value) -> Result<StateOp, Raised> {
        let bad = |why: &str| Raised::error("TypeError", format!("bad op {wire}: {why}"));
        let op = wire
            .get("op")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no `op`"))?;
        let path: Vec<PathSegment> = wire
            .get("path")
            .cloned()
            .and_then(|p| serde_json::from_value(p).ok())
            .ok_or_else(|| bad("`path` must be a list of keys and indexes"))?;
        let value = || wire.get("value").cloned().ok_or_else(|| bad("no `value`"));
        match op {
            "set" => Ok(StateOp::Set {
                path,
                value: value()?,
            }),
            "delete" => Ok(StateOp::Delete(path)),
            "append" => Ok(StateOp::Append {
                path,
                value: value()?,
            }),
            "clear" => Ok(StateOp::Clear(path)),
            _ => Err(bad("unknown op")),
        }
    }

    /// What a spec's path must look like, checked when it is loaded: a state list, then an index.
    pub(crate) fn check_path(&self) -> Result<(), String> {
        let path = self.path();
        let Some(first) = path.first() else {
            return Err(format!(
                "the `{}` path is empty; it starts with `ready`, `done` or `quarantine`",
                self.name()
            ));
        };
        if !matches!(first, PathSegment::Key(key) if STATE_KEYS.contains(&key.as_str())) {
            return Err(format!(
                "a state path starts with `ready`, `done` or `quarantine`, not `{first}`"
            ));
        }
        match path.get(1) {
            Some(second @ PathSegment::Key(_)) => Err(format!(
                "`{first}` is a list: the next path item is an index from 0, not `{second}`"
            )),
            _ => Ok(()),
        }
    }
}

/// Applies protocol ops, in order, to a view, as a shim does to what `state()` returned.
pub(crate) fn apply_wire(view: &mut Value, ops: &Value) -> Result<(), Raised> {
    let Value::Array(ops) = ops else {
        return Err(Raised::error(
            "TypeError",
            format!("mutate_state takes a list of ops, not {ops}"),
        ));
    };
    for op in ops {
        apply(view, &StateOp::from_wire(op)?)?;
    }
    Ok(())
}

/// Applies one op to a view. Errors use the Python classes a shim would raise.
pub(crate) fn apply(view: &mut Value, op: &StateOp) -> Result<(), Raised> {
    let path = op.path();
    match op {
        StateOp::Append { value, .. } => match walk(view, path)? {
            Value::Array(items) => {
                items.push(value.clone());
                Ok(())
            }
            other => Err(not_a(path, other, "list")),
        },
        StateOp::Clear(_) => match walk(view, path)? {
            Value::Array(items) => {
                items.clear();
                Ok(())
            }
            Value::Object(map) => {
                map.clear();
                Ok(())
            }
            other => Err(not_a(path, other, "list or mapping")),
        },
        StateOp::Set { value, .. } => {
            let (last, parent_path) = split_last(op)?;
            match (walk(view, parent_path)?, last) {
                (Value::Object(map), PathSegment::Key(key)) => {
                    map.insert(key.clone(), value.clone());
                    Ok(())
                }
                (Value::Array(items), PathSegment::Index(index)) => {
                    let len = items.len();
                    let item = items.get_mut(*index).ok_or_else(|| missing(path, len))?;
                    *item = value.clone();
                    Ok(())
                }
                (other, last) => Err(wrong_container(parent_path, other, last)),
            }
        }
        StateOp::Delete(_) => {
            let (last, parent_path) = split_last(op)?;
            match (walk(view, parent_path)?, last) {
                (Value::Object(map), PathSegment::Key(key)) => {
                    map.shift_remove(key).map(drop).ok_or_else(|| no_key(path))
                }
                (Value::Array(items), PathSegment::Index(index)) if *index < items.len() => {
                    items.remove(*index);
                    Ok(())
                }
                (Value::Array(items), PathSegment::Index(_)) => Err(missing(path, items.len())),
                (other, last) => Err(wrong_container(parent_path, other, last)),
            }
        }
    }
}

fn split_last(op: &StateOp) -> Result<(&PathSegment, &[PathSegment]), Raised> {
    op.path().split_last().ok_or_else(|| {
        Raised::error(
            "TypeError",
            format!("`{}` needs a path to a value inside the state", op.name()),
        )
    })
}

/// The value at `path`, or the error a Python `view[a][b]...` would raise.
fn walk<'v>(view: &'v mut Value, path: &[PathSegment]) -> Result<&'v mut Value, Raised> {
    let mut here = view;
    for (depth, segment) in path.iter().enumerate() {
        let upto = &path[..=depth];
        here = match (here, segment) {
            (Value::Object(map), PathSegment::Key(key)) => {
                map.get_mut(key).ok_or_else(|| no_key(upto))?
            }
            (Value::Array(items), PathSegment::Index(index)) => {
                let len = items.len();
                items.get_mut(*index).ok_or_else(|| missing(upto, len))?
            }
            (other, segment) => return Err(wrong_container(&path[..depth], other, segment)),
        };
    }
    Ok(here)
}

fn shown_parent(path: &[PathSegment]) -> String {
    match path.split_last() {
        None => "the state".to_owned(),
        Some(_) => show_path(path),
    }
}

fn missing(path: &[PathSegment], len: usize) -> Raised {
    let parent = shown_parent(&path[..path.len() - 1]);
    Raised::error(
        "IndexError",
        format!(
            "{} does not exist: {parent} has {len} item{}",
            show_path(path),
            if len == 1 { "" } else { "s" }
        ),
    )
}

fn no_key(path: &[PathSegment]) -> Raised {
    let parent = shown_parent(&path[..path.len() - 1]);
    let key = &path[path.len() - 1];
    Raised::error(
        "KeyError",
        format!(
            "{} does not exist: {parent} has no key `{key}`",
            show_path(path)
        ),
    )
}

fn wrong_container(parent: &[PathSegment], found: &Value, segment: &PathSegment) -> Raised {
    let wanted = match segment {
        PathSegment::Key(_) => "mapping",
        PathSegment::Index(_) => "list",
    };
    Raised::error(
        "TypeError",
        format!(
            "{} is {}, not a {wanted}, so `{segment}` cannot be looked up in it",
            shown_parent(parent),
            kind(found)
        ),
    )
}

fn not_a(path: &[PathSegment], found: &Value, wanted: &str) -> Raised {
    Raised::error(
        "TypeError",
        format!("{} is {}, not a {wanted}", shown_parent(path), kind(found)),
    )
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> Value {
        json!({
            "ready": [{"id": "a", "payload": "p", "attempts": 1}],
            "done": ["d"],
            "quarantine": [{"id": "q", "payload": "x", "attempts": 2, "reason": "exhausted"}],
        })
    }

    fn key(k: &str) -> PathSegment {
        PathSegment::Key(k.into())
    }

    fn ops(value: Value) -> Result<Value, Raised> {
        let mut view = state();
        apply_wire(&mut view, &value).map(|()| view)
    }

    #[test]
    fn each_op_changes_the_view_like_python_would() {
        let view = ops(json!([
            {"op": "set", "path": ["ready", 0, "payload"], "value": "changed"},
            {"op": "set", "path": ["ready", 0, "extra"], "value": 1},
            {"op": "delete", "path": ["quarantine", 0, "reason"]},
            {"op": "append", "path": ["done"], "value": "zzz"},
            {"op": "clear", "path": ["ready"]},
            {"op": "delete", "path": ["done", 0]},
        ]))
        .unwrap();
        assert_eq!(
            view,
            json!({
                "ready": [],
                "done": ["zzz"],
                "quarantine": [{"id": "q", "payload": "x", "attempts": 2}],
            })
        );
    }

    #[test]
    fn missing_places_raise_the_python_errors_with_the_path() {
        let error = ops(json!([{"op": "delete", "path": ["quarantine", 3]}])).unwrap_err();
        assert_eq!(error.class, "IndexError");
        assert_eq!(
            error.message,
            "[quarantine, 3] does not exist: [quarantine] has 1 item"
        );
        let error =
            ops(json!([{"op": "set", "path": ["ready", 2, "payload"], "value": 1}])).unwrap_err();
        assert_eq!(
            error.message,
            "[ready, 2] does not exist: [ready] has 1 item"
        );
        let error = ops(json!([{"op": "delete", "path": ["ready", 0, "reason"]}])).unwrap_err();
        assert_eq!(error.class, "KeyError");
        assert_eq!(
            error.message,
            "[ready, 0, reason] does not exist: [ready, 0] has no key `reason`"
        );
        let error = ops(json!([{"op": "append", "path": ["done", 0], "value": 1}])).unwrap_err();
        assert_eq!(error.class, "TypeError");
        assert_eq!(error.message, "[done, 0] is a string, not a list");
        let error = ops(json!([{"op": "set", "path": ["done", 0, "id"], "value": 1}])).unwrap_err();
        assert_eq!(
            error.message,
            "[done, 0] is a string, not a mapping, so `id` cannot be looked up in it"
        );
    }

    #[test]
    fn malformed_wire_ops_are_type_errors() {
        let error = ops(json!([{"op": "zap", "path": []}])).unwrap_err();
        assert_eq!(error.class, "TypeError");
        assert!(error.message.ends_with("unknown op"), "{}", error.message);
        let error = ops(json!([{"op": "set", "path": ["ready"]}])).unwrap_err();
        assert!(error.message.ends_with("no `value`"), "{}", error.message);
        assert!(ops(json!({"op": "clear"})).is_err());
    }

    #[test]
    fn wire_form_round_trips() {
        let op = StateOp::Set {
            path: vec![key("ready"), PathSegment::Index(0), key("payload")],
            value: Value::Null,
        };
        let wire = op.to_wire();
        assert_eq!(
            wire,
            json!({"op": "set", "path": ["ready", 0, "payload"], "value": null})
        );
        assert_eq!(StateOp::from_wire(&wire).unwrap(), op);
    }

    #[test]
    fn spec_paths_start_with_a_state_list_then_an_index() {
        let check = |path: Vec<PathSegment>| StateOp::Delete(path).check_path();
        assert_eq!(
            check(vec![]).unwrap_err(),
            "the `delete` path is empty; it starts with `ready`, `done` or `quarantine`"
        );
        assert_eq!(
            check(vec![key("dead")]).unwrap_err(),
            "a state path starts with `ready`, `done` or `quarantine`, not `dead`"
        );
        assert_eq!(
            check(vec![key("ready"), key("id")]).unwrap_err(),
            "`ready` is a list: the next path item is an index from 0, not `id`"
        );
        assert!(check(vec![key("ready"), PathSegment::Index(0), key("id")]).is_ok());
    }
}
