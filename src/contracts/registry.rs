//! The one list of contracts. Adding a contract is adding its line here.

use super::dlq_consumer::DlqConsumerContract;
use serde_json::Value;

use crate::contracts::builtin::{Builtin, Subject};
use crate::contracts::contract::Contract;
use crate::model::implementation::{ImplError, ImplInfo, Reply, WorldHost};

/// The contracts written in Rust.
pub static BUILT_IN: &[&dyn Contract] = &[&DlqConsumerContract];

/// Every contract: the built-in ones, then the exercise folders registered so far.
pub fn all() -> Vec<&'static dyn Contract> {
    let mut all: Vec<&'static dyn Contract> = BUILT_IN.to_vec();
    all.extend(
        super::exercise::registered()
            .into_iter()
            .map(|c| c as &'static dyn Contract),
    );
    all
}

pub fn find(name: &str) -> Option<&'static dyn Contract> {
    BUILT_IN
        .iter()
        .copied()
        .find(|c| c.name() == name)
        .or_else(|| super::exercise::find(name).map(|c| c as &'static dyn Contract))
}

/// Whether the named contract is one written in Rust (`BUILT_IN`), not an exercise folder.
pub(crate) fn is_built_in(name: &str) -> bool {
    BUILT_IN.iter().any(|c| c.name() == name)
}

pub(crate) fn names() -> Vec<&'static str> {
    all().iter().map(|c| c.name()).collect()
}

pub use super::exercise::Launcher;

/// The file that makes a folder an exercise (`exercise.yaml`).
pub const EXERCISE_FILE: &str = super::exercise::definition::EXERCISE_FILE;

/// The exercise folder a spec path belongs to: the folder holding `exercise.yaml` at or above it.
pub fn exercise_folder_of(path: &std::path::Path) -> Option<std::path::PathBuf> {
    super::exercise::folder_of(path)
}

/// The registered exercise a spec path belongs to (its folder holds `exercise.yaml`).
pub(crate) fn exercise_of_path(path: &std::path::Path) -> Option<&'static dyn Contract> {
    super::exercise::of_path(path).map(|c| c as &'static dyn Contract)
}

/// How messages name the reference of the contract named `contract`: as its author knows an
/// exercise's (`the reference (reference.py)`), else `built_in`, the words said of a contract
/// written in Rust. Capitalised when `built_in` is.
pub(crate) fn reference_called(contract: &str, built_in: &str) -> String {
    match find(contract).and_then(|c| c.reference_name()) {
        Some(name) if built_in.starts_with(char::is_uppercase) => {
            let mut chars = name.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        }
        Some(name) => name,
        None => built_in.to_owned(),
    }
}

/// `reference_called`, of the contract the spec at `path` belongs to.
pub(crate) fn reference_of_path(path: &std::path::Path, built_in: &str) -> String {
    match exercise_of_path(path) {
        Some(contract) => reference_called(contract.name(), built_in),
        None => built_in.to_owned(),
    }
}

/// The files besides the spec at `path` that its verdict depends on: its exercise's
/// `exercise.yaml` and reference (none for a contract written in Rust, whose rules are dlqspec's).
pub(crate) fn verdict_files(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    match super::exercise::of_path(path) {
        Some(exercise) => exercise.verdict_files(),
        None => super::exercise::folder_of(path)
            .map(|folder| vec![folder.join(EXERCISE_FILE)])
            .unwrap_or_default(),
    }
}

/// The one error of the reference of the exercise registered from `folder` when it does not
/// load (`ExerciseContract::reference_error`); `None` when it does, or nothing is registered
/// from there.
pub(crate) fn exercise_reference_error(
    folder: &std::path::Path,
) -> Option<crate::text::spec_error::SpecError> {
    super::exercise::of_path(folder)?.reference_error()
}

/// Reads the exercise folder `folder` and registers it as a contract (`exercise::register`),
/// its programs started by `launcher`; returns its name.
pub fn register_exercise(
    folder: &std::path::Path,
    launcher: std::sync::Arc<Launcher>,
) -> Result<&'static str, crate::text::spec_error::SpecError> {
    let built_in: Vec<&str> = BUILT_IN.iter().map(|c| c.name()).collect();
    super::exercise::register(folder, launcher, &built_in)
}

/// The reference subject of the named contract.
pub(crate) fn reference_subject(
    contract: &str,
    args: &Value,
    world: &mut dyn WorldHost,
) -> Result<Result<Box<dyn Subject>, Reply>, ImplError> {
    match find(contract) {
        Some(contract) => contract.create_builtin(args, world),
        None => Ok(Err(Reply::Skipped(format!(
            "no built-in implementation of `{contract}`"
        )))),
    }
}

// The reference is made here, where the contracts are listed: `builtin.rs` knows none of them.
impl Builtin {
    /// The built-in reference implementation: each contract's own reference subject.
    pub fn new() -> Self {
        let info = ImplInfo {
            label: "builtin".into(),
            language: "rust".into(),
            is_reference: true,
        };
        Self::from_subjects(info, Box::new(reference_subject))
    }
}

impl Default for Builtin {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::BUILT_IN;

    /// `dlqspec rules` heads each contract with its title: it names the class a solution
    /// writes and where the contract is stated, never a lesson's internal number.
    #[test]
    fn a_contracts_title_names_its_class_and_where_it_is_stated() {
        for contract in BUILT_IN {
            let title = contract.title();
            assert!(
                title.contains(&format!("the class {}", contract.subject())),
                "{title}"
            );
            assert!(title.contains("docs/contracts.md"), "{title}");
            assert!(!title.contains("lesson 0"), "{title}");
        }
    }
}
