//! Where a run's reports go: the chosen format on stdout or into `--output` (written
//! atomically), the human summary on the terminal, GitHub annotations, the progress bar.

use std::cell::RefCell;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::{
    ExercismReporter, GithubAnnotations, GithubPlaces, GradescopeReporter, HumanReporter,
    JsonReporter, JunitReporter, Palette, ProgressReporter, TapReporter, sanitize,
};
use crate::files::atomic_file::AtomicFile;
use crate::run::events::{Event, Reporter};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum ReportFormat {
    /// Colored lines for people, with diffs.
    #[default]
    Human,
    /// One JSON object per event (docs/reports.md).
    Json,
    /// JUnit XML, one testcase per spec.
    Junit,
    /// TAP version 13.
    Tap,
    /// Gradescope's autograder results.json (docs/autograders.md).
    Gradescope,
    /// An Exercism test runner's results.json, version 3 (docs/autograders.md).
    Exercism,
}

impl ReportFormat {
    /// Whether the report is an autograder's results file, which must be written even when no
    /// spec could run.
    pub(crate) fn is_autograder(self) -> bool {
        matches!(self, ReportFormat::Gradescope | ReportFormat::Exercism)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct ReportOptions {
    pub(crate) format: ReportFormat,
    /// Write the chosen format here instead of stdout; stdout then gets the human report.
    pub(crate) output: Option<PathBuf>,
    pub(crate) palette: Palette,
    /// Human reports list passing specs too.
    pub(crate) show_passes: bool,
    /// Human reports show captured output under passing specs too.
    pub(crate) show_output: bool,
    /// Human reports tell a spec that is not `visible` as `hidden spec N`, verdict and rules
    /// only (a report students read).
    pub(crate) conceal_hidden: bool,
    /// Print `::error` workflow commands for failures, one per cause, and add every cause to
    /// the step summary: the places GitHub Actions names, when it runs the step.
    pub(crate) github: Option<GithubPlaces>,
    /// Show a progress bar on stderr.
    pub(crate) progress: bool,
    /// Human reports mark a spec that took longer than this as SLOW.
    pub(crate) slow: Option<std::time::Duration>,
    /// Human reports list this many of the slowest specs after the run.
    pub(crate) durations: usize,
}

impl ReportOptions {
    /// The places of the GitHub Actions step this runs as, when it runs as one.
    pub(crate) fn github_actions() -> Option<GithubPlaces> {
        sanitize::in_github_actions().then(GithubPlaces::from_env)
    }

    /// A progress bar only for a person watching: stdout and stderr are terminals and this is
    /// no CI job. Not when stdout alone is piped: `dlqspec run | less` would get the bar drawn
    /// across the pager's screen.
    #[expect(
        clippy::disallowed_methods,
        reason = "prints: asks whether stdout and stderr are terminals a person watches"
    )]
    pub(crate) fn progress_wanted() -> bool {
        std::env::var_os("CI").is_none() && io::stderr().is_terminal() && io::stdout().is_terminal()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot write the report to {path}: {source}")]
pub(crate) struct OutputError {
    pub(crate) path: String,
    pub(crate) source: io::Error,
}

/// The reporters of one run. `finish` must be called after the run to write `--output`.
pub(crate) struct Outputs {
    reporter: Box<dyn Reporter>,
    file: Option<(PendingFile, SharedBuffer)>,
}

impl Outputs {
    /// Sets up every reporter; fails early when `--output` cannot be created.
    #[expect(
        clippy::disallowed_methods,
        reason = "prints: the reporters of a run write to stdout (and annotations to stderr)"
    )]
    pub(crate) fn open(options: &ReportOptions) -> Result<Outputs, OutputError> {
        let mut reporters: Vec<Box<dyn Reporter>> = Vec::new();
        let mut file = None;
        let stdout_format = if let Some(path) = &options.output {
            let buffer = SharedBuffer::default();
            reporters.push(format_reporter(
                options.format,
                options,
                buffer.clone(),
                Palette::plain(),
            ));
            file = Some((PendingFile::create(path)?, buffer));
            ReportFormat::Human
        } else {
            options.format
        };
        // A person reads the human report: under GitHub Actions none of its lines may be taken
        // for a workflow command. The other formats escape such lines in their own syntax.
        let stdout: Box<dyn Write> = if stdout_format == ReportFormat::Human {
            Box::new(sanitize::stdout())
        } else {
            Box::new(io::stdout())
        };
        reporters.push(format_reporter(
            stdout_format,
            options,
            stdout,
            options.palette,
        ));
        if let Some(places) = &options.github {
            // Workflow commands are read from stdout; it stays parseable when a format has it.
            if stdout_format == ReportFormat::Human {
                reporters.push(Box::new(GithubAnnotations::new(
                    io::stdout(),
                    places.clone(),
                )));
            } else {
                reporters.push(Box::new(GithubAnnotations::new(
                    io::stderr(),
                    places.clone(),
                )));
            }
        }
        reporters.push(Box::new(SkippedWarnings(options.palette)));
        let mut reporter: Box<dyn Reporter> = Box::new(Fanout(reporters));
        if options.progress {
            reporter = Box::new(ProgressReporter::new(reporter));
        }
        Ok(Outputs { reporter, file })
    }

