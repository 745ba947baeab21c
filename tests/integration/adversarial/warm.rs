//! The warm start (`grade --warm`): Python submissions forked from one zygote must get the
//! verdicts a cold start gives, and the same box: every hostile solution's attack still fails,
//! two warm neighbours reach nothing of each other, and the zygote never outlives grade.
//! Where the machine cannot box a warm child as strongly (not root, no pids cgroup), grade
//! says so and starts cold; these tests then say they could not check the warm start.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::sandbox::{SPEC, hostile, mark, processes_marked, text};
use crate::common::{Ran, assert_all_dead, dlqspec, ran, root, untimed};

/// A solution that passes only when it was served warm: process 1 of a warm child's box is a
/// fork of the zygote, of a cold one's a copy of dlqspec.
const WARM_PROBE: &str = r#"
if b"dlqspec_zygote" not in open("/proc/1/cmdline", "rb").read():
    raise RuntimeError("served cold")
from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
"#;

/// A solution that fails to load, telling what it sees of its start that is not random: its
/// environment's names, argv, uid, flags, descriptors, folders, limits and modules' origin.
const INTROSPECT: &str = r#"
import os, resource, sys
here = os.getcwd()
seen = [sorted(os.environ),
        sorted((k, v) for k, v in os.environ.items() if k != "DLQSPEC_TREE" and here not in v),
        [os.path.basename(a) for a in sys.argv], os.getuid(), os.getgid(),
        sys.flags, sorted(os.listdir("/proc/self/fd")), os.getcwd() == os.environ.get("HOME"),
        os.path.basename(sys.modules["__main__"].__file__), sys.path[0] == os.path.dirname(__file__),
        [resource.getrlimit(r) for r in (resource.RLIMIT_DATA, resource.RLIMIT_CPU,
                                         resource.RLIMIT_NPROC, resource.RLIMIT_CORE)],
        sys.__stdout__.encoding, sys.__stdout__.line_buffering, sys.__stdin__.closed,
        [l.split(":")[0] for l in open("/proc/self/status") if l.startswith(("Cap", "NoNew"))],
        [l for l in open("/proc/self/status") if l.startswith(("CapEff", "CapBnd", "NoNewPrivs"))],
        sorted(p for p in os.listdir("/proc") if p.isdigit()), os.getppid()]
raise RuntimeError(repr(seen))
"#;

/// A submission folder holding `source` as its solution, beside the honest example.
fn submission(dir: &Path, source: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("solution.py"), source).unwrap();
    std::fs::copy(
        root().join("examples/python/solution.py"),
        dir.join("honest.py"),
    )
    .unwrap();
    dir.to_path_buf()
}

/// `dlqspec grade` of `class` into `output` against `specs`, warm or cold.
fn grade(warm: bool, specs: &str, output: &Path, class: &[PathBuf]) -> Ran {
    let mut command = dlqspec();
    command.args(["grade", "--jobs", "2", "--budget", "120", "--specs", specs]);
    if warm {
        command.arg("--warm");
    }
    command.arg("--output").arg(output).args(class);
    ran(command.output().expect("dlqspec grade runs"))
}

/// Whether this machine boxes warm children (else grade told why it started cold).
fn warm_here(ran: &Ran) -> bool {
    if !ran.stderr.contains("note: --warm:") {
        return true;
    }
    // Only a machine without what the box needs is a reason to skip: any other note is a
    // zygote that failed to start, which must fail these tests, not pass them untested.
    assert!(
        ran.stderr.contains("which this machine lacks"),
        "the zygote failed to start: {}",
        ran.stderr
    );
    eprintln!("the warm start could not be checked here: {}", ran.stderr);
    false
}

/// Each row's status, by name.
fn statuses(output: &Path) -> Vec<(String, String)> {
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(output.join("summary.json")).unwrap())
            .unwrap();
    summary["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["name"].as_str().unwrap().to_owned(),
                format!("{} {}", row["status"], row["note"]),
            )
        })
        .collect()
}

/// A JSON text with its timings (`duration_ms`, `seconds`) taken out.
fn untimed_json(text: &str) -> serde_json::Value {
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                map.remove("duration_ms");
                map.remove("seconds");
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value: serde_json::Value = serde_json::from_str(text).unwrap();
    strip(&mut value);
    value
}

#[test]
fn python_submissions_are_served_by_the_zygote_only_under_warm() {
    let dir = tempfile::tempdir().unwrap();
    let probe = submission(&dir.path().join("probe"), WARM_PROBE);
    let cold = grade(
        false,
        SPEC,
        &dir.path().join("cold"),
        std::slice::from_ref(&probe),
    );
    assert_eq!(cold.code, 1, "{}{}", cold.stdout, cold.stderr);
    let warm = grade(true, SPEC, &dir.path().join("warm"), &[probe]);
    if !warm_here(&warm) {
        return;
    }
    assert_eq!(warm.code, 0, "{}{}", warm.stdout, warm.stderr);
}

