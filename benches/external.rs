//! Benchmark: world calls per second through dlqspec, as a share of what the shim itself does.
//!
//! The floor is the shim's own speed: this program plays dlqspec's part as leanly as it can
//! (blocking reads on the child's stdout, a canned answer to each world call) while the
//! probe fixture's `spin(n)` makes n `queue.pending()` calls in one request. Against it, the
//! same request through dlqspec's `ExternalImplementation` answering from a real world. The
//! ratio is the share of the lean rate dlqspec keeps (the goal is 90% or more), for the Python
//! and the Node shim. Run with `cargo bench --bench external`.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use dlqspec::contracts::dlq_consumer::world::World;
use dlqspec::external::launch;
use dlqspec::implementation::{Naming, Reply};

const CALLS: u64 = 20_000;

/// World calls per second of the shim answered by a minimal peer.
fn lean_rate(program: &str, shim: &PathBuf, fixture: &PathBuf) -> f64 {
    let mut child = Command::new(program)
        .arg(shim)
        .arg(fixture)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the shim starts");
    let mut to_shim = child.stdin.take().expect("stdin");
    let mut from_shim = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut ask = |request: Value, line: &mut String| {
        writeln!(to_shim, "{request}").expect("write");
        to_shim.flush().expect("flush");
        // `output` messages (what the fixture printed at import) come before the reply: skip them.
        loop {
            line.clear();
            from_shim.read_line(line).expect("read");
            if !line.contains("\"type\":\"output\"") {
                break;
            }
        }
    };
    ask(json!({"seq": 1, "type": "hello", "protocol": 1}), &mut line);
    ask(
        json!({"seq": 2, "type": "new", "contract": "dlq-consumer", "args": {}}),
        &mut line,
    );
    let started = Instant::now();
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
    let elapsed = started.elapsed();
    assert_eq!(n, CALLS, "the probe made every call: {line}");
    let _ = child.kill();
    let _ = child.wait();
    CALLS as f64 / elapsed.as_secs_f64()
}

/// World calls per second of the same request through dlqspec.
fn dlqspec_rate(target: &str) -> f64 {
    let target = launch::parse(target).expect("a target");
    let mut implementation = target.instantiate(Duration::from_secs(60));
    let mut world = World::new(Default::default(), Naming::Snake);
    implementation.begin_spec().expect("starts");
    let made = implementation.create("dlq-consumer", &json!({}), &mut world);
    assert!(matches!(made, Ok(Reply::Returned(_))), "{made:?}");
    let started = Instant::now();
    let reply = implementation.call("spin", &[json!(CALLS)], &mut world);
    let elapsed = started.elapsed();
    assert_eq!(reply, Ok(Reply::Returned(json!(CALLS))));
    CALLS as f64 / elapsed.as_secs_f64()
}

fn best(rounds: usize, mut rate: impl FnMut() -> f64) -> f64 {
    (0..rounds).map(|_| rate()).fold(0.0, f64::max)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fixtures = root.join("shims/tests/fixtures");
    println!("world calls per second in one request ({CALLS} queue.pending calls), best of 5");
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
        let lean = best(5, || lean_rate(program, &shim, &fixture));
        let through = best(5, || {
            dlqspec_rate(&format!("{language}:{}", fixture.display()))
        });
        println!(
            "  {language:<6}  shim answered leanly {lean:>8.0}/s   through dlqspec {through:>8.0}/s   {:>5.1}%",
            100.0 * through / lean
        );
    }
}
