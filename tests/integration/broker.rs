//! The same specs on a real broker (`--world amqp://...`): RabbitMQ on 127.0.0.1:5672, which
//! `.ci/run` installs and starts. Without one, the broker tier is skipped, and the run says so
//! at its end with how to start one; in CI (`CI` set) a missing broker is a failure. The tests
//! take turns, those of every test process on the machine (one stops the broker, and two
//! `cargo test` at once share it), and each ends with no queue of dlqspec's left on it.

use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use crate::common::{Ran, Tier, root, run, suite_of, tier_lacking};

const QUORUM: &str = "amqp://guest:guest@127.0.0.1:5672/%2f?queue-type=quorum";
const CLASSIC: &str = "amqp://guest:guest@127.0.0.1:5672/%2f?queue-type=classic";
/// The same queues, the broker dead-letters by itself too.
const QUORUM_DLX: &str =
    "amqp://guest:guest@127.0.0.1:5672/%2f?queue-type=quorum&dead-letter=broker";
const CLASSIC_DLX: &str =
    "amqp://guest:guest@127.0.0.1:5672/%2f?queue-type=classic&dead-letter=broker";

/// The tests on the broker of this test process, one at a time.
static TURN: Mutex<()> = Mutex::new(());

/// One test's turn on the broker: this process's, and the machine's (a lock on a file every
/// test process of the machine takes), held until dropped.
pub(crate) struct Turn {
    _process: MutexGuard<'static, ()>,
    _machine: std::fs::File,
}

/// The broker's turn, for a test elsewhere that runs a command on it; `None` when no broker
/// listens on 127.0.0.1:5672 (the broker tests say so, and fail in CI).
pub(crate) fn turn() -> Option<Turn> {
    let process = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // The machine's turn before the broker is asked: a test of another process may have
    // stopped it for its own turn, and starts it again before that turn ends.
    let path = std::env::temp_dir().join("dlqspec-broker-tests.lock");
    // Made by whoever comes first; another user's run locks it read-only.
    let machine = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .or_else(|_| std::fs::File::open(&path))
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    machine
        .lock()
        .unwrap_or_else(|error| panic!("lock {}: {error}", path.display()));
    let address = "127.0.0.1:5672".parse().expect("an address");
    std::net::TcpStream::connect_timeout(&address, std::time::Duration::from_secs(5)).ok()?;
    Some(Turn {
        _process: process,
        _machine: machine,
    })
}

/// Runs `test` in the broker's turn, and checks that it left no queue of dlqspec's; when no
/// broker listens, the broker tier is skipped (in CI, a failure).
fn on_the_broker(test: impl FnOnce()) {
    let Some(_turn) = turn() else {
        tier_lacking(
            Tier::Broker,
            Some("no RabbitMQ at 127.0.0.1:5672".to_owned()),
        );
        return;
    };
    test();
    assert_no_queue_left();
}

