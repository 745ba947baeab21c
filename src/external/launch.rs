//! `--impl` values: which implementation to check, and how to start it.
//!
//! `python:FILE` and `node:FILE` run a solution under the language shims; `auto:PATH` one
//! whose language and entry file are picked as `grade` picks them (`entry`);
//! `cmd:'COMMAND LINE'` runs any program that speaks the protocol itself; `builtin` is the
//! reference. Where the shims are: `$DLQSPEC_SHIMS` (for working on the shims), else the copy
//! built into the program, written to the cache folder (`shims_cache`). Interpreters:
//! `$DLQSPEC_PYTHON` (default `python3`) and `$DLQSPEC_NODE` (default `node`), each a command
//! line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::limits::Limits;
use super::process::ExternalImplementation;
pub use super::process::Launch;
use crate::contracts::builtin::Builtin;
use crate::model::implementation::Implementation;
use crate::model::language::Language;

/// Given to Node before the shim: with Node 20's module loader in reach, the shim points `given`
/// at its own copy in the main thread, where a `module.register()` hook would start a thread of
/// its own first (about 20 ms of every start: docs/performance.md, "Starting the Node shim").
/// Node 22.15 on needs no flag for it (`module.registerHooks`); on a Node whose loader the shim
/// does not know, it registers the hook.
pub(crate) const NODE_IN_THREAD_FLAG: &str = "--expose-internals";

/// An implementation to check, as named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Builtin,
    External(Launch),
    /// One that cannot run at all: said once instead of a spec at a time.
    Unrunnable(Unrunnable),
}

/// Why a named implementation cannot run: its submission has no solution file to run (the
/// student's to fix), or this machine cannot run its language (the grader's). `run` tells an
/// autograder's results file so, in words for the student; every command tells the person at
/// the terminal `teacher`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrunnable {
    pub(crate) label: String,
    /// For the person who runs dlqspec: paths, variables and the fix.
    pub(crate) teacher: String,
    /// For the student whose submission it is: their own files only.
    pub(crate) student: String,
    /// The machine's fault (no Node.js, one too old), not the submission's.
    pub(crate) machine: bool,
}

/// What a student is told when the grading machine cannot run their language: nothing of the
/// grader's paths or settings, and that it is not their code.
pub(crate) const MACHINE_STUDENT: &str = "The grader could not run your submission: the grading machine cannot run JavaScript or TypeScript. This is a problem with the grader's setup, not with your code; let your instructor know.";

/// Why this machine cannot run JavaScript and TypeScript solutions (the Node.js that
/// `$DLQSPEC_NODE` names, else `node`: missing, not starting, too old), if it cannot.
pub(crate) fn node_problem() -> Option<String> {
    let (variable, default) = Language::JavaScript.interpreter();
    let line = std::env::var(variable)
        .ok()
        .filter(|line| !line.trim().is_empty());
    let program = match &line {
        Some(line) => match shell_words::split(line) {
            Ok(words) => words.into_iter().next()?,
            Err(error) => return Some(format!("{variable}: cannot split `{line}`: {error}")),
        },
        None => default.to_owned(),
    };
    super::typescript::node_problem(&program)
}

impl Target {
    pub(crate) fn label(&self) -> &str {
        match self {
            Target::Builtin => "builtin",
            Target::External(launch) => &launch.label,
            Target::Unrunnable(unrunnable) => &unrunnable.label,
        }
    }

    /// The same implementation with other limits for its processes (none for the built-in).
    pub(crate) fn with_limits(self, limits: Limits) -> Target {
        match self {
            Target::External(launch) => Target::External(Launch { limits, ..launch }),
            other => other,
        }
    }

    /// Why it cannot run, when it cannot: what a command says instead of running it.
    pub(crate) fn unrunnable(&self) -> Option<&Unrunnable> {
        match self {
            Target::Unrunnable(unrunnable) => Some(unrunnable),
            _ => None,
        }
    }

