//! Test support: proof that the fast path decodes exactly what serde-saphyr decodes, on the
//! bundled specs and on variations of them in which each value is spelled in a trickier way.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde_saphyr::granit_parser::{Event, Parser};

use crate::source::SourceFile;

/// How a text was loaded, when both loads agree.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Agreed {
    /// The fast path decoded it, to the same value serde-saphyr decodes.
    Fast,
    /// The fast path declined it; serde-saphyr alone decides.
    Declined,
}

/// Loads `text` both ways: the fast path may decline, but what it decodes must be what
/// serde-saphyr decodes, positions included. `Err` tells the disagreement.
pub(crate) fn check<T: DeserializeOwned + Debug>(text: &str) -> Result<Agreed, String> {
    let Some(fast) = super::parse_fast::<T>(text) else {
        return Ok(Agreed::Declined);
    };
    match super::parse_slow::<T>(&SourceFile::from_text("agreement.yaml", text)) {
        Ok(slow) if format!("{fast:?}") == format!("{slow:?}") => Ok(Agreed::Fast),
        Ok(slow) => Err(format!(
            "the loads differ on\n{text}\nfast: {fast:?}\nslow: {slow:?}"
        )),
        Err(error) => Err(format!(
            "the fast path accepted what serde-saphyr refuses ({}) in\n{text}",
            error.error.message
        )),
    }
}

/// Spellings a value may be replaced with: each means something else to some YAML reader.
const SPELLINGS: &[&str] = &[
    "",
    "~",
    "null",
    "Null",
    "true",
    "True",
    "yes",
    "off",
    "0",
    "007",
    "0x1F",
    "0o7",
    "1_000",
    "-1",
    "-0",
    "+5",
    "1.5",
    "1e3",
    ".inf",
    "NaN",
    "'3'",
    "\"x\\ty\"",
    "[]",
    "{}",
    "[a, 2]",
    "{a: 1}",
    "!!str 5",
    "&anchor 5",
    "99999999999999999999",
    "recover",
    "process",
];

/// The text with one value replaced, for every value of the text and a share of the spellings
/// (`stride` > 1 takes every stride-th spelling, turning with each value, so that every
/// spelling is still tried across a spec).
pub(crate) fn variations(text: &str, stride: usize) -> Vec<String> {
    let mut ranges = Vec::new();
    for event in Parser::new_from_str(text) {
        let Ok((Event::Scalar(..), span)) = event else {
            continue;
        };
        if let Some(range) = span.byte_range() {
            ranges.push(range);
        }
    }
    // The whole text written differently: line ends, a byte-order mark, document markers,
    // comments, and an indentation by tabs where YAML allows none.
    let mut out = vec![
        text.replace('\n', "\r\n"),
        format!("\u{feff}{text}"),
        format!("---\n{text}...\n"),
        format!("# a comment\n{text}# and another\n"),
        text.replace("\n  ", "\n\t"),
    ];
    for (n, range) in ranges.into_iter().enumerate() {
        for spelling in SPELLINGS.iter().skip(n % stride).step_by(stride) {
            let mut changed = String::with_capacity(text.len() + spelling.len());
            changed.push_str(&text[..range.start]);
            changed.push_str(spelling);
            changed.push_str(&text[range.end..]);
            out.push(changed);
        }
    }
    out
}

/// Checks every spec of the folder `specs`, and variations of each, and the broken fixtures
/// of the folder `broken`: every spec must be read by the fast path, and nothing may load
/// differently. Returns how many variations the fast path decoded, so a caller can see the
/// check had teeth. The folders are the caller's (this crate knows no project's layout).
pub fn check_bundled<T: DeserializeOwned + Debug>(
    specs: &std::path::Path,
    broken: &std::path::Path,
    stride: usize,
) -> usize {
    let mut decoded = 0;
    let mut count = 0;
    for entry in std::fs::read_dir(specs).expect("the bundled specs") {
        let path = entry.expect("an entry").path();
        let text = std::fs::read_to_string(&path).expect("a readable spec");
        count += 1;
        assert_eq!(
            check::<T>(&text),
            Ok(Agreed::Fast),
            "{} should load by the fast path",
            path.display()
        );
        for changed in variations(&text, stride) {
            if check::<T>(&changed).unwrap_or_else(|why| panic!("{}: {why}", path.display()))
                == Agreed::Fast
            {
                decoded += 1;
            }
        }
    }
    assert!(count > 10, "{} holds only {count} specs", specs.display());
    // Broken specs: whatever the fast path accepts of them, serde-saphyr must accept alike.
    for entry in std::fs::read_dir(broken).expect("the broken fixtures") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let text = std::fs::read(&path).expect("a readable fixture");
        if let Ok(text) = String::from_utf8(text)
            && let Err(why) = check::<T>(&text)
        {
            panic!("{}: {why}", path.display());
        }
    }
    decoded
}