/// `rabbitmqctl ARGS`, which must succeed.
fn rabbitmqctl(args: &[&str]) -> String {
    let output = Command::new("rabbitmqctl")
        .args(args)
        .output()
        .expect("rabbitmqctl runs");
    assert!(
        output.status.success(),
        "rabbitmqctl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The queues of dlqspec's on the broker.
fn dlqspec_queues() -> Vec<String> {
    rabbitmqctl(&["list_queues", "name", "--quiet", "--no-table-headers"])
        .lines()
        .map(str::trim)
        .filter(|name| name.starts_with("dlqspec."))
        .map(str::to_owned)
        .collect()
}

fn assert_no_queue_left() {
    assert_eq!(
        dlqspec_queues(),
        Vec::<String>::new(),
        "queues of dlqspec's left"
    );
}

/// `dlqspec ARGS --world WORLD`.
fn run_on(world: &str, args: &[&str]) -> Ran {
    let mut all = args.to_vec();
    all.extend(["--world", world]);
    run(&all)
}

/// `run_on` for a run that must exit 0 with nothing failed (a divergence fails nothing).
fn failing_nothing_on(world: &str, args: &[&str]) -> Ran {
    let ran = run_on(world, args);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains(" 0 failed"), "{}", ran.stdout);
    ran
}

/// The lines of a `--format json` report.
fn json_lines(ran: &Ran) -> Vec<serde_json::Value> {
    ran.stdout
        .lines()
        .filter(|line| line.starts_with('{'))
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// What a human report tells of the spec `specs/dlq-consumer/SPEC.yaml`, which must diverge:
/// from its `DIVRG` line to the next one.
fn divergence_of(ran: &Ran, spec: &str) -> String {
    ran.stdout
        .split(&format!("DIVRG specs/dlq-consumer/{spec}.yaml"))
        .nth(1)
        .and_then(|rest| rest.split("\nDIVRG ").next())
        .unwrap_or_else(|| panic!("{spec} diverges: {}", ran.stdout))
        .to_owned()
}

#[test]
fn the_builtin_and_the_python_example_part_from_the_fake_where_the_queue_type_does() {
    on_the_broker(|| {
        for implementation in ["builtin", "python:examples/python/solution.py"] {
            let suite = ["run", "specs/dlq-consumer", "--impl", implementation];
            let quorum = failing_nothing_on(QUORUM, &suite);
            assert!(
                quorum
                    .stdout
                    .contains("world: rabbitmq quorum at amqp://guest@127.0.0.1:5672/")
            );
            // A quorum queue counts deliveries and requeues to the tail, as the lesson's does.
            assert!(
                !quorum.stdout.contains("no-delivery-count"),
                "{}",
                quorum.stdout
            );
            assert!(
                !quorum.stdout.contains("requeue-at-head"),
                "{}",
                quorum.stdout
            );

            let classic = failing_nothing_on(CLASSIC, &suite);
            let tail = divergence_of(&classic, "transient-retried-to-the-tail");
            assert!(
                tail.lines()
                    .nth(2)
                    .is_some_and(|l| l.contains("broker property requeue-at-head")),
                "{tail}"
            );
            let budget = divergence_of(&classic, "exhausted-at-max-attempts");
            assert!(
                budget.contains("broker property no-delivery-count"),
                "{budget}"
            );
            assert!(classic.stdout.contains("diverged: "), "{}", classic.stdout);
        }
    });
}

#[test]
fn a_wrong_solution_fails_on_the_broker_apart_from_what_diverges() {
    on_the_broker(|| {
        let ran = run_on(
            CLASSIC,
            &[
                "run",
                "specs/dlq-consumer",
                "--impl",
                "python:tests/solutions/dlq_no_poison.py",
                "--format",
                "json",
                "--output",
                "-",
            ],
        );
        assert_eq!(ran.code, 1, "{}", ran.stderr);
        let lines = json_lines(&ran);
        let outcomes = |kind: &str| {
            lines
                .iter()
                .filter(|line| line["outcome"] == kind)
                .collect::<Vec<_>>()
        };
        assert!(
            !outcomes("mismatch").is_empty(),
            "the solution's own failures"
        );
        let diverged = outcomes("divergence");
        assert!(!diverged.is_empty());
        for line in &diverged {
            let property = &line["divergence"]["broker_properties"][0];
            assert!(
                property["id"].is_string() && property["first"].is_string(),
                "{line}"
            );
            assert!(line["divergence"]["world"].as_str().is_some_and(|world| {
                world.ends_with("queue-type=classic") && !world.contains(":guest@")
            }));
        }
        let started = &lines[0];
        assert_eq!(started["event"], "run_started");
        assert!(
            started["world"][0]
                .as_str()
                .is_some_and(|l| l.starts_with("world: rabbitmq classic"))
        );
        let finished = lines.last().expect("a last line");
        assert_eq!(finished["diverged"].as_u64(), Some(diverged.len() as u64));
    });
}

/// The dlq-consumer suite run on `world` (with `more` arguments) by a solution that, on its
/// `nth` construction, does `act` (Python) first: the example's consumer otherwise. Run with
/// `--sandbox off`, so that it can reach the broker's tools.
fn run_acting_on(world: &str, nth: usize, act: &str, more: &[&str]) -> Ran {
    let dir = tempfile::tempdir().expect("temp dir");
    let example = root().join("examples/python/solution.py");
    let path = dir.path().join("acting.py");
    let text = format!(
        "import importlib.util, os, signal, subprocess\n\
         _spec = importlib.util.spec_from_file_location('example', {example:?})\n\
         _example = importlib.util.module_from_spec(_spec)\n\
         _spec.loader.exec_module(_example)\n\
         RetryQueue = _example.RetryQueue\n\
         _made = [0]\n\
         class DLQConsumer(_example.DLQConsumer):\n\
         \x20   def __init__(self, *args, **kwargs):\n\
         \x20       super().__init__(*args, **kwargs)\n\
         \x20       _made[0] += 1\n\
         \x20       if _made[0] == {nth}:\n\
         \x20           {act}\n",
        example = example.display().to_string()
    );
    std::fs::write(&path, text).expect("write the solution");
    let solution = format!("python:{}", path.display());
    let mut args = vec![
        "run",
        "specs/dlq-consumer",
        "--impl",
        &solution,
        "--sandbox",
        "off",
    ];
    args.extend(more);
    run_on(world, &args)
}

/// A run of the suite on `world` killed mid-spec, by a solution that kills the dlqspec that
/// runs it (its parent, with the box off).
fn killed_run_on(world: &str) {
    let killed = run_acting_on(
        world,
        2,
        "os.kill(os.getppid(), signal.SIGKILL); os._exit(0)",
        &[],
    );
    assert_ne!(killed.code, 0);
}

/// A run of one spec on `world` after a run that left queues: it passes, and deletes them.
fn the_next_run_on_deletes_what_was_left(world: &str) {
    failing_nothing_on(
        world,
        &["run", "specs/dlq-consumer/success-acks-and-returns-ok.yaml"],
    );
    assert_no_queue_left();
}

#[test]
fn a_broker_stopped_mid_run_stops_the_run_with_nothing_told_passed_under_it() {
    on_the_broker(|| {
        let ran = run_acting_on(
            QUORUM,
            4,
            "subprocess.run(['rabbitmqctl', 'stop_app'], capture_output=True, check=True)",
            &["--timeout", "120"],
        );
        rabbitmqctl(&["start_app"]);
        rabbitmqctl(&["await_startup"]);
        let all = suite_of("specs/dlq-consumer").len();
        assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stderr.contains(
                "the RabbitMQ broker at amqp://guest@127.0.0.1:5672/%2F?queue-type=quorum: "
            ),
            "{}",
            ran.stderr
        );
        let counts = ran.stdout.lines().last().expect("the closing count");
        let (passed, skipped) = {
            let number = |word: &str| {
                counts
                    .split(", ")
                    .find_map(|part| part.strip_suffix(word)?.trim().parse::<usize>().ok())
                    .unwrap_or(0)
            };
            (number(" passed"), number(" skipped"))
        };
        assert!(counts.contains(" 0 failed"), "{counts}");
        // The fourth consumer is made in the second, third or fourth spec: the spec it stopped
        // under and every one after are not run, and none is told passed that did not finish.
        assert!((1..=3).contains(&passed), "{counts}");
        assert_eq!(passed + skipped, all, "{counts}");
        assert!(
            ran.stdout.contains("not run: the broker failed"),
            "{}",
            ran.stdout
        );
        assert!(
            ran.stderr.contains(&format!(
                "the broker failed after {passed} of the run's {all} specs; {skipped} not run"
            )),
            "{}",
            ran.stderr
        );
        // The stopped spec's queue could not be deleted; the next run deletes it.
        the_next_run_on_deletes_what_was_left(QUORUM);
    });
}

#[test]
fn a_killed_run_leaves_a_queue_the_next_run_deletes() {
    on_the_broker(|| {
        killed_run_on(CLASSIC);
        assert!(
            !dlqspec_queues().is_empty(),
            "a killed run leaves its spec's queue"
        );
        the_next_run_on_deletes_what_was_left(CLASSIC);
    });
}

#[test]
fn a_broker_that_is_not_there_or_refuses_the_login_runs_nothing_and_exits_2() {
    // Nothing listens on port 1: no broker needed.
    let absent = run_on(
        "amqp://guest:pw-absent@127.0.0.1:1/",
        &["run", "specs/dlq-consumer"],
    );
    assert_eq!(absent.code, 2, "{}", absent.stdout);
    assert!(
        absent
            .stderr
            .contains("the RabbitMQ broker at amqp://guest@127.0.0.1:1/%2F: cannot connect"),
        "{}",
        absent.stderr
    );
    assert!(
        absent.stderr.contains("rabbitmq-server -detached"),
        "{}",
        absent.stderr
    );
    assert!(!absent.stdout.contains("PASS") && !absent.stderr.contains("pw-absent"));
    on_the_broker(|| {
        let refused = run_on(
            "amqp://guest:not-the-pw-7q@127.0.0.1:5672/",
            &["run", "specs/dlq-consumer"],
        );
        assert_eq!(refused.code, 2, "{}", refused.stdout);
        assert!(
            refused.stderr.contains("refused the credentials (403"),
            "{}",
            refused.stderr
        );
        assert!(!format!("{}{}", refused.stdout, refused.stderr).contains("not-the-pw-7q"));
        assert!(!refused.stdout.contains("PASS"), "{}", refused.stdout);
    });
}

#[test]
fn the_world_applies_to_dlq_consumer_specs_and_says_so_for_the_rest() {
    on_the_broker(|| {
        let ran = failing_nothing_on(
            QUORUM,
            &[
                "run",
                "specs/dlq-consumer/success-acks-and-returns-ok.yaml",
                "specs/outcome-queue",
            ],
        );
        let outcome_queue = suite_of("specs/outcome-queue").len();
        assert!(
            ran.stdout.contains(&format!("the {outcome_queue} outcome-queue specs ran as always (their queue is the implementation)")),
            "{}",
            ran.stdout
        );
        assert!(
            ran.stdout
                .contains("first_received_at: no RabbitMQ queue keeps")
        );
    });
}

#[test]
fn explain_on_the_broker_tells_where_it_parts_from_the_fake() {
    on_the_broker(|| {
        let ran = run_on(
            CLASSIC,
            &[
                "explain",
                "specs/dlq-consumer/transient-retried-to-the-tail.yaml",
            ],
        );
        assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stdout
                .contains("    \u{2717} pending: expected [b, a], got [a, b]\n"),
            "{}",
            ran.stdout
        );
        assert!(ran.stdout.contains(
            "broker: the ready queue is [a, b], where the lesson's is [b, a] (requeue-at-head"
        ));
        assert!(ran.stdout.contains("outcome: DIVERGES"), "{}", ran.stdout);
    });
}

