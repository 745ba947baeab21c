//! Attacks on the box: reading, writing and signalling outside the submission's own folder,
//! seeing dlqspec, the network, daemons, fork bombs, the environment, root. Each hostile
//! solution (tests/hostile/) goes on as the honest one when its attack fails, so a run that
//! passes says the box held; where an attack succeeds it fails to load, saying what it did.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Ran, dlqspec, ran, root};

/// A small bundled spec every attack runs against.
pub(super) const SPEC: &str = "specs/dlq-consumer/already-dead-lettered-id-sent-again.yaml";

/// Whether the box is on in these tests; `off` shows each attack succeed.
const SANDBOX: &str = "on";

/// A marker no other test uses, for the files and processes of one attack.
pub(super) fn mark(what: &str) -> String {
    format!("dlqspec-hostile-{what}-{}", std::process::id())
}

/// A submission folder in `dir` holding the hostile solution `name` (placeholders replaced) as
/// `solution.py`, beside the honest example as `honest.py`; the solution's path.
pub(super) fn hostile(dir: &Path, name: &str, with: &[(&str, &str)]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let mut text = std::fs::read_to_string(root().join("tests/hostile").join(name)).unwrap();
    for (placeholder, value) in with {
        text = text.replace(placeholder, value);
    }
    std::fs::write(dir.join("solution.py"), text).unwrap();
    std::fs::copy(
        root().join("examples/python/solution.py"),
        dir.join("honest.py"),
    )
    .unwrap();
    dir.join("solution.py")
}

pub(super) fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `dlqspec run` of `solution` against the spec, in the box (unless `SANDBOX` says off).
fn run_hostile(solution: &Path, spec: &Path, configure: impl FnOnce(&mut Command)) -> Ran {
    let mut command = dlqspec();
    command.args([
        "run",
        "--sandbox",
        SANDBOX,
        "--impl",
        &format!("python:{}", text(solution)),
        text(spec),
    ]);
    configure(&mut command);
    ran(command.output().expect("dlqspec runs"))
}

/// The host's pids of processes whose command line holds `mark`.
pub(super) fn processes_marked(mark: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let found = cmdline.windows(mark.len()).any(|w| w == mark.as_bytes());
            found.then(|| pid.to_string())
        })
        .collect()
}

fn passed(ran: &Ran) {
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("1 passed, 0 failed"), "{}", ran.stdout);
}

#[test]
fn a_solution_sees_nothing_of_dlqspec() {
    let mark = mark("peek");
    let dir = tempfile::tempdir().unwrap();
    let solution = hostile(&dir.path().join("alice"), "peek.py", &[("@MARK@", &mark)]);
    // The marker in dlqspec's argv (the spec folder), cwd and environment.
    let specs = dir.path().join(format!("{mark}-specs"));
    let cwd = dir.path().join(format!("{mark}-cwd"));
    std::fs::create_dir_all(&specs).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let spec = specs.join("spec.yaml");
    std::fs::copy(root().join(SPEC), &spec).unwrap();
    let ran = run_hostile(&solution, &spec, |command| {
        command.current_dir(&cwd).env("DLQSPEC_TEST_SECRET", &mark);
    });
    passed(&ran);
}

#[test]
fn a_solution_cannot_read_or_write_the_teachers_files_nor_another_submissions() {
    let dir = tempfile::tempdir().unwrap();
    let teacher = dir.path().join("teacher");
    std::fs::create_dir_all(&teacher).unwrap();
    let spec = teacher.join("hidden.yaml");
    std::fs::copy(root().join(SPEC), &spec).unwrap();
    let output = dir.path().join("grades");
    let bob = dir.path().join("class").join("bob");
    std::fs::create_dir_all(&bob).unwrap();
    std::fs::copy(
        root().join("examples/python/solution.py"),
        bob.join("solution.py"),
    )
    .unwrap();
    let alice = dir.path().join("class").join("alice");
    hostile(
        &alice,
        "vandal.py",
        &[
            ("@SPEC@", text(&spec)),
            ("@OUTPUT@", text(&output)),
            ("@OTHER@", text(&bob)),
        ],
    );
    let spec_before = std::fs::read(&spec).unwrap();
    let bob_before = std::fs::read(bob.join("solution.py")).unwrap();
    let ran = ran(dlqspec()
        .args(["grade", "--sandbox", SANDBOX, "--jobs", "1", "--specs"])
        .arg(&teacher)
        .arg("--output")
        .arg(&output)
        .arg(&alice)
        .arg(&bob)
        .output()
        .expect("dlqspec grade runs"));
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("2 submissions graded"),
        "{}",
        ran.stdout
    );
    assert_eq!(
        std::fs::read(&spec).unwrap(),
        spec_before,
        "the spec changed"
    );
    assert_eq!(
        std::fs::read(bob.join("solution.py")).unwrap(),
        bob_before,
        "bob's solution changed"
    );
    for folder in [&teacher, &output, &bob] {
        assert!(
            !folder.join("planted.txt").exists(),
            "a file was planted in {}",
            folder.display()
        );
    }
}

