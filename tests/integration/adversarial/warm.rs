//! The warm start (`grade`'s default, and `watch`'s): Python submissions forked from one zygote must get the
//! verdicts a cold start gives, and the same box: every hostile solution's attack still fails,
//! two warm neighbours reach nothing of each other, and the zygote never outlives grade.
//! Where the machine cannot box a warm child as strongly (not root, no pids cgroup), grade
//! says so and starts cold; these tests then say they could not check the warm start.
//!
//! A warm child runs only as a box's own uid, never as root: these tests run an interpreter
//! and folders every uid can reach (`/usr/bin/python3`, not pyenv's in a `0700` `/root`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::sandbox::{SPEC, hostile, mark, processes_marked, text};
use crate::common::{
    PYTHON_EVERY_UID_RUNS, Ran, Tier, assert_all_dead, dlqspec, outside_temp, ran, root, tier,
    tier_lacking, untimed,
};

/// An interpreter every box uid can run, as `DLQSPEC_PYTHON`, in the root tier
/// (`common::Tier`: root, with that interpreter); `None` when the tier is skipped here.
fn reachable_python() -> Option<&'static str> {
    tier(Tier::Root).then_some(PYTHON_EVERY_UID_RUNS)
}

/// A temporary folder every uid can pass through (`0711`), for submissions and shims a box's
/// uid must reach.
fn reachable_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    dir
}

/// `dlqspec` with `python` as every run's interpreter and a shims cache a box's uid reaches.
fn warm_dlqspec(python: &str) -> std::process::Command {
    static CACHE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(reachable_tempdir);
    let mut command = dlqspec();
    command
        .env("DLQSPEC_PYTHON", python)
        .env("DLQSPEC_CACHE_DIR", cache.path());
    command
}

/// A solution that passes only when it was served warm: a warm child is a fork of the zygote,
/// whose command line it shows; a cold one shows its own.
const WARM_PROBE: &str = r#"
if b"dlqspec_zygote" not in open("/proc/self/cmdline", "rb").read():
    raise RuntimeError("served cold")
from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
"#;

/// A solution that fails to load, telling what it sees of its start that is not random: its
/// environment's names, argv, uid, flags, descriptors, folders, limits, modules' origin and
/// how many processes its box has, its parent. (Not its own pid: a warm child is process 3 of
/// its box, a cold one process 2; docs/security.md.)
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
        len([p for p in os.listdir("/proc") if p.isdigit()]), os.getppid()]
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

/// `dlqspec grade` of `class` into `output` against `specs`, warm (the default) or `--cold`,
/// with `python`.
fn grade(python: &str, warm: bool, specs: &str, output: &Path, class: &[PathBuf]) -> Ran {
    let mut command = warm_dlqspec(python);
    command.args(["grade", "--jobs", "2", "--budget", "120", "--specs", specs]);
    if !warm {
        command.arg("--cold");
    }
    command.arg("--output").arg(output).args(class);
    ran(command.output().expect("dlqspec grade runs"))
}

/// Whether this machine boxes warm children (else grade told why it started cold).
fn warm_here(ran: &Ran) -> bool {
    warm_said_here(&ran.stderr)
}

