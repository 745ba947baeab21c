//! Benchmark: `dlqspec grade` over a class, as a ratio to starting its interpreters.
//!
//! The class is 300 submissions (`DLQSPEC_BENCH_GRADE_COUNT=N` for another count), each a
//! copy of a correct solution of examples/ or a broken one of tests/solutions/, in Python,
//! JavaScript and TypeScript, written into a temporary folder. They are graded against the
//! bundled suite (`specs/`), with `--jobs 2`. The floor is starting the same
//! interpreters, two at a time, with nothing to do (`python3 -c pass`, `node -e 0`): what no
//! grader of these submissions can avoid. Run with `cargo bench --bench grade`.

// clippy.toml's rules hold the library; benchmarks set their cases up by writing files, starting
// programs and printing what they measured or found.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_macros,
    clippy::disallowed_types,
    reason = "benchmarks: files, processes and prints set cases up and tell what was found"
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// How many submissions are graded (and interpreters started) at once, in both measures.
const JOBS: usize = 2;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let count: usize = std::env::var("DLQSPEC_BENCH_GRADE_COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let sources = sources(&root);
    let class = tempfile::tempdir().expect("a temporary folder");
    let submissions: Vec<PathBuf> = (0..count)
        .map(|i| {
            let source = &sources[i % sources.len()];
            let name = source.file_name().expect("a file").to_string_lossy();
            let path = class.path().join(format!("s{i:04}-{name}"));
            std::fs::copy(source, &path).expect("copy");
            path
        })
        .collect();
    let specs: Vec<PathBuf> = dlqspec::load::discover::spec_files(&[root.join("specs")])
        .expect("specs/ exists")
        .into_iter()
        .collect();

    let floor = support::best_of(1, || start_interpreters(&submissions));
    let output = class.path().join("grades");
    let mut command = Command::new(env!("CARGO_BIN_EXE_dlqspec"));
    command
        .current_dir(&root)
        .arg("grade")
        .args(["--jobs", &JOBS.to_string(), "--budget", "600", "--output"])
        .arg(&output)
        .env_remove("GITHUB_ACTIONS")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for spec in &specs {
        command.arg("--specs").arg(spec);
    }
    command.args(&submissions);
    let started = Instant::now();
    let status = command.status().expect("dlqspec starts");
    let graded = started.elapsed();
    // Some submissions are broken on purpose: 1 is the expected exit code; 2 is not.
    assert_eq!(status.code(), Some(1), "grade ended {status}");
    let csv = std::fs::read_to_string(output.join("summary.csv")).expect("summary.csv");
    assert_eq!(csv.lines().count(), count + 1, "a row per submission");

    println!(
        "grade: {count} submissions ({} sources), {} specs each, --jobs {JOBS}, once",
        sources.len(),
        specs.len()
    );
    println!(
        "  starting their interpreters (floor) {:>8.2} s   1.0x",
        floor.as_secs_f64()
    );
    println!(
        "  dlqspec grade                       {:>8.2} s  {:>5.1}x   ({:.0} ms a submission)",
        graded.as_secs_f64(),
        graded.as_secs_f64() / floor.as_secs_f64().max(1e-9),
        graded.as_secs_f64() * 1e3 * JOBS as f64 / count as f64
    );
}

/// The solutions a class is copied from: every example, and every broken solution.
fn sources(root: &Path) -> Vec<PathBuf> {
    let mut sources = vec![
        root.join("examples/python/solution.py"),
        root.join("examples/javascript/solution.mjs"),
        root.join("examples/commonjs/solution.js"),
        root.join("examples/typescript/solution.ts"),
    ];
    let mut broken: Vec<PathBuf> = std::fs::read_dir(root.join("tests/solutions"))
        .expect("tests/solutions")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| {
            let name = path.to_string_lossy();
            !name.ends_with(".d.ts")
                && [".py", ".mjs", ".js", ".ts"]
                    .iter()
                    .any(|ext| name.ends_with(ext))
        })
        .collect();
    broken.sort();
    sources.extend(broken);
    sources
}

/// Starts each submission's interpreter with nothing to do, `JOBS` at a time.
fn start_interpreters(submissions: &[PathBuf]) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..JOBS {
            scope.spawn(|| {
                while let Some(submission) = submissions.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let python = submission.extension().is_some_and(|e| e == "py");
                    let (program, args) = if python {
                        ("python3", ["-c", "pass"])
                    } else {
                        ("node", ["-e", "0"])
                    };
                    let status = Command::new(program)
                        .args(args)
                        .status()
                        .expect("the interpreter starts");
                    assert!(status.success());
                }
            });
        }
    });
}
