//! Loading a spec file whatever its contract: read it, find its contract, let that parse it.

use std::path::Path;

use serde::Deserialize;

use crate::contracts;
use crate::contracts::contract::{Checkpoint, Contract, RunMode, Scenario, ScenarioRun};
use crate::load::discover::{DiscoveredPath, FoundSpec};
use crate::model::cause::Departure;
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;
use crate::model::world::WorldChoice;
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::{SpecError, SpecErrorKind};
use crate::text::yaml::edit;
use crate::text::yaml::locate;
use crate::text::yaml::{self, Spanned};

/// A spec ready to run.
pub struct LoadedSpec {
    pub file: SourceFile,
    pub contract: &'static dyn Contract,
    pub scenario: Box<dyn Scenario>,
}

impl LoadedSpec {
    /// Runs the scenario, with a mismatch pointing at the first value that differs.
    pub fn run(&self, implementation: &mut dyn Implementation, mode: RunMode) -> ScenarioRun {
        self.run_in(implementation, mode, &WorldChoice::Fake)
    }

    /// `run`, on `world`.
    pub(crate) fn run_in(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
        world: &WorldChoice,
    ) -> ScenarioRun {
        let run = match world {
            WorldChoice::Fake => self.scenario.run(implementation, mode),
            world => self.scenario.run_in(implementation, mode, world),
        };
        self.pinpointed(run)
    }

    /// `run` on `world`, with the departure behind a mismatch (`Scenario::diagnose`): what a
    /// failure's cause is made from. The reference a departure is found against acts on the
    /// fake, so on a broker's queue the run is not diagnosed.
    pub(crate) fn diagnose_in(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
        world: &WorldChoice,
    ) -> (ScenarioRun, Option<Departure>) {
        match world {
            WorldChoice::Fake => {
                let (run, departure) = self.scenario.diagnose(implementation, mode);
                (self.pinpointed(run), departure)
            }
            world => (self.run_in(implementation, mode, world), None),
        }
    }

    /// The run, its mismatch pointing at the first value that differs.
    fn pinpointed(&self, mut run: ScenarioRun) -> ScenarioRun {
        run.outcome = match run.outcome {
            Outcome::Divergence(mut divergence) => {
                divergence.failure = pinpoint(divergence.failure, &run.checkpoints, &self.file);
                Outcome::Divergence(divergence)
            }
            outcome => pinpoint(outcome, &run.checkpoints, &self.file),
        };
        run
    }
}

/// Moves a mismatch's position from the expectation block to the first value in it that
/// differs, so reports and CI annotations point at the very line to look at.
fn pinpoint(outcome: Outcome, checkpoints: &[Checkpoint], file: &SourceFile) -> Outcome {
    let Outcome::Mismatch(mut mismatch) = outcome else {
        return outcome;
    };
    let differing = checkpoints
        .iter()
        .filter(|c| !c.matches() && c.position == mismatch.position)
        .flat_map(|c| c.written.iter())
        .find(|w| !w.matches());
    if let Some(written) = differing {
        // Parsing again costs a little, and only for a spec that failed: the fast load's
        // tree first (light enough for a spec of 10^5 messages), `edit`'s for a spec
        // that tree declines (anchors, tags).
        let (expected, actual) = (&written.expected, &written.actual);
        if let Some(position) =
            yaml::first_difference(&file.text, written.at, &written.path, expected, actual)
        {
            mismatch.position = position;
        } else if let Ok(document) = edit::Document::parse(&file.text)
            && let Ok(node) = document.find(written.at, &written.path)
        {
            mismatch.position = locate::first_difference(node, expected, actual).position;
        }
    }
    Outcome::Mismatch(mismatch)
}

/// Only the `contract` key, to pick the vocabulary for the rest of the file.
#[derive(Deserialize)]
struct ContractProbe {
    contract: Option<Spanned<String>>,
}

pub fn load_path(path: &Path) -> Result<LoadedSpec, SpecError> {
    load(read(path)?)
}

/// Loads what a discovery entry holds: a spec (checking it is still the file discovery
/// found), or the error of a path that cannot be read.
pub fn load_entry(entry: &DiscoveredPath) -> Result<LoadedSpec, SpecError> {
    match entry {
        DiscoveredPath::Spec(found) => load(read_found(found)?),
        DiscoveredPath::Unreadable { path, reason } => Err(unreadable(path, reason)),
    }
}

/// Reads a spec file (bounded, never blocking); a file that cannot be read is a spec error.
pub(crate) fn read(path: &Path) -> Result<SourceFile, SpecError> {
    SourceFile::read(path).map_err(|error| unreadable(path, &error.to_string()))
}

/// Reads a spec as discovery found it.
pub(crate) fn read_found(found: &FoundSpec) -> Result<SourceFile, SpecError> {
    SourceFile::read_checked(&found.path, found.identity)
        .map_err(|error| unreadable(&found.path, &error.to_string()))
}

