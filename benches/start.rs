//! Benchmark: what starting a submission costs, as a ratio to bare interpreter starts.
//!
//! `grade` of 24 different Python submissions (and 24 Node ones) with `--jobs 2`, cold
//! (`--cold`) and, for Python, warm (the default), against 24 bare starts of the same
//! interpreter two at a time (`python3 -c pass`, `node -e 0`: the floor every
//! one-process-per-submission grader pays); and one `run` of the bundled suite against one
//! bare start, and against one bare start plus the built-in run of the same suite (the issue's
//! floor for a run). The submissions are copies of the examples that differ by a line each, so that
//! no cache can serve one for another. The Python floor is also given for the interpreter
//! behind `python3` (pyenv's shim is a shell script that execs it), and for the interpreter
//! the class is graded with. A warm child runs only as a
//! box's own uid, so the Python classes are graded with an interpreter, folders and shims every
//! uid reaches: the one behind `python3` when it can, else `/usr/bin/python3` (said); a warm
//! grade that started cold fails the bench. Run with `cargo bench --bench start`.

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
use std::time::Duration;

/// Submissions per class, and how many are graded (and interpreters started) at once.
const COUNT: usize = 24;
const JOBS: usize = 2;

/// Rounds of each measure; the best is kept.
const ROUNDS: usize = 3;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("a temporary folder");
    {
        use std::os::unix::fs::PermissionsExt;
        // A box's uid passes through it to its submission and to the shims' cache (which
        // dlqspec would make private).
        std::fs::create_dir(dir.path().join("cache")).expect("a cache folder");
        for folder in [dir.path().to_path_buf(), dir.path().join("cache")] {
            std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o711))
                .expect("a folder others pass through");
        }
    }
    println!("load average before: {}", load_average());
    let real_python = real_python();
    let graded_python = reachable_python(&real_python);
    println!("Python classes graded with {graded_python}");
    let python_class = class(dir.path(), &root.join("examples/python/solution.py"), "py");
    let node_class = class(
        dir.path(),
        &root.join("examples/javascript/solution.mjs"),
        "mjs",
    );

    let floor_python = support::best_of(ROUNDS, || starts(&["python3", "-c", "pass"], COUNT));
    let floor_real = support::best_of(ROUNDS, || starts(&[&real_python, "-c", "pass"], COUNT));
    let floor_graded = support::best_of(ROUNDS, || starts(&[&graded_python, "-c", "pass"], COUNT));
    let floor_node = support::best_of(ROUNDS, || starts(&["node", "-e", "0"], COUNT));
    let python = Some(graded_python.as_str());
    let cold = support::best_of(ROUNDS, || {
        grade(&root, dir.path(), &python_class, false, python)
    });
    let warm = support::best_of(ROUNDS, || {
        grade(&root, dir.path(), &python_class, true, python)
    });
    let node = support::best_of(ROUNDS, || {
        grade(&root, dir.path(), &node_class, false, None)
    });

    let ratio = |work: Duration, floor: Duration| work.as_secs_f64() / floor.as_secs_f64();
    println!(
        "grade: {COUNT} different submissions, the bundled suite, --jobs {JOBS}, best of {ROUNDS}"
    );
    println!(
        "  {COUNT} x python3 -c pass, {JOBS} at a time   {:>6.2} s   (the real interpreter: {:.2} s)",
        floor_python.as_secs_f64(),
        floor_real.as_secs_f64()
    );
    println!(
        "  {COUNT} x {graded_python} -c pass (the interpreter graded)   {:>6.2} s",
        floor_graded.as_secs_f64()
    );
    for (what, took) in [
        ("grade, Python, --cold", cold),
        ("grade, Python, warm", warm),
    ] {
        println!(
            "  {what:<32}  {:>6.2} s  {:>5.2}x python3 -c pass  {:>5.2}x the real interpreter  {:>5.2}x the interpreter graded",
            took.as_secs_f64(),
            ratio(took, floor_python),
            ratio(took, floor_real),
            ratio(took, floor_graded)
        );
    }
    println!(
        "  {COUNT} x node -e 0, {JOBS} at a time        {:>6.2} s",
        floor_node.as_secs_f64()
    );
    println!(
        "  {:<32}  {:>6.2} s  {:>5.2}x node -e 0",
        "grade, Node, --cold",
        node.as_secs_f64(),
        ratio(node, floor_node)
    );

    let one_python = support::best_of(5, || starts(&["python3", "-c", "pass"], 1));
    let one_node = support::best_of(5, || starts(&["node", "-e", "0"], 1));
    let run_python = support::best_of(5, || run(&root, "python:examples/python/solution.py"));
    let run_node = support::best_of(5, || run(&root, "node:examples/javascript/solution.mjs"));
    let run_builtin = support::best_of(5, || run(&root, "builtin"));
    println!(
        "run: the bundled suite, once, best of 5 (the built-in: {:.3} s)",
        run_builtin.as_secs_f64()
    );
    println!(
        "  Python  {:>6.3} s  {:>5.2}x python3 -c pass ({:.3} s)  {:>5.2}x that plus the built-in run",
        run_python.as_secs_f64(),
        ratio(run_python, one_python),
        one_python.as_secs_f64(),
        ratio(run_python, one_python + run_builtin)
    );
    println!(
        "  Node    {:>6.3} s  {:>5.2}x node -e 0 ({:.3} s)  {:>5.2}x that plus the built-in run",
        run_node.as_secs_f64(),
        ratio(run_node, one_node),
        one_node.as_secs_f64(),
        ratio(run_node, one_node + run_builtin)
    );
    println!("load average after: {}", load_average());
}