/// Whether `stderr` of a warm start says nothing of starting cold, or only that this machine
/// lacks what the box needs (then the test says it could not check the warm start).
fn warm_said_here(stderr: &str) -> bool {
    if !stderr.contains("note: the warm start:") {
        return true;
    }
    // Only a machine without what the box needs is a reason to skip (the root tier's, failing
    // where it must run): any other note is a zygote that failed to start, which must fail
    // these tests, not pass them untested.
    assert!(
        stderr.contains("which this machine lacks"),
        "the zygote failed to start: {stderr}"
    );
    tier_lacking(
        Tier::Root,
        Some(format!(
            "this machine cannot box a warm child: {}",
            stderr.trim()
        )),
    )
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
fn python_submissions_are_served_by_the_zygote_by_default_and_never_under_cold() {
    let Some(python) = reachable_python() else {
        return;
    };
    let dir = reachable_tempdir();
    let probe = submission(&dir.path().join("probe"), WARM_PROBE);
    let cold = grade(
        python,
        false,
        SPEC,
        &dir.path().join("cold"),
        std::slice::from_ref(&probe),
    );
    assert_eq!(cold.code, 1, "{}{}", cold.stdout, cold.stderr);
    let warm = grade(python, true, SPEC, &dir.path().join("warm"), &[probe]);
    if !warm_here(&warm) {
        return;
    }
    assert_eq!(warm.code, 0, "{}{}", warm.stdout, warm.stderr);
}

#[test]
fn a_suite_gives_identical_reports_through_a_cold_and_a_warm_start() {
    let Some(python) = reachable_python() else {
        return;
    };
    let dir = reachable_tempdir();
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
    let cold = grade(python, false, "specs", &cold_dir, &class);
    let warm = grade(python, true, "specs", &warm_dir, &class);
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
    let Some(python) = reachable_python() else {
        return;
    };
    let mark = mark("warm");
    let dir = reachable_tempdir();
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
    let attacks: [(&str, Vec<(&str, &str)>); 9] = [
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
        ("vm_socket.py", vec![]),
        ("process_one.py", vec![]),
    ];
    let mut members = vec![bob.clone(), submission(&class.join("probe"), WARM_PROBE)];
    for (file, with) in &attacks {
        let folder = class.join(file.trim_end_matches(".py"));
        hostile(&folder, file, with);
        members.push(folder);
    }
    let spec_before = std::fs::read(&spec).unwrap();
    let mut command = warm_dlqspec(python);
    command
        .current_dir(&teacher)
        .env("DLQSPEC_TEST_SECRET", &mark)
        .args(["grade", "--jobs", "2", "--budget", "120", "--specs"])
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
    let Some(python) = reachable_python() else {
        return;
    };
    let dir = reachable_tempdir();
    let class = dir.path().join("class");
    let bob = submission(
        &class.join("bob"),
        "import time\ntime.sleep(1)\nfrom honest import DLQConsumer, RetryQueue  # noqa: F401\n",
    );
    let alice = class.join("alice");
    hostile(&alice, "neighbour.py", &[("@OTHER@", text(&bob))]);
    let bob_before = std::fs::read(bob.join("solution.py")).unwrap();
    let output = dir.path().join("grades");
    let graded = grade(python, true, SPEC, &output, &[bob.clone(), alice]);
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
    let Some(python) = reachable_python() else {
        return;
    };
    let mark = mark("zygote");
    let dir = reachable_tempdir();
    let shims = marked_shims(dir.path(), &mark);
    let honest = submission(
        &dir.path().join("honest"),
        "from honest import DLQConsumer, RetryQueue  # noqa: F401\n",
    );
    let graded = ran(warm_dlqspec(python)
        .env("DLQSPEC_SHIMS", &shims)
        .args(["grade", "--specs", SPEC, "--output"])
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
    let mut child = warm_dlqspec(python)
        .env("DLQSPEC_SHIMS", &shims)
        .args(["grade", "--budget", "300", "--specs", SPEC, "--output"])
        .arg(dir.path().join("interrupted"))
        .arg(&sleeper)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dlqspec grade starts");
    // The zygote and the sleeper (a fork of it) show up, however long a busy machine takes:
    // grade's own budget (300 s) is what ends a grade that never gets there.
    while processes_marked(&mark).len() < 2 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("grade ended before the warm child started: {status:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = processes_marked(&mark);
    // SAFETY: kill(2) on our own child, unreaped.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    // Ended by the interrupt, not by its budget.
    let status = child.wait().expect("grade ends");
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert_all_dead(&seen, "an interrupted warm grade");
}

/// A solution that fails to load, telling the names of the variables it was started with
/// (`/proc/self/environ`) and of those it has (`os.environ`), between `ENV[` and `]ENV`.
const ENVIRON_PROBE: &str = r#"
import json, os
started = open("/proc/self/environ", "rb").read().split(b"\0")
seen = {"started": sorted(v.split(b"=")[0].decode() for v in started if v),
        "has": sorted(os.environ),
        "values": b"\0".join(started).decode("utf-8", "replace")}
raise RuntimeError("ENV[" + json.dumps(seen) + "]ENV")
"#;

/// What `ENVIRON_PROBE` told in the human report of `name` in `output`.
fn environ_seen(output: &Path, name: &str) -> serde_json::Value {
    let report = std::fs::read_to_string(output.join(format!("{name}.txt"))).unwrap();
    let start = report.find("ENV[").expect("the probe's report") + 4;
    let end = report[start..]
        .find("]ENV")
        .expect("the probe's report's end")
        + start;
    serde_json::from_str(&report[start..end]).unwrap()
}

#[test]
fn a_warm_child_was_started_with_no_variable_a_cold_one_lacks() {
    let Some(python) = reachable_python() else {
        return;
    };
    let secret = mark("environ-secret");
    let dir = reachable_tempdir();
    let probe = submission(&dir.path().join("probe"), ENVIRON_PROBE);
    let graded = |warm: bool, output: &Path| {
        let mut command = warm_dlqspec(python);
        command
            .env("DLQSPEC_TEST_SECRET", &secret)
            .args(["grade", "--budget", "120", "--specs", SPEC]);
        if !warm {
            command.arg("--cold");
        }
        ran(command
            .arg("--output")
            .arg(output)
            .arg(&probe)
            .output()
            .expect("dlqspec grade runs"))
    };
    let (cold_dir, warm_dir) = (dir.path().join("cold"), dir.path().join("warm"));
    let cold = graded(false, &cold_dir);
    assert_eq!(cold.code, 1, "{}{}", cold.stdout, cold.stderr);
    let warm = graded(true, &warm_dir);
    if !warm_here(&warm) {
        return;
    }
    let (cold, warm) = (
        environ_seen(&cold_dir, "probe"),
        environ_seen(&warm_dir, "probe"),
    );
    let names = |seen: &serde_json::Value, key: &str| -> Vec<String> {
        serde_json::from_value(seen[key].clone()).unwrap()
    };
    let cold_names: Vec<String> = names(&cold, "started")
        .into_iter()
        .chain(names(&cold, "has"))
        .collect();
    for key in ["started", "has"] {
        let extra: Vec<String> = names(&warm, key)
            .into_iter()
            .filter(|name| !cold_names.contains(name))
            .collect();
        assert!(
            extra.is_empty(),
            "a warm child's {key} environment holds what a cold one's does not: {extra:?}"
        );
    }
    assert_eq!(names(&cold, "has"), names(&warm, "has"));
    for seen in [&cold, &warm] {
        assert!(
            !seen["values"].as_str().unwrap().contains(&secret),
            "grade's environment reached a child: {seen}"
        );
    }
}

/// Drives the zygote script directly, as a hostile run could: a socket on descriptor 3, the
/// set-up message, then one request for each uid in `uids` (`null`: none, as dlqspec sent for
/// a box that kept uid 0), with that request's descriptors; prints, as JSON, whether each
/// request's implementation was started and what its child wrote.
const FORGER: &str = r#"
import ctypes, json, os, select, socket, struct, sys
script, folder, uids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
zygote = os.fork()
if zygote == 0:
    handed = os.dup(theirs.fileno())
    os.dup2(handed, 3)
    os.execv(sys.executable, [sys.executable, script])
theirs.close()
mine.send(json.dumps({"given": {}, "uids": [61000, 1061000]}).encode())
assert select.select([mine], [], [], 60)[0], "the zygote never got ready"
assert mine.recv(1) == b"R"
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
results = []
for uid in uids:
    # A ruleset that handles making sockets only (so a request that got through would run).
    ruleset = libc.syscall(444, struct.pack("Q", 1 << 9), 8, 0)
    null = os.open("/dev/null", os.O_RDWR)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    reply, reply_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    request = {"argv": [os.path.join(folder, "probe.py"), "x"], "env": [], "cwd": folder,
               "rlimits": [], "uid": uid}
    # The box's namespaces: this process's own, as a request that got through would join.
    spaces = [os.open("/proc/self/ns/" + kind, os.O_RDONLY)
              for kind in ("pid", "user", "mnt", "net", "ipc", "uts", "cgroup")]
    fds = [null, out_w, err_w, null, reply_theirs.fileno(), ruleset if ruleset >= 0 else null,
           null, null, null] + spaces
    mine.sendmsg([json.dumps(request).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("16i", *fds))])
    for fd in spaces:
        os.close(fd)
    for fd in (null, out_w, err_w):
        os.close(fd)
    if ruleset >= 0:
        os.close(ruleset)
    reply_theirs.close()
    # The zygote's child says b"S" once it has started the implementation, else just ends.
    assert select.select([reply], [], [], 60)[0], "no answer to a request"
    started = reply.recv(1) == b"S"
    results.append({"started": started, "stdout": os.read(out_r, 4096).decode(),
                    "stderr": os.read(err_r, 4096).decode()})
mine.close()
os.waitpid(zygote, 0)
print(json.dumps(results))
"#;

#[test]
fn the_zygote_refuses_a_request_without_a_box_uid() {
    let Some(python) = reachable_python() else {
        return;
    };
    let dir = reachable_tempdir();
    std::fs::write(
        dir.path().join("probe.py"),
        "import os\nprint('ran as uid', os.getuid())\n",
    )
    .unwrap();
    let forged = ran(std::process::Command::new(python)
        .arg("-c")
        .arg(FORGER)
        .arg(root().join("shims/python/dlqspec_zygote.py"))
        .arg(dir.path())
        .arg("[null, 0, 1000, 60999, 1061000]")
        .output()
        .expect("python runs"));
    assert_eq!(forged.code, 0, "{}{}", forged.stdout, forged.stderr);
    let results: Vec<serde_json::Value> = serde_json::from_str(&forged.stdout).unwrap();
    assert_eq!(results.len(), 5, "{}", forged.stdout);
    for (result, why) in results.iter().zip([
        "it names no uid (a box that would keep uid 0)",
        "its uid 0 is not one dlqspec allocates",
        "its uid 1000 is not one dlqspec allocates",
        "its uid 60999 is not one dlqspec allocates",
        "its uid 1061000 is not one dlqspec allocates",
    ]) {
        // Refused before anything of the request was used: the probe never ran.
        assert_eq!(result["stdout"], "", "{result}");
        assert_eq!(result["started"], false, "{result}");
        let stderr = result["stderr"].as_str().unwrap();
        assert!(
            stderr.contains("dlqspec zygote: request refused: ") && stderr.contains(why),
            "{result}"
        );
    }
}

/// Put in front of the zygote script: what code in the zygote (or a child that escaped its own
/// box's set-up, which is the zygote's less whatever that set-up took) can do. It tries to
/// write a file in the clone (every file it sees is read-only), to signal grade, to start `@FORKS@` processes, reads its
/// capabilities and no_new_privs, and tells it all on its stderr (grade's), then goes on.
const ZYGOTE_PROBE: &str = r#"
import errno as _errno, json as _json, os as _os, sys as _sys
_seen = {}
try:
    with open(@PLANT@, "w") as _planted:
        _planted.write("planted by the zygote")
    _seen["write"] = "wrote"
except OSError as _error:
    _seen["write"] = _errno.errorcode.get(_error.errno, type(_error).__name__)
try:
    _os.kill(_os.getppid(), 0)
    _seen["signal"] = "reached grade"
except OSError as _error:
    _seen["signal"] = type(_error).__name__
for _line in open("/proc/self/status"):
    if _line.startswith(("CapBnd", "CapEff", "NoNewPrivs")):
        _seen[_line.split(":")[0]] = _line.split()[1]
_read, _write = _os.pipe()
_kids = []
try:
    for _ in range(@FORKS@):
        _kid = _os.fork()
        if _kid == 0:
            _os.close(_write)
            _os.read(_read, 1)
            _os._exit(0)
        _kids.append(_kid)
    _seen["forks"] = "all"
except OSError:
    _seen["forks"] = len(_kids)
_os.close(_write)
_os.close(_read)
for _kid in _kids:
    _os.waitpid(_kid, 0)
_sys.stderr.write("ZYGOTE[" + _json.dumps(_seen) + "]ZYGOTE\n")
_sys.stderr.flush()
"#;

#[cfg(target_os = "linux")]
#[test]
fn the_zygote_is_boxed_itself() {
    let Some(python) = reachable_python() else {
        return;
    };
    let mark = mark("zygote-box");
    let dir = reachable_tempdir();
    let shims = marked_shims(dir.path(), &mark);
    // Outside the temporary folder, where submissions and grade's output usually are: in a
    // folder of this test's own in the build's folder, made here (whatever ran before).
    let outside = outside_temp();
    let plant = outside.path().join(format!("{mark}-planted-by-the-zygote"));
    let zygote = shims.join("python/dlqspec_zygote.py");
    let script = std::fs::read_to_string(&zygote).unwrap();
    let forks = 64;
    let probe = ZYGOTE_PROBE
        .replace("@PLANT@", &format!("{:?}", text(&plant)))
        .replace("@FORKS@", &forks.to_string());
    std::fs::write(&zygote, format!("{probe}\n{script}")).unwrap();
    let honest = submission(
        &dir.path().join("honest"),
        "from honest import DLQConsumer, RetryQueue  # noqa: F401\n",
    );
    let graded = ran(warm_dlqspec(python)
        .env("DLQSPEC_SHIMS", &shims)
        .args(["grade", "--processes", "32", "--specs", SPEC])
        .arg("--output")
        .arg(dir.path().join("grades"))
        .arg(&honest)
        .output()
        .expect("dlqspec grade runs"));
    let planted = plant.exists();
    let _ = std::fs::remove_file(&plant);
    if !warm_here(&graded) {
        return;
    }
    // It still serves: the honest submission passes, warm.
    assert_eq!(graded.code, 0, "{}{}", graded.stdout, graded.stderr);
    let start = graded.stderr.find("ZYGOTE[").expect("the probe's line") + 7;
    let end = graded.stderr[start..].find("]ZYGOTE").unwrap() + start;
    let seen: serde_json::Value = serde_json::from_str(&graded.stderr[start..end]).unwrap();
    assert!(!planted, "the zygote wrote a file of the machine: {seen}");
    assert_eq!(seen["write"], "EROFS", "{seen}");
    assert_eq!(seen["signal"], "PermissionError", "{seen}");
    assert_eq!(seen["NoNewPrivs"], "1", "{seen}");
    // CAP_SETGID, CAP_SETUID, CAP_SETPCAP, CAP_SYS_CHROOT, CAP_SYS_ADMIN: no other.
    assert_eq!(seen["CapBnd"], "00000000002401c0", "{seen}");
    assert_eq!(seen["CapEff"], "00000000002401c0", "{seen}");
    let started = seen["forks"].as_u64();
    assert!(
        started.is_some_and(|started| started < 32),
        "the zygote started {} of {forks} processes under --processes 32: {seen}",
        seen["forks"]
    );
}

/// `dlqspec watch` of `folder` on its `solution.py`, warm (the default) or `--cold`: its
/// output once the first run has reported, at which point `save` is called, and once the rerun
/// it calls for has reported and watch has stopped; whether a zygote was running after the
/// first run (a process of `mark`'s shims naming the zygote script); and its stderr.
fn watched(
    python: &str,
    warm: bool,
    folder: &Path,
    shims: &Path,
    mark: &str,
    save: impl Fn(),
) -> (String, bool, String) {
    use std::io::BufRead as _;
    let mut command = warm_dlqspec(python);
    command
        .env("DLQSPEC_SHIMS", shims)
        .arg("watch")
        .arg(folder.join("spec.yaml"))
        .arg("--impl")
        .arg(format!("python:{}", folder.join("solution.py").display()))
        .args(["--max-reruns", "1"]);
    if !warm {
        command.arg("--cold");
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dlqspec watch starts");
    let (sender, lines) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    let mut zygote = false;
    for round in 0..2 {
        // Each report ends with the line that watching goes on; watch ending first closes its
        // stdout, and the test fails with what it said.
        loop {
            let Ok(line) = lines.recv() else {
                let _ = child.kill();
                let _ = child.wait();
                panic!("watch stopped reporting; it said:\n{seen}");
            };
            seen.push_str(&line);
            seen.push('\n');
            if line.starts_with("watching ") {
                break;
            }
        }
        if round == 0 {
            zygote = processes_marked(mark).iter().any(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|line| String::from_utf8_lossy(&line).contains("dlqspec_zygote"))
            });
            save();
        }
    }
    let status = child.wait().expect("dlqspec watch ends");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{seen}{stderr}");
    (untimed(&seen), zygote, stderr)
}

#[cfg(target_os = "linux")]
#[test]
fn watch_reruns_a_python_solution_warm_with_the_reports_of_a_cold_start() {
    let Some(python) = reachable_python() else {
        return;
    };
    let mark = mark("watch-warm");
    let dir = reachable_tempdir();
    let shims = marked_shims(dir.path(), &mark);
    let mut reports = Vec::new();
    for warm in [false, true] {
        let folder = dir.path().join(if warm { "warm" } else { "cold" });
        // What the solution sees of its start, first; then, saved, the honest solution.
        let solution = submission(&folder, INTROSPECT).join("solution.py");
        std::fs::copy(root().join(SPEC), folder.join("spec.yaml")).unwrap();
        let save = || {
            std::fs::write(
                &solution,
                "from honest import DLQConsumer, RetryQueue  # noqa: F401\n",
            )
            .unwrap()
        };
        let (seen, zygote, stderr) = watched(python, warm, &folder, &shims, &mark, save);
        if warm && !warm_said_here(&stderr) {
            return;
        }
        assert_eq!(
            zygote,
            warm,
            "a zygote served the {} watch: {zygote}",
            if warm { "warm" } else { "cold" }
        );
        assert!(
            seen.contains("0 passed, 1 failed") && seen.contains("1 passed, 0 failed"),
            "{seen}"
        );
        reports.push(seen.replace(text(&folder), "FOLDER"));
    }
    assert_eq!(reports[0], reports[1]);
    assert_all_dead(&processes_marked(&mark), "after a warm watch");
}
