//! Grading a class: opening class folders into submissions, naming their reports, taking a
//! deterministic share of a class, reading a submission's JSON-lines report back into a row of
//! the summary, and reading shards' `summary.json` back to merge them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::external::entry::extension;
use crate::model::implementation::ImplErrorKind;
use crate::model::outcome::OutcomeKind;
pub(crate) use crate::run::grade_record::SpecOutcome;
use crate::run::grade_record::{RowRecord, SuiteRecord, SummaryFile, SummaryHead};
use crate::run::record::{RunEvent, SpecFinished, read_events};
use crate::run::select::Partition;

/// The machine-readable summary each `grade --output DIR` leaves, read back by `--merge`.
pub(crate) const SUMMARY_JSON: &str = "summary.json";

/// What `summary.json` says it is, and the version of its layout this build writes and reads.
pub(crate) const SUMMARY_FORMAT: &str = "dlqspec-grade-summary";
/// Version 2 added each row's `specs`, and the class's `causes` and `against`.
pub(crate) const SUMMARY_VERSION: u64 = 2;

/// The most of a `summary.json` read back.
pub(crate) const MAX_SUMMARY_BYTES: u64 = 64 << 20;

/// The most of one submission's report (`NAME.txt` or `NAME.jsonl`) kept or copied.
pub(crate) const MAX_REPORT_BYTES: u64 = 64 << 20;

/// How a submission's grading ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Every spec passed.
    Pass,
    /// It ran, and some spec did not pass.
    Fail,
    /// No spec could run: it does not load, has no entry file or none of the classes.
    Broken,
    /// Its run went past `--budget` and was stopped.
    Timeout,
    /// Its run ended in a way dlqspec never ends (a signal, an unknown exit code).
    Crashed,
    /// Not run: the grading machine cannot run its language (no Node.js, one too old). The
    /// grader's to fix, never the student's score.
    Ungraded,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Broken => "broken",
            Status::Timeout => "timeout",
            Status::Crashed => "crashed",
            Status::Ungraded => "ungraded",
        }
    }
}

/// A rule's verdict for one submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleVerdict {
    /// Every spec covering it passed.
    Pass,
    /// Some spec covering it did not.
    Fail,
}

/// What became of one spec of the suite for one submission.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SpecVerdict {
    /// The outcome its run reported (`passed`, `mismatch`, `errored`, ...), or not run.
    pub(crate) outcome: SpecOutcome,
    /// Why it failed, in one line (the run's `cause`), when it failed.
    pub(crate) cause: Option<String>,
    /// The key of that cause (the run's `cause_id`): failures with one key, in one
    /// submission or across the class, share one cause.
    pub(crate) cause_id: Option<String>,
    /// The rule that cause breaks (the run's `cause_rule`), when it is a rule of the suite.
    pub(crate) cause_rule: Option<String>,
}

/// The most of a cause's text kept: one line, whatever the message it came from.
pub(crate) const MAX_CAUSE_BYTES: usize = 300;

/// `text`'s first line, at most [`MAX_CAUSE_BYTES`] of it, `…` where it was cut.
fn cause_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.len() <= MAX_CAUSE_BYTES {
        return line.to_owned();
    }
    let mut end = MAX_CAUSE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

/// One row of the summary.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Graded {
    /// The submission as given on the command line.
    pub(crate) submission: String,
    /// The file name its reports share in the output folder, without extension.
    pub(crate) name: String,
    pub(crate) status: Status,
    pub(crate) score: f64,
    pub(crate) max_score: f64,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) rules: BTreeMap<String, RuleVerdict>,
    /// Each spec of the suite's verdict, by path: what a regrade (`--against`) compares and
    /// the class's causes are counted from.
    pub(crate) specs: BTreeMap<String, SpecVerdict>,
    pub(crate) took: Duration,
    /// A sentence for statuses a count does not explain (why it is broken, the budget).
    pub(crate) note: String,
    /// Which of its reports are in the output folder: the summaries link only to those.
    pub(crate) reports: WrittenReports,
}

/// Which of a submission's reports were written: `NAME.txt` (its human report), `NAME.jsonl`
/// (its JSON-lines report), and the pictures of the specs it failed
/// (`NAME/explain/SPEC.html`, see [`picture_file`]). A submission with no entry file has
/// none; a run that sent nothing through its pipe has no `NAME.jsonl`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WrittenReports {
    pub(crate) text: bool,
    pub(crate) json_lines: bool,
    /// The paths of the specs whose picture was written, as the run reports them.
    pub(crate) pictures: Vec<String>,
}

impl WrittenReports {
    /// The file names of the reports written, with `kind` for each (`txt`, `jsonl`, `html`
    /// for a picture), relative to the output folder.
    pub(crate) fn files(&self, name: &str) -> Vec<(&'static str, String)> {
        let mut files: Vec<(&'static str, String)> =
            [("txt", self.text), ("jsonl", self.json_lines)]
                .into_iter()
                .filter(|(_, written)| *written)
                .map(|(ext, _)| (ext, format!("{name}.{ext}")))
                .collect();
        files.extend(
            self.pictures
                .iter()
                .map(|spec| ("html", picture_file(name, spec))),
        );
        files
    }
}

/// The most pictures `grade` draws of one submission: one per failing spec, the first ones
/// of the suite's order. Each needs a run of its own (`dlqspec explain`).
pub(crate) const MAX_PICTURES: usize = 5;

/// Where the picture of `spec` (a path as the run reports it) for submission `name` goes,
/// relative to the output folder: `NAME/explain/STEM.html`, the stem made of letters, digits,
/// `-` and `_`, with `.` for each `/` (so `specs/dlq-consumer/a.yaml` is
/// `specs.dlq-consumer.a.html`).
pub(crate) fn picture_file(name: &str, spec: &str) -> String {
    let stem = spec
        .strip_suffix(".yaml")
        .or_else(|| spec.strip_suffix(".yml"))
        .unwrap_or(spec);
    let stem: String = stem
        .chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => c,
            '/' | '\\' => '.',
            _ => '_',
        })
        .collect();
    format!(
        "{}/{}.html",
        picture_folder(name),
        stem.trim_start_matches('.')
    )
}

