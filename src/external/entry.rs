//! A solution's entry file and language: the file a submission (a file or a folder) runs, by
//! the documented rule, and the `--impl` value that runs it; used by `--impl auto:PATH` and
//! by `grade`.

use std::path::{Path, PathBuf};

/// The entry files a submission folder is searched for, in this order.
pub const ENTRY_FILES: [&str; 5] = [
    "solution.py",
    "solution.ts",
    "solution.mjs",
    "solution.js",
    "solution.cjs",
];

/// The extensions of solution files.
const EXTENSIONS: [&str; 5] = ["py", "ts", "mjs", "js", "cjs"];

/// The file a submission's grading runs: the file itself, or the entry file of a folder.
pub fn entry_file(submission: &Path) -> Result<PathBuf, String> {
    if submission.is_file() {
        return match extension(submission) {
            Some(_) => Ok(submission.to_path_buf()),
            None => Err(format!(
                "{} is not a solution file (.py, .ts, .mjs, .js or .cjs)",
                submission.display()
            )),
        };
    }
    if !submission.is_dir() {
        return Err(format!("{} does not exist", submission.display()));
    }
    for name in ENTRY_FILES {
        let candidate = submission.join(name);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(submission)
        .map_err(|e| format!("cannot read {}: {e}", submission.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && extension(path).is_some())
        .filter(|path| !path.to_string_lossy().ends_with(".d.ts"))
        .collect();
    found.sort();
    match found.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(format!(
            "{} holds no solution file (.py, .ts, .mjs, .js or .cjs)",
            submission.display()
        )),
        _ => Err(format!(
            "{} holds {} solution files and none is named solution.*: which one is the entry is unclear",
            submission.display(),
            found.len()
        )),
    }
}

/// The solution-file extension of `path`, if it has one.
pub fn extension(path: &Path) -> Option<&str> {
    let ext = path.extension()?.to_str()?;
    EXTENSIONS.contains(&ext).then_some(ext)
}

/// The `--impl` value that runs an entry file.
pub fn implementation(entry: &Path) -> String {
    let kind = if extension(entry) == Some("py") {
        "python"
    } else {
        "node"
    };
    format!("{kind}:{}", entry.display())
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
        let one = dir.path().join("one");
        std::fs::create_dir(&one).unwrap();
        std::fs::write(one.join("given.d.ts"), "").unwrap();
        std::fs::write(one.join("consumer.ts"), "").unwrap();
        assert_eq!(entry_file(&one).unwrap(), one.join("consumer.ts"));
        std::fs::write(one.join("helper.py"), "").unwrap();
        assert!(entry_file(&one).unwrap_err().contains("2 solution files"));
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