#[test]
fn a_suite_gives_identical_reports_through_a_cold_and_a_warm_start() {
    let dir = tempfile::tempdir().unwrap();
    let class: Vec<PathBuf> = [
        ("honest", "examples/python/solution.py"),
        ("off-by-one", "tests/solutions/dlq_off_by_one.py"),
        ("no-poison", "tests/solutions/dlq_no_poison.py"),
        ("memory-count", "tests/solutions/dlq_memory_count.py"),
    ]
    .iter()
    .map(|(name, source)| {
        let folder = dir.path().join("class").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(root().join(source), folder.join("solution.py")).unwrap();
        folder
    })
    .chain([
        submission(
            &dir.path().join("class").join("broken"),
            "raise ImportError('no such thing')\n",
        ),
        // What a solution sees of how it was started, as its load error: the same both ways.
        submission(&dir.path().join("class").join("introspect"), INTROSPECT),
    ])
    .collect();
    let (cold_dir, warm_dir) = (dir.path().join("cold"), dir.path().join("warm"));
    let cold = grade(false, "specs", &cold_dir, &class);
    let warm = grade(true, "specs", &warm_dir, &class);
    if !warm_here(&warm) {
        return;
    }
    assert_eq!(cold.code, warm.code, "{}{}", warm.stdout, warm.stderr);
    assert_eq!(
        cold.stdout,
        warm.stdout.replace(text(&warm_dir), text(&cold_dir))
    );
    let read = |folder: &Path, file: &str| std::fs::read_to_string(folder.join(file)).unwrap();
    assert_eq!(
        untimed_json(&read(&cold_dir, "summary.json")),
        untimed_json(&read(&warm_dir, "summary.json"))
    );
    for name in [
        "honest",
        "off-by-one",
        "no-poison",
        "memory-count",
        "broken",
        "introspect",
    ] {
        assert_eq!(
            untimed(&read(&cold_dir, &format!("{name}.txt"))),
            untimed(&read(&warm_dir, &format!("{name}.txt"))),
            "{name}.txt"
        );
        let jsonl = format!("{name}.jsonl");
        if cold_dir.join(&jsonl).exists() || warm_dir.join(&jsonl).exists() {
            let lines = |folder: &Path| -> Vec<serde_json::Value> {
                read(folder, &jsonl).lines().map(untimed_json).collect()
            };
            assert_eq!(lines(&cold_dir), lines(&warm_dir), "{jsonl}");
        }
    }
}

#[test]
fn hostile_submissions_served_warm_fail_their_attacks() {
    let mark = mark("warm");
    let dir = tempfile::tempdir().unwrap();
    // The marker in grade's argv (the spec folder), cwd and environment, for peek.py.
    let teacher = dir.path().join(format!("{mark}-specs"));
    std::fs::create_dir_all(&teacher).unwrap();
    let spec = teacher.join("hidden.yaml");
    std::fs::copy(root().join(SPEC), &spec).unwrap();
    let output = dir.path().join("grades");
    let class = dir.path().join("class");
    let bob = submission(
        &class.join("bob"),
        "from honest import DLQConsumer, RetryQueue  # noqa: F401\n",
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let attacks: [(&str, Vec<(&str, &str)>); 7] = [
        ("peek.py", vec![("@MARK@", &mark)]),
        (
            "vandal.py",
            vec![
                ("@SPEC@", text(&spec)),
                ("@OUTPUT@", text(&output)),
                ("@OTHER@", text(&bob)),
            ],
        ),
        ("stopper.py", vec![]),
        ("scribbler.py", vec![("@MARK@", &mark)]),
        ("caller.py", vec![("@PORT@", &port)]),
        ("bomb.py", vec![("@MARK@", &mark)]),
        ("environment.py", vec![]),
    ];
    let mut members = vec![bob.clone(), submission(&class.join("probe"), WARM_PROBE)];
    for (file, with) in &attacks {
        let folder = class.join(file.trim_end_matches(".py"));
        hostile(&folder, file, with);
        members.push(folder);
    }
    let spec_before = std::fs::read(&spec).unwrap();
    let mut command = dlqspec();
    command
        .current_dir(&teacher)
        .env("DLQSPEC_TEST_SECRET", &mark)
        .args([
            "grade", "--warm", "--jobs", "2", "--budget", "120", "--specs",
        ])
        .arg(&spec)
        .arg("--output")
        .arg(&output)
        .args(&members)
        .stdin(Stdio::null());
    let graded = ran(command.output().expect("dlqspec grade runs"));
    if !warm_here(&graded) {
        return;
    }
    // Every attack failed, so each went on as the honest solution (the bomb, stopped by the
    // process limit, fails to load); the probe was served warm.
    for (name, status) in statuses(&output) {
        if name == "bomb" {
            assert!(status.contains("fork failed after"), "{name}: {status}");
        } else {
            assert!(status.starts_with("\"pass\""), "{name}: {status}");
        }
    }
    assert_eq!(graded.code, 1, "{}{}", graded.stdout, graded.stderr);
    assert_eq!(
        std::fs::read(&spec).unwrap(),
        spec_before,
        "the spec changed"
    );
    for folder in [&teacher, &output, &bob] {
        assert!(
            !folder.join("planted.txt").exists(),
            "a file was planted in {}",
            folder.display()
        );
    }
    match listener.accept() {
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, from)) => panic!("a warm solution connected from {from}"),
        Err(error) => panic!("accept failed: {error}"),
    }
    assert_all_dead(&processes_marked(&mark), "the warm hostile class");
}