/// The spec error of a path that cannot be read, and why.
pub(crate) fn unreadable(path: &Path, why: &str) -> SpecError {
    SpecError {
        kind: SpecErrorKind::Unreadable,
        path: crate::text::source::display_path(path),
        position: Position::START,
        message: format!("cannot read the spec: {why}"),
        source_line: None,
        more: Vec::new(),
        untold: None,
    }
}

pub fn load(file: SourceFile) -> Result<LoadedSpec, SpecError> {
    let contract = match plain_contract_line(&file.text).and_then(contracts::find) {
        Some(contract) => contract,
        None => probe_contract(&file)?,
    };
    let scenario = match contract.load(&file) {
        Ok(scenario) => scenario,
        Err(mut error) => {
            reword_other_contracts_steps(&file, contract, &mut error);
            // The rule ids are checked even so, so that one run tells every mistake: read on
            // their own, as they are not in what the contract could not load.
            let rules = yaml::parse::<RulesProbe>(&file).map_or_else(|_| Vec::new(), |p| p.rules);
            let written: Vec<(String, Position)> = rules
                .iter()
                .map(|rule| (rule.value.clone(), yaml::at(rule)))
                .collect();
            let unknown = unknown_rules(&file, contract, &written);
            return Err(
                SpecError::combine(std::iter::once(error.clone()).chain(unknown)).unwrap_or(error),
            );
        }
    };
    if let Some(error) =
        SpecError::combine(unknown_rules(&file, contract, &scenario.header().rules))
    {
        return Err(error);
    }
    Ok(LoadedSpec {
        file,
        contract,
        scenario,
    })
}

/// An unknown step that is a step of another contract (`create` in a dlq-consumer spec) is
/// told as such, with the line that names this spec's contract and its nearest step: the
/// author most likely wrote the spec for the other contract, or named the wrong one.
fn reword_other_contracts_steps(file: &SourceFile, contract: &dyn Contract, error: &mut SpecError) {
    let own = contract.step_kinds();
    let expected = format!(", expected one of {}", own.join(", "));
    let line = file
        .text
        .lines()
        .position(|line| line.starts_with("contract:"))
        .map(|index| format!(" (line {})", index + 1))
        .unwrap_or_default();
    let reword = |message: &str| -> Option<String> {
        let word = message.strip_prefix("unknown value `")?.split('`').next()?;
        if !message.ends_with(&expected) {
            return None;
        }
        let other = crate::contracts::all()
            .into_iter()
            .find(|other| other.name() != contract.name() && other.step_kinds().contains(&word))?;
        let article = if other.name().starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        let nearest = crate::text::suggest::closest(word, own)?;
        Some(format!(
            "`{word}` is {article} {} step; this spec's contract is {}{line}, whose nearest step is `{nearest}`; expected one of {}",
            other.name(),
            contract.name(),
            own.join(", ")
        ))
    };
    // `process: ok` in a spec whose `process` takes a mapping: a step written in another contract's way.
    let reword_word_step = |message: &str| -> Option<String> {
        let rest = message.strip_prefix('`')?;
        let (kind, rest) = rest.split_once("` takes a mapping")?;
        let word = rest.strip_prefix(", not a word: `")?.split('`').next()?;
        let other = crate::contracts::all().into_iter().find(|other| {
            other.name() != contract.name() && other.step_words(kind).contains(&word)
        })?;
        let article = if other.name().starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        let (_, told) = message.split_once(": ")?;
        Some(format!(
            "`{kind}: {word}` is how {article} {} spec writes a step; in {} {} spec `{kind}` takes a mapping: {told}",
            other.name(),
            if contract.name().starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            },
            contract.name(),
        ))
    };
    let reword = |message: &str| reword(message).or_else(|| reword_word_step(message));
    if let Some(message) = reword(&error.message) {
        error.message = message;
    }
    for one in &mut error.more {
        if let Some(message) = reword(&one.message) {
            one.message = message;
        }
    }
}

/// Only the `rules` key, to check the rule ids of a spec its contract could not load.
#[derive(Deserialize)]
struct RulesProbe {
    #[serde(default)]
    rules: Vec<Spanned<String>>,
}

/// An error for each rule id `contract` does not have, with the nearest one it has.
fn unknown_rules(
    file: &SourceFile,
    contract: &dyn Contract,
    written: &[(String, Position)],
) -> Vec<SpecError> {
    let ids: Vec<&str> = contract.rules().iter().map(|r| r.id).collect();
    written
        .iter()
        .filter(|(rule, _)| !ids.contains(&rule.as_str()))
        .map(|(rule, position)| {
            let near = crate::text::suggest::hint(rule, &ids);
            SpecError::invalid(
                file,
                *position,
                format!(
                    "unknown rule `{rule}`{near}; `dlqspec rules` lists the rules of {}",
                    contract.name()
                ),
            )
        })
        .collect()
}

