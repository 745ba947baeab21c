//! Finding spec files: the paths given, and every `.yaml`/`.yml` file below the folders given.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{path}: {reason}")]
pub struct DiscoverError {
    pub path: String,
    pub reason: String,
}

/// Spec files below `paths`, sorted within each folder so runs are reproducible.
/// A file named directly is taken whatever its extension.
pub fn spec_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, DiscoverError> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_file() {
            found.push(path.clone());
            continue;
        }
        if !path.is_dir() {
            return Err(DiscoverError {
                path: crate::source::display_path(path),
                reason: "no such file or folder".into(),
            });
        }
        let mut in_folder = Vec::new();
        for entry in WalkDir::new(path).follow_links(true) {
            let entry = entry.map_err(|error| DiscoverError {
                path: crate::source::display_path(path),
                reason: error.to_string(),
            })?;
            if entry.file_type().is_file() && is_spec(entry.path()) {
                in_folder.push(entry.into_path());
            }
        }
        in_folder.sort();
        found.extend(in_folder);
    }
    found.dedup();
    Ok(found)
}

fn is_spec(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_walked_for_yaml_files_in_sorted_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for name in ["b.yaml", "a.yml", "notes.txt", "sub/c.yaml"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let found = spec_files(&[dir.path().to_path_buf()]).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|p| {
                p.strip_prefix(dir.path())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        assert_eq!(names, ["a.yml", "b.yaml", "sub/c.yaml"]);
    }

    #[test]
    fn a_missing_path_is_an_error() {
        let error = spec_files(&[PathBuf::from("/no/such/dlqspec/path")]).unwrap_err();
        assert_eq!(error.reason, "no such file or folder");
    }
}
