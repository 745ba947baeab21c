//! Benchmark: world calls per second through dlqspec, as a share of what the shim itself does;
//! and a whole `dlqspec run` of the bundled suite against one bare start of its interpreter.
//!
//! The floor is the shim's own speed: this program plays dlqspec's part as leanly as it can
//! (blocking reads on the child's stdout, a canned answer to each world call) while the
//! probe fixture's `spin(n)` makes n `queue.pending()` calls in one request. Against it, the
//! same request through dlqspec's `ExternalImplementation` answering from a real world. The
//! ratio is the share of the lean rate dlqspec keeps (the goal is 90% or more), for the Python
//! and the Node shim. Run with `cargo bench --bench external`.
//!
//! Each world call is a round trip, so its wall time is the CPU time of both sides plus the
//! wake-ups between them, and on a busy machine the wait for a core. The CPU time each side
//! spends per call (Linux: from /proc's schedstat) is printed beside the wall time: it tells
//! what dlqspec costs per call apart from what the load of the machine costs.
//!
//! The `run` part times what a student waits for: `dlqspec run specs` on the Python and the
//! Node example, against one bare start of the same interpreter (`python3 -c pass` with the
//! interpreter itself, not pyenv's script in front of it; `node -e 0`) plus the built-in run
//! of the same suite, which is the least a run through a shim could take. The parts are
//! `box`, `calls` and `run`; `cargo bench --bench external -- run` runs one of them.

// clippy.toml's rules hold the library; benchmarks set their cases up by writing files, starting
// programs and printing what they measured or found.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_macros,
    clippy::disallowed_types,
    reason = "benchmarks: files, processes and prints set cases up and tell what was found"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use dlqspec::contracts::dlq_consumer::world::World;
use dlqspec::external::launch;
use dlqspec::model::implementation::{Naming, Reply};

const CALLS: u64 = 20_000;

/// A consumer's constructor parameters as `new` sends them: its four given parts, and no
/// `max_attempts` (the class's default).
fn new_params() -> Value {
    json!([{"given": "queue"}, {"given": "dlq"}, {"given": "handler"}, {"given": "clock"}])
}

/// One timed request of `CALLS` world calls, in microseconds per call.
#[derive(Clone, Copy)]
struct PerCall {
    wall: f64,
    /// CPU time of the shim's process (all its threads), when the system tells it.
    shim_cpu: Option<f64>,
    /// CPU time of the thread answering the shim: the lean peer, or dlqspec.
    peer_cpu: Option<f64>,
}

impl PerCall {
    fn measure(shim: u32, request: impl FnOnce()) -> PerCall {
        let (shim_before, peer_before) = (process_cpu(shim), thread_cpu());
        let started = Instant::now();
        request();
        let wall = started.elapsed();
        let per_call = |d: Duration| d.as_secs_f64() * 1e6 / CALLS as f64;
        let spent = |before: Option<Duration>, after: Option<Duration>| {
            Some(per_call(after?.checked_sub(before?)?))
        };
        PerCall {
            wall: per_call(wall),
            shim_cpu: spent(shim_before, process_cpu(shim)),
            peer_cpu: spent(peer_before, thread_cpu()),
        }
    }

    /// The least of each figure over rounds: each is the cost with the least interference.
    fn best(rounds: &[PerCall]) -> PerCall {
        let least =
            |figure: fn(&PerCall) -> Option<f64>| rounds.iter().filter_map(figure).reduce(f64::min);
        PerCall {
            wall: rounds.iter().map(|r| r.wall).fold(f64::INFINITY, f64::min),
            shim_cpu: least(|r| r.shim_cpu),
            peer_cpu: least(|r| r.peer_cpu),
        }
    }

    fn cpu(&self) -> Option<f64> {
        Some(self.shim_cpu? + self.peer_cpu?)
    }
}

/// CPU time used so far by the calling thread (Linux).
fn thread_cpu() -> Option<Duration> {
    schedstat("/proc/thread-self/schedstat")
}

/// CPU time used so far by every thread of process `pid` (Linux).
fn process_cpu(pid: u32) -> Option<Duration> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    tasks
        .map(|task| schedstat(&format!("{}/schedstat", task.ok()?.path().display())))
        .sum()
}

/// The first field of a schedstat file: nanoseconds spent on a CPU.
fn schedstat(path: &str) -> Option<Duration> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(Duration::from_nanos(text.split(' ').next()?.parse().ok()?))
}

/// The shim dlqspec started (Linux): this process's one child, or in the box the process at
/// the end of its chain of only children (the box's A, B, then the shim).
fn only_child() -> Option<u32> {
    let mut pid = only_child_of(std::process::id())?;
    while let Some(child) = only_child_of(pid) {
        pid = child;
    }
    Some(pid)
}