/// The part of docs/brokers.md between `<!-- generated<marker>: begin -->` and its end.
fn generated_part(page: &str, marker: &str) -> String {
    let begin = format!("<!-- generated{marker}: begin -->\n");
    let end = format!("<!-- generated{marker}: end -->\n");
    page.split(&begin)
        .nth(1)
        .and_then(|rest| rest.split(&end).next())
        .unwrap_or_else(|| panic!("the page marks its generated part {begin}"))
        .to_owned()
}

/// What `dlqspec matrix specs/dlq-consumer` writes with `worlds`, the command as the page
/// shows it.
fn matrix_on(worlds: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = dir.path().join("matrix.md");
    let mut args = vec!["matrix", "specs/dlq-consumer"];
    for world in worlds {
        args.extend(["--world", world]);
    }
    args.extend(["--output", output.to_str().expect("utf-8")]);
    let ran = run(&args);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let shown: Vec<String> = worlds
        .iter()
        .map(|world| match *world {
            "fake" => "--world fake".to_owned(),
            world => format!("--world '{world}'"),
        })
        .collect();
    let command = format!(
        "dlqspec matrix specs/dlq-consumer {} --output matrix.md",
        shown.join(" ")
    );
    (
        command,
        std::fs::read_to_string(&output).expect("the matrix"),
    )
}