    /// A fresh implementation (for an external one, a process started on first use). One
    /// that cannot run fails to start, saying why.
    pub fn instantiate(&self, timeout: Duration) -> Box<dyn Implementation + Send> {
        match self {
            Target::Builtin => Box::new(Builtin::new()),
            Target::External(launch) => {
                Box::new(ExternalImplementation::new(launch.clone(), timeout))
            }
            Target::Unrunnable(unrunnable) => Box::new(NotStarted(unrunnable.teacher.clone())),
        }
    }
}

/// The implementation of a target that cannot run: every request fails to start, saying why.
struct NotStarted(String);

impl Implementation for NotStarted {
    fn info(&self) -> crate::model::implementation::ImplInfo {
        crate::model::implementation::ImplInfo {
            label: "unrunnable".to_owned(),
            language: "unknown".to_owned(),
            is_reference: false,
        }
    }

    fn offer(
        &mut self,
    ) -> Result<Option<crate::model::implementation::Offer>, crate::model::implementation::ImplError>
    {
        Err(self.error())
    }

    fn create(
        &mut self,
        _contract: &str,
        _args: &serde_json::Value,
        _world: &mut dyn crate::model::implementation::WorldHost,
    ) -> Result<crate::model::implementation::Reply, crate::model::implementation::ImplError> {
        Err(self.error())
    }

    fn call(
        &mut self,
        _method: &str,
        _args: &[serde_json::Value],
        _world: &mut dyn crate::model::implementation::WorldHost,
    ) -> Result<crate::model::implementation::Reply, crate::model::implementation::ImplError> {
        Err(self.error())
    }
}

impl NotStarted {
    fn error(&self) -> crate::model::implementation::ImplError {
        crate::model::implementation::ImplError::new(
            crate::model::implementation::ImplErrorKind::Startup,
            self.0.clone(),
        )
    }
}

/// The forms of an `--impl` value: `python:FILE, node:FILE (.ts, .mjs, ...), auto:..., cmd:... or
/// builtin`, each language's as it says.
fn forms() -> String {
    let languages: Vec<String> = Language::ALL
        .iter()
        .map(|language| match language.extensions() {
            [_] => format!("{}:FILE", language.prefix()),
            extensions => format!("{}:FILE (.{})", language.prefix(), extensions.join(", .")),
        })
        .collect();
    format!(
        "{}, auto:FILE_OR_FOLDER, cmd:'COMMAND LINE' or builtin",
        languages.join(", ")
    )
}

/// Parses an `--impl` value, reading the environment for shims and interpreters.
pub fn parse(value: &str) -> Result<Target, String> {
    parse_with(value, &|name| std::env::var(name).ok())
}

/// `parse`, with the environment given (for tests).
pub(crate) fn parse_with(
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Target, String> {
    if value == "builtin" {
        return Ok(Target::Builtin);
    }
    if let Some(path) = value.strip_prefix("auto:") {
        // The language and entry file picked as `grade` picks them; a submission without one
        // is told as such, to its student too (`run` writes an autograder's results so).
        return match super::entry::find_entry(Path::new(path)) {
            Ok(entry) => parse_with(&super::entry::implementation(&entry), env),
            Err(no) => Ok(Target::Unrunnable(Unrunnable {
                label: value.to_owned(),
                teacher: format!("`{value}`: {}", no.teacher()),
                student: no.student(),
                machine: false,
            })),
        };
    }
    let prefixed = value.split_once(':').and_then(|(kind, rest)| {
        (kind == "cmd")
            .then_some((None, rest))
            .or_else(|| Language::of_prefix(kind).map(|language| (Some(language), rest)))
    });
    let by_extension = || {
        Path::new(value)
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Language::of_extension)
            .map(|language| (Some(language), value))
    };
    let Some((language, rest)) = prefixed.or_else(by_extension) else {
        return Err(format!(
            "cannot tell how to run `{value}`{}; write {}",
            other_language(value),
            forms()
        ));
    };
    let label = format!("{}:{rest}", language.map_or("cmd", Language::prefix));
    match language {
        None => {
            let words = shell_words::split(rest)
                .map_err(|error| format!("`{value}`: cannot split the command line: {error}"))?;
            let Some((program, args)) = words.split_first() else {
                return Err(format!("`{value}`: the command line is empty"));
            };
            Ok(Target::External(Launch {
                label,
                language: None,
                program: program.clone(),
                args: args.to_vec(),
                hint: None,
                limits: Limits::default(),
            }))
        }
        Some(language) => shimmed(label, rest, language, env),
    }
}

