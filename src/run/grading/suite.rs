//! The suite a class is graded on, as the built-in reference runs it (each spec's path, points,
//! rules and visibility: never a submission's word), refused when the reference does not pass
//! a spec of it; and what a grading says of it (`About`: its folders, a digest of its files,
//! when, by which dlqspec).

use std::path::{Path, PathBuf};

use crate::contracts::builtin::Builtin;
use crate::formats::grade::SuiteRecord;
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;
use crate::run::events::{Event, Reporter, SpecReport};
use crate::run::grading::{MAX_REPORT_BYTES, read_bounded};
use crate::run::runner::RunConfig;

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

/// A spec of the suite, for a test: visible, of `points`, covering `rules`.
#[cfg(test)]
pub(crate) fn suite_spec(path: &str, points: f64, rules: &[&str]) -> SuiteSpec {
    SuiteSpec {
        path: path.to_owned(),
        points,
        rules: rules.iter().map(|r| (*r).to_owned()).collect(),
        hidden: false,
    }
}

/// Why a suite judges nobody.
#[derive(Debug)]
pub(crate) enum RefusedSuite {
    /// It could not be run at all (no spec found, a folder that cannot be read): the run's
    /// error.
    Unrun(String),
    /// The built-in reference does not pass some of its specs (or they do not load): their
    /// reports, in the suite's order, and how many specs the suite has.
    Broken {
        broken: Vec<SpecReport>,
        specs: usize,
    },
}

/// The suite as the built-in reference runs it: each spec's path, points and rules. Refused,
/// with every broken spec, when the reference does not pass a spec (or it does not load):
/// such a spec judges nobody, and would be scored against every student.
pub(crate) fn reference_suite(specs: &[PathBuf]) -> Result<Vec<SuiteSpec>, RefusedSuite> {
    struct Keep(Vec<SpecReport>);
    impl Reporter for Keep {
        fn event(&mut self, event: &Event) {
            if let Event::Finished(report) = event {
                self.0.push((*report).clone());
            }
        }
    }
    let config = RunConfig {
        paths: specs.to_vec(),
        ..RunConfig::default()
    };
    let factory = || -> Box<dyn Implementation + Send> { Box::new(Builtin::new()) };
    let mut kept = Keep(Vec::new());
    crate::run::runner::run(&config, &factory, &mut kept)
        .map_err(|error| RefusedSuite::Unrun(error.to_string()))?;
    let specs = kept.0.len();
    let (passed, broken): (Vec<SpecReport>, Vec<SpecReport>) = kept
        .0
        .into_iter()
        .partition(|report| matches!(report.outcome, Outcome::Passed));
    if !broken.is_empty() {
        return Err(RefusedSuite::Broken { broken, specs });
    }
    Ok(passed
        .into_iter()
        .map(|report| SuiteSpec {
            path: report.path,
            points: report.grading.points,
            rules: report.rules,
            hidden: !report.grading.visibility.shows_details(),
        })
        .collect())
}

/// What a grading says of itself on its page and in `summary.json`: the suite (the `--specs`
/// folders as given, how many specs, a digest of them), when, and by which dlqspec.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct About {
    pub(crate) folders: Vec<String>,
    pub(crate) specs: usize,
    /// 12 hex digits of FNV-1a over each spec's path and bytes, in the suite's order, then
    /// those of each exercise's `exercise.yaml` and reference: two gradings show the same
    /// digest when they ran the same spec files on the same exercise.
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

/// The digest of a suite (`About::digest`): each spec file's path and bytes, then each other
/// file a verdict depends on (an exercise's `exercise.yaml` and reference), once each, in
/// order of path. A file that cannot be read adds its path alone.
pub(crate) fn suite_digest(suite: &[SuiteSpec]) -> String {
    use crate::run::select::FNV1A_START;
    let besides: std::collections::BTreeSet<PathBuf> = suite
        .iter()
        .flat_map(|spec| crate::contracts::registry::verdict_files(Path::new(&spec.path)))
        .collect();
    let files = suite
        .iter()
        .map(|spec| PathBuf::from(&spec.path))
        .chain(besides);
    let hash = files.fold(FNV1A_START, |hash, file| file_digest(hash, &file));
    format!("{:012x}", hash >> 16)
}

/// `hash` taken on over `file`'s path and bytes, each after its length.
fn file_digest(hash: u64, file: &Path) -> u64 {
    use crate::run::select::fnv1a_more;
    let path = file.to_string_lossy();
    let bytes = read_bounded(file, MAX_REPORT_BYTES).unwrap_or_default();
    [
        &(path.len() as u64).to_le_bytes()[..],
        path.as_bytes(),
        &(bytes.len() as u64).to_le_bytes(),
        &bytes,
    ]
    .iter()
    .fold(hash, |hash, piece| fnv1a_more(hash, piece))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
    fn the_digest_names_an_exercises_definition_and_reference() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("toy");
        std::fs::create_dir_all(folder.join("specs")).unwrap();
        let definition = "exercise: toy-for-the-digest\ntitle: t\nclass: Toy\nreference: toy.py\n\
             methods:\n  tick: {}\nrules:\n  - id: r\n    says: s\n    decides: [{call: tick}]\n";
        for (file, text) in [
            ("exercise.yaml", definition),
            ("toy.py", "class Toy:\n    def tick(self):\n        pass\n"),
            ("specs/a.yaml", "contract: toy-for-the-digest\n"),
        ] {
            std::fs::write(folder.join(file), text).unwrap();
        }
        let launcher: std::sync::Arc<crate::contracts::Launcher> =
            std::sync::Arc::new(|_: &str| unreachable!("no program of the exercise is started"));
        crate::contracts::register_exercise(&folder, launcher).unwrap();
        let spec = folder.join("specs/a.yaml");
        let suite = [suite_spec(&spec.to_string_lossy(), 1.0, &[])];
        let before = suite_digest(&suite);
        let changed = |file: &str| {
            let path = folder.join(file);
            let was = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, format!("{was}# a comment\n")).unwrap();
            let digest = suite_digest(&suite);
            std::fs::write(&path, was).unwrap();
            assert_eq!(suite_digest(&suite), before, "{file} put back");
            digest
        };
        assert_ne!(changed("exercise.yaml"), before);
        assert_ne!(changed("toy.py"), before);
        assert_ne!(changed("specs/a.yaml"), before);
    }

    #[test]
    fn the_suite_is_the_references_and_a_spec_it_does_not_pass_refuses_it() {
        let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/dlq-consumer");
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("a.yaml");
        std::fs::copy(bundled.join("default-budget-is-three.yaml"), &good).unwrap();
        let suite = reference_suite(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(suite.len(), 1);
        assert_eq!(suite[0].path, good.display().to_string());
        assert!(!suite[0].rules.is_empty() && !suite[0].hidden);
        std::fs::write(
            dir.path().join("b.yaml"),
            "contract: dlq-consumer\nstepz: []\n",
        )
        .unwrap();
        match reference_suite(&[dir.path().to_path_buf()]) {
            Err(RefusedSuite::Broken { broken, specs }) => {
                assert_eq!(specs, 2);
                assert_eq!(broken.len(), 1);
                assert!(broken[0].path.ends_with("b.yaml"), "{}", broken[0].path);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            reference_suite(&[dir.path().join("missing")]),
            Err(RefusedSuite::Unrun(_))
        ));
    }
}