/// docs/brokers.md holds, between its markers, what the commands it shows write.
#[test]
fn the_brokers_page_holds_the_matrix_its_command_writes() {
    on_the_broker(|| {
        let page =
            std::fs::read_to_string(root().join("docs/brokers.md")).expect("docs/brokers.md");
        for (marker, worlds) in [
            ("", &["fake", QUORUM, CLASSIC][..]),
            (" (dead-letter=broker)", &[QUORUM_DLX, CLASSIC_DLX][..]),
        ] {
            let held = generated_part(&page, marker);
            let (command, written) = matrix_on(worlds);
            assert!(page.contains(&command), "the page shows `{command}`");
            assert!(
                held == written,
                "docs/brokers.md is not what `{command}` writes now: regenerate it"
            );
        }
        // Two matrices on one page: a link of one must not land in the other.
        let mut anchors = std::collections::BTreeSet::new();
        for anchor in page.split("<a id=\"").skip(1) {
            let id = anchor.split('"').next().unwrap_or_default();
            assert!(anchors.insert(id), "the anchor {id} is on the page twice");
        }
    });
}

#[test]
fn the_broker_dead_letters_an_exhausted_message_by_its_count_without_the_consumers_metadata() {
    on_the_broker(|| {
        let ran = run_on(
            QUORUM_DLX,
            &[
                "run",
                "specs/dlq-consumer/exhausted-at-max-attempts.yaml",
                "--format",
                "json",
                "--output",
                "-",
            ],
        );
        assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
        let finished = json_lines(&ran)
            .into_iter()
            .find(|line| line["event"] == "spec_finished")
            .expect("the spec's line");
        // The spec passes on the broker's queue: its DLQ is what diverges.
        assert_eq!(finished["outcome"], "divergence", "{finished}");
        let properties = &finished["divergence"]["broker_properties"];
        assert_eq!(properties.as_array().map(Vec::len), Some(1), "{finished}");
        assert_eq!(properties[0]["id"], "delivery-limit");
        let first = properties[0]["first"]
            .as_str()
            .expect("where it first showed");
        assert!(
            first.starts_with(
                "a: x-death says delivery_limit, count 1, from dlqspec.N.queue, and no reason, error, attempts or failed_at, where the lesson's entry says reason exhausted"
            ),
            "{first}"
        );
        assert!(first.ends_with("attempts 3, failed_at 4"), "{first}");
        // The two DLQs side by side: the broker's entry is its x-death, the lesson's fields gone.
        let details = finished["details"].as_str().expect("details");
        for line in [
            "first difference at the broker's dead letters (specs/dlq-consumer/exhausted-at-max-attempts.yaml:",
            "-  reason: exhausted\n",
            "-  attempts: 3\n",
            "-  failed_at: 4\n",
            "+  x-death:\n",
            "+    reason: delivery_limit\n",
            "+    queue: dlqspec.N.queue\n",
        ] {
            assert!(details.contains(line), "{line:?} in {details}");
        }
        // The run's header says how the broker dead-letters.
        assert!(
            ran.stdout.contains("dead-letter=broker: the queue dead-letters by itself to dlqspec.N.dead (x-delivery-limit max_attempts - 1"),
            "{}",
            ran.stdout
        );
    });
}