#[test]
fn two_warm_neighbours_reach_nothing_of_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let class = dir.path().join("class");
    let bob = submission(
        &class.join("bob"),
        "import time\ntime.sleep(1)\nfrom honest import DLQConsumer, RetryQueue  # noqa: F401\n",
    );
    let alice = class.join("alice");
    hostile(&alice, "neighbour.py", &[("@OTHER@", text(&bob))]);
    let bob_before = std::fs::read(bob.join("solution.py")).unwrap();
    let output = dir.path().join("grades");
    let graded = grade(true, SPEC, &output, &[bob.clone(), alice]);
    if !warm_here(&graded) {
        return;
    }
    for (name, status) in statuses(&output) {
        assert!(status.starts_with("\"pass\""), "{name}: {status}");
    }
    assert_eq!(std::fs::read(bob.join("solution.py")).unwrap(), bob_before);
    assert!(!bob.join("planted.txt").exists());
}

/// A shims folder of its own, under a path holding `mark`: the zygote's command line names it.
fn marked_shims(dir: &Path, mark: &str) -> PathBuf {
    let shims = dir.join(format!("{mark}-shims"));
    std::fs::create_dir_all(shims.join("python")).unwrap();
    for file in ["dlqspec_shim.py", "dlqspec_zygote.py"] {
        std::fs::copy(
            root().join("shims/python").join(file),
            shims.join("python").join(file),
        )
        .unwrap();
    }
    shims
}

#[cfg(target_os = "linux")]
#[test]
fn the_zygote_is_gone_when_grade_ends_and_when_it_is_interrupted() {
    let mark = mark("zygote");
    let dir = tempfile::tempdir().unwrap();
    let shims = marked_shims(dir.path(), &mark);
    let honest = submission(
        &dir.path().join("honest"),
        "from honest import DLQConsumer, RetryQueue  # noqa: F401\n",
    );
    let graded = ran(dlqspec()
        .env("DLQSPEC_SHIMS", &shims)
        .args(["grade", "--warm", "--specs", SPEC, "--output"])
        .arg(dir.path().join("ended"))
        .arg(&honest)
        .output()
        .expect("dlqspec grade runs"));
    if !warm_here(&graded) {
        return;
    }
    assert_eq!(graded.code, 0, "{}{}", graded.stdout, graded.stderr);
    assert!(
        processes_marked(&mark).is_empty(),
        "the zygote outlived grade"
    );
    // Interrupted while a submission is being graded warm.
    let sleeper = submission(
        &dir.path().join("sleeper"),
        "import time\ntime.sleep(300)\n",
    );
    let mut child = dlqspec()
        .env("DLQSPEC_SHIMS", &shims)
        .args([
            "grade", "--warm", "--budget", "300", "--specs", SPEC, "--output",
        ])
        .arg(dir.path().join("interrupted"))
        .arg(&sleeper)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dlqspec grade starts");
    // A hang guard: the zygote and the sleeper's box (W, process 1, the sleeper) show up.
    let until = Instant::now() + Duration::from_secs(60);
    while processes_marked(&mark).len() < 4 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = processes_marked(&mark);
    assert!(seen.len() >= 4, "the warm child never started: {seen:?}");
    // SAFETY: kill(2) on our own child, unreaped.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let until = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    if child.try_wait().unwrap().is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("grade did not end on SIGINT");
    }
    assert_all_dead(&seen, "an interrupted warm grade");
}