/// For `ruby:x.rb` (a language dlqspec has no shim for): how a program in it is checked.
fn other_language(value: &str) -> String {
    match value.split_once(':') {
        Some((kind, rest))
            if !rest.is_empty()
                && !kind.is_empty()
                && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') =>
        {
            let command = shell_words::join([kind, rest]);
            let titles: Vec<&str> = Language::ALL.iter().map(|l| l.title()).collect();
            let shims = match titles.split_last() {
                Some((last, [_, ..])) => {
                    format!("{} and {last}", titles[..titles.len() - 1].join(", "))
                }
                _ => titles.concat(),
            };
            format!(
                ": dlqspec has shims for {shims} only; a program in another language speaks the protocol itself (docs/protocol.md) and runs as cmd:{}",
                shell_words::quote(&command)
            )
        }
        _ => String::new(),
    }
}

/// A solution in `language`, run by its shim under its interpreter.
fn shimmed(
    label: String,
    solution: &str,
    language: Language,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Target, String> {
    let (variable, default) = language.interpreter();
    if solution.is_empty() {
        return Err(format!("`{label}` names no file; write {}", forms()));
    }
    if !Path::new(solution).is_file() {
        return Err(format!("`{label}`: no such file `{solution}`"));
    }
    let (shims, from) = shims_folder(env)?;
    let shim = shims.join(language.shim());
    if !shim.is_file() {
        return Err(format!(
            "the {language} shim is not at {} (shims folder from {from}); set DLQSPEC_SHIMS to the folder that holds {}",
            shim.display(),
            language.shim()
        ));
    }
    let interpreter = env(variable).filter(|s| !s.trim().is_empty());
    let mut words = match &interpreter {
        Some(line) => shell_words::split(line)
            .map_err(|error| format!("{variable}: cannot split `{line}`: {error}"))?,
        None => vec![default.to_owned()],
    };
    let program = words.remove(0);
    if language == Language::JavaScript
        && let Some(why) = super::typescript::node_problem(&program)
    {
        // Not the solution's doing: said to the grader, and to its student as no fault of theirs.
        return Ok(Target::Unrunnable(Unrunnable {
            label,
            teacher: why,
            student: MACHINE_STUDENT.to_owned(),
            machine: true,
        }));
    }
    if language == Language::JavaScript {
        // TypeScript that no tsx serves: Node 22.7 and later transform it themselves, given the
        // flags; an older Node runs the shim's own transform (`typescript`).
        if super::typescript::is_typescript(Path::new(solution))
            && !super::typescript::has_tsx(Path::new(solution), &shim)
        {
            let version = super::typescript::node_version(&program).ok();
            words.extend(
                super::typescript::transform_flags(version)
                    .iter()
                    .map(|flag| (*flag).to_owned()),
            );
        }
        words.push(NODE_IN_THREAD_FLAG.to_owned());
    }
    words.push(shim.to_string_lossy().into_owned());
    words.push(solution.to_owned());
    Ok(Target::External(Launch {
        label,
        language: Some(language),
        program,
        args: words,
        hint: Some(format!(
            "set {variable} to the {} command to use",
            language.interpreter_title()
        )),
        limits: Limits::default(),
    }))
}

/// The shims folder and where it came from: `$DLQSPEC_SHIMS`, else the built-in shims
/// written to (and checked in) the cache folder.
fn shims_folder(env: &dyn Fn(&str) -> Option<String>) -> Result<(PathBuf, &'static str), String> {
    if let Some(dir) = env("DLQSPEC_SHIMS").filter(|s| !s.is_empty()) {
        return Ok((PathBuf::from(dir), "DLQSPEC_SHIMS"));
    }
    let root = super::shims_cache::cache_root(env)?;
    Ok((super::shims_cache::materialise(&root)?, "the cache"))
}

/// The interpreter pyenv's `python3` shim would start in a box, when `python3` on `PATH` is
/// that shim and `DLQSPEC_PYTHON` names none: found once (the shim is a shell script that
/// costs more than the interpreter's own start), so that `grade` starts it directly for each
/// submission.
///
/// pyenv picks the version by the first `.python-version` in the working folder or above it
/// (unless `PYENV_VERSION` says, which is left as the user set it). So it is asked from an
/// empty folder of dlqspec's own, as the box's working folder is (no `.python-version` of the
/// folder dlqspec runs in picks another version than the box would get), made in dlqspec's
/// cache folder: under the user's home, not under the temporary folder, where anyone may
/// plant a `/tmp/.python-version` that would choose the interpreter of every submission.
#[expect(
    clippy::disallowed_methods,
    reason = "starts a process: pyenv is asked which interpreter it runs"
)]
pub(crate) fn pyenv_interpreter() -> Option<PathBuf> {
    if std::env::var_os("DLQSPEC_PYTHON").is_some_and(|value| !value.is_empty()) {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    let (_, python) = Language::Python.interpreter();
    let shim = super::sandbox::locate(python, std::env::var_os("PATH").as_deref(), &cwd)?;
    if !shim
        .parent()
        .is_some_and(|folder| folder.ends_with(".pyenv/shims"))
    {
        return None;
    }
    let cache = super::shims_cache::cache_root(&|name| std::env::var(name).ok()).ok()?;
    std::fs::create_dir_all(&cache).ok()?;
    let neutral = tempfile::Builder::new()
        .prefix("pyenv-asked-")
        .tempdir_in(&cache)
        .ok()?;
    let asked = std::process::Command::new(&shim)
        .args(["-I", "-c", "import sys; sys.stdout.write(sys.executable)"])
        .current_dir(neutral.path())
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let found = PathBuf::from(String::from_utf8(asked.stdout).ok()?);
    // Only a real interpreter elsewhere than the shims: never the shim again, never a guess.
    (asked.status.success()
        && found.is_absolute()
        && found.is_file()
        && !found
            .parent()
            .is_some_and(|folder| folder.ends_with(".pyenv/shims")))
    .then_some(found)
}

/// Parses `--timeout SECS`: a positive number of seconds, fractions allowed.
pub(crate) fn parse_timeout(value: &str) -> Result<Duration, String> {
    let secs: f64 = value
        .trim()
        .parse()
        .map_err(|_| format!("`{value}` is not a number of seconds"))?;
    if !(secs.is_finite() && secs > 0.0 && secs <= 86_400.0) {
        return Err(format!(
            "`{value}`: the timeout must be more than 0 and at most 86400 seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTHON_SHIM: &str = "python/dlqspec_shim.py";
    const NODE_SHIM: &str = "node/dlqspec-shim.mjs";

    fn shims_fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for shim in [PYTHON_SHIM, NODE_SHIM] {
            let path = dir.path().join(shim);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::write(dir.path().join("solution.py"), "").unwrap();
        std::fs::write(dir.path().join("solution.ts"), "").unwrap();
        dir
    }

    fn external(target: Target) -> Launch {
        match target {
            Target::External(launch) => launch,
            other => panic!("expected an external target, got {other:?}"),
        }
    }

    #[test]
    fn python_runs_the_shim_with_the_solution() {
        let dir = shims_fixture();
        let shims = dir.path().to_string_lossy().into_owned();
        let solution = dir.path().join("solution.py");
        let solution = solution.to_str().unwrap();
        let env = |name: &str| (name == "DLQSPEC_SHIMS").then(|| shims.clone());
        let launch = external(parse_with(&format!("python:{solution}"), &env).unwrap());
        assert_eq!(launch.program, "python3");
        assert_eq!(
            launch.args,
            [
                dir.path().join(PYTHON_SHIM).to_string_lossy().into_owned(),
                solution.to_owned()
            ]
        );
        assert_eq!(launch.label, format!("python:{solution}"));
        // A bare path is recognised by its extension.
        assert_eq!(
            external(parse_with(solution, &env).unwrap()).label,
            format!("python:{solution}")
        );
    }

    #[test]
    fn interpreters_can_be_overridden_with_a_command_line() {
        let dir = shims_fixture();
        let shims = dir.path().to_string_lossy().into_owned();
        let solution = dir.path().join("solution.mjs");
        std::fs::write(&solution, "").unwrap();
        // A Node under a path with a space in it: the real one, linked.
        let folder = dir.path().join("node 22/bin");
        std::fs::create_dir_all(&folder).unwrap();
        let real =
            super::super::sandbox::locate("node", std::env::var_os("PATH").as_deref(), dir.path())
                .expect("node on PATH");
        std::os::unix::fs::symlink(real, folder.join("node")).unwrap();
        let node = folder.join("node").to_string_lossy().into_owned();
        let line = format!("'{node}' --no-warnings");
        let env = |name: &str| match name {
            "DLQSPEC_SHIMS" => Some(shims.clone()),
            "DLQSPEC_NODE" => Some(line.clone()),
            _ => None,
        };
        let launch = external(parse_with(&format!("node:{}", solution.display()), &env).unwrap());
        assert_eq!(launch.program, node);
        assert_eq!(launch.args[0], "--no-warnings");
        assert_eq!(launch.args[1], NODE_IN_THREAD_FLAG);
        assert!(launch.args[2].ends_with(NODE_SHIM));
    }

    #[test]
    fn a_machine_without_node_is_no_students_fault() {
        let dir = shims_fixture();
        let shims = dir.path().to_string_lossy().into_owned();
        let solution = dir.path().join("solution.ts");
        let env = |name: &str| match name {
            "DLQSPEC_SHIMS" => Some(shims.clone()),
            "DLQSPEC_NODE" => Some("/no/such/node".into()),
            _ => None,
        };
        let Ok(Target::Unrunnable(unrunnable)) =
            parse_with(&format!("node:{}", solution.display()), &env)
        else {
            panic!("expected an unrunnable target");
        };
        assert!(unrunnable.machine);
        assert!(
            unrunnable.teacher.contains("/no/such/node"),
            "{unrunnable:?}"
        );
        assert_eq!(unrunnable.student, MACHINE_STUDENT);
        assert!(!MACHINE_STUDENT.contains("node") && !MACHINE_STUDENT.contains("DLQSPEC"));
    }

    #[test]
    fn node_gets_the_flag_for_given_in_the_main_thread_before_the_shim() {
        let dir = shims_fixture();
        let shims = dir.path().to_string_lossy().into_owned();
        let solution = dir.path().join("solution.mjs");
        std::fs::write(&solution, "").unwrap();
        let env = |name: &str| (name == "DLQSPEC_SHIMS").then(|| shims.clone());
        let launch = external(parse_with(&format!("node:{}", solution.display()), &env).unwrap());
        assert_eq!(launch.program, "node");
        assert_eq!(
            launch.args,
            [
                NODE_IN_THREAD_FLAG.to_owned(),
                dir.path().join(NODE_SHIM).to_string_lossy().into_owned(),
                solution.to_string_lossy().into_owned()
            ]
        );
        // Python is started as it was.
        let python = dir.path().join("solution.py");
        let launch = external(parse_with(&format!("python:{}", python.display()), &env).unwrap());
        assert!(!launch.args.iter().any(|arg| arg == NODE_IN_THREAD_FLAG));
    }

    #[test]
    fn cmd_splits_like_a_shell() {
        let launch = external(parse_with("cmd:python3 -u 'my impl.py' --fast", &|_| None).unwrap());
        assert_eq!(launch.program, "python3");
        assert_eq!(launch.args, ["-u", "my impl.py", "--fast"]);
        assert_eq!(launch.label, "cmd:python3 -u 'my impl.py' --fast");
    }

    #[test]
    fn bad_values_say_what_is_expected() {
        let none = |_: &str| None;
        assert_eq!(
            parse_with("ruby:x.rb", &none).unwrap_err(),
            "cannot tell how to run `ruby:x.rb`: dlqspec has shims for Python and JavaScript/TypeScript only; a program in another language speaks the protocol itself (docs/protocol.md) and runs as cmd:'ruby x.rb'; write python:FILE, node:FILE (.ts, .mjs, .js, .cjs, .mts, .cts), auto:FILE_OR_FOLDER, cmd:'COMMAND LINE' or builtin"
        );
        assert_eq!(
            parse_with("solution.rb", &none).unwrap_err(),
            "cannot tell how to run `solution.rb`; write python:FILE, node:FILE (.ts, .mjs, .js, .cjs, .mts, .cts), auto:FILE_OR_FOLDER, cmd:'COMMAND LINE' or builtin"
        );
        assert_eq!(
            parse_with("cmd:  ", &none).unwrap_err(),
            "`cmd:  `: the command line is empty"
        );
        assert_eq!(
            parse_with("cmd:python3 'x", &none).unwrap_err(),
            "`cmd:python3 'x`: cannot split the command line: missing closing quote"
        );
        assert_eq!(
            parse_with("python:/no/such/solution.py", &none).unwrap_err(),
            "`python:/no/such/solution.py`: no such file `/no/such/solution.py`"
        );
        let dir = shims_fixture();
        let solution = dir.path().join("solution.py");
        let empty = tempfile::tempdir().unwrap();
        let shims = empty.path().to_string_lossy().into_owned();
        let env = |name: &str| (name == "DLQSPEC_SHIMS").then(|| shims.clone());
        let error = parse_with(&format!("python:{}", solution.display()), &env).unwrap_err();
        assert!(
            error.starts_with("the python shim is not at ")
                && error.ends_with(
                    "(shims folder from DLQSPEC_SHIMS); set DLQSPEC_SHIMS to the folder that holds python/dlqspec_shim.py"
                ),
            "{error}"
        );
        assert_eq!(parse_with("builtin", &none), Ok(Target::Builtin));
    }

    #[test]
    fn auto_picks_the_language_and_entry_file_as_grade_does() {
        let dir = shims_fixture();
        let shims = dir.path().to_string_lossy().into_owned();
        let env = |name: &str| (name == "DLQSPEC_SHIMS").then(|| shims.clone());
        // The folder holds solution.py and solution.ts: solution.py comes first.
        let launch = external(parse_with(&format!("auto:{shims}"), &env).unwrap());
        assert_eq!(launch.language, Some(Language::Python));
        assert_eq!(launch.label, format!("python:{shims}/solution.py"));
        let ts = dir.path().join("solution.ts");
        let launch = external(parse_with(&format!("auto:{}", ts.display()), &env).unwrap());
        assert_eq!(launch.language, Some(Language::JavaScript));
        let empty = tempfile::tempdir().unwrap();
        // No solution file: a target that cannot run, told to the teacher and the student.
        let Ok(Target::Unrunnable(unrunnable)) =
            parse_with(&format!("auto:{}", empty.path().display()), &env)
        else {
            panic!("an empty folder cannot run");
        };
        assert!(!unrunnable.machine);
        assert!(
            unrunnable.teacher.starts_with("`auto:")
                && unrunnable.teacher.contains("holds no solution file"),
            "{unrunnable:?}"
        );
        assert!(
            unrunnable
                .student
                .starts_with("Your submission holds no solution file")
                && !unrunnable
                    .student
                    .contains(&empty.path().display().to_string()),
            "{unrunnable:?}"
        );
    }

    #[test]
    fn timeouts_are_positive_seconds() {
        assert_eq!(parse_timeout("5"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_timeout("0.25"), Ok(Duration::from_millis(250)));
        assert!(parse_timeout("0").is_err());
        assert!(parse_timeout("-1").is_err());
        assert!(parse_timeout("NaN").is_err());
        assert!(parse_timeout("inf").is_err());
        assert_eq!(
            parse_timeout("soon").unwrap_err(),
            "`soon` is not a number of seconds"
        );
    }
}
