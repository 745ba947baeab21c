//! `grade --merge DIR...`: the shards' `summary.json` read back, their rows joined into one
//! class (refused when a submission or a report name is in two), and what the merged page says
//! of the suite.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::run::grading::class::sort_key;
use crate::run::grading::row::Graded;
use crate::run::grading::suite::About;
use crate::run::grading::summary::{SUMMARY_JSON, read_summary_about};

/// The shards `--merge` names, read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Shards {
    /// Each shard's `summary.json` and its rows, in the order given.
    pub(crate) rows: Vec<(PathBuf, Vec<Graded>)>,
    /// What each says of its grading, when it says it.
    pub(crate) abouts: Vec<Option<About>>,
    /// The shard folder each report name's reports are in: the first to name it.
    pub(crate) sources: BTreeMap<String, PathBuf>,
}

/// Reads the shards in `dirs`, each a folder a `dlqspec grade --output DIR` wrote; every error
/// names the folder (or its `summary.json`) and says what to give instead.
pub(crate) fn read_shards(dirs: &[PathBuf]) -> Result<Shards, String> {
    let mut shards = Shards::default();
    for dir in dirs {
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "shard {} is not a folder: give the folders `dlqspec grade --output DIR` wrote",
                    dir.display()
                ));
            }
            Err(error) => {
                return Err(format!(
                    "shard folder {} cannot be read ({error}): give the folders `dlqspec grade --output DIR` wrote",
                    dir.display()
                ));
            }
        }
        let file = dir.join(SUMMARY_JSON);
        if std::fs::symlink_metadata(&file).is_err() {
            return Err(format!(
                "shard folder {} holds no {}: was it written by `dlqspec grade --output {}` (whose grading finished)?",
                dir.display(),
                SUMMARY_JSON,
                dir.display()
            ));
        }
        let (rows, about) = read_summary_about(&file)?;
        shards.abouts.push(about);
        for row in &rows {
            shards
                .sources
                .entry(row.name.clone())
                .or_insert_with(|| dir.clone());
        }
        shards.rows.push((file, rows));
    }
    Ok(shards)
}

/// The rows of several shards as one class, sorted by [`sort_key`]; refused when a
/// submission, or a report name, is in two shards (its reports would overwrite each other).
pub(crate) fn merge(shards: Vec<(PathBuf, Vec<Graded>)>) -> Result<Vec<Graded>, String> {
    let mut by_submission: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut by_name: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut rows = Vec::new();
    for (file, shard) in shards {
        for row in shard {
            if let Some(first) = by_submission.insert(row.submission.clone(), file.clone()) {
                return Err(format!(
                    "submission {} is in both {} and {}: each submission must be graded by one shard (a shard given twice, or shards of different --partition counts?)",
                    row.submission,
                    first.display(),
                    file.display()
                ));
            }
            if let Some(first) = by_name.insert(row.name.clone(), file.clone()) {
                return Err(format!(
                    "the report name {} is used in both {} and {}: grade every shard with the same submission list so that names are given out once",
                    row.name,
                    first.display(),
                    file.display()
                ));
            }
            rows.push(row);
        }
    }
    rows.sort_by_cached_key(|row| sort_key(Path::new(&row.submission)));
    Ok(rows)
}

/// What a merged class's page says of its grading: the shards' suite when every shard says
/// the same one (the first shard's date and dlqspec), else none.
pub(crate) fn merged_about(abouts: &[Option<About>]) -> Option<About> {
    let first = abouts.first()?.clone()?;
    abouts
        .iter()
        .all(|about| {
            about
                .as_ref()
                .is_some_and(|about| about.digest == first.digest && about.folders == first.folders)
        })
        .then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::grading::row::{Marks, Status};

    #[test]
    fn merging_refuses_a_submission_or_a_report_name_in_two_shards() {
        let row = |submission: &str, name: &str| Graded {
            marks: Marks {
                score: 1.0,
                passed: 1,
                ..Marks::default()
            },
            ..Graded::for_test(submission, name, Status::Pass)
        };
        let merged = merge(vec![
            (PathBuf::from("s2/summary.json"), vec![row("b.py", "b.py")]),
            (PathBuf::from("s1/summary.json"), vec![row("a.py", "a.py")]),
        ])
        .unwrap();
        assert_eq!(merged[0].submission, "a.py");
        let error = merge(vec![
            (PathBuf::from("s1/summary.json"), vec![row("a.py", "a.py")]),
            (PathBuf::from("s2/summary.json"), vec![row("a.py", "a.py")]),
        ])
        .unwrap_err();
        assert!(
            error.contains("a.py is in both s1/summary.json and s2/summary.json"),
            "{error}"
        );
        let error = merge(vec![
            (
                PathBuf::from("s1/summary.json"),
                vec![row("x/a.py", "a.py")],
            ),
            (
                PathBuf::from("s2/summary.json"),
                vec![row("y/a.py", "a.py")],
            ),
        ])
        .unwrap_err();
        assert!(
            error.contains("the report name a.py is used in both"),
            "{error}"
        );
    }

    #[test]
    fn a_merged_page_names_the_suite_only_when_every_shard_says_the_same_one() {
        let about = |digest: &str, folder: &str| About {
            folders: vec![folder.to_owned()],
            specs: 3,
            digest: digest.to_owned(),
            graded: format!("graded with {digest}"),
            dlqspec: "0.1.0".to_owned(),
        };
        let first = about("abc", "specs");
        // The same suite, graded at another time: the first shard's date.
        let later = About {
            graded: "later".to_owned(),
            ..first.clone()
        };
        assert_eq!(
            merged_about(&[Some(first.clone()), Some(later)]),
            Some(first.clone())
        );
        assert_eq!(
            merged_about(&[Some(first.clone()), Some(about("def", "specs"))]),
            None
        );
        assert_eq!(
            merged_about(&[Some(first.clone()), Some(about("abc", "other"))]),
            None
        );
        // A shard that says nothing of its suite could have graded any.
        assert_eq!(merged_about(&[Some(first), None]), None);
        assert_eq!(merged_about(&[]), None);
    }

    #[test]
    fn a_shard_that_is_no_grading_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("shard.txt");
        std::fs::write(&file, "").unwrap();
        let error = read_shards(&[file]).unwrap_err();
        assert!(error.contains("is not a folder"), "{error}");
        let error = read_shards(&[dir.path().join("missing")]).unwrap_err();
        assert!(error.contains("cannot be read"), "{error}");
        let error = read_shards(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(error.contains("holds no summary.json"), "{error}");
        assert_eq!(read_shards(&[]).unwrap(), Shards::default());
    }
}
