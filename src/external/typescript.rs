//! TypeScript solutions: which way this machine runs one (the project's tsx, else Node's own
//! transform, else the transform the Node shim carries), the Node flags that takes, and what
//! outside its folder the box must let it read.
//!
//! The Node shim picks the way in the same order (`shims/node/dlqspec-shim.mjs`,
//! `registerTypeScript`): a tsx the solution's project has (a `node_modules/tsx` in its folder
//! or one above), else a `tsx` command on `PATH`, else one beside the shim (a clone's
//! `shims/node` after `npm ci`); else Node 22.7 and later transform the file themselves with
//! `--experimental-transform-types` (enums and parameter properties included), which dlqspec
//! gives them; else the shim's own copy of the transform Node uses (amaro), so a solution runs
//! the same on Node 20 as on Node 24. docs/install.md tells it for users.
//!
//! Why amaro is carried (docs/performance.md, "TypeScript without tsx"): it is Node's own
//! transform (swc in WebAssembly), amaro 1.2.1's published `dist/internal.js` gzipped into
//! `shims/node/vendor/` and built into the program with the other shim files, so a solution runs
//! the same on Node 20 as on Node 24. It costs 1.26 MB of program and about 90 ms of CPU at the
//! start of each TypeScript run on Node 20 (tsx about 220 ms). Sucrase (296 KB, 33 ms a start)
//! drops a `namespace` without a word, so a correct solution would fail on Node 20 only; oxc in
//! Rust (0.4 ms a file) costs 1 min 20 s more of release build on two cores and 2.55 MB of
//! program, and the shim would have to hand every imported `.ts` file to dlqspec over the
//! protocol. tsx and amaro are installed by `npm ci --prefix shims/node` for the tests (amaro to
//! check the carried copy).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::model::language::Language;

/// Whether `path` names a TypeScript file (`.ts`, `.mts`, `.cts`).
pub(crate) fn is_typescript(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| Language::JavaScript.typescript_extensions().contains(&e))
}

/// What a TypeScript solution's run reads outside its own folder, every one read-only: the
/// `package.json` that scopes it (the first on the way up: Node and tsx read its `"type"`, and
/// tsx fails on one it may not read), every `node_modules` folder on the way up (its project's
/// tsx and esbuild, the packages it imports), and the tsx behind a `tsx` on `PATH` when its
/// project has none. Nothing for another file, or one that does not exist.
pub(crate) fn readable_paths(arg: &Path) -> Vec<PathBuf> {
    if !is_typescript(arg) || !arg.is_file() {
        return Vec::new();
    }
    let Ok(start) = std::path::absolute(arg) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    let mut scoped = false;
    for dir in start.ancestors().skip(1) {
        let manifest = dir.join("package.json");
        if !scoped && manifest.is_file() {
            paths.push(manifest);
            scoped = true;
        }
        let modules = dir.join("node_modules");
        if modules.is_dir() {
            paths.push(modules);
        }
    }
    if project_tsx(&start).is_none() {
        paths.extend(tsx_on_path());
    }
    paths
}

/// The `node_modules` folder that holds the tsx of the solution's project: the first with a
/// `tsx` package in the solution's folder or one above.
fn project_tsx(solution: &Path) -> Option<PathBuf> {
    solution.ancestors().skip(1).find_map(|dir| {
        let modules = dir.join("node_modules");
        modules
            .join("tsx")
            .join("package.json")
            .is_file()
            .then_some(modules)
    })
}

/// Whether the Node shim will find a tsx for `solution`, as it looks: in its project, on
/// `PATH`, or beside the shim at `shim`.
pub(crate) fn has_tsx(solution: &Path, shim: &Path) -> bool {
    let beside = shim
        .parent()
        .is_some_and(|node| node.join("node_modules/tsx/package.json").is_file());
    let project = std::path::absolute(solution)
        .ok()
        .and_then(|solution| project_tsx(&solution));
    project.is_some() || tsx_on_path().is_some() || beside
}

/// The folder that holds the tsx package behind a `tsx` command on `PATH`: its
/// `node_modules` when it lies in one, else the package itself.
fn tsx_on_path() -> Option<PathBuf> {
    // Looked up once: every spec's box of a TypeScript solution asks again.
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND.get_or_init(find_tsx_on_path).clone()
}

fn find_tsx_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        let real = std::fs::canonicalize(dir.join("tsx")).ok()?;
        let package = real.ancestors().skip(1).take(4).find(|up| {
            std::fs::read_to_string(up.join("package.json")).is_ok_and(|text| {
                serde_json::from_str::<serde_json::Value>(&text)
                    .is_ok_and(|manifest| manifest["name"] == "tsx")
            })
        })?;
        Some(match package.parent() {
            Some(parent) if parent.ends_with("node_modules") => parent.to_path_buf(),
            _ => package.to_path_buf(),
        })
    })
}

/// A Node.js version, as `node --version` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct NodeVersion(pub u32, pub u32, pub u32);

impl std::fmt::Display for NodeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

impl NodeVersion {
    /// The oldest Node the shim runs on.
    pub(crate) const OLDEST: NodeVersion = NodeVersion(20, 0, 0);

    /// The first Node with `--experimental-transform-types`.
    const TRANSFORMS: NodeVersion = NodeVersion(22, 7, 0);

