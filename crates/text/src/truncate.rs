//! What reports show of one spec, bounded: long strings, long lists and long texts are cut,
//! and every cut says how much it left out (`… 5,242,880 more bytes not shown`).
//!
//! An implementation decides what its world holds (up to the world-call budget of a spec), so
//! a diff of its DLQ could be tens of MiB, and the reports would carry it several times over.
//! Values are cut before they are rendered, so the whole is never rendered at all; the texts
//! made of them are then cut again at a total.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// The most of one spec's diff and detail text a report carries.
pub const MAX_SHOWN_BYTES: usize = 64 * 1024;

/// The most of each side of a difference (expected, actual) kept as text.
pub const MAX_SIDE_BYTES: usize = 32 * 1024;

/// The longest string shown whole; a longer one shows its start and how much more there was.
const MAX_STRING_BYTES: usize = 1024;

/// The most items of a list, and keys of a mapping, shown.
const MAX_ITEMS: usize = 100;

/// `value` as it is shown: strings, lists and mappings past their bound cut, with what was left
/// out told in their place. A cut string ends in a fingerprint of its cut part, so two strings
/// that differ only there still read differently.
pub fn value(value: &Value) -> Value {
    match value {
        Value::String(text) if text.len() > MAX_STRING_BYTES => {
            let kept = floor(text, MAX_STRING_BYTES);
            let rest = &text[kept.len()..];
            Value::String(format!(
                "{kept}{} (fingerprint {:08x})",
                more(rest.len(), "bytes"),
                fingerprint(rest.as_bytes())
            ))
        }
        Value::Array(items) => {
            let mut shown: Vec<Value> = items.iter().take(MAX_ITEMS).map(self::value).collect();
            if items.len() > MAX_ITEMS {
                shown.push(Value::String(more(items.len() - MAX_ITEMS, "items")));
            }
            Value::Array(shown)
        }
        Value::Object(map) => {
            let mut shown: Map<String, Value> = map
                .iter()
                .take(MAX_ITEMS)
                .map(|(key, item)| (key.clone(), self::value(item)))
                .collect();
            if map.len() > MAX_ITEMS {
                shown.insert(
                    "…".into(),
                    Value::String(more(map.len() - MAX_ITEMS, "keys")),
                );
            }
            Value::Object(shown)
        }
        other => other.clone(),
    }
}

/// `text` cut to at most `max` bytes (at the end of a line when one ends near enough), with a
/// last line telling how many bytes more there were.
pub fn text(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let kept = floor(&text, max);
    // At a line's end, unless that throws away most of what may be kept.
    let at = match kept.rfind('\n') {
        Some(end) if end >= max / 2 => end + 1,
        _ => kept.len(),
    };
    let cut = text.len() - at;
    text.truncate(at);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let _ = writeln!(text, "{}", more(cut, "bytes"));
    text
}

/// `text` in at most `max` bytes: whole when it fits, else its start and `…`. For a line a
/// report shows beside other lines (escaped there), where a count of what was cut would be
/// longer than the cut.
pub fn line(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    format!("{}…", floor(text, max))
}

/// `… 5,242,880 more bytes not shown`.
pub(crate) fn more(count: usize, what: &str) -> String {
    format!("… {} more {what} not shown", thousands(count))
}

/// `5242880` as `5,242,880`.
fn thousands(count: usize) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The longest start of `text` of at most `max` bytes that ends at a character boundary.
fn floor(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// FNV-1a, 32 bits: enough to tell two cut parts apart, not a checksum.
fn fingerprint(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash: u32, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_line_is_whole_when_it_fits_and_cut_at_a_character_when_not() {
        assert_eq!(line("process: dead", 13), "process: dead");
        assert_eq!(line("process: dead", 12), "process: dea…");
        // Never inside a character: `é` is two bytes.
        assert_eq!(line("aé", 2), "a…");
    }

    #[test]
    fn counts_read_with_thousands_separated() {
        assert_eq!(more(5_242_880, "bytes"), "… 5,242,880 more bytes not shown");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(0), "0");
    }

    #[test]
    fn long_strings_lists_and_mappings_are_cut_saying_how_much() {
        let long = "é".repeat(MAX_STRING_BYTES);
        let shown = value(&json!({"body": long, "ids": (0..150).collect::<Vec<_>>()}));
        let body = shown["body"].as_str().unwrap();
        assert!(
            body.starts_with(&"é".repeat(MAX_STRING_BYTES / 2)),
            "{body}"
        );
        assert!(
            body.contains("… 1,024 more bytes not shown (fingerprint "),
            "{body}"
        );
        let ids = shown["ids"].as_array().unwrap();
        assert_eq!(ids.len(), MAX_ITEMS + 1);
        assert_eq!(ids[MAX_ITEMS], json!("… 50 more items not shown"));
        let wide: Map<String, Value> = (0..MAX_ITEMS + 3)
            .map(|i| (format!("k{i:03}"), json!(i)))
            .collect();
        let shown = value(&Value::Object(wide));
        assert_eq!(shown["…"], json!("… 3 more keys not shown"));
        // What is within bounds is shown as it is.
        let small = json!({"id": "a", "attempts": [1, 2], "ok": true});
        assert_eq!(value(&small), small);
    }

    #[test]
    fn strings_that_differ_only_past_the_cut_still_differ() {
        let base = "x".repeat(4 * MAX_STRING_BYTES);
        let other = format!("{}y", &base[1..]);
        assert_ne!(value(&json!(base)), value(&json!(other)));
    }

    #[test]
    fn a_long_text_is_cut_at_a_line_and_says_how_much_more_there_was() {
        let text: String = (0..1000).map(|i| format!("line {i:04}\n")).collect();
        let cut = self::text(text.clone(), 100);
        assert!(cut.len() <= 100 + 40, "{cut}");
        assert!(cut.starts_with("line 0000\nline 0001\n"), "{cut}");
        let kept = cut.lines().count() - 1;
        assert_eq!(kept, 10, "{cut}");
        assert!(cut.ends_with("… 9,900 more bytes not shown\n"), "{cut}");
        assert_eq!(self::text("short\n".into(), 100), "short\n");
    }
}
