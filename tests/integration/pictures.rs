//! `explain --format html` (a scenario drawn as an SVG sequence diagram), `explain --impl`'s
//! marks on each decision, and `grade`'s pictures of a failing submission, on the real binary.

use std::path::Path;

use crate::common::{path_arg, run, temp_spec};

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
        "<g class=\"step recover\">",
        "<g class=\"step restart\">",
        "<g class=\"step advance\">",
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
        ">\u{2717} decision dlq-consumer/exhausted: the implementation did queue.retry(a); expected: dlq.put(a), then queue.ack(a)</text>",
        "<text class=\"expected\" x=\"40\" y=\"",
        ">expected: dlq.put(a), then queue.ack(a)</text>",
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
    for lane in ["test", "queue"] {
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
        "<g class=\"call tone-dead\" data-from=\"test\" data-to=\"queue\"><text",
        ">process(&quot;transient&quot;) -&gt; dead</text>",
        "<g class=\"list quarantine\"><rect",
        ">quarantine: a (exhausted)</text>",
        ">ready: a (0), b (0)</text>",
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
    assert!(
        svg.contains("<g class=\"check differs difference\" id=\"first-difference\">"),
        "{svg}"
    );
    assert!(svg.contains(">expected: dead</text>"), "{svg}");
    assert!(svg.contains(">actual:   retry</text>"), "{svg}");
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
    for line in [
        "    rule dlq-consumer/transient-retry: receive_count 1 < max_attempts 3: retry a to the ready tail\n    \u{2713} decision dlq-consumer/transient-retry: the implementation did queue.retry(a)\n",
        "    queue.retry(a): a goes to the ready tail\n    rule dlq-consumer/poison: receive_count 3 = max_attempts 3: not poison yet, the handler decides\n",
        "    \u{2717} decision dlq-consumer/exhausted: the implementation did queue.retry(a); expected: dlq.put(a), then queue.ack(a)\n    \u{2717} process: expected dead, got retry\n",
        "    rule dlq-consumer/poison: receive_count 4 > max_attempts 3: a is past its budget (this implementation retried it at receive_count 3), so it is dead-lettered as poison without calling the handler\n",
        "    \u{2713} decision dlq-consumer/poison: the implementation did dlq.put(a), queue.ack(a)\n",
    ] {
        assert!(
            ran.stdout.contains(line),
            "missing {line:?} in:\n{}",
            ran.stdout
        );
    }
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
    assert!(summary.contains(">specs/dlq-consumer/exhausted-at-max-attempts.yaml</a>"));
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
        .and_then(|rest| rest.split("\nstep ").next().or(Some(rest)))
        .expect("step 4 is told");
    // The queue retried a permanent failure: the rule told is the one for `permanent`, and
    // the check under it says what the queue did instead.
    assert!(
        step.contains(
            "    rule outcome-queue/permanent-quarantine: expected, not what this queue did: permanent: a is quarantined with reason permanent after 2 of 3 attempts, and process returns dead\n"
        ),
        "{step}"
    );
    assert!(
        step.contains("    \u{2717} process: expected dead, got retry\n"),
        "{step}"
    );
    assert!(!step.contains("transient-retry-tail"), "{step}");
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
