//! `dlqspec watch`: run the selected specs, then rerun what each saved change affects.
//!
//! Which change calls for which rerun is decided in `crate::run::watch`; this module watches the
//! files (the `notify` crate), gathers changes until they settle, and runs.
//!
//! It gathers the events itself rather than through notify-debouncer-mini: that is a dozen
//! lines, and it keeps the choice of which events count in dlqspec's hands.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use indexmap::IndexSet;
use notify::{EventKind, RecursiveMode, Watcher};

use crate::commands::cli::WatchArgs;
use crate::external::launch::Target;
use crate::load::discover;
use crate::model::implementation::Implementation;
use crate::report::sanitize;
use crate::report::{Outputs, Palette, ReportFormat, ReportOptions};
use crate::run::exit;
use crate::run::runner::{self, RunConfig};
use crate::run::watch::{Plan, Root, Watched};
use crate::text::source::display_path;

/// How long the files must stay quiet before a rerun: an editor's save is several events (write,
/// rename, attributes), and a rerun per event would run the same specs several times.
const QUIET: Duration = Duration::from_millis(200);

/// The longest changes are gathered before a rerun, however often they keep coming.
const MAX_SETTLE: Duration = Duration::from_secs(2);

/// A change event as the watcher hands it on.
type Change = notify::Result<notify::Event>;

pub(crate) fn watch(args: WatchArgs, palette: Palette) -> i32 {
    let target = args
        .target
        .implementation
        .clone()
        .unwrap_or(Target::Builtin)
        .with_limits(args.target.limits.limits());
    if let Some(code) = super::messages::refuse_unrunnable(&target, &palette) {
        return code;
    }
    super::sandbox_warnings::warn_once(&target);
    // Kept for the whole watch: every rerun of a Python solution is forked from it.
    let _warm = warm_python(&args, &target);
    let mut watched = Watched::default();
    for path in &args.specs.paths {
        match Root::new(path) {
            Ok(root) => watched.specs.push(root),
            Err(error) => {
                let message = format!("{}: {error}", display_path(path));
                return super::messages::usage_error(&message, &palette);
            }
        }
    }
    for path in implementation_paths(&target) {
        if let Ok(root) = Root::new(&path) {
            watched.implementation.push(root);
        }
    }
    // Watching starts before the first run, so that nothing saved during it is missed.
    let (sender, changes) = mpsc::channel::<Change>();
    let mut watcher = match notify::recommended_watcher(sender) {
        Ok(watcher) => watcher,
        Err(error) => {
            let message = format!("cannot watch for changes: {error}");
            return super::messages::usage_error(&message, &palette);
        }
    };
    for (path, recursive) in watched.watch_requests() {
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        if let Err(error) = watcher.watch(&path, mode) {
            let message = format!("cannot watch {}: {error}", display_path(&path));
            return super::messages::usage_error(&message, &palette);
        }
    }
    let session = Session {
        config: RunConfig {
            paths: args.specs.paths.clone(),
            filters: args.filter,
            jobs: match target {
                // As `run`: one process at a time for an external implementation.
                Target::External(_) | Target::Unrunnable(_) => {
                    args.jobs.or(std::num::NonZeroUsize::new(1))
                }
                Target::Builtin => args.jobs,
            },
            ..RunConfig::default()
        },
        timeout: args.target.limits.timeout,
        options: ReportOptions {
            format: ReportFormat::Human,
            output: None,
            palette,
            show_passes: !args.shown.quiet,
            show_output: args.shown.show_output,
            conceal_hidden: false,
            github: None,
            progress: ReportOptions::progress_wanted(),
            slow: None,
            durations: 0,
        },
        watching: watching_line(&watched, &target),
        target,
    };
    let mut code = session.run(&session.config);
    let mut reruns = 0;
    loop {
        if args.max_reruns.is_some_and(|most| reruns >= most) {
            return code;
        }
        let Some(changed) = settle(&changes) else {
            super::messages::failure("the file watcher stopped", &palette);
            return code;
        };
        let plan = watched.plan(&changed);
        let Some(rerun) = session.rerun(plan) else {
            continue;
        };
        code = rerun;
        reruns += 1;
    }
}

/// One watch: what to run, against what, reported how.
struct Session {
    config: RunConfig,
    target: Target,
    timeout: Duration,
    options: ReportOptions,
    /// The line said after each run.
    watching: String,
}

