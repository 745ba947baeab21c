//! Linting specs: legal but suspicious things, each with a stable smell id and a place.
//!
//! Each contract's scenario reports its own smells from a recorded run (`Scenario::smells`);
//! the smells that need no run or look across specs are found here, for every contract alike.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::contracts::contract::ScenarioRun;
use crate::contracts::smell::{
    CHECKS_NOTHING, DUPLICATE_NAME, NO_RULE, STALE_ALLOW, UNCOVERED_RULE, UNEXERCISED_RULE,
};
use crate::load::discover::{DiscoverError, Skipped};
use crate::load::loader::LoadedSpec;
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;
use crate::report::Palette;
use crate::report::render;
use crate::report::sanitize;
use crate::report::style::paint;
use crate::run::runner::{self, RunConfig};
use crate::text::source::{Excerpt, Position, display_path};
use crate::text::spec_error::SpecError;
use crate::text::yaml::edit::Document;

/// One smell, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintFinding {
    pub(crate) id: &'static str,
    pub(crate) location: Location,
    pub(crate) message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
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
    pub(crate) specs: usize,
    pub findings: Vec<LintFinding>,
    /// Smells found but not reported: allowed by a spec or by `--allow`.
    pub(crate) allowed: usize,
    pub(crate) spec_errors: Vec<SpecError>,
    /// Specs whose run ended too early to judge, and why.
    pub(crate) not_judged: Vec<(String, String)>,
    /// Paths discovery left out, with why.
    pub(crate) skipped: Vec<Skipped>,
}

/// What to leave out of a lint, and whether to judge rule coverage.
#[derive(Debug, Clone, Default)]
pub struct LintOptions {
    /// Smell ids not to report anywhere (`--allow`), each a catalogue id (`crate::contracts::smell`).
    pub(crate) allow: Vec<&'static str>,
    /// Judge the rule coverage of every contract the linted specs use (`--coverage`), not
    /// only of the contracts whose whole folder is linted (`whole_contracts`).
    pub(crate) coverage: bool,
}

/// One smell of one spec before allows apply: id, place, message.
pub(crate) type SpecSmell = (&'static str, Position, String);

/// The smells one spec has on its own (every smell but duplicate names and coverage), found by
/// a recorded run on `implementation` (the built-in one), sorted by place, with that run.
/// The spec's own `allow:` is not applied here. `Err` is a run that ended too early to judge.
pub(crate) fn spec_smells(
    spec: &LoadedSpec,
    implementation: &mut dyn Implementation,
) -> Result<(Vec<SpecSmell>, ScenarioRun), Outcome> {
    let place = Placer::new(&spec.file.text);
    let mut findings = Vec::new();
    let header = spec.scenario.header();
    if header.rules.is_empty() {
        findings.push((
            NO_RULE,
            place.key("rules").unwrap_or_else(|| place.at("name")),
            "the spec names no rule: list the ids of the rules it checks under `rules:` (`dlqspec rules` lists them)".to_owned(),
        ));
    }
    implementation.begin_spec().map_err(Outcome::Errored)?;
    let (smells, run) = spec.scenario.smells(implementation)?;
    findings.extend(smells.into_iter().map(|s| (s.id, s.position, s.message)));
    for (rule, position) in &header.rules {
        if !run.exercised.contains(&rule.as_str()) {
            findings.push((
                UNEXERCISED_RULE,
                *position,
                format!(
                    "the spec claims `{rule}`, but its run on {} never reaches a decision of that rule: make the scenario exercise it, or drop it from `rules:`",
                    crate::contracts::registry::reference_called(
                        spec.contract.name(),
                        "the built-in implementation"
                    )
                ),
            ));
        }
    }
    if run.checkpoints.is_empty() {
        findings.push((
            CHECKS_NOTHING,
            place.at("steps"),
            "the spec checks nothing: no step compares a return and there is no `expect`, so every implementation passes it".to_owned(),
        ));
    }
    findings.sort_by_key(|(_, position, _)| *position);
    Ok((findings, run))
}

/// Places a finding at a top-level key of a spec; parses the text only when first asked, since
/// most specs have no finding.
struct Placer<'t> {
    text: &'t str,
    document: std::cell::OnceCell<Option<Document<'t>>>,
}

impl<'t> Placer<'t> {
    fn new(text: &'t str) -> Self {
        Placer {
            text,
            document: std::cell::OnceCell::new(),
        }
    }