/// The one child process `parent` has running.
fn only_child_of(parent: u32) -> Option<u32> {
    let me = parent.to_string();
    let children: Vec<u32> = std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // After the command name, which may hold spaces, in parentheses: state, then ppid.
            let ppid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?;
            (ppid == me).then_some(pid)
        })
        .collect();
    match children[..] {
        [pid] => Some(pid),
        _ => None,
    }
}

/// The shim answered by a minimal peer.
fn lean(program: &str, shim: &PathBuf, fixture: &PathBuf) -> PerCall {
    let mut child = Command::new(program)
        .arg(shim)
        .arg(fixture)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the shim starts");
    let pid = child.id();
    let mut to_shim = child.stdin.take().expect("stdin");
    let mut from_shim = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut ask = |request: Value, line: &mut String| {
        // One write per message, as dlqspec does: `writeln!` on the unbuffered pipe would
        // write each piece of the JSON apart (some 30 system calls a message).
        let mut text = request.to_string();
        text.push('\n');
        to_shim.write_all(text.as_bytes()).expect("write");
        // `output` messages (what the fixture printed at import) come before the reply: skip them.
        loop {
            line.clear();
            from_shim.read_line(line).expect("read");
            if !line.contains("\"type\":\"output\"") {
                break;
            }
        }
    };
    // The shim knows no contract by name: hello describes it, `new` names its class and parts.
    let contract = dlqspec::contracts::find("dlq-consumer").expect("dlq-consumer");
    ask(
        json!({"seq": 1, "type": "hello", "protocol": 1,
               "exercises": {"dlq-consumer": contract.protocol_description()}}),
        &mut line,
    );
    ask(
        json!({"seq": 2, "type": "new", "contract": "dlq-consumer", "class": contract.subject(), "args": {"params": new_params()}}),
        &mut line,
    );
    let per_call = PerCall::measure(pid, || {
        ask(
            json!({"seq": 3, "type": "call", "method": "spin", "args": [CALLS]}),
            &mut line,
        );
        let mut n = 0;
        while line.contains("\"type\":\"world\"") {
            n += 1;
            ask(
                json!({"seq": 3, "type": "result", "n": n, "value": []}),
                &mut line,
            );
        }
        assert_eq!(n, CALLS, "the probe made every call: {line}");
    });
    let _ = child.kill();
    let _ = child.wait();
    per_call
}

/// The same request through dlqspec.
fn through_dlqspec(target: &str) -> PerCall {
    let target = launch::parse(target).expect("a target");
    let mut implementation = target.instantiate(Duration::from_secs(60));
    let mut world = World::new(Default::default(), Naming::Snake);
    implementation.begin_spec().expect("starts");
    let made = implementation.create(
        "dlq-consumer",
        &json!({ "params": new_params() }),
        &mut world,
    );
    assert!(matches!(made, Ok(Reply::Returned(_))), "{made:?}");
    let shim = only_child().unwrap_or(0);
    PerCall::measure(shim, || {
        let reply = implementation.call("spin", &[json!(CALLS)], &mut world);
        assert_eq!(reply, Ok(Reply::Returned(json!(CALLS))));
    })
}

/// The CPU time (user and system) of every process this one has waited for, and of every
/// process they waited for in turn (the box's A, B and C, the interpreter), in ms.
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

/// A measure of one whole process: wall and CPU time, in ms.
#[derive(Clone, Copy)]
struct Spent {
    wall: f64,
    cpu: f64,
}

/// The least wall time and the median CPU time of `spent` (CPU time, which the machine's load
/// moves less, is the steadier figure on a shared machine).
fn best_and_median(spent: &[Spent]) -> (f64, f64) {
    let best = spent.iter().map(|s| s.wall).fold(f64::INFINITY, f64::min);
    let mut cpu: Vec<f64> = spent.iter().map(|s| s.cpu).collect();
    cpu.sort_by(f64::total_cmp);
    (best, cpu[cpu.len() / 2])
}

/// The bundled suite as one whole `dlqspec run` of `solution`, in the box or not: its wall
/// and CPU time.
fn whole_suite(root: &std::path::Path, solution: &str, sandbox: &str) -> Spent {
    let cpu = children_cpu();
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_dlqspec"))
        .current_dir(root)
        .args(["run", "--quiet", "--sandbox", sandbox, "--impl", solution])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("dlqspec runs");
    assert!(
        status.success(),
        "{solution} fails the suite (--sandbox {sandbox})"
    );
    Spent {
        wall: started.elapsed().as_secs_f64() * 1e3,
        cpu: children_cpu() - cpu,
    }
}