/// `COUNT` submission folders, each a copy of `source` with a line of its own.
fn class(dir: &Path, source: &Path, extension: &str) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(source).expect("the example");
    (0..COUNT)
        .map(|i| {
            let folder = dir.join(format!("{extension}-{i:02}"));
            std::fs::create_dir_all(&folder).expect("a folder");
            let line = format!("\n// submission {i}\n")
                .replace("//", if extension == "py" { "#" } else { "//" });
            std::fs::write(
                folder.join(format!("solution.{extension}")),
                format!("{text}{line}"),
            )
            .expect("a copy");
            folder
        })
        .collect()
}

/// The interpreter `python3` runs (through pyenv's shim, if that is what `python3` is).
fn real_python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 starts");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// An interpreter a box's uid can run: `real` when every uid reaches it, else
/// `/usr/bin/python3`.
fn reachable_python(real: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let reachable = Path::new(real).ancestors().skip(1).all(|folder| {
        std::fs::metadata(folder).is_ok_and(|meta| meta.permissions().mode() & 0o001 != 0)
    });
    if reachable {
        real.to_owned()
    } else {
        "/usr/bin/python3".to_owned()
    }
}

/// Starts `command` `count` times with nothing to do, `JOBS` at a time.
fn starts(command: &[&str], count: usize) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..JOBS.min(count) {
            scope.spawn(|| {
                while next.fetch_add(1, Ordering::SeqCst) < count {
                    let status = Command::new(command[0])
                        .args(&command[1..])
                        .status()
                        .expect("the interpreter starts");
                    assert!(status.success());
                }
            });
        }
    });
}

fn grade(root: &Path, dir: &Path, class: &[PathBuf], warm: bool, python: Option<&str>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dlqspec"));
    if let Some(python) = python {
        command.env("DLQSPEC_PYTHON", python);
    }
    command
        .current_dir(root)
        .env("DLQSPEC_CACHE_DIR", dir.join("cache"))
        .args([
            "grade",
            "--jobs",
            &JOBS.to_string(),
            "--budget",
            "600",
            "--output",
        ])
        .arg(dir.join("grades"))
        .env_remove("GITHUB_ACTIONS")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if !warm {
        command.arg("--cold");
    }
    let output = command.args(class).output().expect("dlqspec starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "grade ended {}: {stderr}",
        output.status
    );
    assert!(
        !(warm && stderr.contains("note: the warm start:")),
        "the warm grade started cold: {stderr}"
    );
}

fn run(root: &Path, implementation: &str) {
    let status = Command::new(env!("CARGO_BIN_EXE_dlqspec"))
        .current_dir(root)
        .args(["run", "specs", "--impl", implementation])
        .env_remove("GITHUB_ACTIONS")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("dlqspec starts");
    assert_eq!(status.code(), Some(0), "run ended {status}");
}

/// The machine's load average (1, 5, 15 minutes), as /proc/loadavg says.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_owned())
}
