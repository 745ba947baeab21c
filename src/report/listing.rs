//! `run --list`: the selected specs, one a line, as people read them or as JSON lines.

use std::fmt::Write as _;

use serde::Serialize;

use super::sanitize;
use super::style::{Palette, paint};

/// One selected spec, as listed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Listed {
    pub(crate) path: String,
    /// `None` when the spec cannot be loaded.
    pub(crate) name: Option<String>,
    pub(crate) contract: Option<&'static str>,
    pub(crate) rules: Vec<String>,
    /// Why the spec cannot be loaded, as `path:line:col: message`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) spec_error: Option<String>,
}

/// `path  name  [rule, rule]`, or `path  SPEC ERROR: ...` for a spec that cannot be loaded.
pub(crate) fn human(listed: &Listed, palette: &Palette) -> String {
    let mut out = sanitize::line(&listed.path).into_owned();
    match (&listed.name, &listed.spec_error) {
        (_, Some(error)) => {
            let _ = write!(
                out,
                "  {}",
                paint(
                    palette.spec,
                    &format!("SPEC ERROR: {}", sanitize::line(error))
                )
            );
        }
        (Some(name), None) => {
            let _ = write!(out, "  {}", sanitize::line(name));
            if !listed.rules.is_empty() {
                let rules = format!("[{}]", listed.rules.join(", "));
                let _ = write!(out, "  {}", paint(palette.dim, &sanitize::line(&rules)));
            }
        }
        (None, None) => {}
    }
    out.push('\n');
    out
}

/// One JSON object on one line: `{"event":"spec_listed","path":...,"name":...,...}`.
pub(crate) fn json(listed: &Listed) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        event: &'static str,
        #[serde(flatten)]
        listed: &'a Listed,
    }
    let line = serde_json::to_string(&Line {
        event: "spec_listed",
        listed,
    })
    .unwrap_or_default();
    format!("{}\n", sanitize::json(&line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(error: Option<&str>) -> Listed {
        Listed {
            path: "specs/a\u{1b}.yaml".into(),
            name: error.is_none().then(|| "a retry".to_owned()),
            contract: error.is_none().then_some("dlq-consumer"),
            rules: vec!["dlq-consumer/transient-retry".into()],
            spec_error: error.map(str::to_owned),
        }
    }

    #[test]
    fn a_spec_is_one_line_with_its_name_and_rules_escaped() {
        assert_eq!(
            human(&listed(None), &Palette::plain()),
            "specs/a\\x1b.yaml  a retry  [dlq-consumer/transient-retry]\n"
        );
        assert_eq!(
            human(&listed(Some("a.yaml:1:1: bad")), &Palette::plain()),
            "specs/a\\x1b.yaml  SPEC ERROR: a.yaml:1:1: bad\n"
        );
    }

    #[test]
    fn json_lines_carry_every_field() {
        let line = json(&listed(None));
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["event"], "spec_listed");
        assert_eq!(value["path"], "specs/a\u{1b}.yaml");
        assert_eq!(value["rules"][0], "dlq-consumer/transient-retry");
        assert!(value.get("spec_error").is_none());
        assert!(!line.contains('\u{1b}'));
    }
}
