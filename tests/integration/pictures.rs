//! `explain --format html` (a scenario drawn as an SVG sequence diagram), `explain --impl`'s
//! marks on each decision, and `grade`'s pictures of a failing submission, on the real binary.

use std::path::Path;

use crate::common::{assert_contains_all, path_arg, run, temp_spec};

/// `explain ARGS --format html --output FILE`: the exit code and the page written.
fn drawn(args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("picture.html");
    let mut all = vec!["explain"];
    all.extend(args);
    all.extend(["--format", "html", "--output", path_arg(&file)]);
    let ran = run(&all);
    assert!(
        ran.stdout.is_empty(),
        "a page went to stdout:\n{}",
        ran.stdout
    );
    let page = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("no page written ({e}):\n{}{}", ran.stdout, ran.stderr));
    (ran.code, page)
}

/// The page's SVG, from `<svg id="explain"` to its end.
fn svg(page: &str) -> &str {
    let start = page
        .find("<svg id=\"explain\"")
        .expect("an svg with id explain");
    let end = page[start..].find("</svg>").expect("the svg ends") + start;
    &page[start..end]
}

/// What a self-contained page never holds: a script, anything fetched, a link out.
fn assert_self_contained(page: &str) {
    for needle in ["<script", "src=", "http:", "https:", "@import", "<link"] {
        assert!(!page.contains(needle), "{needle} in:\n{page}");
    }
}

#[test]
fn explain_draws_a_dlq_consumer_scenario_on_its_four_lanes() {
    let (code, page) = drawn(&["specs/dlq-consumer/poison-cycle.yaml"]);
    assert_eq!(code, 0, "{page}");
    assert_self_contained(&page);
    let svg = svg(&page);
    for lane in ["queue", "consumer", "handler", "dlq"] {
        assert!(
            svg.contains(&format!("<g class=\"lane\" id=\"lane-{lane}\"")),
            "no lane {lane}:\n{svg}"
        );
    }
    assert_eq!(svg.matches("<g class=\"lane\"").count(), 4, "{svg}");
    for needle in [
        // Each delivery with its receive count, from the queue to the consumer.
        "<g class=\"call tone-delivery\" data-from=\"queue\" data-to=\"consumer\"><text x=\"185\" y=\"",
        ">p (receive_count 3)</text>",
        // The handler's crash, a mark on its lane; the recover, restart and clock steps.
        "<g class=\"mark tone-crash\"><path",
        ">CRASH: handler(p) crashes the process</text>",
        "<g class=\"step step-recover\">",
        "<g class=\"step step-restart\">",
        "<g class=\"step step-advance\">",
        // The dead-lettering, from the consumer to the DLQ.
        "<g class=\"call tone-dead\" data-from=\"consumer\" data-to=\"dlq\">",
        ">put(p) poison</text>",
        "<g class=\"check ok\">",
    ] {
        assert!(svg.contains(needle), "missing {needle:?} in:\n{svg}");
    }
    assert!(!svg.contains("difference"), "{svg}");
    assert!(page.contains(
        "<span id=\"verdict\" class=\"verdict pass\">PASS: every expectation holds</span>"
    ));
    // The same run draws the same page.
    let (_, again) = drawn(&["specs/dlq-consumer/poison-cycle.yaml"]);
    assert_eq!(page, again);
}

#[test]
fn explain_marks_where_a_broken_dlq_consumer_parts_ways_with_the_spec() {
    let (code, page) = drawn(&[
        "specs/dlq-consumer/exhausted-at-max-attempts.yaml",
        "--impl",
        "python:tests/solutions/dlq_off_by_one.py",
    ]);
    assert_eq!(code, 1, "{page}");
    assert_self_contained(&page);
    let svg = svg(&page);
    assert_eq!(
        svg.matches("class=\"decision wrong difference\"").count(),
        1,
        "{svg}"
    );
    assert_eq!(page.matches("id=\"first-difference\"").count(), 1, "{svg}");
    for needle in [
        // The line wraps in its row, whole; the box below it says what was expected too.
        ">\u{2717} decision dlq-consumer/exhausted: the implementation did queue.retry(a); expected: dlq.put(a, reason=exhausted), then </tspan><tspan x=\"40\" dy=\"15\">queue.ack(a)</tspan></text>",
        "<text class=\"expected\" x=\"40\" y=\"",
        ">expected: dlq.put(a, reason=exhausted), then queue.ack(a)</text>",
        ">actual:   queue.retry(a)</text>",
        // Later differences are red, but not the first.
        "<g class=\"check differs\"><text",
        "<g class=\"decision ok\"><text",
    ] {
        assert!(svg.contains(needle), "missing {needle:?} in:\n{svg}");
    }
    assert!(
        page.contains("implementation <span id=\"implementation\">python:tests/solutions/dlq_off_by_one.py</span>"),
        "{page}"
    );
    assert!(page.contains("class=\"verdict fail\">FAIL: 4 checked values differ</span>"));
}

