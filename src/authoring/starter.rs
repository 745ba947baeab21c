//! `dlqspec new`: a commented starter spec, written only where no file is.

use std::path::{Path, PathBuf};

use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{Contract, RunMode};
use crate::contracts::{self, registry};
use crate::model::outcome::Outcome;
use crate::text::source::SourceFile;
use crate::text::source::display_path;

use super::schema::SCHEMA_PATH;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NewError {
    #[error("{0} already exists; `dlqspec new` never overwrites a file")]
    Exists(String),
    #[error("unknown contract `{name}`; expected one of {known}")]
    UnknownContract { name: String, known: String },
    #[error(
        "which contract? pass --contract NAME (one of {known}), or put the file in a folder named after the contract"
    )]
    NoContract { known: String },
    #[error("cannot write {path}: {reason}")]
    Io { path: String, reason: String },
}

/// A starter spec written to disk, and what its contract's reference made of it.
#[derive(Debug, Clone)]
pub(crate) struct Created {
    pub(crate) path: String,
    pub(crate) contract: &'static str,
    /// The starter run on the reference as written: `Passed`, or what it did instead (an
    /// exercise's reference is the author's program, and may refuse the first draws).
    pub(crate) outcome: Outcome,
}

/// Writes the starter spec of `contract` (or of the contract the file's folder is named
/// after) to `path`, creating its folder. The spec's name comes from the file's name.
pub(crate) fn create(path: &Path, contract: Option<&str>) -> Result<Created, NewError> {
    let shown = display_path(path);
    if path.exists() {
        return Err(NewError::Exists(shown));
    }
    let contract = choose_contract(path, contract)?;
    let io = |error: std::io::Error| NewError::Io {
        path: shown.clone(),
        reason: error.to_string(),
    };
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).map_err(io)?;
    }
    let mut text = String::new();
    if let Some(schema) = schema_reference(path) {
        text.push_str(&format!("# yaml-language-server: $schema={schema}\n"));
    }
    text.push_str(&contract.starter(&name_from(path)));
    let outcome = on_the_reference(contract, &SourceFile::from_text(path, text.clone()));
    // `create_new`: a file that appeared since the check above is still not overwritten.
    crate::files::new_file::create(path, text.as_bytes()).map_err(|error| match error.kind() {
        std::io::ErrorKind::AlreadyExists => NewError::Exists(shown.clone()),
        _ => io(error),
    })?;
    Ok(Created {
        path: shown,
        contract: contract.name(),
        outcome,
    })
}

/// The spec `file` of `contract` run on its reference.
fn on_the_reference(contract: &dyn Contract, file: &SourceFile) -> Outcome {
    match contract.load(file) {
        Ok(scenario) => scenario.run(&mut Builtin::new(), RunMode::Check).outcome,
        Err(error) => Outcome::SpecError(error),
    }
}

fn choose_contract(path: &Path, asked: Option<&str>) -> Result<&'static dyn Contract, NewError> {
    let known = registry::names().join(", ");
    match asked {
        Some(name) => contracts::find(name).ok_or(NewError::UnknownContract {
            name: name.to_owned(),
            known,
        }),
        None => path
            .parent()
            .and_then(Path::file_name)
            .and_then(|folder| contracts::find(&folder.to_string_lossy()))
            .or_else(|| registry::exercise_of_path(path))
            .ok_or(NewError::NoContract { known }),
    }
}

/// `my-new_case.yaml` is named "my new case".
fn name_from(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = stem.replace(['-', '_'], " ").trim().to_owned();
    if name.is_empty() {
        "a new scenario".to_owned()
    } else {
        name
    }
}

/// The schema's path relative to the spec, when the spec is inside a checkout that has it.
fn schema_reference(path: &Path) -> Option<String> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let folder = std::fs::canonicalize(folder).ok()?;
    folder
        .ancestors()
        .enumerate()
        .find(|(_, ancestor)| ancestor.join(SCHEMA_PATH).is_file())
        .map(|(depth, _)| format!("{}{SCHEMA_PATH}", "../".repeat(depth)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_starter_passes_on_the_builtin_and_has_no_smells() {
        for contract in crate::contracts::all() {
            let file = SourceFile::from_text("new.yaml", contract.starter("a: tricky name"));
            let scenario = contract.load(&file).unwrap();
            assert_eq!(scenario.header().name, "a: tricky name");
            let run = scenario.run(&mut Builtin::new(), RunMode::Check);
            let name = contract.name();
            assert!(
                matches!(run.outcome, Outcome::Passed),
                "{name}: {:?}",
                run.outcome
            );
            assert_eq!(
                scenario.smells(&mut Builtin::new()).unwrap().0,
                vec![],
                "{name}"
            );
        }
    }

    #[test]
    fn the_name_comes_from_the_file_name() {
        assert_eq!(
            name_from(Path::new("a/poison-on-restart.yaml")),
            "poison on restart"
        );
        assert_eq!(name_from(Path::new("-.yaml")), "a new scenario");
    }

    #[test]
    fn the_contract_may_come_from_the_folder() {
        let chosen = choose_contract(Path::new("specs/dlq-consumer/x.yaml"), None).unwrap();
        assert_eq!(chosen.name(), "dlq-consumer");
        assert!(matches!(
            choose_contract(Path::new("elsewhere/x.yaml"), None),
            Err(NewError::NoContract { .. })
        ));
    }

    #[test]
    fn the_schema_is_referenced_relative_to_the_spec() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("schema")).unwrap();
        std::fs::create_dir_all(dir.path().join("specs/c")).unwrap();
        std::fs::write(dir.path().join(SCHEMA_PATH), "{}").unwrap();
        assert_eq!(
            schema_reference(&dir.path().join("specs/c/x.yaml")).as_deref(),
            Some("../../schema/dlqspec.schema.json")
        );
    }

    #[test]
    fn an_existing_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.yaml");
        std::fs::write(&path, "mine").unwrap();
        let error = create(&path, Some("dlq-consumer")).unwrap_err();
        assert!(matches!(error, NewError::Exists(_)));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
    }
}