/// The folder of submission `name`'s pictures, relative to the output folder.
pub(crate) fn picture_folder(name: &str) -> String {
    format!("{name}/explain")
}

/// Whether `file` (a name in a [`picture_folder`]) is one [`picture_file`] could give: the
/// pictures of an earlier grading are known by it, and nothing else there is touched.
pub(crate) fn is_picture_name(file: &str) -> bool {
    file.strip_suffix(".html").is_some_and(|stem| {
        !stem.starts_with('.')
            && stem
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    })
}

/// The specs of `suite` whose outcome in a submission's JSON-lines report is `mismatch`, in
/// the suite's order: those whose picture shows where the submission and the spec part ways.
/// A hidden spec is none of them: its picture would show its student its expectations.
pub(crate) fn mismatched(json_lines: &str, suite: &[SuiteSpec]) -> Vec<String> {
    let mut outcomes: BTreeMap<String, OutcomeKind> = BTreeMap::new();
    for event in read_events(json_lines) {
        if let RunEvent::SpecFinished(spec) = event {
            outcomes.insert(spec.path.into_owned(), spec.outcome);
        }
    }
    suite
        .iter()
        .filter(|spec| !spec.hidden && outcomes.get(&spec.path) == Some(&OutcomeKind::Mismatch))
        .map(|spec| spec.path.clone())
        .collect()
}

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
        if kind.is_file() && extension(&path).is_some() {
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

/// What a submission's JSON-lines report says: the counts, the score and each rule's verdict.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ReportTally {
    pub(crate) score: f64,
    pub(crate) max_score: f64,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) rules: BTreeMap<String, RuleVerdict>,
    /// Each spec of the suite's verdict, by path.
    pub(crate) specs: BTreeMap<String, SpecVerdict>,
    /// Whether the run finished (its `run_finished` line is there).
    pub(crate) finished: bool,
    /// Whether no spec could run at all: every spec reported errored while the solution was
    /// starting.
    pub(crate) nothing_ran: bool,
    /// The first implementation error, for a broken submission's note.
    pub(crate) first_error: Option<String>,
    /// How many specs of the suite the run's budget kept from finishing
    /// ([`NOT_RUN_BUDGET`](crate::run::events::NOT_RUN_BUDGET)).
    pub(crate) not_run_budget: usize,
}

/// A spec of the suite a class is graded on, as `grade` found it running the suite on the
/// built-in reference: what it is worth and what it covers come from here, never from a
/// submission's report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SuiteSpec {
    /// As the run reports it (`path` of its `spec_finished` event).
    pub(crate) path: String,
    pub(crate) points: f64,
    pub(crate) rules: Vec<String>,
    /// Not `visible`: its student may not see its expectations, so it is never drawn.
    pub(crate) hidden: bool,
}

/// What a grading says of itself on its page and in `summary.json`: the suite (the `--specs`
/// folders as given, how many specs, a digest of them), when, and by which dlqspec.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct About {
    pub(crate) folders: Vec<String>,
    pub(crate) specs: usize,
    /// 12 hex digits of FNV-1a over each spec's path and bytes, in the suite's order: two
    /// gradings show the same digest when they ran the same spec files.
    pub(crate) digest: String,
    /// When it was graded, in UTC: `2026-12-01 22:43 UTC`.
    pub(crate) graded: String,
    pub(crate) dlqspec: String,
}