impl Session {
    /// Runs what `plan` calls for, after a heading; `None` when it calls for nothing.
    fn rerun(&self, plan: Plan) -> Option<i32> {
        let (heading, config) = match plan {
            Plan::Nothing => return None,
            Plan::All(changed) => (
                format!(
                    "{} changed: running every selected spec",
                    display_path(&changed)
                ),
                self.config.clone(),
            ),
            Plan::Specs(changed) => {
                let (found, gone) = self.find(&changed);
                let mut said: Vec<String> = found
                    .iter()
                    .map(|path| format!("{} changed", display_path(path)))
                    .collect();
                said.extend(
                    gone.iter()
                        .map(|path| format!("{} was removed", display_path(path))),
                );
                if said.is_empty() {
                    return None;
                }
                let config = RunConfig {
                    paths: found,
                    ..self.config.clone()
                };
                (said.join("; "), config)
            }
        };
        clear_screen();
        self.say(&format!("watch: {heading}"));
        if config.paths.is_empty() {
            self.say(&self.watching);
            return Some(exit::PASSED);
        }
        Some(self.run(&config))
    }

    /// Of the changed spec files, those discovery finds under the watched paths (so a link
    /// out of a folder is no more read here than by `run`), and those that are gone.
    fn find(&self, changed: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let entries = discover::discover(&self.config.paths)
            .map(|discovery| discovery.entries)
            .unwrap_or_default();
        let found = changed
            .iter()
            .filter(|path| entries.iter().any(|entry| entry.path() == path.as_path()))
            .cloned()
            .collect();
        let gone = changed
            .iter()
            .filter(|path| std::fs::symlink_metadata(path).is_err())
            .cloned()
            .collect();
        (found, gone)
    }

    /// Runs `config` with the human report, then says what is watched; the exit code `run`
    /// would give.
    fn run(&self, config: &RunConfig) -> i32 {
        let factory =
            || -> Box<dyn Implementation + Send> { self.target.instantiate(self.timeout) };
        let palette = &self.options.palette;
        let mut outputs = match Outputs::open(&self.options) {
            Ok(outputs) => outputs,
            Err(error) => return super::messages::usage_error(&error.to_string(), palette),
        };
        let code = match runner::run(config, &factory, outputs.reporter()) {
            Ok(summary) => {
                let _ = outputs.finish();
                summary.exit_code()
            }
            Err(error) => {
                drop(outputs);
                super::messages::failure(&error.to_string(), palette);
                error.exit_code()
            }
        };
        self.say(&self.watching);
        code
    }

    fn say(&self, line: &str) {
        let mut out = sanitize::stdout();
        let _ = writeln!(out, "{}", sanitize::line(line));
        let _ = out.flush();
    }
}

/// Waits for a change, then gathers changes until the files have been quiet for `QUIET`, or
/// for `MAX_SETTLE` at most (a file that never stops changing, a log say, must not hold the
/// rerun back for ever); the paths that changed, in order, each once. `None` when the watcher
/// has gone.
fn settle(changes: &Receiver<Change>) -> Option<Vec<PathBuf>> {
    let mut changed = IndexSet::new();
    let first = changes.recv().ok()?;
    take(first, &mut changed);
    let until = std::time::Instant::now() + MAX_SETTLE;
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        match changes.recv_timeout(QUIET.min(left)) {
            Ok(change) if !left.is_zero() => take(change, &mut changed),
            Ok(_) | Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                return Some(changed.into_iter().collect());
            }
        }
    }
}