/// What the box costs: the bundled suite run whole, boxed and not, on the Python and Node
/// example solutions; and `grade` of a class of 24 submissions of each, boxed (warm, the
/// default, and `--cold`) and not (the goal is at most 1.1 times the unboxed time).
fn box_cost(root: &std::path::Path) {
    let rounds = 7;
    println!(
        "the box: the bundled suite, whole dlqspec run, best of {rounds}, boxed / --sandbox off (load average {} before)",
        load_average()
    );
    for solution in [
        "python:examples/python/solution.py",
        "node:examples/javascript/solution.mjs",
    ] {
        // Alternated, so that a change in the machine's load touches both alike.
        let (mut boxed, mut unboxed) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            boxed.push(whole_suite(root, solution, "on"));
            unboxed.push(whole_suite(root, solution, "off"));
        }
        let ((boxed, boxed_cpu), (unboxed, unboxed_cpu)) =
            (best_and_median(&boxed), best_and_median(&unboxed));
        println!(
            "  {solution:<40} boxed {boxed:>6.1} ms   off {unboxed:>6.1} ms   {:.2}x; CPU, median: {boxed_cpu:>6.1} ms against {unboxed_cpu:>6.1} ms, {:.2}x",
            boxed / unboxed,
            boxed_cpu / unboxed_cpu
        );
    }
    let rounds = 3;
    println!(
        "the box: grade of {CLASS} submissions, --jobs 2, best of {rounds}, boxed / --sandbox off (load average {})",
        load_average()
    );
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (example, file) in [
        ("examples/python/solution.py", "solution.py"),
        ("examples/javascript/solution.mjs", "solution.mjs"),
    ] {
        let class = dir.path().join(file);
        let source = std::fs::read_to_string(root.join(example)).expect("the example");
        for i in 0..CLASS {
            let folder = class.join(format!("s{i:02}"));
            std::fs::create_dir_all(&folder).expect("a submission folder");
            // A line apart, so that no cache serves one for another.
            let comment = if file.ends_with(".py") { "#" } else { "//" };
            std::fs::write(folder.join(file), format!("{source}\n{comment} {i}\n"))
                .expect("a submission");
        }
        let (mut warm, mut cold, mut unboxed) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            let output = |what: &str| dir.path().join(format!("{file}-{what}-{round}"));
            warm.push(grade_class(
                root,
                &class,
                &output("warm"),
                &["--sandbox", "on"],
            ));
            cold.push(grade_class(
                root,
                &class,
                &output("cold"),
                &["--sandbox", "on", "--cold"],
            ));
            unboxed.push(grade_class(
                root,
                &class,
                &output("off"),
                &["--sandbox", "off"],
            ));
        }
        let ((warm, warm_cpu), (cold, cold_cpu), (unboxed, unboxed_cpu)) = (
            best_and_median(&warm),
            best_and_median(&cold),
            best_and_median(&unboxed),
        );
        println!(
            "  {file:<14} boxed {warm:>7.1} ms ({:.2}x)   boxed --cold {cold:>7.1} ms ({:.2}x)   off {unboxed:>7.1} ms",
            warm / unboxed,
            cold / unboxed
        );
        println!(
            "  {:<14} CPU, median: boxed {warm_cpu:>7.1} ms ({:.2}x)   boxed --cold {cold_cpu:>7.1} ms ({:.2}x)   off {unboxed_cpu:>7.1} ms",
            "",
            warm_cpu / unboxed_cpu,
            cold_cpu / unboxed_cpu
        );
    }
    println!("  (load average {} after)", load_average());
}

/// Submissions in the class `box_cost` grades.
const CLASS: usize = 24;

/// One `dlqspec grade` of `class` (a class folder) into `output` with `options`: its wall and
/// CPU time (the zygote's, which `grade` waits for, included).
fn grade_class(
    root: &std::path::Path,
    class: &std::path::Path,
    output: &std::path::Path,
    options: &[&str],
) -> Spent {
    let cpu = children_cpu();
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_dlqspec"))
        .current_dir(root)
        .args(["grade", "--jobs", "2", "--specs", "specs"])
        .args(options)
        .arg("--output")
        .arg(output)
        .arg(class)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("dlqspec grade runs");
    assert!(
        status.success(),
        "grade {options:?} of {} failed",
        class.display()
    );
    Spent {
        wall: started.elapsed().as_secs_f64() * 1e3,
        cpu: children_cpu() - cpu,
    }
}

/// The interpreter `python3` starts: pyenv's `python3` is a bash script that looks it up, a
/// start of its own that a run avoids with `DLQSPEC_PYTHON` naming the interpreter. As
/// `DLQSPEC_PYTHON` says it when set.
fn real_python() -> Vec<String> {
    if let Some(words) = std::env::var("DLQSPEC_PYTHON")
        .ok()
        .and_then(|line| shell_words::split(&line).ok())
        .filter(|words| !words.is_empty())
    {
        return words;
    }
    let asked = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    vec![String::from_utf8_lossy(&asked.stdout).trim().to_owned()]
}

