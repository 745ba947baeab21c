//! A solution's entry file and language: the file a submission (a file or a folder) runs, by
//! the documented rule, and the `--impl` value that runs it; used by `--impl auto:PATH` and
//! by `grade`.

use std::path::{Path, PathBuf};

use crate::model::language::Language;

/// The entry files a submission folder is searched for, in this order: `solution.` and each
/// language's extensions, in `Language::ALL`'s order.
pub fn entry_files() -> Vec<String> {
    Language::all_extensions()
        .map(|extension| format!("solution.{extension}"))
        .collect()
}

/// The most file names a message lists of what a folder holds.
const FOUND_SHOWN: usize = 10;

/// Why a submission has no entry file, to be told to whoever reads it: the teacher (the
/// submission's path, `teacher`) or its student (their own files only, `student`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoEntry {
    /// The submission as given.
    pub(crate) submission: PathBuf,
    pub(crate) why: NoEntryWhy,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoEntryWhy {
    /// A file that is not a solution file.
    NotASolution,
    /// Nothing there.
    Missing,
    /// A folder that cannot be read.
    Unreadable(String),
    /// A folder with no solution file: the names of what it holds (at most a few).
    NoSolution { found: Vec<String>, more: usize },
    /// A folder with several solution files, none named `solution.*`.
    Several(Vec<String>),
}

impl NoEntry {
    /// For the teacher: the submission's path and the fix.
    pub(crate) fn teacher(&self) -> String {
        format!("{} {}", self.submission.display(), self.reason())
    }

    /// For the student: the same, naming only their own files.
    pub(crate) fn student(&self) -> String {
        format!("Your submission {}", self.reason())
    }

    /// What is wrong, without the submission's name: `holds no solution file: ...`.
    pub(crate) fn reason(&self) -> String {
        let expected = format!(
            "expected {} (or one file of those kinds, whatever its name)",
            or_list(&entry_files().iter().map(String::as_str).collect::<Vec<_>>())
        );
        match &self.why {
            NoEntryWhy::NotASolution => format!("is not a solution file: {expected}"),
            NoEntryWhy::Missing => "does not exist".to_owned(),
            NoEntryWhy::Unreadable(error) => format!("cannot be read: {error}"),
            NoEntryWhy::NoSolution { found, more } if found.is_empty() && *more == 0 => {
                format!("holds no solution file: {expected}; it is empty")
            }
            NoEntryWhy::NoSolution { found, more } => {
                let more = match more {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                format!(
                    "holds no solution file: {expected}; found {}{more}",
                    found.join(", ")
                )
            }
            NoEntryWhy::Several(found) => format!(
                "holds {} solution files and none is named solution.*, so which one runs is unclear: {}; name the one to run solution.* (e.g. solution.py)",
                found.len(),
                found.join(", ")
            ),
        }
    }
}

/// `a, b or c`.
fn or_list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl std::fmt::Display for NoEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.teacher())
    }
}

/// The file a submission's grading runs: the file itself, or the entry file of a folder.
pub(crate) fn entry_file(submission: &Path) -> Result<PathBuf, String> {
    find_entry(submission).map_err(|no| no.teacher())
}

/// `entry_file`, telling why there is none in a form for the teacher and for the student.
pub(crate) fn find_entry(submission: &Path) -> Result<PathBuf, NoEntry> {
    let no = |why| NoEntry {
        submission: submission.to_path_buf(),
        why,
    };
    if submission.is_file() {
        return match language(submission) {
            Some(_) => Ok(submission.to_path_buf()),
            None => Err(no(NoEntryWhy::NotASolution)),
        };
    }
    if !submission.is_dir() {
        return Err(no(NoEntryWhy::Missing));
    }
    for name in entry_files() {
        let candidate = submission.join(name);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    let mut names: Vec<(bool, String)> = std::fs::read_dir(submission)
        .map_err(|e| no(NoEntryWhy::Unreadable(e.to_string())))?
        .filter_map(Result::ok)
        .map(|entry| {
            let path = entry.path();
            let solution = path.is_file()
                && language(&path).is_some()
                && !path.to_string_lossy().ends_with(".d.ts");
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                name.push('/');
            }
            (solution, name)
        })
        .filter(|(_, name)| !name.starts_with('.'))
        .collect();
    names.sort();
    let solutions: Vec<String> = names
        .iter()
        .filter(|(solution, _)| *solution)
        .map(|(_, name)| name.clone())
        .collect();
    match solutions.as_slice() {
        [only] => Ok(submission.join(only)),
        [] => {
            let more = names.len().saturating_sub(FOUND_SHOWN);
            let found = names
                .into_iter()
                .take(FOUND_SHOWN)
                .map(|(_, name)| name)
                .collect();
            Err(no(NoEntryWhy::NoSolution { found, more }))
        }
        _ => Err(no(NoEntryWhy::Several(solutions))),
    }
}

/// The language of a solution file at `path`, by its extension, if it is one.
pub(crate) fn language(path: &Path) -> Option<Language> {
    Language::of_extension(path.extension()?.to_str()?)
}

/// The `--impl` value that runs an entry file.
pub(crate) fn implementation(entry: &Path) -> String {
    let language = language(entry).unwrap_or(Language::JavaScript);
    format!("{}:{}", language.prefix(), entry.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_names_its_entry_file_by_the_documented_rule() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(
            entry_file(&empty)
                .unwrap_err()
                .contains("holds no solution file")
        );
        // The student is told what was expected and what was found, without the folder's path.
        let misnamed = dir.path().join("misnamed");
        std::fs::create_dir(&misnamed).unwrap();
        std::fs::write(misnamed.join("solution.py.txt"), "").unwrap();
        std::fs::create_dir(misnamed.join("notes")).unwrap();
        let told = find_entry(&misnamed).unwrap_err();
        assert_eq!(
            told.student(),
            "Your submission holds no solution file: expected solution.py, solution.ts, solution.mjs, solution.js, solution.cjs, solution.mts or solution.cts (or one file of those kinds, whatever its name); found notes/, solution.py.txt"
        );
        assert!(told.teacher().starts_with(&misnamed.display().to_string()));
        assert!(
            find_entry(&empty)
                .unwrap_err()
                .student()
                .ends_with("; it is empty")
        );
        let one = dir.path().join("one");
        std::fs::create_dir(&one).unwrap();
        std::fs::write(one.join("given.d.ts"), "").unwrap();
        std::fs::write(one.join("consumer.ts"), "").unwrap();
        assert_eq!(entry_file(&one).unwrap(), one.join("consumer.ts"));
        std::fs::write(one.join("helper.py"), "").unwrap();
        assert!(entry_file(&one).unwrap_err().contains("2 solution files"));
        assert!(
            find_entry(&one)
                .unwrap_err()
                .student()
                .contains(": consumer.ts, helper.py; name the one to run solution.*")
        );
        std::fs::write(one.join("solution.js"), "").unwrap();
        std::fs::write(one.join("solution.py"), "").unwrap();
        assert_eq!(entry_file(&one).unwrap(), one.join("solution.py"));
        assert_eq!(
            implementation(&one.join("solution.py")).split(':').next(),
            Some("python")
        );
        assert_eq!(
            implementation(&one.join("x.ts")).split(':').next(),
            Some("node")
        );
        assert!(entry_file(&one.join("README.md")).is_err());
    }
}