impl About {
    /// This grading's, of `suite` from `folders`, now.
    pub(crate) fn now(folders: &[PathBuf], suite: &[SuiteSpec]) -> About {
        About {
            folders: folders.iter().map(|f| f.display().to_string()).collect(),
            specs: suite.len(),
            digest: suite_digest(suite),
            graded: utc_minute(std::time::SystemTime::now()),
            dlqspec: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    /// As `summary.json` holds it.
    pub(crate) fn record(&self) -> SuiteRecord {
        SuiteRecord {
            folders: self.folders.clone(),
            specs: self.specs,
            digest: self.digest.clone(),
            graded: self.graded.clone(),
            dlqspec: self.dlqspec.clone(),
        }
    }
}

/// Read back from `summary.json`'s `suite`.
impl From<SuiteRecord> for About {
    fn from(suite: SuiteRecord) -> About {
        About {
            folders: suite.folders,
            specs: suite.specs,
            digest: suite.digest,
            graded: suite.graded,
            dlqspec: suite.dlqspec,
        }
    }
}

/// The digest of a suite's spec files (`About::digest`); a file that cannot be read adds its
/// path alone.
pub(crate) fn suite_digest(suite: &[SuiteSpec]) -> String {
    use crate::run::select::{FNV1A_START, fnv1a_more};
    let hash = suite.iter().fold(FNV1A_START, |hash, spec| {
        let bytes = read_bounded(Path::new(&spec.path), MAX_REPORT_BYTES).unwrap_or_default();
        [
            &(spec.path.len() as u64).to_le_bytes()[..],
            spec.path.as_bytes(),
            &(bytes.len() as u64).to_le_bytes(),
            &bytes,
        ]
        .iter()
        .fold(hash, |hash, piece| fnv1a_more(hash, piece))
    });
    format!("{:012x}", hash >> 16)
}

/// `time` as `YYYY-MM-DD HH:MM UTC` (the proleptic Gregorian calendar, from days since 1970).
pub(crate) fn utc_minute(time: std::time::SystemTime) -> String {
    let secs = time
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rest / 3_600,
        rest % 3_600 / 60
    )
}

/// Reads a submission's JSON-lines report (docs/reports.md) against the whole suite: every
/// spec of the suite counts in `max_score`, and only a spec the report says `passed` earns
/// its points. A spec it skipped (a class it does not have) or does not mention scores 0 and
/// fails its rules; a listed known failure earns nothing but fails nothing.
pub(crate) fn tally(json_lines: &str, suite: &[SuiteSpec]) -> ReportTally {
    let mut tally = ReportTally::default();
    let known: BTreeSet<&str> = suite
        .iter()
        .flat_map(|spec| spec.rules.iter().map(String::as_str))
        .collect();
    let mut outcomes: BTreeMap<String, Box<SpecFinished<'static>>> = BTreeMap::new();
    for event in read_events(json_lines) {
        match event {
            // The last word on a spec is the run's: it writes its report once every
            // implementation process is gone, so whatever came earlier is not its.
            RunEvent::SpecFinished(spec) => {
                outcomes.insert(spec.path.to_string(), spec);
            }
            RunEvent::RunFinished(_) => tally.finished = true,
            RunEvent::RunStarted(_) => {}
        }
    }
    let mut reported = 0;
    let mut startup_only = true;
    for spec in suite {
        let event = outcomes.get(&spec.path);
        let outcome = event.map(|e| e.outcome);
        tally.max_score += spec.points;
        // A divergence passes on the lesson's world: the broker's, not the submission's.
        let passed = matches!(outcome, Some(OutcomeKind::Passed | OutcomeKind::Divergence));
        let failed = !passed && outcome != Some(OutcomeKind::ExpectedFailure);
        if passed {
            tally.score += spec.points;
            tally.passed += 1;
        } else if failed {
            tally.failed += 1;
        }
        let skipped = outcome == Some(OutcomeKind::Skipped);
        let budget = skipped
            && event.is_some_and(|e| {
                e.skip_reason.as_deref() == Some(crate::run::events::NOT_RUN_BUDGET)
            });
        if budget {
            tally.not_run_budget += 1;
        }
        let verdict = match outcome {
            _ if budget => SpecOutcome::NotRun,
            // A broker's fault is no verdict on the submission: the spec was not run.
            outcome => SpecOutcome::reported(outcome),
        };
        let cause_of = |text: Option<&str>| {
            text.filter(|_| failed && verdict != SpecOutcome::NotRun)
                .map(cause_line)
        };
        // The rule a cause breaks counts only when it is one of the suite's: the report is
        // the submission's own process's word.
        let cause_rule = cause_of(event.and_then(|e| e.cause_rule.as_deref()))
            .filter(|rule| known.contains(rule.as_str()));
        tally.specs.insert(
            spec.path.clone(),
            SpecVerdict {
                outcome: verdict,
                cause: cause_of(event.and_then(|e| e.cause.as_deref())),
                cause_id: cause_of(event.and_then(|e| e.cause_id.as_deref())),
                cause_rule: cause_rule.clone(),
            },
        );
        if let Some(event) = event.filter(|_| !skipped) {
            reported += 1;
            let startup_error = event.impl_error.as_ref().filter(|e| {
                outcome == Some(OutcomeKind::Errored) && e.kind == ImplErrorKind::Startup
            });
            if let Some(error) = startup_error
                && tally.first_error.is_none()
            {
                tally.first_error =
                    Some(error.message.lines().next().unwrap_or_default().to_owned());
            }
            startup_only &= startup_error.is_some();
        }
        for rule in &spec.rules {
            tally.rules.entry(rule.clone()).or_insert(RuleVerdict::Pass);
        }
        // A failure fails the rule its cause breaks: one mistake, one rule, however many specs
        // it fails. A failure no rule decides (an error, a spec not run) fails the spec's rules.
        if failed {
            let failing: Vec<&String> = match &cause_rule {
                Some(rule) => vec![rule],
                None => spec.rules.iter().collect(),
            };
            for rule in failing {
                tally.rules.insert(rule.clone(), RuleVerdict::Fail);
            }
        }
    }
    tally.nothing_ran = reported > 0 && startup_only;
    tally
}

/// Reads at most `limit` bytes of a regular file, refusing a link, a FIFO, a device or a
/// larger file with a sentence naming it: `source`'s bounded read, which checks the file it
/// opened (never blocking on a FIFO, never following a link), with errors for a person.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let (file, meta) = crate::text::source::open_regular(path, false).map_err(|e| {
        let not_regular = std::fs::symlink_metadata(path).is_ok_and(|meta| !meta.is_file());
        if not_regular {
            format!(
                "{}: not a regular file (a link, a folder or a device is never read)",
                path.display()
            )
        } else {
            format!("{}: {e}", path.display())
        }
    })?;
    crate::text::source::read_bounded(file, &meta, limit).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            format!(
                "{}: larger than the {} MiB read back",
                path.display(),
                limit >> 20
            )
        } else {
            format!("{}: {e}", path.display())
        }
    })
}

/// Reads a shard's `summary.json` back into its rows, validated: every error names the file
/// (with `:line:col` for JSON that does not parse) and says what to do.
pub(crate) fn read_summary(path: &Path) -> Result<Vec<Graded>, String> {
    read_summary_about(path).map(|(rows, _)| rows)
}

