//! Progress on stderr for work that takes more than a moment: the one bar `run`, `explore`
//! and `grade` share, and the durations they print.
//!
//! The bar stays hidden for the first `DELAY` so quick work never flashes it; what is printed
//! meanwhile goes through `ProgressBar::suspend`, so its lines never tear through the bar.

use std::io::IsTerminal;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::run::events::{Event, Reporter};

/// How long work goes before the bar appears.
pub(crate) const DELAY: Duration = Duration::from_millis(300);

/// Whether a bar on stderr has someone to watch it: stderr is a terminal and this is no CI job.
#[expect(
    clippy::disallowed_methods,
    reason = "prints: asks whether stderr is a terminal a person watches"
)]
pub(crate) fn wanted_on_stderr() -> bool {
    std::env::var_os("CI").is_none() && std::io::stderr().is_terminal()
}

/// A bar on stderr, hidden until `DELAY` has passed, then ticking; cleared when finished or
/// dropped.
pub(crate) struct DelayedBar {
    bar: ProgressBar,
    /// Dropping the sender tells the delay thread the work is over.
    reveal: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

impl DelayedBar {
    /// Starts the clock at once, with an indicatif `template`.
    #[expect(
        clippy::disallowed_methods,
        reason = "prints: the bar is drawn on stderr"
    )]
    pub(crate) fn start(template: &str) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        let mut delayed = DelayedBar { bar, reveal: None };
        delayed.set_template(template);
        let (sender, receiver) = mpsc::channel::<()>();
        let bar = delayed.bar.clone();
        let handle = std::thread::spawn(move || {
            if receiver.recv_timeout(DELAY) == Err(mpsc::RecvTimeoutError::Timeout) {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                bar.enable_steady_tick(Duration::from_millis(100));
            }
        });
        delayed.reveal = Some((sender, handle));
        delayed
    }

    pub(crate) fn set_template(&self, template: &str) {
        if let Ok(style) = ProgressStyle::with_template(template) {
            self.bar.set_style(style);
        }
    }

    /// The bar itself, to count, to set its message, or to print through (`suspend`).
    pub(crate) fn bar(&self) -> &ProgressBar {
        &self.bar
    }

    /// Stops the delay and clears the bar.
    pub(crate) fn finish(&mut self) {
        if let Some((sender, handle)) = self.reveal.take() {
            drop(sender);
            let _ = handle.join();
        }
        self.bar.finish_and_clear();
    }
}

impl Drop for DelayedBar {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Runs `print` without tearing `bar`, when there is one.
pub(crate) fn suspended<R>(bar: Option<&ProgressBar>, print: impl FnOnce() -> R) -> R {
    match bar {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// A longer duration as people read it: `0.4 s`, `12 s`.
pub(crate) fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs < 10.0 {
        format!("{secs:.1} s")
    } else {
        format!("{secs:.0} s")
    }
}

/// A progress bar around another reporter: its events pass through, the bar counts specs.
pub(crate) struct ProgressReporter<'a> {
    inner: Box<dyn Reporter + 'a>,
    bar: DelayedBar,
}

impl<'a> ProgressReporter<'a> {
    /// Starts the clock at once, so that loading the specs shows a spinner too.
    pub(crate) fn new(inner: Box<dyn Reporter + 'a>) -> Self {
        let bar = DelayedBar::start("{spinner} [{elapsed}] {msg}");
        bar.bar().set_message("loading specs");
        ProgressReporter { inner, bar }
    }
}

impl Reporter for ProgressReporter<'_> {
    fn event(&mut self, event: &Event) {
        match event {
            Event::Started { total, .. } => {
                self.bar
                    .set_template("{spinner} [{elapsed}] {bar:30} {pos}/{len} {wide_msg}");
                let bar = self.bar.bar();
                bar.set_length(*total as u64);
                bar.set_message("");
                bar.suspend(|| self.inner.event(event));
            }
            Event::Finished(report) => {
                let bar = self.bar.bar();
                bar.suspend(|| self.inner.event(event));
                bar.inc(1);
                bar.set_message(super::sanitize::line(&report.path).into_owned());
            }
            Event::Done(_) => {
                self.bar.finish();
                self.inner.event(event);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::implementation::ImplInfo;
    use crate::model::outcome::Outcome;
    use crate::run::events::{SpecReport, Summary};

    struct EventNames<'c>(&'c mut Vec<&'static str>);

    impl Reporter for EventNames<'_> {
        fn event(&mut self, event: &Event) {
            self.0.push(match event {
                Event::Started { .. } => "started",
                Event::Finished(_) => "finished",
                Event::Done(_) => "done",
            });
        }
    }

    #[test]
    fn every_event_reaches_the_wrapped_reporter_and_the_bar_counts_specs() {
        let mut seen = Vec::new();
        let info = ImplInfo {
            label: "builtin".into(),
            language: "rust".into(),
            is_reference: true,
        };
        let report = SpecReport {
            path: "a.yaml".into(),
            name: None,
            contract: None,
            rules: vec![],
            outcome: Outcome::Passed,
            duration: Duration::ZERO,
            output: None,
            grading: Default::default(),
            source: None,
            departure: None,
            cause: None,
        };
        {
            let mut progress = ProgressReporter::new(Box::new(EventNames(&mut seen)));
            progress.event(&Event::Started {
                total: 2,
                filtered_out: 0,
                implementation: &info,
                skipped: &[],
                world: &[],
            });
            progress.event(&Event::Finished(&report));
            progress.event(&Event::Finished(&report));
            assert_eq!(progress.bar.bar().position(), 2);
            assert_eq!(progress.bar.bar().length(), Some(2));
            progress.event(&Event::Done(&Summary::default()));
            assert!(progress.bar.bar().is_finished());
        }
        assert_eq!(seen, ["started", "finished", "finished", "done"]);
    }

    #[test]
    fn a_delayed_bar_stays_hidden_until_revealed_and_clears_when_finished() {
        let mut delayed = DelayedBar::start("{pos}/{len}");
        delayed.bar().set_length(3);
        delayed.bar().inc(2);
        assert_eq!(delayed.bar().position(), 2);
        delayed.finish();
        assert!(delayed.bar().is_finished());
        assert_eq!(suspended(None, || 7), 7);
        assert_eq!(seconds(Duration::from_millis(420)), "0.4 s");
        assert_eq!(seconds(Duration::from_secs(12)), "12 s");
    }
}