    /// Reads `v20.20.2` (what `node --version` prints).
    pub(crate) fn parse(text: &str) -> Option<NodeVersion> {
        let mut parts = text.trim().strip_prefix('v')?.splitn(3, '.');
        let mut next = || -> Option<u32> {
            let part = parts.next()?;
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        Some(NodeVersion(next()?, next()?, next()?))
    }
}

/// Why a Node.js cannot run solutions on this machine: it does not start, or is too old.
/// Said to whoever set the machine up (the teacher, the grader's author), never to a student.
pub(crate) fn node_problem(program: &str) -> Option<String> {
    match node_version(program) {
        Ok(version) if version >= NodeVersion::OLDEST => None,
        Ok(version) => Some(format!(
            "Node.js {version} (`{program}`) is too old for dlqspec's Node shim, which needs Node.js 20 or later: install a newer one, or set DLQSPEC_NODE to one"
        )),
        Err(why) => Some(why),
    }
}

/// The version of the Node.js `program` starts, asked once per program (`node --version`
/// costs a few milliseconds; `grade` and `explore` parse `--impl` often).
pub(crate) fn node_version(program: &str) -> Result<NodeVersion, String> {
    static ASKED: Mutex<Vec<(String, Result<NodeVersion, String>)>> = Mutex::new(Vec::new());
    let mut asked = ASKED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, known)) = asked.iter().find(|(asked, _)| asked == program) {
        return known.clone();
    }
    let found = ask_version(program);
    asked.push((program.to_owned(), found.clone()));
    found
}

fn ask_version(program: &str) -> Result<NodeVersion, String> {
    #[expect(
        clippy::disallowed_methods,
        reason = "starts a process: the machine's Node.js, asked its version (`node --version`), not an implementation"
    )]
    let mut command = std::process::Command::new(program);
    let output = command
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound if !program.contains('/') => format!(
                "Node.js is not installed here (no `{program}` on PATH): install Node.js 20 or later, or set DLQSPEC_NODE to the node command to use"
            ),
            std::io::ErrorKind::NotFound => format!(
                "Node.js is not at `{program}` (no such file): install Node.js 20 or later, or set DLQSPEC_NODE to the node command to use"
            ),
            _ => format!(
                "Node.js (`{program}`) does not start ({error}): install Node.js 20 or later, or set DLQSPEC_NODE to the node command to use"
            ),
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    NodeVersion::parse(&text)
        .filter(|_| output.status.success())
        .ok_or_else(|| {
            format!(
                "`{program} --version` did not tell a Node.js version (it printed {:?}): set DLQSPEC_NODE to the node command to use",
                text.trim().chars().take(80).collect::<String>()
            )
        })
}

/// The flags Node takes before the shim to run TypeScript itself: on Node 22.7 and later,
/// the full transform (enums, namespaces and parameter properties, not only erased types),
/// its experimental warning kept off the solution's stderr. None for an older Node, which
/// the shim's own transform serves, or one that does not tell its version.
pub(crate) fn transform_flags(version: Option<NodeVersion>) -> &'static [&'static str] {
    match version {
        Some(version) if version >= NodeVersion::TRANSFORMS => &[
            "--experimental-transform-types",
            "--disable-warning=ExperimentalWarning",
        ],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_node_prints_them() {
        assert_eq!(
            NodeVersion::parse("v20.20.2\n"),
            Some(NodeVersion(20, 20, 2))
        );
        assert_eq!(
            NodeVersion::parse("v24.0.0-nightly2025"),
            Some(NodeVersion(24, 0, 0))
        );
        assert_eq!(NodeVersion::parse("20.1.0"), None);
        assert_eq!(NodeVersion::parse("v20"), None);
        assert!(NodeVersion(22, 7, 0) > NodeVersion(22, 6, 9));
    }

    #[test]
    fn node_transforms_typescript_from_22_7_on() {
        assert!(transform_flags(Some(NodeVersion(20, 20, 2))).is_empty());
        assert!(transform_flags(Some(NodeVersion(22, 6, 0))).is_empty());
        assert!(transform_flags(None).is_empty());
        assert_eq!(
            transform_flags(Some(NodeVersion(22, 7, 0)))[0],
            "--experimental-transform-types"
        );
        assert_eq!(transform_flags(Some(NodeVersion(24, 1, 0))).len(), 2);
    }

    #[test]
    fn a_missing_node_is_told_with_the_fix() {
        let why = node_problem("/no/such/node").unwrap();
        assert!(why.contains("Node.js is not at `/no/such/node`"), "{why}");
        assert!(why.contains("DLQSPEC_NODE"), "{why}");
        // Asked once: the same answer again.
        assert_eq!(node_problem("/no/such/node").unwrap(), why);
    }

    #[test]
    fn a_typescript_solution_reads_its_package_scope_and_the_packages_above() {
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        let solution = root.join("exercises/dlq/solution.ts");
        std::fs::create_dir_all(solution.parent().unwrap()).unwrap();
        std::fs::write(&solution, "").unwrap();
        std::fs::write(root.join("package.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join("node_modules/tsx")).unwrap();
        std::fs::write(root.join("node_modules/tsx/package.json"), "{}").unwrap();
        std::fs::write(root.join("exercises/package.json"), "{}").unwrap();
        let paths = readable_paths(&solution);
        // The first package.json up the way scopes it; the root's is not read.
        assert!(
            paths.contains(&root.join("exercises/package.json")),
            "{paths:?}"
        );
        assert!(!paths.contains(&root.join("package.json")), "{paths:?}");
        assert!(paths.contains(&root.join("node_modules")), "{paths:?}");
        // Nothing of a JavaScript file or of a file that is not there.
        let js = solution.with_extension("mjs");
        std::fs::write(&js, "").unwrap();
        assert!(readable_paths(&js).is_empty());
        assert!(readable_paths(&root.join("missing.ts")).is_empty());
        assert!(has_tsx(
            &solution,
            Path::new("/nowhere/node/dlqspec-shim.mjs")
        ));
    }
}