    pub(crate) fn reporter(&mut self) -> &mut dyn Reporter {
        self.reporter.as_mut()
    }

    /// Writes `text` as the whole report instead of what the reporters made: to `--output`
    /// (replacing the file in one step), else to stdout. For autograder results of a run that
    /// could not run any spec, which must still leave a results file.
    #[expect(
        clippy::disallowed_methods,
        reason = "prints: a whole report written to stdout when there is no --output"
    )]
    pub(crate) fn finish_with(self, text: &str) -> Result<(), OutputError> {
        let Outputs { reporter, file } = self;
        drop(reporter);
        match file {
            Some((pending, _)) => pending.commit(text.as_bytes()),
            None => {
                let mut stdout = io::stdout();
                let _ = stdout
                    .write_all(text.as_bytes())
                    .and_then(|()| stdout.flush());
                Ok(())
            }
        }
    }

    /// Writes `--output`, if any, replacing the file in one step.
    pub(crate) fn finish(self) -> Result<(), OutputError> {
        let Outputs { reporter, file } = self;
        // Dropping the reporters clears the progress bar and flushes everything they hold.
        drop(reporter);
        match file {
            Some((pending, buffer)) => pending.commit(&buffer.take()),
            None => Ok(()),
        }
    }
}

fn format_reporter<W: Write + 'static>(
    format: ReportFormat,
    options: &ReportOptions,
    out: W,
    palette: Palette,
) -> Box<dyn Reporter> {
    match format {
        ReportFormat::Human => {
            let mut human = HumanReporter::new(out, palette);
            human.show_passes = options.show_passes;
            human.show_output = options.show_output;
            human.conceal_hidden = options.conceal_hidden;
            human.slow = options.slow;
            human.durations = options.durations;
            Box::new(human)
        }
        ReportFormat::Json => Box::new(JsonReporter::new(out)),
        ReportFormat::Junit => Box::new(JunitReporter::new(out)),
        ReportFormat::Tap => Box::new(TapReporter::new(out)),
        ReportFormat::Gradescope => Box::new(GradescopeReporter::new(out)),
        ReportFormat::Exercism => Box::new(ExercismReporter::new(out)),
    }
}

/// Warns on stderr about the paths discovery left out, whatever the format on stdout.
struct SkippedWarnings(Palette);

impl Reporter for SkippedWarnings {
    fn event(&mut self, event: &Event) {
        if let Event::Started { skipped, .. } = event {
            super::render::warn_skipped(skipped, &self.0);
        }
    }
}

/// Hands every event to each reporter in turn.
struct Fanout(Vec<Box<dyn Reporter>>);

impl Reporter for Fanout {
    fn event(&mut self, event: &Event) {
        for reporter in &mut self.0 {
            reporter.event(event);
        }
    }
}

/// An in-memory report that the file is written from once the run is over.
#[derive(Clone, Default)]
struct SharedBuffer(Rc<RefCell<Vec<u8>>>);

impl SharedBuffer {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `--output`: created when the run starts, so an unwritable path fails before any spec runs.
struct PendingFile {
    path: PathBuf,
    file: AtomicFile,
}

impl PendingFile {
    fn create(target: &Path) -> Result<PendingFile, OutputError> {
        let file = AtomicFile::create(target).map_err(|source| OutputError {
            path: crate::text::source::display_path(target),
            source,
        })?;
        Ok(PendingFile {
            path: target.to_path_buf(),
            file,
        })
    }

    fn commit(self, bytes: &[u8]) -> Result<(), OutputError> {
        self.file.commit(bytes).map_err(|source| OutputError {
            path: crate::text::source::display_path(&self.path),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_folder_or_a_folder_target_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/report.xml");
        let error = PendingFile::create(&missing).err().unwrap();
        assert!(
            error.to_string().starts_with("cannot write the report to "),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .ends_with("/no/such/report.xml: No such file or directory (os error 2)"),
            "{error}"
        );
        let error = PendingFile::create(dir.path()).err().unwrap();
        assert!(error.to_string().ends_with(": it is a folder"), "{error}");
    }
}