#[test]
fn the_suite_with_the_broker_dead_lettering_diverges_by_its_properties_and_fails_nothing() {
    on_the_broker(|| {
        let suite = ["run", "specs/dlq-consumer"];
        let quorum = failing_nothing_on(QUORUM_DLX, &suite);
        // A permanent error is the consumer's reject; a poison pill never reaches the poison check.
        assert!(
            divergence_of(&quorum, "permanent-on-the-first-delivery")
                .contains("broker property rejected")
        );
        let poison = divergence_of(&quorum, "poison-cycle");
        assert!(
            poison.contains("broker property dead-lettered-on-return"),
            "{poison}"
        );
        assert!(
            poison.contains("the broker dead-lettered p as it came back (x-death delivery_limit")
        );
        // A crash between put and ack leaves a state the broker never shows.
        let between = divergence_of(&quorum, "crash-before-ack-keeps-the-entry");
        assert!(
            between.contains("broker property atomic-dead-letter"),
            "{between}"
        );
        assert!(
            !quorum.stdout.contains("no-delivery-limit"),
            "{}",
            quorum.stdout
        );
        // A spec that dead-letters nothing holds alike.
        assert!(
            quorum
                .stdout
                .contains("PASS  specs/dlq-consumer/success-acks-and-returns-ok.yaml"),
            "{}",
            quorum.stdout
        );

        let classic = failing_nothing_on(CLASSIC_DLX, &suite);
        let exhausted = divergence_of(&classic, "max-attempts-one-exhausts-on-the-first-failure");
        assert!(
            exhausted.contains("broker property no-delivery-limit"),
            "{exhausted}"
        );
        assert!(exhausted.contains("x-death says rejected"), "{exhausted}");
        assert!(
            classic
                .stdout
                .contains("no delivery limit, which a classic queue does not have"),
            "{}",
            classic.stdout
        );
    });
}

#[test]
fn a_killed_run_that_had_the_broker_dead_letter_leaves_queues_the_next_run_deletes() {
    on_the_broker(|| {
        killed_run_on(QUORUM_DLX);
        let left = dlqspec_queues();
        assert!(
            left.iter().any(|name| name.ends_with(".dead"))
                && left.iter().any(|name| name.ends_with(".queue")),
            "a killed run leaves its spec's queue and dead-letter queue: {left:?}"
        );
        // The next run, of either mode, deletes both.
        the_next_run_on_deletes_what_was_left(QUORUM);
    });
}
