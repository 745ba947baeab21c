//! Linting specs: legal but suspicious things, each with a stable smell id and a place.
//!
//! Each contract's scenario reports its own smells from a recorded run (`Scenario::smells`);
//! the smells that need no run or look across specs are found here, for every contract alike.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::contracts::CONTRACTS;
use crate::discover::{DiscoverError, Skipped};
use crate::implementation::Implementation;
use crate::loader::LoadedSpec;
use crate::outcome::Outcome;
use crate::report::Palette;
use crate::report::render;
use crate::report::sanitize;
use crate::report::style::paint;
use crate::runner::{self, RunConfig};
use crate::source::{Excerpt, Position, display_path};
use crate::spec_error::SpecError;
use crate::yaml_edit::Document;

/// Smell ids found here (each contract names its own scenario smells).
pub const NO_RULE: &str = "no-rule";
pub const DUPLICATE_NAME: &str = "duplicate-name";
pub const UNCOVERED_RULE: &str = "uncovered-rule";
pub const UNEXERCISED_RULE: &str = "unexercised-rule";
pub const CHECKS_NOTHING: &str = "checks-nothing";

/// One smell, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub id: &'static str,
    pub location: Location,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A place in a spec file, with its line for the caret.
    Spec {
        path: String,
        position: Position,
        source_line: Option<Excerpt>,
    },
    /// A rule of a contract (for a rule no spec covers).
    Rule(String),
}

/// Everything `dlqspec lint` found.
#[derive(Debug, Clone, Default)]
pub struct LintReport {
    pub specs: usize,
    pub findings: Vec<Finding>,
    pub spec_errors: Vec<SpecError>,
    /// Specs whose run ended too early to judge, and why.
    pub not_judged: Vec<(String, String)>,
    /// Paths discovery left out, with why.
    pub skipped: Vec<Skipped>,
}

/// Lints the specs under `paths`, running each on `implementation` (the built-in one).
/// Rule coverage is judged only when a folder is given: a single file covers few rules.
pub fn lint(
    paths: &[PathBuf],
    implementation: &mut dyn Implementation,
) -> Result<LintReport, DiscoverError> {
    // Loaded as `run` loads them: on every core.
    let gathered = runner::gather(&RunConfig {
        paths: paths.to_vec(),
        ..RunConfig::default()
    })?;
    let mut report = LintReport {
        specs: gathered.specs.len(),
        skipped: gathered.skipped,
        ..LintReport::default()
    };
    let mut loaded = Vec::new();
    for (_, spec) in gathered.specs {
        match spec {
            Ok(spec) => loaded.push(spec),
            Err(error) => report.spec_errors.push(error),
        }
    }
    let mut names: HashMap<String, String> = HashMap::new();
    // The rules each spec both claims and exercises: only those count as covered.
    let mut covered: BTreeSet<&'static str> = BTreeSet::new();
    for spec in &loaded {
        let mut findings = Vec::new();
        let path = spec.file.display_path();
        // Parsed again only to place a finding: most specs have none.
        let document = std::cell::OnceCell::new();
        let document = || document.get_or_init(|| Document::parse(&spec.file.text).ok());
        let at = |key: &str| {
            document()
                .as_ref()
                .and_then(|d| d.find(d.root().position, &[key.to_owned()]).ok())
                .map_or(Position::START, |node| node.position)
        };
        let header = spec.scenario.header();
        if header.rules.is_empty() {
            findings.push((
                NO_RULE,
                document()
                    .as_ref()
                    .and_then(|d| d.key_position("rules"))
                    .unwrap_or_else(|| at("name")),
                "the spec names no rule: list the ids of the rules it checks under `rules:` (`dlqspec rules` lists them)".to_owned(),
            ));
        }
        match names.get(&header.name) {
            Some(first) => findings.push((
                DUPLICATE_NAME,
                at("name"),
                format!("{first} has the same name; names tell specs apart in reports"),
            )),
            None => {
                names.insert(header.name.clone(), path.clone());
            }
        }
        match implementation
            .begin_spec()
            .map_err(Outcome::Errored)
            .and_then(|()| spec.scenario.smells(implementation))
        {
            Ok((smells, run)) => {
                findings.extend(smells.into_iter().map(|s| (s.id, s.position, s.message)));
                for (rule, position) in &header.rules {
                    match run.exercised.iter().find(|id| **id == rule.as_str()) {
                        Some(id) => {
                            covered.insert(id);
                        }
                        None => findings.push((
                            UNEXERCISED_RULE,
                            *position,
                            format!(
                                "the spec claims `{rule}`, but its run on the built-in implementation never reaches a decision of that rule: make the scenario exercise it, or drop it from `rules:`"
                            ),
                        )),
                    }
                }
                if run.checkpoints.is_empty() {
                    findings.push((
                        CHECKS_NOTHING,
                        at("steps"),
                        "the spec checks nothing: no step compares a return and there is no `expect`, so every implementation passes it".to_owned(),
                    ));
                }
            }
            Err(Outcome::SpecError(error)) => report.spec_errors.push(error),
            Err(other) => report.not_judged.push((
                path.clone(),
                render::details(&path, &other).trim_end().to_owned(),
            )),
        }
        findings.sort_by_key(|(_, position, _)| *position);
        report
            .findings
            .extend(findings.into_iter().map(|(id, position, message)| Finding {
                id,
                location: Location::Spec {
                    path: path.clone(),
                    position,
                    source_line: spec.file.excerpt(position),
                },
                message,
            }));
    }
    if paths.iter().any(|p| p.is_dir()) {
        report
            .findings
            .extend(uncovered_rules(paths, &loaded, &covered));
    }
    Ok(report)
}

