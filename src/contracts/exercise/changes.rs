//! A `mutate_VIEW` step's changes tried on the view as the implementation returned it, before
//! they are sent: a change the view cannot take (a path it does not hold) is told as the
//! step's difference, never as the implementation failing to serve the request.
//!
//! The rules are the shims' (`set` and `delete` act on the last key of the path, `append` and
//! `clear` on the container the whole path names), so what passes here is what the shims apply.

use serde_json::Value;

use crate::text::yaml;

/// Why `ops` cannot be made to `view` (each after the ones before it), or `None` when they
/// all can.
pub(crate) fn misfit(view: &Value, ops: &[Value]) -> Option<String> {
    let mut view = view.clone();
    for op in ops {
        if let Err(why) = apply(&mut view, op) {
            return Some(why);
        }
    }
    None
}

fn apply(root: &mut Value, op: &Value) -> Result<(), String> {
    let kind = op.get("op").and_then(Value::as_str).unwrap_or_default();
    let path: Vec<Value> = op
        .get("path")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let value = op.get("value").cloned().unwrap_or(Value::Null);
    let whole = matches!(kind, "append" | "clear");
    let (walk, last) = if whole {
        (&path[..], None)
    } else {
        match path.split_last() {
            Some((last, walk)) => (walk, Some(last)),
            None => return Err(format!("`{kind}` needs a path")),
        }
    };
    let mut target = root;
    for key in walk {
        target = step(target, key)?;
    }
    match (kind, last) {
        ("set", Some(key)) => match target {
            Value::Array(items) => {
                let at =
                    index(items, key).ok_or_else(|| missing(key, &Value::Array(items.clone())))?;
                items[at] = value;
                Ok(())
            }
            Value::Object(fields) => match key {
                Value::String(name) => {
                    fields.insert(name.clone(), value);
                    Ok(())
                }
                _ => Err(missing(key, &Value::Object(fields.clone()))),
            },
            other => Err(format!(
                "cannot set {} in {}",
                yaml::flow(key),
                shown(other)
            )),
        },
        ("delete", Some(key)) => match target {
            Value::Array(items) => {
                let at =
                    index(items, key).ok_or_else(|| missing(key, &Value::Array(items.clone())))?;
                items.remove(at);
                Ok(())
            }
            Value::Object(fields) => match key.as_str() {
                Some(name) if fields.contains_key(name) => {
                    fields.shift_remove(name);
                    Ok(())
                }
                _ => Err(missing(key, &Value::Object(fields.clone()))),
            },
            other => Err(missing(key, other)),
        },
        ("append", None) => match target {
            Value::Array(items) => {
                items.push(value);
                Ok(())
            }
            other => Err(format!("cannot append to {}, not a list", shown(other))),
        },
        ("clear", None) => match target {
            Value::Array(items) => {
                items.clear();
                Ok(())
            }
            Value::Object(fields) => {
                fields.clear();
                Ok(())
            }
            other => Err(format!(
                "cannot clear {}, not a list or mapping",
                shown(other)
            )),
        },
        _ => Err(format!("`{kind}` is not a change")),
    }
}

/// The value at `key` of `target`, or why there is none.
fn step<'a>(target: &'a mut Value, key: &Value) -> Result<&'a mut Value, String> {
    let found = match (&*target, key) {
        (Value::Array(items), _) => index(items, key).is_some(),
        (Value::Object(fields), Value::String(name)) => fields.contains_key(name),
        _ => false,
    };
    if !found {
        return Err(missing(key, target));
    }
    Ok(match (target, key) {
        (Value::Array(items), _) => {
            let at = key.as_u64().unwrap_or_default() as usize;
            &mut items[at]
        }
        (Value::Object(fields), Value::String(name)) => fields.get_mut(name).expect("found"),
        _ => unreachable!("found above"),
    })
}

/// `key` as an index of `items`, when it is a whole number below their count.
fn index(items: &[Value], key: &Value) -> Option<usize> {
    let at = usize::try_from(key.as_u64()?).ok()?;
    (at < items.len()).then_some(at)
}

fn missing(key: &Value, target: &Value) -> String {
    format!("no {} in {}", yaml::flow(key), shown(target))
}

/// A value as a message quotes it: flow style, cut at 100 characters.
fn shown(value: &Value) -> String {
    let text = yaml::flow(value);
    match text.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_the_view_holds_fit() {
        let view = json!({"ready": [{"id": "a", "payload": "p"}], "done": []});
        let ops = [
            json!({"op": "set", "path": ["ready", 0, "payload"], "value": "x"}),
            json!({"op": "append", "path": ["done"], "value": "b"}),
            json!({"op": "delete", "path": ["done", 0]}),
            json!({"op": "set", "path": ["extra"], "value": 1}),
            json!({"op": "clear", "path": ["ready"]}),
        ];
        assert_eq!(misfit(&view, &ops), None);
    }

    #[test]
    fn a_path_the_view_does_not_hold_is_told_with_what_it_holds() {
        let view = json!({"ready": [], "done": []});
        let set = [json!({"op": "set", "path": ["ready", 0, "payload"], "value": "x"})];
        assert_eq!(misfit(&view, &set).as_deref(), Some("no 0 in []"));
        let delete = [json!({"op": "delete", "path": ["gone"]})];
        assert_eq!(
            misfit(&view, &delete).as_deref(),
            Some("no gone in {ready: [], done: []}")
        );
        let append = [json!({"op": "append", "path": ["ready", 0]})];
        assert_eq!(misfit(&view, &append).as_deref(), Some("no 0 in []"));
        // Each change is tried on what the ones before it left.
        let after_clear = [
            json!({"op": "clear", "path": []}),
            json!({"op": "append", "path": ["ready"], "value": 1}),
        ];
        assert_eq!(
            misfit(&view, &after_clear).as_deref(),
            Some("no ready in {}")
        );
        let not_a_list = [json!({"op": "append", "path": [], "value": 1})];
        assert_eq!(
            misfit(&view, &not_a_list).as_deref(),
            Some("cannot append to {ready: [], done: []}, not a list")
        );
    }
}
