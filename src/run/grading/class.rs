//! A class: the submissions a command line names (a class folder opened into its members),
//! the file names their reports share, and the deterministic share of them `--partition` takes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::external::entry::language;
use crate::run::select::Partition;

/// The submissions of a command line, a class folder opened: a folder that holds no solution
/// file but holds folders (a GitHub Classroom clone, a Gradescope export) stands for one
/// submission per folder in it, sorted by name; anything else stands for itself. Hidden
/// folders (`.git`) and links are no submissions: a link could lead out of the class.
pub(crate) fn class_members(submissions: &[PathBuf]) -> Vec<PathBuf> {
    let mut members = Vec::new();
    for submission in submissions {
        match subfolders(submission) {
            Some(folders) => members.extend(folders),
            None => members.push(submission.clone()),
        }
    }
    members
}

/// The members of the class a command line names ([`class_members`]), every shard opening it
/// the same way, before naming; the output folder, when it is inside the class folder, is
/// none of them.
pub(crate) fn members(submissions: &[PathBuf], output: &Path) -> Vec<PathBuf> {
    let output = std::fs::canonicalize(output).ok();
    class_members(submissions)
        .into_iter()
        .filter(|member| output.is_none() || std::fs::canonicalize(member).ok() != output)
        .collect()
}

/// The folders in `submission`, when it is a class folder (a folder with folders in it and no
/// solution file of its own); `None` otherwise.
fn subfolders(submission: &Path) -> Option<Vec<PathBuf>> {
    let meta = std::fs::symlink_metadata(submission).ok()?;
    if !meta.is_dir() {
        return None;
    }
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(submission).ok()?.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_file() && language(&path).is_some() {
            // It has a solution of its own: it is one submission.
            return None;
        }
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if kind.is_dir() && !hidden {
            folders.push(path);
        }
    }
    folders.sort();
    (!folders.is_empty()).then_some(folders)
}

/// What orders a class for `--partition`: a submission's own name (its last component, which
/// does not depend on where the class was checked out), then its path as given, so the same
/// submissions in any order on any machine sort the same way.
pub(crate) fn sort_key(submission: &Path) -> String {
    let name = submission
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}\u{0}{}", submission.to_string_lossy())
}

/// The submissions in the order of their [`sort_key`].
pub(crate) fn sorted(submissions: &[PathBuf]) -> Vec<usize> {
    let keys: Vec<String> = submissions.iter().map(|s| sort_key(s)).collect();
    let mut order: Vec<usize> = (0..submissions.len()).collect();
    order.sort_by(|&a, &b| keys[a].cmp(&keys[b]).then(a.cmp(&b)));
    order
}

/// The indexes (into `submissions`, in the order given) of the share `partition` selects:
/// `K/N` (or `count:K/N`) deals the submissions sorted by [`sort_key`] round-robin, `hash:K/N`
/// by an FNV-1a hash of the key, as `run --partition` does with spec paths.
pub(crate) fn share(submissions: &[PathBuf], partition: Option<&Partition>) -> Vec<usize> {
    let Some(partition) = partition else {
        return (0..submissions.len()).collect();
    };
    let keys: Vec<String> = submissions.iter().map(|s| sort_key(s)).collect();
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    partition
        .mask(&refs)
        .into_iter()
        .enumerate()
        .filter_map(|(i, chosen)| chosen.then_some(i))
        .collect()
}

/// File names for the submissions' reports: their own names, made safe and unique. Given out
/// in [`sort_key`] order, so every shard of a class names each submission the same.
pub(crate) fn report_names(submissions: &[PathBuf]) -> Vec<String> {
    let mut names = vec![String::new(); submissions.len()];
    let mut seen = BTreeSet::new();
    for i in sorted(submissions) {
        names[i] = report_name(&submissions[i], &mut seen);
    }
    names
}

/// Whether `name` is one [`report_names`] could give: safe as a file name in a folder.
pub(crate) fn is_report_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