/// Keeps the paths of an event that changes content or names: not reads (dlqspec reading the
/// specs it runs), nor attribute changes (a read may update an access time).
fn take(change: Change, changed: &mut IndexSet<PathBuf>) {
    let Ok(event) = change else { return };
    let matters = match event.kind {
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Modify(notify::event::ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(_) => false,
    };
    if matters {
        changed.extend(event.paths);
    }
}

/// The warm start of a Python solution's every run, when it can start (as root, with what the
/// warm box needs) and is asked for (not `--cold`, the box on); else every run starts cold.
fn warm_python(args: &WatchArgs, target: &Target) -> Option<crate::external::zygote::WarmStart> {
    let Target::External(launch) = target else {
        return None;
    };
    if args.cold || args.target.limits.sandbox != crate::commands::cli::SandboxChoice::On {
        return None;
    }
    // Why it cannot start is said nowhere: a cold start only takes longer, and the reader of
    // `watch` is a student at work on a solution, for whom how the box starts it is noise.
    crate::external::zygote::for_solution(launch, args.target.limits.processes.0)
        .ok()
        .flatten()
}

/// The files of an external implementation whose change reruns every spec: the solution file
/// (or folder) of `python:` and `node:`, and the files a `cmd:` command line names.
fn implementation_paths(target: &Target) -> Vec<PathBuf> {
    let Target::External(launch) = target else {
        return Vec::new();
    };
    for prefix in ["python:", "node:"] {
        if let Some(solution) = launch.label.strip_prefix(prefix) {
            return vec![PathBuf::from(solution)];
        }
    }
    std::iter::once(&launch.program)
        .chain(&launch.args)
        .map(PathBuf::from)
        .filter(|path| path.is_file())
        .collect()
}

/// `watching specs and python:solution.py for changes (Ctrl-C stops)`.
fn watching_line(watched: &Watched, target: &Target) -> String {
    let mut names: Vec<String> = watched
        .specs
        .iter()
        .map(|root| display_path(&root.given))
        .collect();
    if !watched.implementation.is_empty() {
        names.push(target.label().to_owned());
    }
    format!(
        "watching {} for changes (Ctrl-C stops)",
        names.join(" and ")
    )
}

/// Clears the screen for a rerun, only when stdout is a terminal: piped into a file or a
/// program, every run stays, one after the other.
#[expect(
    clippy::disallowed_methods,
    reason = "prints: the screen is cleared for a rerun"
)]
fn clear_screen() {
    let mut stdout = std::io::stdout();
    if stdout.is_terminal() {
        // Erase the screen and the scrollback, cursor home.
        let _ = stdout.write_all(b"\x1b[2J\x1b[3J\x1b[H");
        let _ = stdout.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_solution_is_watched_by_its_file() {
        let target = crate::external::launch::parse("python:examples/python/solution.py")
            .expect("the example parses");
        assert_eq!(
            implementation_paths(&target),
            vec![PathBuf::from("examples/python/solution.py")]
        );
        assert!(implementation_paths(&Target::Builtin).is_empty());
    }

    #[test]
    fn a_command_line_is_watched_by_the_files_it_names() {
        let target = crate::external::launch::parse(
            "cmd:no-such-program examples/python/solution.py --flag .",
        )
        .expect("parses");
        assert_eq!(
            implementation_paths(&target),
            vec![PathBuf::from("examples/python/solution.py")]
        );
    }

    #[test]
    fn reads_and_attribute_changes_are_not_changes() {
        let mut changed = IndexSet::new();
        let event = |kind| Ok(notify::Event::new(kind).add_path(PathBuf::from("/w/a.yaml")));
        take(
            event(EventKind::Access(notify::event::AccessKind::Any)),
            &mut changed,
        );
        take(
            event(EventKind::Modify(notify::event::ModifyKind::Metadata(
                notify::event::MetadataKind::AccessTime,
            ))),
            &mut changed,
        );
        assert!(changed.is_empty());
        take(
            event(EventKind::Modify(notify::event::ModifyKind::Any)),
            &mut changed,
        );
        take(
            event(EventKind::Create(notify::event::CreateKind::File)),
            &mut changed,
        );
        assert_eq!(
            changed.into_iter().collect::<Vec<_>>(),
            vec![PathBuf::from("/w/a.yaml")]
        );
    }

    #[test]
    fn changes_that_never_stop_are_gathered_for_a_while_not_for_ever() {
        let (send, changes) = mpsc::channel();
        // A change every 50 ms for 10 s, each naming a file of its own: quiet never comes.
        let sender = std::thread::spawn(move || {
            for n in 0..200 {
                let path = PathBuf::from(format!("/w/log-{n}"));
                let event = notify::Event::new(EventKind::Create(notify::event::CreateKind::File))
                    .add_path(path);
                if send.send(Ok(event)).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let changed = settle(&changes).expect("changes");
        drop(changes);
        assert!(
            !changed.is_empty() && changed.len() < 200,
            "{} changes gathered",
            changed.len()
        );
        let _ = sender.join();
    }
}