#[test]
fn explain_draws_an_outcome_queue_scenario_with_its_lists_after_each_step() {
    let (code, page) = drawn(&["specs/outcome-queue/quarantine-is-sticky.yaml"]);
    assert_eq!(code, 0, "{page}");
    assert_self_contained(&page);
    let svg = svg(&page);
    // The lanes are the test and the class exercise.yaml names; the lists, the state view's.
    for lane in ["test", "retryqueue"] {
        assert!(
            svg.contains(&format!("<g class=\"lane\" id=\"lane-{lane}\"")),
            "{svg}"
        );
    }
    for list in ["ready", "done", "quarantine"] {
        assert!(
            svg.contains(&format!("<g class=\"lane list-head\" id=\"lane-{list}\"")),
            "{svg}"
        );
    }
    for needle in [
        "<g class=\"call tone-plain\" data-from=\"test\" data-to=\"retryqueue\"><text",
        ">process(transient) -&gt; dead</text>",
        "<g class=\"list list-of-quarantine\"><rect",
        // Each list after each call, an entry by its id.
        ">ready: a, b</text>",
        ">quarantine: a</text>",
        ">quarantine: a, b</text>",
    ] {
        assert!(svg.contains(needle), "missing {needle:?} in:\n{svg}");
    }
    assert!(!svg.contains("difference"), "{svg}");
}

#[test]
fn explain_marks_where_a_broken_outcome_queue_parts_ways_with_the_spec() {
    let (code, page) = drawn(&[
        "specs/outcome-queue/permanent-on-the-first-attempt.yaml",
        "--impl",
        "python:tests/solutions/oq_permanent_retried.py",
    ]);
    assert_eq!(code, 1, "{page}");
    let svg = svg(&page);
    assert_eq!(svg.matches("id=\"first-difference\"").count(), 1, "{svg}");
    // The answer that differs is the first difference, with what was expected below it; the
    // step where the solution parts ways with the reference says so, and why.
    for needle in [
        "<g class=\"check differs difference\" id=\"first-difference\"><rect",
        ">\u{2717} returns: expected dead, got retry</text>",
        ">expected: dead</text>",
        ">actual:   retry</text>",
        "<g class=\"step step-call departure\" id=\"departure\"><rect",
        ">process(permanent) -&gt; retry</text>",
        "\u{2717} here yours departs from the reference: at step 4",
        // The lists show the job back in ready, not in quarantine.
        ">ready: b, a</text>",
        // The final expect's lists differ too, in red but not as the first difference.
        "<g class=\"check differs\"><",
    ] {
        assert!(svg.contains(needle), "missing {needle:?} in:\n{svg}");
    }
}

#[test]
fn a_hostile_id_is_drawn_escaped_and_cut() {
    let long = "x".repeat(400);
    let text = format!(
        "contract: dlq-consumer\nname: \"<b>\\e[2J</b>\"\nmessages: [{{id: \"<img src=y>\\e]0;t\\u0007\", body: b}}, {{id: {long}, body: c}}]\nhandler: {{\"<img src=y>\\e]0;t\\u0007\": [ok], {long}: [ok]}}\nsteps:\n  - process: ok\n  - process: ok\n"
    );
    let (_dir, path) = temp_spec("hostile.yaml", &text);
    let (code, page) = drawn(&[path_arg(&path)]);
    assert_eq!(code, 0, "{page}");
    assert!(
        !page.contains('\u{1b}') && !page.contains('\u{7}'),
        "{page}"
    );
    assert!(!page.contains("<img") && !page.contains("<b>"), "{page}");
    assert!(
        page.contains("<h1 id=\"spec-name\">&lt;b&gt;\\x1b[2J&lt;/b&gt;</h1>"),
        "{page}"
    );
    let svg = svg(&page);
    // An arrow's label is cut to the room between its lanes.
    assert!(
        svg.contains(">&lt;img src=y&gt;\\x1b]0;t\\x07\u{2026}</text>"),
        "{svg}"
    );
    // A long id is cut where its row ends, an ellipsis saying so.
    assert!(!svg.contains(&"x".repeat(200)), "{svg}");
    assert!(svg.contains("xx\u{2026}</text>"), "{svg}");
}