/// Rules of the contracts the linted specs use that none of them covers (claims and exercises).
fn uncovered_rules(
    paths: &[PathBuf],
    loaded: &[LoadedSpec],
    covered: &BTreeSet<&'static str>,
) -> Vec<Finding> {
    let used: BTreeSet<&str> = loaded.iter().map(|s| s.contract.name()).collect();
    let folders: Vec<String> = paths.iter().map(|p| display_path(p)).collect();
    CONTRACTS
        .iter()
        .filter(|contract| used.contains(contract.name()))
        .flat_map(|contract| contract.rules())
        .filter(|rule| !covered.contains(rule.id))
        .map(|rule| Finding {
            id: UNCOVERED_RULE,
            location: Location::Rule(rule.id.to_owned()),
            message: format!(
                "no spec under {} checks this rule: {}",
                folders.join(", "),
                rule.statement
            ),
        })
        .collect()
}

/// The report as text: each finding as `path:line:col: id: message` with its line and a caret.
pub fn render(report: &LintReport, palette: &Palette) -> String {
    let mut out = String::new();
    for error in &report.spec_errors {
        out.push_str(&render::spec_error(error, palette));
        out.push('\n');
    }
    for (path, why) in &report.not_judged {
        let path = sanitize::line(path);
        let _ = writeln!(out, "{path}: not linted, the run ended early:");
        for line in why.lines() {
            let _ = writeln!(out, "  {line}");
        }
        out.push('\n');
    }
    for finding in &report.findings {
        let id = paint(palette.skip, finding.id);
        match &finding.location {
            Location::Spec {
                path,
                position,
                source_line,
            } => {
                let _ = writeln!(
                    out,
                    "{}:{}:{}: {id}: {}",
                    sanitize::line(path),
                    position.line,
                    position.column,
                    sanitize::text(&finding.message)
                );
                if let Some(line) = source_line {
                    out.push_str(&crate::report::render::caret(line, *position, palette));
                }
            }
            Location::Rule(rule) => {
                let _ = writeln!(out, "{rule}: {id}: {}", sanitize::text(&finding.message));
            }
        }
    }
    let specs = plural(report.specs, "spec");
    let closing = match (report.findings.len(), report.spec_errors.len()) {
        (0, 0) => format!("no smells in {specs}"),
        (n, 0) => format!("{} in {specs}", plural(n, "smell")),
        (n, e) => format!(
            "{} and {} in {specs}",
            plural(n, "smell"),
            plural(e, "spec error")
        ),
    };
    if !report.findings.is_empty() || !report.spec_errors.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(out, "{closing}");
    out
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::Builtin;

    fn lint_folder(files: &[(&str, &str)]) -> LintReport {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        lint(&[dir.path().to_path_buf()], &mut Builtin::new()).unwrap()
    }

    const CLEAN: &str = "contract: dlq-consumer\nname: empty\nrules: [dlq-consumer/empty-queue]\nsteps:\n  - process: none\n";

    #[test]
    fn duplicate_names_and_missing_rules_are_found_at_their_keys() {
        let report = lint_folder(&[
            ("a.yaml", CLEAN),
            (
                "b.yaml",
                "# c\ncontract: dlq-consumer\nname: empty\nsteps:\n  - process: none\n",
            ),
        ]);
        let ids: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.id != UNCOVERED_RULE)
            .map(|f| match &f.location {
                Location::Spec { position, .. } => {
                    format!("{}:{} {}", position.line, position.column, f.id)
                }
                Location::Rule(rule) => rule.clone(),
            })
            .collect();
        assert_eq!(ids, ["3:7 no-rule", "3:7 duplicate-name"]);
    }

    #[test]
    fn rules_no_spec_covers_are_found_for_the_contracts_in_use() {
        let report = lint_folder(&[("a.yaml", CLEAN)]);
        let uncovered: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.id == UNCOVERED_RULE)
            .collect();
        let rules = CONTRACTS[0].rules().len();
        assert_eq!(uncovered.len(), rules - 1);
        assert!(
            !uncovered
                .iter()
                .any(|f| f.location == Location::Rule("dlq-consumer/empty-queue".into()))
        );
    }
}