/// The wall time of one run of `command` to its end, in ms; it must succeed.
fn timed(command: &mut Command) -> f64 {
    let started = Instant::now();
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("it runs");
    let took = started.elapsed().as_secs_f64() * 1e3;
    assert!(status.success(), "{command:?} failed: {status}");
    took
}

/// The load average over the last minute, as the system tells it.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Whole `dlqspec run specs` of the Python and Node examples against one bare start of the
/// interpreter plus the built-in run (issue #25's goal for Python: at most 1.3 times the bare
/// start, plus the built-in run).
fn run_against_bare_start(root: &std::path::Path) {
    let rounds = 9;
    let python = real_python();
    let dlqspec = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dlqspec"));
        command
            .current_dir(root)
            .env("DLQSPEC_PYTHON", shell_words::join(&python))
            .env_remove("DLQSPEC_PROTOCOL_LOG");
        command
    };
    println!(
        "whole dlqspec run of the bundled suite against a bare start of its interpreter, best of {rounds} (load average {})",
        load_average()
    );
    for (solution, bare) in [
        (
            "python:examples/python/solution.py",
            python
                .iter()
                .map(String::as_str)
                .chain(["-c", "pass"])
                .collect::<Vec<_>>(),
        ),
        (
            "node:examples/javascript/solution.mjs",
            vec!["node", "-e", "0"],
        ),
    ] {
        // Alternated, so that a change in the machine's load touches all three alike.
        let (mut run, mut start, mut builtin) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
        for _ in 0..rounds {
            run = run.min(timed(
                dlqspec().args(["run", "--quiet", "specs", "--impl", solution]),
            ));
            start = start.min(timed(Command::new(bare[0]).args(&bare[1..])));
            builtin = builtin.min(timed(dlqspec().args(["run", "--quiet", "specs"])));
        }
        let goal = 1.3 * start + builtin;
        println!(
            "  {solution:<38} run {run:>6.1} ms   bare start {start:>5.1} ms + built-in run {builtin:>4.1} ms: {:.2}x; the shim's part over the built-in run {:.2}x the bare start (goal 1.3x: {goal:.0} ms, {})",
            run / (start + builtin),
            (run - builtin) / start,
            if run <= goal { "met" } else { "missed" }
        );
    }
    println!("  (load average {} after)", load_average());
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // `cargo bench --bench external -- run`: only the part named.
    let only = std::env::args().skip(1).find(|arg| !arg.starts_with("--"));
    let wanted = |part: &str| only.as_deref().is_none_or(|only| only == part);
    if wanted("run") {
        run_against_bare_start(&root);
    }
    if wanted("box") {
        box_cost(&root);
    }
    if !wanted("calls") {
        return;
    }
    let fixtures = root.join("shims/tests/fixtures");
    let rounds = 5;
    println!(
        "world calls in one request ({CALLS} queue.pending calls), µs per call, best of {rounds}"
    );
    println!(
        "  wall time, and in parentheses CPU time: the shim's + the peer's (the lean peer or dlqspec)"
    );
    let cpu = |r: &PerCall| match (r.shim_cpu, r.peer_cpu) {
        (Some(shim), Some(peer)) => format!("({shim:>5.1} + {peer:>4.1})"),
        _ => "(CPU n/a)".to_owned(),
    };
    for (language, program, shim, fixture) in [
        (
            "python",
            "python3",
            "shims/python/dlqspec_shim.py",
            "probe.py",
        ),
        ("node", "node", "shims/node/dlqspec-shim.mjs", "probe.mjs"),
    ] {
        let shim = root.join(shim);
        let fixture = fixtures.join(fixture);
        let leanly: Vec<PerCall> = (0..rounds)
            .map(|_| lean(program, &shim, &fixture))
            .collect();
        let through: Vec<PerCall> = (0..rounds)
            .map(|_| through_dlqspec(&format!("{language}:{}", fixture.display())))
            .collect();
        let (leanly, through) = (PerCall::best(&leanly), PerCall::best(&through));
        let by_cpu = match (leanly.cpu(), through.cpu()) {
            (Some(lean), Some(through)) => format!(", {:.1}% by CPU", 100.0 * lean / through),
            _ => String::new(),
        };
        println!(
            "  {language:<6}  answered leanly {:>5.1} µs {}   through dlqspec {:>5.1} µs {}   {:>5.1}% of the lean rate{by_cpu}",
            leanly.wall,
            cpu(&leanly),
            through.wall,
            cpu(&through),
            100.0 * leanly.wall / through.wall,
        );
    }
}
