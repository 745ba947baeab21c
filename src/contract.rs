//! What a contract is: a rule catalogue, a spec vocabulary, a reference implementation.
//!
//! Adding a contract means writing one type that implements `Contract` and listing it in
//! `contracts::registry::CONTRACTS`. The runner, the reporters and the CLI only see these traits.

use serde_json::Value;

use crate::implementation::{ImplError, Implementation, Reply, WorldHost};
use crate::outcome::Outcome;
use crate::rule::Rule;
use crate::source::{Position, SourceFile};
use crate::spec_error::SpecError;

pub trait Contract: Sync {
    /// The name specs give in `contract:`, e.g. `dlq-consumer`.
    fn name(&self) -> &'static str;

    /// One line saying what the contract is about.
    fn title(&self) -> &'static str;

    /// The rule catalogue, in the order reports list it.
    fn rules(&self) -> &'static [Rule];

    /// Parses and checks a spec file that names this contract.
    fn load(&self, file: &SourceFile) -> Result<Box<dyn Scenario>, SpecError>;

    /// A fresh instance of the built-in reference implementation.
    fn create_builtin(
        &self,
        args: &Value,
        world: &mut dyn WorldHost,
    ) -> Result<Box<dyn Subject>, Reply>;
}

/// An instance of a contract's subject (a consumer, a queue...) inside the built-in implementation.
/// `Send` so a built-in implementation can serve specs on a worker thread.
pub trait Subject: Send {
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError>;
}

/// The parts every spec has, whatever its contract.
#[derive(Debug, Clone)]
pub struct SpecHeader {
    pub contract: &'static str,
    pub name: String,
    pub description: String,
    /// Rule ids with where each is written, so an unknown id can be pointed at.
    pub rules: Vec<(String, Position)>,
}

impl SpecHeader {
    pub fn rule_ids(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|(id, _)| id.as_str())
    }
}

/// A loaded spec, ready to run against any implementation.
pub trait Scenario: Send + Sync {
    fn header(&self) -> &SpecHeader;

    fn run(&self, implementation: &mut dyn Implementation, mode: RunMode) -> ScenarioRun;
}

/// Whether a run stops at the first difference (checking) or goes on to record every
/// expectation's actual value (blessing, explaining).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    Check,
    Record,
}

/// One compared expectation: where it is written, what it says, what was observed.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Where the expected value starts in the spec file.
    pub position: Position,
    /// What is compared, e.g. `process` or `expect`.
    pub label: String,
    pub expected: Value,
    pub actual: Value,
}

impl Checkpoint {
    pub fn matches(&self) -> bool {
        self.expected == self.actual
    }
}

/// What running one scenario produced.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    pub outcome: Outcome,
    pub checkpoints: Vec<Checkpoint>,
    /// A person-readable account of what happened, one line per event.
    pub timeline: Vec<String>,
}
