//! The list panel of an explained exercise run: the lists each state view holds after a call,
//! each item by its `id` with the fields its view's `shown:` names beside it, bounded, as the
//! solution decides what its views hold.

use serde_json::Value;

use crate::text::truncate;
use crate::text::yaml;

/// The most lists the panel shows.
const MOST: usize = 8;
/// The most items of a list it shows, then how many more.
const ITEMS: usize = 12;
/// The most bytes of one item, before the ellipsis that says it was cut.
const ITEM_BYTES: usize = 40;

/// The panel's lists, from each view's value after a call and the item fields it shows: every
/// top-level list of a view that is a mapping, by its key.
pub(crate) fn lists<'v>(
    views: impl IntoIterator<Item = (&'v Value, &'v [String])>,
) -> Vec<(String, Vec<String>)> {
    let mut lists = Vec::new();
    for (value, beside) in views {
        let Value::Object(fields) = value else {
            continue;
        };
        for (key, value) in fields {
            let Value::Array(items) = value else {
                continue;
            };
            let mut shown: Vec<String> = items
                .iter()
                .take(ITEMS)
                .map(|item| listed(item, beside))
                .collect();
            if items.len() > ITEMS {
                shown.push(format!("+{} more", items.len() - ITEMS));
            }
            lists.push((key.clone(), shown));
        }
    }
    lists.truncate(MOST);
    lists
}

/// One item: its `id` where it has a string one (else, where the view shows fields beside
/// it, its first field's value), then each field of `beside` it holds (`a (until 17, worker
/// w1)`); else the whole item, in flow YAML. Cut to `ITEM_BYTES`.
fn listed(item: &Value, beside: &[String]) -> String {
    let named = match item {
        Value::Object(fields) => match fields.get("id") {
            Some(Value::String(id)) => Some(("id", id.clone())),
            _ if beside.is_empty() => None,
            _ => fields.iter().next().and_then(|(key, value)| match value {
                Value::String(text) => Some((key.as_str(), text.clone())),
                Value::Number(n) => Some((key.as_str(), n.to_string())),
                _ => None,
            }),
        },
        _ => None,
    };
    let Some((name_key, id)) = named else {
        return truncate::line(&yaml::flow(&truncate::value(item)), ITEM_BYTES);
    };
    let fields: Vec<String> = beside
        .iter()
        .filter(|field| field.as_str() != name_key)
        .filter_map(|field| {
            let value = item.get(field)?;
            let shown = match value {
                Value::String(text) => text.clone(),
                other => yaml::flow(&truncate::value(other)),
            };
            Some(format!("{field} {shown}"))
        })
        .collect();
    let text = if fields.is_empty() {
        id.clone()
    } else {
        format!("{id} ({})", fields.join(", "))
    };
    truncate::line(&text, ITEM_BYTES)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shown(view: Value, beside: &[&str]) -> Vec<(String, Vec<String>)> {
        let beside: Vec<String> = beside.iter().map(|s| (*s).to_owned()).collect();
        lists([(&view, beside.as_slice())])
    }

    #[test]
    fn an_item_is_its_id_with_the_fields_its_view_shows_beside_it() {
        let view = json!({
            "leased": [{"id": "a", "worker": "w1", "until": 17}],
            "waiting": [{"id": "b", "due": 7}],
            "ready": [{"id": "c"}],
            "count": 3,
        });
        assert_eq!(
            shown(view, &["until", "due"]),
            vec![
                ("leased".to_owned(), vec!["a (until 17)".to_owned()]),
                ("waiting".to_owned(), vec!["b (due 7)".to_owned()]),
                ("ready".to_owned(), vec!["c".to_owned()]),
            ]
        );
    }

    #[test]
    fn without_shown_fields_an_item_is_its_id_and_without_an_id_the_whole_item() {
        let view = json!({"jobs": [{"id": "a", "until": 1}, [1, 2], "x"]});
        assert_eq!(
            shown(view, &[]),
            vec![(
                "jobs".to_owned(),
                vec!["a".to_owned(), "[1, 2]".to_owned(), "x".to_owned()]
            )]
        );
    }

    #[test]
    fn an_item_with_no_id_is_named_by_its_first_field_where_the_view_shows_fields() {
        let view = json!({"keys": [{"key": "a", "expires_at": 5}, {"key": "b"}]});
        assert_eq!(
            shown(view.clone(), &["expires_at"]),
            vec![(
                "keys".to_owned(),
                vec!["a (expires_at 5)".to_owned(), "b".to_owned()]
            )]
        );
        assert_eq!(
            shown(view, &[]),
            vec![(
                "keys".to_owned(),
                vec!["{key: a, expires_at: 5}".to_owned(), "{key: b}".to_owned()]
            )]
        );
    }

    #[test]
    fn the_panel_is_bounded_in_lists_items_and_bytes() {
        let mut fields = serde_json::Map::new();
        for n in 0..10 {
            fields.insert(format!("list{n}"), json!([]));
        }
        assert_eq!(shown(Value::Object(fields), &[]).len(), MOST);
        let items: Vec<Value> = (0..20).map(|n| json!({"id": format!("{n}")})).collect();
        let long = "x".repeat(100);
        let view = json!({"jobs": items, "long": [{"id": "a", "note": long}]});
        let panel = shown(view, &["note"]);
        assert_eq!(panel[0].1.len(), ITEMS + 1);
        assert_eq!(panel[0].1[ITEMS], "+8 more");
        // The item's first `ITEM_BYTES`, then an ellipsis.
        assert_eq!(panel[1].1[0].len(), ITEM_BYTES + '…'.len_utf8());
        assert!(panel[1].1[0].ends_with('…'), "{}", panel[1].1[0]);
        assert!(
            panel[1].1[0].starts_with("a (note xxx"),
            "{}",
            panel[1].1[0]
        );
    }
}