    fn document(&self) -> Option<&Document<'t>> {
        self.document
            .get_or_init(|| Document::parse(self.text).ok())
            .as_ref()
    }

    /// Where the value of top-level `key` starts, else the start of the file.
    fn at(&self, key: &str) -> Position {
        self.document()
            .and_then(|d| d.find(d.root().position, &[key.to_owned()]).ok())
            .map_or(Position::START, |node| node.position)
    }

    /// Where top-level `key` itself is written.
    fn key(&self, key: &str) -> Option<Position> {
        self.document().and_then(|d| d.key_position(key))
    }
}

/// The smells of `smells` the spec's `allow:` leaves to report, and how many it allowed; an
/// allow that suppressed nothing becomes a `stale-allow` smell at its place, unless
/// `judge_stale` says its smell cannot be judged stale in this lint.
pub(crate) fn apply_allows(
    header: &crate::contracts::contract::SpecHeader,
    smells: Vec<SpecSmell>,
    judge_stale: impl Fn(&'static str) -> bool,
) -> (Vec<SpecSmell>, usize) {
    let mut used = vec![false; header.allow.len()];
    let mut kept = Vec::with_capacity(smells.len());
    let mut allowed = 0;
    for smell in smells {
        match header.allow.iter().position(|allow| allow.smell == smell.0) {
            Some(index) => {
                used[index] = true;
                allowed += 1;
            }
            None => kept.push(smell),
        }
    }
    for (allow, used) in header.allow.iter().zip(used) {
        if !used && judge_stale(allow.smell) {
            kept.push((
                STALE_ALLOW,
                allow.position,
                format!(
                    "the spec allows `{}`, but has no such smell: remove the allow, since it would hide the smell if it came back unnoticed",
                    allow.smell
                ),
            ));
        }
    }
    kept.sort_by_key(|(_, position, _)| *position);
    (kept, allowed)
}

/// Lints the specs under `paths`, running each on `implementation` (the built-in one).
/// Rule coverage is judged for the contracts `whole_contracts` names: a few files cover few rules.
pub fn lint(
    paths: &[PathBuf],
    options: &LintOptions,
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
    let used: BTreeSet<&'static str> = loaded.iter().map(|s| s.contract.name()).collect();
    // What a contract's own description claims and its reference denies (an exercise's
    // draws) is an error of that description, told before the specs'.
    let described: Vec<SpecError> = crate::contracts::all()
        .into_iter()
        .filter(|contract| used.contains(contract.name()))
        .flat_map(|contract| contract.reference_errors())
        .collect();
    report.spec_errors.splice(0..0, described);
    let whole = whole_contracts(paths, options.coverage, &used);
    let mut names: HashMap<String, String> = HashMap::new();
    // The rules each spec both claims and exercises: only those count as covered.
    let mut covered: BTreeSet<&'static str> = BTreeSet::new();
    for spec in &loaded {
        let path = spec.file.display_path();
        let header = spec.scenario.header();
        let mut findings = match spec_smells(spec, implementation) {
            Ok((smells, run)) => {
                covered.extend(
                    run.exercised
                        .iter()
                        .filter(|id| header.rule_ids().any(|rule| rule == **id)),
                );
                Some(smells)
            }
            Err(Outcome::SpecError(error)) => {
                report.spec_errors.push(error);
                None
            }
            Err(other) => {
                report.not_judged.push((
                    path.clone(),
                    render::details(&path, &other).trim_end().to_owned(),
                ));
                None
            }
        };
        let judged = findings.is_some();
        let mut smells = findings.take().unwrap_or_default();
        match names.get(&header.name) {
            Some(first) => smells.push((
                DUPLICATE_NAME,
                Placer::new(&spec.file.text).at("name"),
                format!("{first} has the same name; names tell specs apart in reports"),
            )),
            None => {
                names.insert(header.name.clone(), path.clone());
            }
        }
        smells.sort_by_key(|(_, position, _)| *position);
        // A stale allow is judged only where its smell is: not in a spec that could not be
        // run, and for a duplicate name only when the whole suite of the contract is linted.
        let (smells, allowed) = apply_allows(header, smells, |smell| {
            judged && (smell != DUPLICATE_NAME || whole.contains(spec.contract.name()))
        });
        report.allowed += allowed;
        for (id, position, message) in smells {
            if options.allow.contains(&id) {
                report.allowed += 1;
                continue;
            }
            report.findings.push(LintFinding {
                id,
                location: Location::Spec {
                    path: path.clone(),
                    position,
                    source_line: spec.file.excerpt(position),
                },
                message,
            });
        }
    }
    for finding in uncovered_rules(paths, &whole, &covered) {
        if options.allow.contains(&finding.id) {
            report.allowed += 1;
        } else {
            report.findings.push(finding);
        }
    }
    Ok(report)
}

/// The contracts whose rule coverage a lint of `paths` judges. With `coverage`, every contract
/// the linted specs use. Otherwise only contracts whose whole folder is linted: a folder given
/// is named after the contract (`specs/dlq-consumer`), or holds a folder named after it
/// (`specs`, which holds a folder of specs per contract). A few files, or a
/// folder of some other name, cover few rules and say nothing of the others.
pub(crate) fn whole_contracts(
    paths: &[PathBuf],
    coverage: bool,
    used: &BTreeSet<&'static str>,
) -> BTreeSet<&'static str> {
    let is_dir = |path: &std::path::Path| std::fs::metadata(path).is_ok_and(|m| m.is_dir());
    crate::contracts::all()
        .iter()
        .map(|contract| contract.name())
        .filter(|name| {
            coverage && used.contains(name)
                || paths.iter().filter(|path| is_dir(path)).any(|path| {
                    let named = std::fs::canonicalize(path)
                        .ok()
                        .and_then(|real| real.file_name().map(|n| n == *name))
                        .unwrap_or(false);
                    named || is_dir(&path.join(name))
                })
        })
        .collect()
}