#[test]
fn a_solution_cannot_stop_grade() {
    let dir = tempfile::tempdir().unwrap();
    let alice = dir.path().join("alice");
    hostile(&alice, "stopper.py", &[]);
    let output = dir.path().join("grades");
    let mut child = dlqspec()
        .args([
            "grade",
            "--sandbox",
            SANDBOX,
            "--budget",
            "60",
            "--specs",
            SPEC,
        ])
        .arg("--output")
        .arg(&output)
        .arg(&alice)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dlqspec grade starts");
    // A hang guard, not a timing: a stopped grade never ends by itself.
    let until = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > until {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if status.is_none() {
        let pid = child.id() as i32;
        // SAFETY: kill(2) on our own child, unreaped.
        unsafe {
            libc::kill(pid, libc::SIGCONT);
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut stdout = String::new();
    let _ = child.stdout.take().unwrap().read_to_string(&mut stdout);
    let status = status.expect("grade was stopped: it never ended");
    assert!(status.success(), "{stdout}");
    assert!(stdout.contains("1 submission graded"), "{stdout}");
}

#[test]
fn a_solution_cannot_write_raw_output_through_dlqspecs_descriptors() {
    let mark = mark("scribble");
    let dir = tempfile::tempdir().unwrap();
    let solution = hostile(dir.path(), "scribbler.py", &[("@MARK@", &mark)]);
    let ran = run_hostile(&solution, &root().join(SPEC), |_| {});
    for (stream, written) in [("stdout", &ran.timed_stdout), ("stderr", &ran.stderr)] {
        assert!(
            !written.contains('\u{1b}') && !written.contains(&mark),
            "raw bytes in dlqspec's {stream}: {written:?}"
        );
    }
    passed(&ran);
}

#[test]
fn a_solution_cannot_connect_to_a_loopback_listener() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let solution = hostile(dir.path(), "caller.py", &[("@PORT@", &port)]);
    let ran = run_hostile(&solution, &root().join(SPEC), |_| {});
    passed(&ran);
    match listener.accept() {
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, from)) => panic!("the solution connected from {from}"),
        Err(error) => panic!("accept failed: {error}"),
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_daemon_does_not_outlive_its_run_nor_overwrite_the_report() {
    let mark = mark("daemon");
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let solution = hostile(
        &dir.path().join("alice"),
        "daemon.py",
        &[("@MARK@", &mark), ("@REPORT@", text(&report))],
    );
    let ran = run_hostile(&solution, &root().join(SPEC), |command| {
        command.args(["--format", "json", "--output"]).arg(&report);
    });
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let left = processes_marked(&mark);
    crate::common::assert_all_dead(&left, "the daemon");
    assert!(left.is_empty(), "the daemon outlived its run: {left:?}");
    let written = std::fs::read(&report).unwrap();
    // Longer than the daemon's wait: had it lived, it would have written by now.
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        std::fs::read(&report).unwrap(),
        written,
        "the report changed"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_fork_bomb_is_contained() {
    let mark = mark("bomb");
    let dir = tempfile::tempdir().unwrap();
    let solution = hostile(dir.path(), "bomb.py", &[("@MARK@", &mark)]);
    let ran = run_hostile(&solution, &root().join(SPEC), |command| {
        command.args(["--processes", "64"]);
    });
    let left = processes_marked(&mark);
    crate::common::assert_all_dead(&left, "the fork bomb's processes");
    assert!(
        left.is_empty(),
        "the fork bomb left {} processes",
        left.len()
    );
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("fork failed after"),
        "{}{}",
        ran.stdout,
        ran.stderr
    );
}

#[test]
fn the_implementations_environment_is_the_allowlist() {
    let dir = tempfile::tempdir().unwrap();
    let solution = hostile(dir.path(), "environment.py", &[]);
    let ran = run_hostile(&solution, &root().join(SPEC), |command| {
        command
            .env("DLQSPEC_TEST_SECRET", "from the CI")
            .env("CI_JOB_TOKEN", "secret");
    });
    passed(&ran);
}

#[cfg(target_os = "linux")]
#[test]
fn as_root_the_implementation_runs_as_another_uid() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // A folder every uid may enter, as a teacher's course folder is.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = dir.path().join("whoami.sh");
    std::fs::copy(root().join("tests/hostile/whoami.sh"), &script).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ran = crate::common::run(&[
        "run",
        "--sandbox",
        SANDBOX,
        "--impl",
        &format!("cmd:{}", text(&script)),
        SPEC,
    ]);
    let said = format!("{}{}", ran.stdout, ran.stderr);
    let uid: u32 = said
        .split("running as uid=")
        .nth(1)
        .and_then(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no uid said: {said}"));
    // SAFETY: getuid has no preconditions.
    let own = unsafe { libc::getuid() };
    if own == 0 {
        assert_ne!(uid, 0, "the implementation ran as root: {said}");
    } else {
        // Not root: its own uid, mapped into the box's user namespace.
        assert_eq!(uid, own, "{said}");
    }
}