/// `read_summary`, with what the summary says of its grading (`About`), when it says it.
pub(crate) fn read_summary_about(path: &Path) -> Result<(Vec<Graded>, Option<About>), String> {
    let shown = path.display();
    let bytes = read_bounded(path, MAX_SUMMARY_BYTES)?;
    // Where the text is no JSON, where it is JSON of another shape: each told as such.
    let at = |e: serde_json::Error| {
        let (line, column) = (e.line(), e.column());
        let why = e.to_string();
        let why = why
            .strip_suffix(&format!(" at line {line} column {column}"))
            .unwrap_or(&why)
            .to_owned();
        (line, column, why)
    };
    serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).map_err(|e| {
        let (line, column, why) = at(e);
        format!(
            "{shown}:{line}:{column}: not a summary: {why}; grade again with `dlqspec grade --output`"
        )
    })?;
    let head: SummaryHead = serde_json::from_slice(&bytes).unwrap_or_default();
    if head.format.as_deref() != Some(SUMMARY_FORMAT) {
        return Err(format!(
            "{shown}: not a dlqspec grade summary (its `format` is not `{SUMMARY_FORMAT}`)"
        ));
    }
    match head.version {
        Some(SUMMARY_VERSION) => {}
        other => {
            return Err(format!(
                "{shown}: summary version {} is not the {SUMMARY_VERSION} this dlqspec reads; grade, and merge or compare, with the same dlqspec",
                other.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
            ));
        }
    }
    let summary: SummaryFile = serde_json::from_slice(&bytes).map_err(|e| {
        let (line, column, why) = at(e);
        format!("{shown}:{line}:{column}: {why}")
    })?;
    let rows = summary
        .rows
        .into_iter()
        .enumerate()
        .map(|(i, row)| summary_row(row).map_err(|why| format!("{shown}: rows[{i}]: {why}")))
        .collect::<Result<_, _>>()?;
    Ok((rows, summary.suite.map(About::from)))
}

/// One row of `summary.json`, checked field by field.
fn summary_row(row: RowRecord) -> Result<Graded, String> {
    let amount = |key: &str, value: f64| {
        Some(value)
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("`{key}` must be a number of at least 0"))
    };
    let name = row.name;
    if !is_report_name(&name) {
        return Err(format!(
            "`name` {:?} is not a report name dlqspec gives (letters, digits, `-`, `_`, `.`)",
            name
        ));
    }
    // A report is either the one its name gives or `null` (none was written).
    let report = |key: &str, file: &Option<String>, ext: &str| match file {
        None => Ok(false),
        Some(file) if *file == format!("{}.{ext}", name) => Ok(true),
        Some(_) => Err(format!("`{key}` must be `NAME.{ext}` or null")),
    };
    // The pictures: the specs' paths, at most as many as grade draws.
    if row.pictures.len() > MAX_PICTURES {
        return Err(format!(
            "`pictures` must be a list of at most {MAX_PICTURES} spec paths"
        ));
    }
    let reports = WrittenReports {
        text: report("report", &row.report, "txt")?,
        json_lines: report("json_report", &row.json_report, "jsonl")?,
        pictures: row.pictures,
    };
    let status = match row.status.as_str() {
        "pass" => Status::Pass,
        "fail" => Status::Fail,
        "broken" => Status::Broken,
        "timeout" => Status::Timeout,
        "crashed" => Status::Crashed,
        "ungraded" => Status::Ungraded,
        other => return Err(format!("unknown `status` {other:?}")),
    };
    let mut rules = BTreeMap::new();
    for (rule, verdict) in row.rules {
        let verdict = match verdict.as_str() {
            "pass" => RuleVerdict::Pass,
            "fail" => RuleVerdict::Fail,
            _ => return Err(format!("rule {rule:?} must be `pass` or `fail`")),
        };
        rules.insert(rule, verdict);
    }
    let mut specs = BTreeMap::new();
    for (path, verdict) in row.specs {
        let line = |text: Option<String>| text.as_deref().map(cause_line);
        let verdict = SpecVerdict {
            outcome: verdict.outcome,
            cause: line(verdict.cause),
            cause_id: line(verdict.cause_id),
            cause_rule: line(verdict.cause_rule),
        };
        specs.insert(path, verdict);
    }
    Ok(Graded {
        submission: row.submission,
        name,
        status,
        score: amount("score", row.score)?,
        max_score: amount("max_score", row.max_score)?,
        passed: row.passed,
        failed: row.failed,
        rules,
        specs,
        took: Duration::try_from_secs_f64(amount("seconds", row.seconds)?)
            .map_err(|_| "`seconds` is out of range".to_owned())?,
        note: row.note,
        reports,
    })
}

/// Reads the rows of an earlier grading for `grade --against DIR`: DIR must be a folder
/// holding the `summary.json` a grade wrote (read as `--merge` reads a shard's: bounded, a
/// regular file only, its format and version checked). Every error is one sentence saying
/// what to give instead.
pub(crate) fn read_earlier(dir: &Path) -> Result<Vec<Graded>, String> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(format!(
                "--against {shown} is not a folder: give the folder an earlier `dlqspec grade --output DIR` wrote"
            ));
        }
        Err(error) => {
            return Err(format!(
                "--against {shown} cannot be read ({error}): give the folder an earlier `dlqspec grade --output DIR` wrote"
            ));
        }
    }
    let file = dir.join(SUMMARY_JSON);
    if std::fs::symlink_metadata(&file).is_err() {
        return Err(format!(
            "--against {shown} holds no {SUMMARY_JSON}: give the folder an earlier `dlqspec grade --output DIR` wrote (whose grading finished)"
        ));
    }
    read_summary(&file).map_err(|why| format!("--against: {why}"))
}

