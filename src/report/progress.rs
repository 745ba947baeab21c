//! A progress bar on stderr around another reporter, for runs that take more than a moment.
//!
//! The bar stays hidden for the first `DELAY` so quick runs never flash it; the wrapped
//! reporter prints through `ProgressBar::suspend`, so its lines never tear through the bar.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::runner::{Event, Reporter};

/// How long a run goes before the bar appears.
pub const DELAY: Duration = Duration::from_millis(300);

pub struct ProgressReporter<'a> {
    inner: Box<dyn Reporter + 'a>,
    bar: ProgressBar,
    /// Dropping the sender tells the delay thread the run is over.
    reveal: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

impl<'a> ProgressReporter<'a> {
    /// Starts the clock at once, so that loading the specs shows a spinner too.
    pub fn new(inner: Box<dyn Reporter + 'a>) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{spinner} [{elapsed}] {msg}") {
            bar.set_style(style);
        }
        bar.set_message("loading specs");
        let mut progress = ProgressReporter {
            inner,
            bar,
            reveal: None,
        };
        progress.start_delay();
        progress
    }

    fn start_delay(&mut self) {
        let (sender, receiver) = mpsc::channel::<()>();
        let bar = self.bar.clone();
        let handle = std::thread::spawn(move || {
            if receiver.recv_timeout(DELAY) == Err(mpsc::RecvTimeoutError::Timeout) {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                bar.enable_steady_tick(Duration::from_millis(100));
            }
        });
        self.reveal = Some((sender, handle));
    }

    fn stop(&mut self) {
        if let Some((sender, handle)) = self.reveal.take() {
            drop(sender);
            let _ = handle.join();
        }
        self.bar.finish_and_clear();
    }
}

impl Reporter for ProgressReporter<'_> {
    fn event(&mut self, event: &Event) {
        match event {
            Event::Started { total, .. } => {
                if let Ok(style) = ProgressStyle::with_template(
                    "{spinner} [{elapsed}] {bar:30} {pos}/{len} {wide_msg}",
                ) {
                    self.bar.set_style(style);
                }
                self.bar.set_length(*total as u64);
                self.bar.set_message("");
                self.bar.suspend(|| self.inner.event(event));
            }
            Event::Finished(report) => {
                self.bar.suspend(|| self.inner.event(event));
                self.bar.inc(1);
                self.bar
                    .set_message(super::sanitize::line(&report.path).into_owned());
            }
            Event::Done(_) => {
                self.stop();
                self.inner.event(event);
            }
        }
    }
}

impl Drop for ProgressReporter<'_> {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::implementation::ImplInfo;
    use crate::outcome::Outcome;
    use crate::runner::{SpecReport, Summary};

    struct Count<'c>(&'c mut Vec<&'static str>);

    impl Reporter for Count<'_> {
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
        };
        {
            let mut progress = ProgressReporter::new(Box::new(Count(&mut seen)));
            progress.event(&Event::Started {
                total: 2,
                filtered_out: 0,
                implementation: &info,
                skipped: &[],
            });
            progress.event(&Event::Finished(&report));
            progress.event(&Event::Finished(&report));
            assert_eq!(progress.bar.position(), 2);
            assert_eq!(progress.bar.length(), Some(2));
            progress.event(&Event::Done(&Summary::default()));
            assert!(progress.bar.is_finished());
        }
        assert_eq!(seen, ["started", "finished", "finished", "done"]);
    }
}