/// Rules of the `contracts` that no linted spec covers (claims and exercises).
fn uncovered_rules(
    paths: &[PathBuf],
    contracts: &BTreeSet<&'static str>,
    covered: &BTreeSet<&'static str>,
) -> Vec<LintFinding> {
    let folders: Vec<String> = paths.iter().map(|p| display_path(p)).collect();
    crate::contracts::all()
        .iter()
        .filter(|contract| contracts.contains(contract.name()))
        .flat_map(|contract| contract.rules())
        .filter(|rule| !covered.contains(rule.id))
        .map(|rule| LintFinding {
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
pub(crate) fn render(report: &LintReport, palette: &Palette) -> String {
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
    let errors = report.spec_errors.iter().map(SpecError::count).sum();
    let mut closing = match (report.findings.len(), errors) {
        (0, 0) => format!("no smells in {specs}"),
        (n, 0) => format!("{} in {specs}", plural(n, "smell")),
        (n, e) => format!(
            "{} and {} in {specs}",
            plural(n, "smell"),
            plural(e, "spec error")
        ),
    };
    if report.allowed > 0 {
        closing.push_str(&format!(" ({} allowed)", report.allowed));
    }
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
    use crate::contracts::builtin::Builtin;

    /// Lints `files` written in a folder named `folder` inside a temporary one, as `options` say.
    fn lint_in(folder: &str, files: &[(&str, &str)], options: &LintOptions) -> LintReport {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(folder);
        std::fs::create_dir(&folder).unwrap();
        for (name, text) in files {
            std::fs::write(folder.join(name), text).unwrap();
        }
        lint(&[folder], options, &mut Builtin::new()).unwrap()
    }

    /// Lints `files` as the whole dlq-consumer folder.
    fn lint_folder(files: &[(&str, &str)]) -> LintReport {
        lint_in("dlq-consumer", files, &LintOptions::default())
    }

    fn shown(report: &LintReport) -> Vec<String> {
        report
            .findings
            .iter()
            .map(|f| match &f.location {
                Location::Spec { position, .. } => {
                    format!(
                        "{}:{} {}: {}",
                        position.line, position.column, f.id, f.message
                    )
                }
                Location::Rule(rule) => format!("{rule} {}", f.id),
            })
            .collect()
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
    fn coverage_is_judged_for_a_whole_contract_folder_or_when_asked() {
        let uncovered = |report: &LintReport| {
            report
                .findings
                .iter()
                .filter(|f| f.id == UNCOVERED_RULE)
                .count()
        };
        let rules = crate::contracts::all()[0].rules().len();
        let plain = LintOptions::default();
        assert_eq!(
            uncovered(&lint_in("some-specs", &[("a.yaml", CLEAN)], &plain)),
            0
        );
        let asked = LintOptions {
            coverage: true,
            ..LintOptions::default()
        };
        assert_eq!(
            uncovered(&lint_in("some-specs", &[("a.yaml", CLEAN)], &asked)),
            rules - 1
        );
        assert_eq!(uncovered(&lint_folder(&[("a.yaml", CLEAN)])), rules - 1);
        // A folder holding a contract folder (`specs`) is whole too.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("dlq-consumer")).unwrap();
        std::fs::write(dir.path().join("dlq-consumer/a.yaml"), CLEAN).unwrap();
        let report = lint(&[dir.path().to_path_buf()], &plain, &mut Builtin::new()).unwrap();
        assert_eq!(uncovered(&report), rules - 1);
        // A file alone is never whole.
        let file = dir.path().join("dlq-consumer/a.yaml");
        let report = lint(&[file], &plain, &mut Builtin::new()).unwrap();
        assert_eq!(uncovered(&report), 0);
    }

    #[test]
    fn a_spec_allows_a_smell_with_a_reason_and_a_stale_allow_is_a_smell() {
        let idle = CLEAN.replace(
            "  - process: none\n",
            "  - process: none\n  - process: none\n",
        );
        let allowing = format!(
            "{idle}allow:\n  - {{smell: idle-trailing-step, reason: the second look is the point}}\n"
        );
        let plain = LintOptions::default();
        let report = lint_in("x", &[("a.yaml", &idle)], &plain);
        assert_eq!(
            shown(&report),
            [
                "6:5 idle-trailing-step: step 2 (process) repeats step 1 on a drained queue and changes nothing"
            ]
        );
        assert_eq!(report.allowed, 0);
        let report = lint_in("x", &[("a.yaml", &allowing)], &plain);
        assert_eq!(shown(&report), Vec::<String>::new());
        assert_eq!(report.allowed, 1);
        let stale = format!("{CLEAN}allow:\n  - {{smell: idle-trailing-step, reason: r}}\n");
        assert_eq!(
            shown(&lint_in("x", &[("a.yaml", &stale)], &plain)),
            [
                "7:13 stale-allow: the spec allows `idle-trailing-step`, but has no such smell: remove the allow, since it would hide the smell if it came back unnoticed"
            ]
        );
        // `--allow` leaves a smell out everywhere, a stale allow too.
        let everywhere = LintOptions {
            allow: vec!["idle-trailing-step", STALE_ALLOW],
            ..LintOptions::default()
        };
        let report = lint_in(
            "x",
            &[
                ("a.yaml", &idle),
                ("b.yaml", &stale.replace("name: empty", "name: other")),
            ],
            &everywhere,
        );
        assert_eq!(shown(&report), Vec::<String>::new());
        assert_eq!(report.allowed, 2);
    }

    #[test]
    fn an_allow_without_a_reason_or_of_an_unknown_smell_is_a_spec_error_at_its_place() {
        for (allow, at, says) in [
            (
                "{smell: idle-trailing-step}",
                "7:5",
                "the allow of `idle-trailing-step` has no `reason`",
            ),
            (
                "{smell: idle-trailing-step, reason: \"  \"}",
                "7:41",
                "the allow of `idle-trailing-step` has an empty `reason`",
            ),
            (
                "{smell: idle-trailing-stp, reason: r}",
                "7:13",
                "`idle-trailing-stp` is not a smell id (did you mean `idle-trailing-step`?)",
            ),
            (
                "{smell: uncovered-rule, reason: r}",
                "7:13",
                "`uncovered-rule` cannot be allowed in a spec",
            ),
        ] {
            let text = format!("{CLEAN}allow:\n  - {allow}\n");
            let report = lint_in("x", &[("a.yaml", &text)], &LintOptions::default());
            let error = report
                .spec_errors
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                error.contains(&format!("a.yaml:{at}: {says}")),
                "{allow}: {error}"
            );
        }
    }

    #[test]
    fn rules_no_spec_covers_are_found_for_the_contracts_in_use() {
        let report = lint_folder(&[("a.yaml", CLEAN)]);
        let uncovered: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.id == UNCOVERED_RULE)
            .collect();
        let rules = crate::contracts::all()[0].rules().len();
        assert_eq!(uncovered.len(), rules - 1);
        assert!(
            !uncovered
                .iter()
                .any(|f| f.location == Location::Rule("dlq-consumer/empty-queue".into()))
        );
    }
}
