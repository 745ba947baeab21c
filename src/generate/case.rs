//! A generated scenario, whatever its contract: the steps a generator drew, as a spec value
//! with placeholders where the built-in implementation's answers go, and its smaller variants;
//! and the whole spec's text, header and body written by `writer.rs`.
//!
//! Blessing the placeholders and judging the result happen in the layer above
//! (`explore::case`): a generator knows the vocabulary of its contract, not how cases are run.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::writer::{self, Folded};

/// A scenario of one contract, as its generator built it.
pub trait Case: Send + Sync + fmt::Debug {
    /// The spec after the header (`contract`, `name`, `description`, `rules`), as a mapping
    /// `generate::writer` writes out: the contract's own keys and the steps, with
    /// placeholders where the built-in implementation's answers go. Blessing fills them in.
    fn body(&self) -> Value;

    /// How many steps the case has, for reports.
    fn steps(&self) -> usize;

    /// Smaller variants, the most promising first. Any of them may turn out invalid (it does
    /// not load, or the built-in does not pass it once blessed): those are skipped.
    fn shrinks(&self) -> Vec<Box<dyn Case>>;

    /// The case cut to what a difference at step `index` (0-based) needs: the steps after it
    /// dropped, and every expectation but the one at `index`, whose keys are cut to `keys`
    /// (left as they are when `keys` is empty). What the implementation did up to that step
    /// does not change, so the difference stays.
    fn focused(&self, index: usize, keys: &[String]) -> Box<dyn Case>;

    /// Why the case would judge correct implementations differently although the built-in
    /// passes it (a crash at a point the rules let them reach in different states), if it
    /// would. Such a case is invalid, like one the built-in cannot pass.
    fn unsound(&self) -> Option<String> {
        None
    }
}

/// The top of a spec file: what every contract's spec starts with. A blank description and
/// no rules are left out.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Header<'a> {
    pub(crate) contract: &'a str,
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "is_blank", serialize_with = "folded")]
    pub(crate) description: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) rules: &'a [&'a str],
    /// Whether the file starts with the bundled schema's line: only where the bundled schema
    /// describes the contract's steps, which an exercise folder's own specs it does not.
    #[serde(skip)]
    pub(crate) schema_line: bool,
}

fn is_blank(text: &&str) -> bool {
    text.trim().is_empty()
}

fn folded<S: serde::Serializer>(text: &&str, serializer: S) -> Result<S::Ok, S::Error> {
    Folded(text).serialize(serializer)
}

/// The line a spec file starts with: the bundled specs' own schema, so a spec written for
/// `specs/CONTRACT/` gets completion in editors as they do.
const SCHEMA_LINE: &str = "# yaml-language-server: $schema=../../schema/dlqspec.schema.json\n";

/// A whole spec: the schema line, `header`, then `body` (a mapping, `Case::body`), each
/// mapping written by `writer`, one after the other.
pub(crate) fn spec_text(header: &Header, body: &Value) -> String {
    let schema = if header.schema_line { SCHEMA_LINE } else { "" };
    schema.to_owned() + &writer::write(header) + &writer::write_value(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::loader;
    use crate::text::source::SourceFile;

    #[test]
    fn a_description_is_folded_in_lines_that_read_back_as_one() {
        let words = "word ".repeat(40);
        let header = Header {
            contract: "dlq-consumer",
            name: "a: tricky name",
            description: &words,
            rules: &["dlq-consumer/success"],
            schema_line: true,
        };
        let text = spec_text(
            &header,
            &serde_json::json!({"steps": [{"process": "none"}]}),
        );
        assert!(text.contains("name: \"a: tricky name\"\n"), "{text}");
        assert!(
            text.lines().all(|line| line.chars().count() <= 96),
            "{text}"
        );
        let spec = loader::load(SourceFile::from_text("t.yaml", text)).expect("loads");
        let header = spec.scenario.header();
        assert_eq!(header.name, "a: tricky name");
        assert_eq!(header.description.trim_end(), "word ".repeat(40).trim_end());
    }

    #[test]
    fn control_characters_cannot_break_the_description() {
        let header = Header {
            contract: "dlq-consumer",
            name: "n",
            description: "got \"x\n---\n\t# y\" from it",
            rules: &[],
            schema_line: true,
        };
        let text = spec_text(&header, &serde_json::json!({}));
        let spec = loader::load(SourceFile::from_text("t.yaml", text)).expect("loads");
        assert_eq!(
            spec.scenario.header().description.trim_end(),
            "got \"x --- # y\" from it"
        );
    }
}