/// The value of a plain `contract: name` line that opens the file, if it has one.
///
/// Parsing YAML is most of the cost of loading a spec; reading the contract off its line saves
/// a second full parse. Only the first content line is trusted: nothing before it can make it
/// part of a multi-line string, and a column-0 key is a top-level key. The next line must not be
/// indented, or it would continue the value. The contract's own parse then checks the whole file.
fn plain_contract_line(text: &str) -> Option<&str> {
    let mut lines = content_lines(text).map(|(_, line)| line);
    let value = lines.next()?.strip_prefix("contract:")?;
    if lines
        .next()
        .is_some_and(|next| next.starts_with([' ', '\t']))
    {
        return None;
    }
    let value = value.split(" #").next()?.trim();
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then_some(value)
}

/// The lines that hold YAML content, with their 0-based index: past comments (such as the
/// schema line), blank lines and document markers.
fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter(|(_, line)| {
        let content = line.trim();
        !content.is_empty() && !content.starts_with('#') && content != "---"
    })
}

/// Finds the contract the slow way, with a positioned error when there is none.
fn probe_contract(file: &SourceFile) -> Result<&'static dyn Contract, SpecError> {
    if content_lines(&file.text).next().is_none() {
        return Err(SpecError::at(
            file,
            Position::START,
            SpecErrorKind::Syntax,
            format!(
                "the file is empty: a spec starts with a line `contract: NAME` ({}); `dlqspec new PATH` writes one that passes as written",
                contracts::registry::names()
                    .iter()
                    .map(|name| format!("`contract: {name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let probe: ContractProbe = yaml::parse(file)?;
    let known = contracts::registry::names().join(", ");
    let Some(name) = probe.contract else {
        return Err(SpecError::invalid(
            file,
            first_content(file),
            format!("missing field `contract`; expected one of {known}"),
        ));
    };
    contracts::find(&name.value).ok_or_else(|| {
        SpecError::invalid(
            file,
            yaml::at(&name),
            format!(
                "unknown contract `{}`{}; expected one of {known}",
                name.value,
                crate::text::suggest::hint(&name.value, &contracts::registry::names())
            ),
        )
    })
}

/// Where the YAML content starts: the first content line, at its first non-blank character.
fn first_content(file: &SourceFile) -> Position {
    content_lines(&file.text)
        .next()
        .map_or(Position::START, |(index, line)| {
            Position::new(index + 1, line.len() - line.trim_start().len() + 1)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<LoadedSpec, SpecError> {
        load(SourceFile::from_text("t.yaml", text))
    }

    #[test]
    fn an_unknown_contract_lists_the_known_ones() {
        let error = load_text("contract: nope\nname: x\n").err().unwrap();
        assert!(
            error
                .to_string()
                .starts_with("t.yaml:1:11: unknown contract `nope` (the nearest valid one is `dlq-consumer`); expected one of dlq-consumer"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_contract_is_reported_at_the_start() {
        let error = load_text("name: x\n").err().unwrap();
        assert!(
            error
                .to_string()
                .starts_with("t.yaml:1:1: missing field `contract`"),
            "{error}"
        );
    }

    #[test]
    fn the_contract_line_is_read_without_parsing_when_plain() {
        assert_eq!(
            plain_contract_line("# c\ncontract: dlq-consumer  # why\n"),
            Some("dlq-consumer")
        );
        assert_eq!(plain_contract_line("contract: \"dlq-consumer\"\n"), None);
        assert_eq!(plain_contract_line("  contract: dlq-consumer\n"), None);
        // Not the first content line: it may sit inside a multi-line string.
        assert_eq!(
            plain_contract_line("name: \"x\ncontract: other-contract\n  y\"\n"),
            None
        );
        // An indented next line continues the value.
        assert_eq!(plain_contract_line("contract: dlq\n  -consumer\n"), None);
    }

    #[test]
    fn a_contract_line_inside_a_multi_line_string_is_not_taken_for_the_key() {
        let spec = load_text(
            "description: \"x\ncontract: other-contract\n  y\"\ncontract: dlq-consumer\nname: t\nsteps:\n  - process: none\n",
        );
        assert_eq!(spec.ok().map(|s| s.contract.name()), Some("dlq-consumer"));
    }

    #[test]
    fn a_quoted_contract_still_loads_through_the_parser() {
        assert!(load_text("contract: \"dlq-consumer\"\nname: x\n").is_ok());
    }

    #[test]
    fn a_missing_contract_is_reported_at_the_first_key_past_comments() {
        let error = load_text("# yaml-language-server: $schema=x.json\n\nname: x\n")
            .err()
            .unwrap();
        assert_eq!(error.position, Position::new(3, 1));
        assert!(
            error.message.starts_with("missing field `contract`"),
            "{error}"
        );
    }

    #[test]
    fn an_unknown_rule_is_pointed_at() {
        let error = load_text(
            "contract: dlq-consumer\nname: x\nrules: [dlq-consumer/success, dlq-consumer/nope]\n",
        )
        .err()
        .unwrap();
        assert_eq!(
            error.to_string(),
            "t.yaml:3:31: unknown rule `dlq-consumer/nope` (the nearest valid one is `dlq-consumer/poison`); `dlqspec rules` lists the rules of dlq-consumer"
        );
    }
}
