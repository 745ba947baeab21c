//! What `dlqspec watch` reruns after files change: which changes matter, and what they select.
//!
//! The command (`commands::watch`) owns the terminal and the file system events; the decision
//! is here, pure, so it can be tested without either.

use std::path::{Path, PathBuf};

/// A path watched for changes, as given and as the file system names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Root {
    /// As given on the command line: what reports show.
    pub(crate) given: PathBuf,
    /// Its canonical form: what change events name.
    pub(crate) real: PathBuf,
    pub(crate) is_dir: bool,
}

impl Root {
    /// The root for `given`, which must exist.
    pub(crate) fn new(given: &Path) -> std::io::Result<Root> {
        let real = std::fs::canonicalize(given)?;
        let is_dir = real.is_dir();
        Ok(Root {
            given: given.to_path_buf(),
            real,
            is_dir,
        })
    }

    /// `changed` (a canonical path) as it reads under the given path, when it is this root or,
    /// for a folder, below it; `None` for anything else and for editor and tool noise below it
    /// (hidden files and folders, `__pycache__`, `node_modules`, backups ending in `~`).
    fn as_given(&self, changed: &Path) -> Option<PathBuf> {
        if changed == self.real {
            return Some(self.given.clone());
        }
        if !self.is_dir {
            return None;
        }
        let rest = changed.strip_prefix(&self.real).ok()?;
        let noise = rest.components().any(|part| {
            let name = part.as_os_str().to_string_lossy();
            name.starts_with('.')
                || name.ends_with('~')
                || name == "__pycache__"
                || name == "node_modules"
        });
        if noise {
            return None;
        }
        Some(self.given.join(rest))
    }

    /// What to ask the file system to watch for this root: a folder and all below it, or the
    /// folder of a file (editors save by writing a new file and renaming it over the old one,
    /// which a watch on the file itself would lose).
    pub(crate) fn watch_request(&self) -> (PathBuf, bool) {
        match (self.is_dir, self.real.parent()) {
            (false, Some(parent)) => (parent.to_path_buf(), false),
            _ => (self.real.clone(), true),
        }
    }
}

/// Everything a watch looks at.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watched {
    /// The spec files and folders given.
    pub(crate) specs: Vec<Root>,
    /// The implementation's files or folders (none for the built-in one).
    pub(crate) implementation: Vec<Root>,
}

/// What a batch of changes calls for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Nothing watched changed in a way that matters.
    Nothing,
    /// The implementation changed (this path, as given): every selected spec runs again.
    All(PathBuf),
    /// These spec files changed, appeared or went (as given paths, in order, once each).
    Specs(Vec<PathBuf>),
}

impl Watched {
    /// The distinct watch requests (folder, recursive): a folder already watched with all
    /// below it is not asked for again, so one watch never narrows another.
    pub(crate) fn watch_requests(&self) -> Vec<(PathBuf, bool)> {
        let mut wanted: Vec<(PathBuf, bool)> = self
            .specs
            .iter()
            .chain(&self.implementation)
            .map(Root::watch_request)
            .collect();
        // Recursive first, then by path: a covering request comes before what it covers.
        wanted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut kept: Vec<(PathBuf, bool)> = Vec::new();
        for (path, recursive) in wanted {
            let covered = kept.iter().any(|(other, other_recursive)| {
                (*other_recursive && path.starts_with(other)) || *other == path
            });
            if !covered {
                kept.push((path, recursive));
            }
        }
        kept
    }

    /// What the changed paths (canonical, as change events name them) call for.
    pub(crate) fn plan(&self, changed: &[PathBuf]) -> Plan {
        for path in changed {
            if let Some(given) = self.implementation.iter().find_map(|r| r.as_given(path)) {
                return Plan::All(given);
            }
        }
        let mut specs: Vec<PathBuf> = Vec::new();
        for path in changed
            .iter()
            .filter(|path| crate::load::discover::is_spec(path))
        {
            if let Some(given) = self.specs.iter().find_map(|r| r.as_given(path))
                && !specs.contains(&given)
            {
                specs.push(given);
            }
        }
        if specs.is_empty() {
            Plan::Nothing
        } else {
            Plan::Specs(specs)
        }
    }
}

/// Whether a path names a spec file by its extension, as discovery finds them.
#[cfg(test)]
mod tests {
    use super::*;

    fn root(given: &str, real: &str, is_dir: bool) -> Root {
        Root {
            given: PathBuf::from(given),
            real: PathBuf::from(real),
            is_dir,
        }
    }

    fn watched() -> Watched {
        Watched {
            specs: vec![
                root("specs", "/w/specs", true),
                root("one.yaml", "/w/one.yaml", false),
            ],
            implementation: vec![root("sol/solution.py", "/w/sol/solution.py", false)],
        }
    }

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn a_changed_spec_reruns_that_spec_as_given() {
        let plan = watched().plan(&paths(&[
            "/w/specs/dlq/a.yaml",
            "/w/specs/dlq/a.yaml",
            "/w/one.yaml",
        ]));
        assert_eq!(plan, Plan::Specs(paths(&["specs/dlq/a.yaml", "one.yaml"])));
    }

    #[test]
    fn the_implementation_file_reruns_everything_and_wins_over_specs() {
        let plan = watched().plan(&paths(&["/w/specs/a.yaml", "/w/sol/solution.py"]));
        assert_eq!(plan, Plan::All(PathBuf::from("sol/solution.py")));
    }

    #[test]
    fn noise_and_unrelated_files_call_for_nothing() {
        let plan = watched().plan(&paths(&[
            "/w/specs/.a.yaml.swp",
            "/w/specs/.hidden/a.yaml",
            "/w/specs/a.yaml~",
            "/w/specs/notes.md",
            "/w/sol/other.py",
            "/w/two.yaml",
            "/elsewhere/a.yaml",
        ]));
        assert_eq!(plan, Plan::Nothing);
    }

    #[test]
    fn a_folder_solution_reruns_on_any_file_below_it_but_its_caches() {
        let mut watched = watched();
        watched.implementation = vec![root("sol", "/w/sol", true)];
        assert_eq!(
            watched.plan(&paths(&["/w/sol/lib/util.py"])),
            Plan::All(PathBuf::from("sol/lib/util.py"))
        );
        assert_eq!(
            watched.plan(&paths(&["/w/sol/__pycache__/util.cpython-312.pyc"])),
            Plan::Nothing
        );
    }

    #[test]
    fn a_hidden_folder_above_a_root_is_not_noise() {
        let watched = Watched {
            specs: vec![root("/tmp/.tmpX", "/tmp/.tmpX", true)],
            implementation: Vec::new(),
        };
        assert_eq!(
            watched.plan(&paths(&["/tmp/.tmpX/a.yaml"])),
            Plan::Specs(paths(&["/tmp/.tmpX/a.yaml"]))
        );
    }

    #[test]
    fn watch_requests_never_narrow_a_recursive_watch() {
        let watched = Watched {
            specs: vec![
                root("d", "/w/d", true),
                root("d/x.yaml", "/w/d/x.yaml", false),
            ],
            implementation: vec![
                root("d/s.py", "/w/d/s.py", false),
                root("o/s.py", "/w/o/s.py", false),
            ],
        };
        assert_eq!(
            watched.watch_requests(),
            vec![
                (PathBuf::from("/w/d"), true),
                (PathBuf::from("/w/o"), false)
            ]
        );
    }
}