/// Whether `output` is `dir` or a folder inside it (where neither need exist yet): a regrade
/// writes nothing into the grading it compares with.
pub(crate) fn is_within(output: &Path, dir: &Path) -> bool {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return false;
    };
    let Ok(mut probe) = std::path::absolute(output) else {
        return false;
    };
    // The nearest folder of `output` that exists, with the rest of the path after it.
    let mut rest = Vec::new();
    loop {
        if let Ok(found) = std::fs::canonicalize(&probe) {
            let whole = rest
                .iter()
                .rev()
                .fold(found, |path: PathBuf, part| path.join(part));
            return whole.starts_with(&dir);
        }
        match (probe.file_name().map(ToOwned::to_owned), probe.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                probe = parent.to_path_buf();
            }
            _ => return false,
        }
    }
}

/// A submission's grading before and after, in brief.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Standing {
    pub(crate) status: Status,
    pub(crate) score: f64,
    pub(crate) max_score: f64,
}

impl Standing {
    fn of(row: &Graded) -> Standing {
        Standing {
            status: row.status,
            score: row.score,
            max_score: row.max_score,
        }
    }
}

/// One submission graded both times whose grading changed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Changed {
    /// Its row in the new grading.
    pub(crate) row: usize,
    pub(crate) before: Standing,
    /// Each spec whose verdict changed: its path, its outcome before and after (`None`: the
    /// spec was not in that grading's suite).
    pub(crate) specs: Vec<(String, Option<SpecOutcome>, Option<SpecOutcome>)>,
}

/// What changed from an earlier grading to this one, submissions matched by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Regrade {
    pub(crate) changed: Vec<Changed>,
    /// The rows (of the new grading) of submissions the earlier one did not have.
    pub(crate) new: Vec<usize>,
    /// The earlier rows of submissions this grading does not have, with their standing.
    pub(crate) gone: Vec<(String, String, Standing)>,
    /// How many submissions were graded both times the same.
    pub(crate) unchanged: usize,
}

impl Regrade {
    pub(crate) fn no_change(&self) -> bool {
        self.changed.is_empty() && self.new.is_empty() && self.gone.is_empty()
    }
}

/// Compares `after` with `before`, matching submissions by their report name; the changed
/// and new in `after`'s order, the gone in `before`'s.
pub(crate) fn regrade(before: &[Graded], after: &[Graded]) -> Regrade {
    let earlier: BTreeMap<&str, &Graded> = before.iter().map(|r| (r.name.as_str(), r)).collect();
    let now: BTreeSet<&str> = after.iter().map(|r| r.name.as_str()).collect();
    let mut diff = Regrade::default();
    for (i, row) in after.iter().enumerate() {
        let Some(old) = earlier.get(row.name.as_str()) else {
            diff.new.push(i);
            continue;
        };
        let paths: BTreeSet<&String> = old.specs.keys().chain(row.specs.keys()).collect();
        let specs: Vec<(String, Option<SpecOutcome>, Option<SpecOutcome>)> = paths
            .into_iter()
            .filter_map(|path| {
                let was = old.specs.get(path).map(|v| v.outcome);
                let is = row.specs.get(path).map(|v| v.outcome);
                (was != is).then(|| (path.clone(), was, is))
            })
            .collect();
        let before = Standing::of(old);
        if specs.is_empty() && before == Standing::of(row) {
            diff.unchanged += 1;
        } else {
            diff.changed.push(Changed {
                row: i,
                before,
                specs,
            });
        }
    }
    diff.gone = before
        .iter()
        .filter(|row| !now.contains(row.name.as_str()))
        .map(|row| (row.name.clone(), row.submission.clone(), Standing::of(row)))
        .collect();
    diff
}