#[test]
fn explain_output_goes_through_the_atomic_writer_and_never_into_a_folder() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ran = run(&[
        "explain",
        "specs/dlq-consumer/poison-cycle.yaml",
        "--format",
        "html",
        "--output",
        path_arg(dir.path()),
    ]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stderr.contains("cannot write"), "{}", ran.stderr);
    // Without --output the page is the standard output.
    let ran = run(&[
        "explain",
        "specs/dlq-consumer/poison-cycle.yaml",
        "--format",
        "html",
    ]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(ran.stdout.starts_with("<!DOCTYPE html>\n") && ran.stdout.ends_with("</html>\n"));
}

#[test]
fn explain_impl_marks_each_decision_and_states_nothing_that_did_not_happen() {
    let ran = run(&[
        "explain",
        "specs/dlq-consumer/exhausted-at-max-attempts.yaml",
        "--impl",
        "python:tests/solutions/dlq_off_by_one.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert_contains_all(
        &ran.stdout,
        [
            "    rule dlq-consumer/transient-retry: receive_count 1 < max_attempts 3: retry a to the ready tail\n    \u{2713} decision dlq-consumer/transient-retry: the implementation did queue.retry(a)\n",
            "    queue.retry(a): a goes to the ready tail\n    rule dlq-consumer/poison: receive_count 3 = max_attempts 3: not poison yet, the handler decides\n",
            "    \u{2717} decision dlq-consumer/exhausted: the implementation did queue.retry(a); expected: dlq.put(a, reason=exhausted), then queue.ack(a)\n    \u{2717} process: expected dead, got retry\n",
            "    rule dlq-consumer/poison: receive_count 4 > max_attempts 3: a is past its budget (this implementation retried it at receive_count 3), so it is dead-lettered as poison without calling the handler\n",
            "    \u{2713} decision dlq-consumer/poison: the implementation did dlq.put(a), queue.ack(a)\n",
        ],
        "",
    );
    assert!(
        !ran.stdout.contains("every earlier delivery"),
        "{}",
        ran.stdout
    );
    // The built-in implementation is the rules: its decisions are not marked.
    let builtin = run(&[
        "explain",
        "specs/dlq-consumer/exhausted-at-max-attempts.yaml",
    ]);
    assert_eq!(builtin.code, 0, "{}", builtin.stdout);
    assert!(!builtin.stdout.contains("decision "), "{}", builtin.stdout);
}

#[test]
fn explain_impl_marks_a_dead_lettering_with_a_wrong_entry_wrong() {
    // The right calls, put then ack, with the wrong reason: the budget checked before the
    // error's class makes a PermanentError on the last attempt `exhausted`.
    let spec = "specs/dlq-consumer/permanent-on-the-last-attempt-stays-permanent.yaml";
    let impl_ = "python:tests/solutions/dlq_permanent_last_is_exhausted.py";
    let ran = run(&["explain", spec, "--impl", impl_]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let wrong = "    \u{2717} decision dlq-consumer/permanent: the implementation did dlq.put(a, reason=exhausted), queue.ack(a); expected: dlq.put(a, reason=permanent), then queue.ack(a)\n";
    assert_contains_all(&ran.stdout, [wrong], "");
    assert!(
        !ran.stdout
            .contains("\u{2713} decision dlq-consumer/permanent"),
        "{}",
        ran.stdout
    );
    // Every field the contract pins is judged: here the error, the first one seen.
    let ran = run(&[
        "explain",
        "specs/dlq-consumer/exhausted-at-max-attempts.yaml",
        "--impl",
        "python:tests/solutions/dlq_error_first_seen.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let wrong = "    \u{2717} decision dlq-consumer/exhausted: the implementation did dlq.put(a, error=\"TransientError: db timeout\"), queue.ack(a); expected: dlq.put(a, reason=exhausted, error=\"TransientError: connection reset\"), then queue.ack(a)\n";
    assert_contains_all(&ran.stdout, [wrong], "");
    // The picture marks it where the text does.
    let (code, page) = drawn(&[spec, "--impl", impl_]);
    assert_eq!(code, 1, "{page}");
    let svg = svg(&page);
    for needle in [
        "<g class=\"decision wrong difference\" id=\"first-difference\">",
        ">expected: dlq.put(a, reason=permanent), then queue.ack(a)</text>",
        ">actual:   dlq.put(a, reason=exhausted), queue.ack(a)</text>",
    ] {
        assert!(svg.contains(needle), "missing {needle:?} in:\n{svg}");
    }
}

#[test]
fn explain_impl_marks_an_ack_before_the_put_wrong_when_a_crash_cuts_it_short() {
    let text = "contract: dlq-consumer\nname: a crash right after the dead-letter ack\nmessages:\n  - {id: a, body: bad-price}\nhandler:\n  a: [permanent: negative price]\nsteps:\n  - fault: {crash: after, call: queue.ack}\n  - process: crash\n";
    let (_dir, path) = temp_spec("ack-crash.yaml", text);
    let impl_ = "python:tests/solutions/dlq_ack_before_put.py";
    let ran = run(&["explain", path_arg(&path), "--impl", impl_]);
    // The spec checks no more than the crash, which this implementation gets right.
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_contains_all(
        &ran.stdout,
        [
            "    \u{2717} decision dlq-consumer/dead-letter-sequence: the implementation called queue.ack(a), then the crash injected after queue.ack killed the process: a is acked and never put, so it is lost; expected: dlq.put(a, reason=permanent), then queue.ack(a)\n",
            // Acked, the message is not in flight any more: the crash line does not say it is.
            "    rule dlq-consumer/crash-propagates: the crash injected at queue.ack propagates out of process_one: the dead-lettering of a never happens, and a, acked already, is no longer in flight\n",
        ],
        "",
    );
    assert!(!ran.stdout.contains("a stays in flight"), "{}", ran.stdout);
    let (_, page) = drawn(&[path_arg(&path), "--impl", impl_]);
    let svg = svg(&page);
    for needle in [
        "<g class=\"decision wrong difference\" id=\"first-difference\">",
        ">expected: dlq.put(a, reason=permanent), then queue.ack(a)</text>",
    ] {
        assert!(svg.contains(needle), "missing {needle:?} in:\n{svg}");
    }
    // A crash before the ack stops the call, not the mistake of making it first.
    let ran = run(&[
        "explain",
        "specs/dlq-consumer/crash-before-ack-keeps-the-entry.yaml",
        "--impl",
        impl_,
    ]);
    let line = "    \u{2717} decision dlq-consumer/dead-letter-sequence: the implementation called queue.ack(a), and the crash injected before queue.ack stopped that call: queue.ack(a) came before any dlq.put(a), which loses a if the process dies between the two; expected: dlq.put(a, reason=permanent), then queue.ack(a)\n";
    assert_contains_all(&ran.stdout, [line], "");
    // The built-in implementation puts first: its cut-short decision is not marked.
    let builtin = run(&["explain", path_arg(&path)]);
    assert_eq!(builtin.code, 0, "{}", builtin.stdout);
    assert!(!builtin.stdout.contains("decision "), "{}", builtin.stdout);
}

#[test]
fn explain_impl_marks_a_replay_that_keeps_the_reason_wrong() {
    let ran = run(&[
        "explain",
        "specs/outcome-queue/replay-gives-a-fresh-budget.yaml",
        "--impl",
        "python:tests/solutions/oq_replay_keeps_reason.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    // The replay answered true, as pinned; the job it put back still has its reason, which
    // the cause names as the replay's, in the solution's own values.
    assert_contains_all(
        &ran.stdout,
        [
            "    \u{2717} ready: expected [{id: a, payload: invoice-3, attempts: 0}], got [{id: a, payload: invoice-3, attempts: 0, reason: exhausted}]\n",
            "  rule broken: outcome-queue/replay-resets\n",
            "  cause: at step 5 `{replay: {id: a, returns: true}}`: after replay, state.ready holds {id: a, payload: invoice-3, attempts: 0} in the reference where yours holds {id: a, payload: invoice-3, attempts: 0, reason: exhausted}\n",
            "  a known mistake: leaves the old reason on a replayed job\n",
        ],
        "",
    );
}

#[test]
fn explain_impl_tells_the_validation_the_spec_pins_not_the_queues_answer_as_the_rule() {
    // Python's True is an int: this queue accepts it, where the rule refuses it.
    let ran = run(&[
        "explain",
        "specs/outcome-queue/max-attempts-boolean-is-rejected.yaml",
        "--impl",
        "python:tests/solutions/oq_bool_budget.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert_contains_all(
        &ran.stdout,
        [
            "    RetryQueue(true) -> a new instance\n",
            "    rule outcome-queue/max-attempts-validated: RetryQueue(max_attempts) raises ValueError",
            "    RetryQueue(false) -> raised ValueError: max_attempts must be an integer >= 1\n",
            "  rule broken: outcome-queue/max-attempts-validated\n",
            "  cause: at step 1 `{create: {max_attempts: true, raises: invalid_argument}}`: create: the reference raises ValueError: max_attempts must be an integer >= 1, got True; yours makes an instance\n",
        ],
        "",
    );
    if !crate::common::node_tests() {
        return;
    }
    // A 32-bit check refuses a valid budget: the refusal is told as what the solution did, and
    // the reference's instance as what the rule wants.
    let ran = run(&[
        "explain",
        "specs/outcome-queue/max-attempts-beyond-32-bits.yaml",
        "--impl",
        "node:tests/solutions/oq_bitwise_int.mjs",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert_contains_all(
        &ran.stdout,
        [
            "    RetryQueue(3000000000) -> raised RangeError: maxAttempts must be an integer >= 1\n",
            "  cause: at step 1 `{create: {max_attempts: 3000000000}}`: create: the reference makes an instance; yours raises RangeError: maxAttempts must be an integer >= 1\n",
        ],
        "",
    );
}

/// The files under `dir`, relative to it, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let relative = path.strip_prefix(dir).expect("under dir");
                files.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    files
}

#[test]
fn grade_draws_a_failing_submissions_failing_specs_and_links_only_those_written() {
    let class = tempfile::tempdir().expect("temp dir");
    let root = crate::common::root();
    for (folder, source) in [
        ("alice", "examples/python/solution.py"),
        ("bob", "tests/solutions/dlq_off_by_one.py"),
    ] {
        let dir = class.path().join(folder);
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::copy(root.join(source), dir.join("solution.py")).expect("copy");
    }
    let out = class.path().join("grades");
    let specs = [
        "specs/dlq-consumer/exhausted-at-max-attempts.yaml",
        "specs/dlq-consumer/success-acks-and-returns-ok.yaml",
        "specs/dlq-consumer/not-exhausted-one-before-max-attempts.yaml",
    ];
    let mut args = vec!["grade"];
    for spec in specs {
        args.extend(["--specs", spec]);
    }
    let (alice, bob) = (class.path().join("alice"), class.path().join("bob"));
    args.extend(["--output", path_arg(&out), "--budget", "60"]);
    args.extend([path_arg(&alice), path_arg(&bob)]);
    let ran = run(&args);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let pictures: Vec<String> = files_under(&out)
        .into_iter()
        .filter(|file| file.contains("/explain/"))
        .collect();
    // Only the spec bob fails is drawn; alice fails none.
    assert_eq!(
        pictures,
        ["bob/explain/specs.dlq-consumer.exhausted-at-max-attempts.html"],
        "{}{}",
        ran.stdout,
        ran.stderr
    );
    let page = std::fs::read_to_string(out.join(&pictures[0])).expect("the picture");
    assert!(page.contains("id=\"first-difference\""), "{page}");
    assert!(
        page.contains("<span id=\"implementation\">python:"),
        "{page}"
    );
    // The summary links each picture written, and nothing else under a submission's folder.
    let summary = std::fs::read_to_string(out.join("summary.html")).expect("summary.html");
    let links: Vec<&str> = summary
        .split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|href| href.contains("/explain/"))
        .collect();
    assert_eq!(links, [pictures[0].as_str()], "{summary}");
    assert!(summary.contains(
        " title=\"specs/dlq-consumer/exhausted-at-max-attempts.yaml\">picture of exhausted-at-max-attempts</a>"
    ));
    let json = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    assert!(json.contains("\"pictures\": [\n        \"specs/dlq-consumer/exhausted-at-max-attempts.yaml\"\n      ]"), "{json}");
}

#[test]
fn explain_impl_states_the_outcome_queue_rule_the_spec_pins_not_what_the_queue_did() {
    let ran = run(&[
        "explain",
        "specs/outcome-queue/permanent-after-a-transient.yaml",
        "--impl",
        "python:tests/solutions/oq_permanent_retried.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let step = ran
        .stdout
        .split("step 4 (line 12): ")
        .nth(1)
        .and_then(|rest| rest.split("\nfinal expect").next())
        .expect("step 4 is told");
    // The queue retried a permanent failure: the rules told are those the spec's step pins
    // (`permanent`, `dead`), not those of what the queue did (`retry`), and the answer that
    // differs is marked.
    for line in [
        "    process(permanent) -> retry\n",
        "      ready: [a]; done: []; quarantine: []\n",
        "    rule outcome-queue/permanent-quarantine: permanent quarantines the job with reason \"permanent\", whatever budget is left, and returns \"dead\".\n",
        "    rule outcome-queue/attempt-counted-first: ",
        "    \u{2717} returns: expected dead, got retry",
    ] {
        assert!(step.contains(line), "missing {line:?} in:\n{step}");
    }
    assert!(!step.contains("transient-retry-tail"), "{step}");
    // The built-in reference's run tells the same rule at the same step, and nothing differs.
    let builtin = run(&[
        "explain",
        "specs/outcome-queue/permanent-after-a-transient.yaml",
    ]);
    assert_eq!(builtin.code, 0, "{}", builtin.stdout);
    assert!(
        builtin.stdout.contains(
            "    rule outcome-queue/permanent-quarantine: permanent quarantines the job with reason \"permanent\", whatever budget is left, and returns \"dead\".\n"
        ),
        "{}",
        builtin.stdout
    );
    assert!(!builtin.stdout.contains('\u{2717}'), "{}", builtin.stdout);
}

#[test]
fn grade_writes_pictures_through_no_link_and_removes_only_its_own_stale_ones() {
    let class = tempfile::tempdir().expect("temp dir");
    let root = crate::common::root();
    for folder in ["bob", "carol"] {
        let dir = class.path().join(folder);
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::copy(
            root.join("tests/solutions/dlq_off_by_one.py"),
            dir.join("solution.py"),
        )
        .expect("copy");
    }
    let out = class.path().join("grades");
    // bob's folder in the output is a link planted to a folder outside it; carol's holds the
    // picture of a spec an earlier grading drew, and files that are not grade's.
    let elsewhere = class.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    std::fs::create_dir_all(out.join("carol/explain")).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, out.join("bob")).expect("symlink");
    let stale = out.join("carol/explain/specs.dlq-consumer.gone.html");
    std::fs::write(&stale, "an earlier grading's").expect("write");
    let notes = out.join("carol/explain/notes.txt");
    std::fs::write(&notes, "the teacher's").expect("write");
    let hidden = out.join("carol/explain/.draft.html");
    std::fs::write(&hidden, "the teacher's").expect("write");
    let spec = "specs/dlq-consumer/exhausted-at-max-attempts.yaml";
    let (bob, carol) = (class.path().join("bob"), class.path().join("carol"));
    let ran = run(&[
        "grade",
        "--specs",
        spec,
        "--output",
        path_arg(&out),
        "--budget",
        "60",
        path_arg(&bob),
        path_arg(&carol),
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let told = format!("{}{}", ran.stdout, ran.stderr);
    assert!(
        files_under(&elsewhere).is_empty(),
        "written through the link: {:?}\n{told}",
        files_under(&elsewhere)
    );
    assert!(
        std::fs::symlink_metadata(out.join("bob"))
            .expect("the link")
            .is_symlink()
    );
    // bob's row says why it has no picture.
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    let bob_row = csv.lines().find(|l| l.contains("/bob")).expect("bob's row");
    assert!(bob_row.contains("is a symbolic link"), "{csv}");
    assert_eq!(
        files_under(&out.join("carol")),
        [
            "explain/.draft.html",
            "explain/notes.txt",
            "explain/specs.dlq-consumer.exhausted-at-max-attempts.html",
        ],
        "{told}"
    );
    assert!(!stale.exists());
}