fn report_name(submission: &Path, seen: &mut BTreeSet<String>) -> String {
    let stem = submission
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "submission".to_owned());
    let safe: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(180)
        .collect();
    let safe = safe.trim_start_matches('.');
    let safe = if safe.is_empty() { "submission" } else { safe };
    let mut name = safe.to_owned();
    let mut n = 2;
    while !seen.insert(name.clone()) {
        name = format!("{safe}-{n}");
        n += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_folder_stands_for_its_folders_and_a_submission_for_itself() {
        let dir = tempfile::tempdir().unwrap();
        let class = dir.path().join("class");
        for member in ["bob", "alice", ".git"] {
            std::fs::create_dir_all(class.join(member)).unwrap();
        }
        std::fs::write(class.join("README.md"), "").unwrap();
        std::fs::write(class.join("alice/solution.py"), "").unwrap();
        std::os::unix::fs::symlink(dir.path(), class.join("elsewhere")).unwrap();
        let lone = dir.path().join("carol.py");
        std::fs::write(&lone, "").unwrap();
        // A folder with a solution of its own (and a folder beside it) is one submission.
        let own = dir.path().join("dave");
        std::fs::create_dir_all(own.join("tests")).unwrap();
        std::fs::write(own.join("consumer.py"), "").unwrap();
        let empty = dir.path().join("erin");
        std::fs::create_dir(&empty).unwrap();
        let given = [class.clone(), lone.clone(), own.clone(), empty.clone()];
        assert_eq!(
            class_members(&given),
            [class.join("alice"), class.join("bob"), lone, own, empty]
        );
    }

    #[test]
    fn a_share_is_the_same_in_any_order_and_the_shares_cover_the_class_once() {
        let class: Vec<PathBuf> = ["x/erin.py", "a/bob", "carol.ts", "z/alice.py", "dave"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let mut reversed = class.clone();
        reversed.reverse();
        for strategy in ["", "hash:"] {
            let mut all = Vec::new();
            for k in 1..=3 {
                let partition: Partition = format!("{strategy}{k}/3").parse().unwrap();
                let pick = |list: &[PathBuf]| {
                    let mut chosen: Vec<PathBuf> = share(list, Some(&partition))
                        .into_iter()
                        .map(|i| list[i].clone())
                        .collect();
                    chosen.sort();
                    chosen
                };
                let mine = pick(&class);
                assert_eq!(mine, pick(&reversed), "{strategy}{k}/3");
                all.extend(mine);
            }
            all.sort();
            let mut everyone = class.clone();
            everyone.sort();
            assert_eq!(all, everyone, "{strategy}");
        }
        // Round-robin over the names sorted: alice, bob, carol | dave, erin.
        let first: Partition = "1/3".parse().unwrap();
        let chosen: Vec<&Path> = share(&class, Some(&first))
            .into_iter()
            .map(|i| class[i].as_path())
            .collect();
        assert_eq!(chosen, [Path::new("z/alice.py"), Path::new("dave")]);
        assert_eq!(share(&class, None).len(), 5);
    }

    #[test]
    fn report_names_are_safe_and_unique() {
        let names = report_names(&[
            PathBuf::from("a/alice.py"),
            PathBuf::from("b/alice.py"),
            PathBuf::from("x/..hidden \u{1b}name"),
        ]);
        assert_eq!(names, ["alice.py", "alice.py-2", "hidden__name"]);
        assert!(names.iter().all(|name| is_report_name(name)));
        assert!(!is_report_name("../x") && !is_report_name(".x") && is_report_name("a.py-2"));
    }

    #[test]
    fn the_output_folder_inside_the_class_folder_is_no_member() {
        let dir = tempfile::tempdir().unwrap();
        let class = dir.path().join("class");
        for member in ["alice", "grades"] {
            std::fs::create_dir_all(class.join(member)).unwrap();
        }
        let given = [class.clone()];
        assert_eq!(
            members(&given, &class.join("grades")),
            [class.join("alice")]
        );
        // Not made yet, it is none of them either.
        assert_eq!(
            members(&given, &dir.path().join("elsewhere")),
            [class.join("alice"), class.join("grades")]
        );
    }
}