/// The rows of several shards as one class, sorted by [`sort_key`]; refused when a
/// submission, or a report name, is in two shards (its reports would overwrite each other).
pub(crate) fn merge(shards: Vec<(PathBuf, Vec<Graded>)>) -> Result<Vec<Graded>, String> {
    let mut by_submission: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut by_name: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut rows = Vec::new();
    for (file, shard) in shards {
        for row in shard {
            if let Some(first) = by_submission.insert(row.submission.clone(), file.clone()) {
                return Err(format!(
                    "submission {} is in both {} and {}: each submission must be graded by one shard (a shard given twice, or shards of different --partition counts?)",
                    row.submission,
                    first.display(),
                    file.display()
                ));
            }
            if let Some(first) = by_name.insert(row.name.clone(), file.clone()) {
                return Err(format!(
                    "the report name {} is used in both {} and {}: grade every shard with the same submission list so that names are given out once",
                    row.name,
                    first.display(),
                    file.display()
                ));
            }
            rows.push(row);
        }
    }
    rows.sort_by_cached_key(|row| sort_key(Path::new(&row.submission)));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[cfg(unix)]
    #[test]
    fn a_bounded_read_refuses_links_fifos_and_big_files_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("report.jsonl");
        std::fs::write(&file, "0123456789").unwrap();
        assert_eq!(read_bounded(&file, 10).unwrap(), b"0123456789");
        let big = read_bounded(&file, 9).unwrap_err();
        assert!(big.ends_with("larger than the 0 MiB read back"), "{big}");
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        for path in [&link, &fifo] {
            let why = read_bounded(path, 10).unwrap_err();
            assert!(why.contains("not a regular file"), "{why}");
        }
    }

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
    fn merging_refuses_a_submission_or_a_report_name_in_two_shards() {
        let row = |submission: &str, name: &str| Graded {
            submission: submission.into(),
            name: name.into(),
            status: Status::Pass,
            score: 1.0,
            max_score: 1.0,
            passed: 1,
            failed: 0,
            rules: BTreeMap::new(),
            specs: BTreeMap::new(),
            took: Duration::ZERO,
            note: String::new(),
            reports: WrittenReports::default(),
        };
        let merged = merge(vec![
            (PathBuf::from("s2/summary.json"), vec![row("b.py", "b.py")]),
            (PathBuf::from("s1/summary.json"), vec![row("a.py", "a.py")]),
        ])
        .unwrap();
        assert_eq!(merged[0].submission, "a.py");
        let error = merge(vec![
            (PathBuf::from("s1/summary.json"), vec![row("a.py", "a.py")]),
            (PathBuf::from("s2/summary.json"), vec![row("a.py", "a.py")]),
        ])
        .unwrap_err();
        assert!(
            error.contains("a.py is in both s1/summary.json and s2/summary.json"),
            "{error}"
        );
        let error = merge(vec![
            (
                PathBuf::from("s1/summary.json"),
                vec![row("x/a.py", "a.py")],
            ),
            (
                PathBuf::from("s2/summary.json"),
                vec![row("y/a.py", "a.py")],
            ),
        ])
        .unwrap_err();
        assert!(
            error.contains("the report name a.py is used in both"),
            "{error}"
        );
        assert!(!is_report_name("../x") && !is_report_name(".x") && is_report_name("a.py-2"));
    }

    #[test]
    fn a_regrade_matches_submissions_by_name_and_lists_each_changed_spec() {
        use SpecOutcome::{Errored, Mismatch, NotRun, Passed};
        let row = |name: &str, score: f64, outcomes: &[(&str, SpecOutcome)]| Graded {
            submission: format!("class/{name}"),
            name: name.into(),
            status: if score == 2.0 {
                Status::Pass
            } else {
                Status::Fail
            },
            score,
            max_score: 2.0,
            passed: 0,
            failed: 0,
            rules: BTreeMap::new(),
            specs: outcomes
                .iter()
                .map(|(path, outcome)| {
                    let verdict = SpecVerdict {
                        outcome: *outcome,
                        ..SpecVerdict::default()
                    };
                    ((*path).to_owned(), verdict)
                })
                .collect(),
            took: Duration::ZERO,
            note: String::new(),
            reports: WrittenReports::default(),
        };
        let before = [
            row("alice", 2.0, &[("a", Passed), ("b", Passed)]),
            row("bob", 1.0, &[("a", Passed), ("b", Mismatch)]),
            row("dave", 0.0, &[("a", Errored)]),
        ];
        let after = [
            row("alice", 2.0, &[("a", Passed), ("b", Passed)]),
            row("bob", 2.0, &[("a", Passed), ("b", Passed), ("c", NotRun)]),
            row("carol", 1.0, &[("a", Passed)]),
        ];
        let diff = regrade(&before, &after);
        assert_eq!(diff.unchanged, 1);
        assert_eq!(diff.new, [2]);
        assert_eq!(diff.gone.len(), 1);
        assert_eq!(diff.gone[0].0, "dave");
        assert_eq!(diff.changed.len(), 1);
        let bob = &diff.changed[0];
        assert_eq!((bob.row, bob.before.score), (1, 1.0));
        assert_eq!(
            bob.specs,
            [
                ("b".to_owned(), Some(Mismatch), Some(Passed)),
                ("c".to_owned(), None, Some(NotRun)),
            ]
        );
        assert!(!diff.no_change());
        assert!(regrade(&after, &after).no_change());
        // A verdict changed at the same score is a change all the same.
        let swapped = [row("alice", 2.0, &[("a", Passed), ("b", Errored)])];
        assert_eq!(regrade(&before[..1], &swapped).changed.len(), 1);
    }

    #[test]
    fn a_regrade_never_writes_within_the_folder_it_compares_with() {
        let dir = tempfile::tempdir().unwrap();
        let earlier = dir.path().join("grades");
        std::fs::create_dir(&earlier).unwrap();
        assert!(is_within(&earlier, &earlier));
        assert!(is_within(&earlier.join("new/deeper"), &earlier));
        assert!(is_within(&earlier.join("../grades/x"), &earlier));
        assert!(!is_within(&dir.path().join("grades-2"), &earlier));
        assert!(!is_within(dir.path(), &earlier));
    }

    #[test]
    fn picture_names_are_known_again_and_nothing_else_is() {
        for spec in ["specs/dlq-consumer/a.yaml", "x y/.b.yml", "c"] {
            let file = picture_file("alice", spec);
            let (folder, name) = file.rsplit_once('/').unwrap();
            assert_eq!(folder, picture_folder("alice"));
            assert!(is_picture_name(name), "{name}");
        }
        for not_ours in [
            "notes.txt",
            ".hidden.html",
            "a b.html",
            "page.htm",
            "x.html.bak",
        ] {
            assert!(!is_picture_name(not_ours), "{not_ours}");
        }
    }

    #[test]
    fn dates_are_told_in_utc_to_the_minute() {
        let at = |secs: u64| utc_minute(std::time::UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01 00:00 UTC");
        assert_eq!(at(951_782_400 + 3_661), "2000-02-29 01:01 UTC");
        assert_eq!(at(1_798_761_599), "2026-12-31 23:59 UTC");
    }

    #[test]
    fn the_digest_names_the_suites_files() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("a.yaml");
        std::fs::write(&spec, "x").unwrap();
        let suite = [suite_spec(&spec.to_string_lossy(), 1.0, &[])];
        let before = suite_digest(&suite);
        assert_eq!(before.len(), 12);
        assert_eq!(suite_digest(&suite), before);
        std::fs::write(&spec, "y").unwrap();
        assert_ne!(suite_digest(&suite), before);
        let about = About::now(&[dir.path().to_path_buf()], &suite);
        assert_eq!(About::from(about.record()), about);
    }

    #[test]
    fn report_names_are_safe_and_unique() {
        let names = report_names(&[
            PathBuf::from("a/alice.py"),
            PathBuf::from("b/alice.py"),
            PathBuf::from("x/..hidden \u{1b}name"),
        ]);
        assert_eq!(names, ["alice.py", "alice.py-2", "hidden__name"]);
    }

    fn suite_spec(path: &str, points: f64, rules: &[&str]) -> SuiteSpec {
        SuiteSpec {
            path: path.to_owned(),
            points,
            rules: rules.iter().map(|r| (*r).to_owned()).collect(),
            hidden: false,
        }
    }

    /// A JSON-lines report of `lines`, each completed with the fields every event of its kind
    /// carries (a test names only those it is about).
    fn report(lines: &[&str]) -> String {
        let spec = serde_json::json!({"name": null, "contract": null, "rules": [], "points": 1,
            "duration_ms": 0.5});
        let finished = serde_json::json!({"passed": 0, "mismatched": 0, "errored": 0,
            "spec_errors": 0, "skipped": 0, "expected_failures": 0, "stale": 0, "failed": 0,
            "total": 0, "duration_ms": 1.0, "exit_code": 0});
        lines
            .iter()
            .map(|line| {
                let mut event: serde_json::Map<String, Value> = serde_json::from_str(line).unwrap();
                let defaults = match event.get("event").and_then(Value::as_str) {
                    Some("spec_finished") => &spec,
                    Some("run_finished") => &finished,
                    _ => &Value::Null,
                };
                for (key, value) in defaults.as_object().into_iter().flatten() {
                    event.entry(key.clone()).or_insert_with(|| value.clone());
                }
                serde_json::to_string(&event).unwrap()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_report_cut_short_keeps_its_whole_lines_and_reads_fields_it_does_not_know() {
        let suite = [
            suite_spec("a.yaml", 1.0, &["r/a"]),
            suite_spec("b.yaml", 1.0, &["r/b"]),
        ];
        let whole = report(&[
            r#"{"event":"spec_finished","path":"a.yaml","outcome":"passed","added_later":[1]}"#,
            r#"{"event":"spec_finished","path":"b.yaml","outcome":"passed"}"#,
        ]);
        // A killed run: its last line cut short.
        let tally = tally(&whole[..whole.len() - 10], &suite);
        assert_eq!(tally.specs["a.yaml"].outcome, SpecOutcome::Passed);
        assert_eq!(tally.specs["b.yaml"].outcome, SpecOutcome::NotRun);
        assert_eq!((tally.passed, tally.failed), (1, 1));
        assert!(!tally.finished);
    }

    #[test]
    fn a_hidden_spec_is_never_among_those_drawn() {
        let mut suite = vec![
            suite_spec("a.yaml", 1.0, &[]),
            suite_spec("b.yaml", 1.0, &[]),
            suite_spec("c.yaml", 1.0, &[]),
        ];
        suite[1].hidden = true;
        let lines = ["a.yaml", "b.yaml", "c.yaml"].map(|path| {
            format!(r#"{{"event":"spec_finished","path":"{path}","outcome":"mismatch"}}"#)
        });
        let lines = report(&lines.each_ref().map(String::as_str));
        assert_eq!(mismatched(&lines, &suite), ["a.yaml", "c.yaml"]);
    }

    #[test]
    fn a_report_tallies_the_suites_points_and_rules() {
        let suite = [
            suite_spec("a.yaml", 2.0, &["r/a", "r/b"]),
            suite_spec("b.yaml", 1.0, &["r/b"]),
        ];
        let lines = report(&[
            r#"{"event":"run_started"}"#,
            r#"{"event":"spec_finished","path":"a.yaml","rules":["r/a","r/b"],"points":2,"outcome":"passed"}"#,
            r#"{"event":"spec_finished","path":"b.yaml","rules":["r/b"],"points":1,"outcome":"mismatch","cause":"r/b: late\nmore"}"#,
            r#"{"event":"run_finished"}"#,
        ]);
        let tally = tally(&lines, &suite);
        // Each spec's verdict, and a failure's cause in one line.
        assert_eq!(tally.specs["a.yaml"].outcome, SpecOutcome::Passed);
        assert_eq!(tally.specs["a.yaml"].cause, None);
        assert_eq!(tally.specs["b.yaml"].outcome, SpecOutcome::Mismatch);
        assert_eq!(tally.specs["b.yaml"].cause.as_deref(), Some("r/b: late"));
        assert_eq!((tally.score, tally.max_score), (2.0, 3.0));
        assert_eq!((tally.passed, tally.failed), (1, 1));
        assert_eq!(tally.rules["r/a"], RuleVerdict::Pass);
        assert_eq!(tally.rules["r/b"], RuleVerdict::Fail);
        assert!(tally.finished && !tally.nothing_ran);
        let broken = r#"{"event":"spec_finished","path":"a.yaml","rules":[],"outcome":"errored","impl_error":{"kind":"startup","message":"could not be loaded\nmore"}}"#;
        let tally = super::tally(&report(&[broken]), &suite);
        assert!(tally.nothing_ran && !tally.finished);
        assert_eq!(tally.first_error.as_deref(), Some("could not be loaded"));
    }

    #[test]
    fn a_failure_fails_only_the_rule_its_cause_breaks() {
        let suite = [
            suite_spec("a.yaml", 1.0, &["r/a", "r/b"]),
            suite_spec("b.yaml", 1.0, &["r/b", "r/c"]),
            suite_spec("c.yaml", 1.0, &["r/d"]),
            suite_spec("d.yaml", 1.0, &["r/e"]),
        ];
        // One mistake breaking r/c fails a and b, whatever rules they list; c's cause names a
        // rule the suite does not have (forged, or of another suite): its own rules fail; d
        // errored, and no rule decides an error: its rules fail.
        let lines = report(&[
            r#"{"event":"spec_finished","path":"a.yaml","outcome":"mismatch","cause":"r/c: x","cause_id":"c1","cause_rule":"r/c"}"#,
            r#"{"event":"spec_finished","path":"b.yaml","outcome":"mismatch","cause":"r/c: x","cause_id":"c1","cause_rule":"r/c"}"#,
            r#"{"event":"spec_finished","path":"c.yaml","outcome":"mismatch","cause":"forged: x","cause_id":"c2","cause_rule":"forged"}"#,
            r#"{"event":"spec_finished","path":"d.yaml","outcome":"errored","cause":"implementation error (timeout): late","cause_id":"c3"}"#,
        ]);
        let tally = tally(&lines, &suite);
        let verdicts: Vec<(&str, RuleVerdict)> =
            tally.rules.iter().map(|(r, v)| (r.as_str(), *v)).collect();
        assert_eq!(
            verdicts,
            [
                ("r/a", RuleVerdict::Pass),
                ("r/b", RuleVerdict::Pass),
                ("r/c", RuleVerdict::Fail),
                ("r/d", RuleVerdict::Fail),
                ("r/e", RuleVerdict::Fail),
            ]
        );
        assert_eq!(tally.specs["a.yaml"].cause_id.as_deref(), Some("c1"));
        assert_eq!(tally.specs["a.yaml"].cause_rule.as_deref(), Some("r/c"));
        assert_eq!(tally.specs["c.yaml"].cause_rule, None);
        assert!(!tally.rules.contains_key("forged"));
    }

    #[test]
    fn a_divergence_on_the_broker_scores_as_the_pass_it_is_on_the_lessons_world() {
        let suite = [suite_spec("a.yaml", 2.0, &["r/a"])];
        let line = r#"{"event":"spec_finished","path":"a.yaml","outcome":"divergence"}"#;
        let tally = tally(&report(&[line]), &suite);
        assert_eq!((tally.score, tally.passed, tally.failed), (2.0, 1, 0));
        assert_eq!(tally.rules["r/a"], RuleVerdict::Pass);
        assert_eq!(tally.specs["a.yaml"].outcome, SpecOutcome::Divergence);
    }

    #[test]
    fn what_a_report_skips_or_leaves_out_scores_nothing_of_its_points() {
        let suite = [
            suite_spec("a.yaml", 1.0, &["r/a"]),
            suite_spec("b.yaml", 5.0, &["r/b"]),
            suite_spec("c.yaml", 3.0, &["r/c"]),
            suite_spec("d.yaml", 1.0, &["r/d"]),
        ];
        // b is skipped (a class it does not have) after a claim that it passed, c is missing,
        // d a known failure; a spec the suite does not have, and points the report claims,
        // count for nothing.
        let lines = report(&[
            r#"{"event":"spec_finished","path":"b.yaml","outcome":"passed"}"#,
            r#"{"event":"spec_finished","path":"a.yaml","points":100,"outcome":"passed"}"#,
            r#"{"event":"spec_finished","path":"b.yaml","outcome":"skipped"}"#,
            r#"{"event":"spec_finished","path":"d.yaml","outcome":"expected_failure"}"#,
            r#"{"event":"spec_finished","path":"forged.yaml","points":80,"outcome":"passed"}"#,
            r#"{"event":"run_finished"}"#,
        ]);
        let tally = tally(&lines, &suite);
        assert_eq!((tally.score, tally.max_score), (1.0, 10.0));
        assert_eq!((tally.passed, tally.failed), (1, 2));
        assert_eq!(tally.rules["r/a"], RuleVerdict::Pass);
        assert_eq!(tally.rules["r/b"], RuleVerdict::Fail);
        assert_eq!(tally.rules["r/c"], RuleVerdict::Fail);
        assert_eq!(tally.rules["r/d"], RuleVerdict::Pass);
        assert!(!tally.rules.contains_key("forged"));
        let outcomes: Vec<&str> = tally.specs.values().map(|v| v.outcome.as_str()).collect();
        assert_eq!(
            outcomes,
            ["passed", "skipped", "not_run", "expected_failure"]
        );
        // A spec the budget kept from finishing is not run, and counted.
        let stopped = r#"{"event":"spec_finished","path":"b.yaml","outcome":"skipped","skip_reason":"not run: budget"}"#;
        let tally = super::tally(&report(&[stopped]), &suite);
        assert_eq!(
            (tally.specs["b.yaml"].outcome, tally.not_run_budget),
            (SpecOutcome::NotRun, 1)
        );
        // A long cause is cut, on a character.
        assert_eq!(
            cause_line(&"é".repeat(200)).len(),
            MAX_CAUSE_BYTES + "…".len()
        );
        // An empty report is no score either, out of the whole suite.
        let tally = super::tally("", &suite);
        assert_eq!((tally.score, tally.max_score, tally.failed), (0.0, 10.0, 4));
        assert!(!tally.nothing_ran && !tally.finished);
    }
}
