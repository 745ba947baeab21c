//! A generated scenario, whatever its contract: the steps a generator drew, as spec text with
//! placeholders where the built-in implementation's answers go, and its smaller variants.
//!
//! Blessing the placeholders and judging the result happen in the layer above
//! (`explore::case`): a generator knows the vocabulary of its contract, not how cases are run.

use std::fmt;

use serde_json::Value;

/// A scenario of one contract, as its generator built it.
pub trait Case: Send + Sync + fmt::Debug {
    /// The spec text after the header (`contract`, `name`, `description`, `rules`): the
    /// contract's own keys and the steps, with placeholders where the built-in
    /// implementation's answers go. Blessing fills them in.
    fn body(&self) -> String;

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

/// The top of a spec file: what every contract's spec starts with.
#[derive(Debug, Clone)]
pub(crate) struct Header<'a> {
    pub(crate) contract: &'a str,
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) rules: &'a [&'a str],
}

/// A whole spec: `header`, then `body`. The schema line is the bundled specs' own, so a spec
/// written for `specs/CONTRACT/` gets completion in editors as they do.
pub(crate) fn spec_text(header: &Header, body: &str) -> String {
    let mut text =
        String::from("# yaml-language-server: $schema=../../schema/dlqspec.schema.json\n");
    text.push_str(&format!("contract: {}\n", header.contract));
    text.push_str(&format!(
        "name: {}\n",
        crate::text::yaml::flow(&Value::String(header.name.to_owned()))
    ));
    if !header.description.trim().is_empty() {
        text.push_str("description: >\n");
        for line in wrap(&printable(header.description), 94) {
            text.push_str("  ");
            text.push_str(&line);
            text.push('\n');
        }
    }
    let rules = format!("rules: [{}]", header.rules.join(", "));
    if header.rules.is_empty() {
    } else if rules.len() <= 96 {
        text.push_str(&rules);
        text.push('\n');
    } else {
        text.push_str("rules:\n");
        for rule in header.rules {
            text.push_str(&format!("  - {rule}\n"));
        }
    }
    text.push_str(body);
    text
}

/// `text` with control characters as spaces, so it can sit in a folded block scalar.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
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
        };
        let text = spec_text(&header, "steps:\n  - process: none\n");
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
        };
        let text = spec_text(&header, "");
        let spec = loader::load(SourceFile::from_text("t.yaml", text)).expect("loads");
        assert_eq!(
            spec.scenario.header().description.trim_end(),
            "got \"x --- # y\" from it"
        );
    }
}
