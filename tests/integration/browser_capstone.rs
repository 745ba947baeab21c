//! The capstone's pages in a real, headless browser, as `browser.rs` checks the bundled
//! contract's: a class of lease-queue solutions graded (`dlqspec grade`) renders its page with
//! nothing on the console and no network resource, each student's verdict and the rule each
//! one-mistake solution breaks shown, every link opening a page that renders too; and
//! `explain --format html` of a lease-queue run draws its timeline, the given clock's lane
//! with the solution's calls of it and each `advance`.

use std::path::Path;

use crate::browser::{cells, rows, submission_name, submission_rows};
use crate::common::headless::{self, Dom};
use crate::common::{dlqspec, node_tests, path_arg, ran, root};

/// The exercise folder, from the root.
const EXERCISE: &str = "exercises/lease-queue";

/// A correct solution and a one-mistake one in Python; with Node, the same in JavaScript and
/// TypeScript. Each is `(where in the class, the file it is, the rule its mistake breaks)`.
fn class() -> Vec<(&'static str, &'static str, Option<&'static str>)> {
    let mut class = vec![
        ("alice/queue.py", "correct/queue_eager.py", None),
        (
            "bob/queue.py",
            "broken/fixed_backoff.py",
            Some("lease-queue/retry-clock"),
        ),
        (
            "carol/queue.py",
            "broken/forgets_lease_expiry.py",
            Some("lease-queue/lease-runs-out"),
        ),
    ];
    if node_tests() {
        class.extend([
            ("dave/queue.mjs", "correct/queue_derived.mjs", None),
            ("erin/queue.ts", "correct/queue.ts", None),
            (
                "frank/queue.mjs",
                "broken/any_worker_completes.mjs",
                Some("lease-queue/lease-runs-out"),
            ),
            (
                "grace/queue.ts",
                "broken/effects_by_job.ts",
                Some("lease-queue/success-done"),
            ),
        ]);
    }
    class
}

/// Copies `from` (a folder of files and folders) to `to`.
fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read the folder") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The rules of a row of the page's `#rows` table, by the rule each cell's title names, with
/// the cell's classes and mark: `(rule, "pass", "\u{2713}")`.
fn rule_cells(dom: &Dom, row: usize) -> Vec<(String, String, String)> {
    cells(dom, row)[5..]
        .iter()
        .map(|&cell| {
            let element = dom.get(cell);
            let title = element.attribute("title").unwrap_or_default();
            let (rule, verdict) = title.rsplit_once(": ").unwrap_or((title, ""));
            assert!(element.has_class("rule"), "{element:?}");
            (rule.to_owned(), verdict.to_owned(), element.words())
        })
        .collect()
}

#[test]
fn a_graded_lease_queue_class_renders_in_a_browser_with_each_verdict_and_broken_rule() {
    let Some(browser) = headless::browser() else {
        return;
    };
    let class = class();
    let folder = tempfile::tempdir().expect("temp dir");
    for (at, source, _) in &class {
        let file = folder.path().join(at);
        std::fs::create_dir_all(file.parent().expect("a folder")).expect("mkdir");
        std::fs::copy(
            root().join("tests/exercises/lease-queue").join(source),
            &file,
        )
        .expect("copy a solution");
    }
    // The exercise is copied beside the class, so the page names its specs as a teacher typed
    // them and no path of this machine appears in it.
    copy_folder(&root().join(EXERCISE), &folder.path().join("lease-queue"));
    let who: Vec<&str> = class
        .iter()
        .map(|(at, _, _)| at.split_once('/').map_or(*at, |(who, _)| who))
        .collect();
    let graded = ran(dlqspec()
        .current_dir(folder.path())
        .args([
            "grade",
            "--jobs",
            "2",
            "--specs",
            "lease-queue",
            "--output",
            "grades",
        ])
        .args(&who)
        .output()
        .expect("dlqspec runs"));
    assert_eq!(graded.code, 1, "{}{}", graded.stdout, graded.stderr);
    let out = folder.path().join("grades");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("summary.json is JSON");
    let expected_rows = summary["rows"].as_array().expect("rows");
    let expected_rules = summary["rules"].as_object().expect("rules");
    assert_eq!(expected_rows.len(), class.len());
    assert_eq!(expected_rules.len(), 15, "{expected_rules:?}");

    let page = headless::render(&browser, &out.join("summary.html"), false);
    page.assert_clean("the lease-queue class's summary.html");
    let dom = &page.dom;

    // The headings: the exercise's name over its rules, each by its short name.
    let table = dom.by_id("rows");
    let all_rows = rows(dom, table);
    let words = |row: usize| -> Vec<String> {
        cells(dom, row)
            .iter()
            .map(|&c| dom.get(c).words())
            .collect()
    };
    assert_eq!(
        words(all_rows[0]),
        [
            "submission",
            "status",
            "score",
            "seconds",
            "reports",
            "lease-queue"
        ]
    );
    let short: Vec<&str> = expected_rules
        .keys()
        .map(|rule| {
            rule.strip_prefix("lease-queue/")
                .expect("a lease-queue rule")
        })
        .collect();
    assert_eq!(words(all_rows[1]), short);

    // A row per student: the verdict summary.json gives, every rule passed by a correct
    // solution, and the rule a one-mistake solution breaks failed, with a picture of a failing
    // spec linked.
    assert_eq!(submission_rows(dom).len(), class.len());
    for ((at, source, breaks), name) in class.iter().zip(&who) {
        let expected = expected_rows
            .iter()
            .find(|row| row["submission"] == *name)
            .unwrap_or_else(|| panic!("summary.json has no row for {name}"));
        let row = submission_rows(dom)
            .into_iter()
            .find(|&row| submission_name(dom, row) == *name)
            .unwrap_or_else(|| panic!("the page has no row for {name}"));
        let status = expected["status"].as_str().expect("status");
        assert_eq!(
            status,
            if breaks.is_some() { "fail" } else { "pass" },
            "{at} ({source})"
        );
        let status_cell = dom.get(cells(dom, row)[1]);
        assert!(status_cell.has_class(status), "{name}: {status_cell:?}");
        assert_eq!(status_cell.words(), status);

        let shown = rule_cells(dom, row);
        assert_eq!(shown.len(), expected_rules.len(), "{name}");
        for ((rule, verdict, mark), expected_rule) in shown.iter().zip(expected_rules.keys()) {
            assert_eq!(rule, expected_rule, "{name}");
            let wanted = expected["rules"][rule].as_str().unwrap_or("not covered");
            assert_eq!(verdict, wanted, "{name}: {rule}");
            match verdict.as_str() {
                "pass" => assert_eq!(mark, "\u{2713}", "{name}: {rule}"),
                "fail" => assert_eq!(mark, "\u{2717}", "{name}: {rule}"),
                _ => {}
            }
        }
        let failed: Vec<&str> = shown
            .iter()
            .filter(|(_, verdict, _)| verdict == "fail")
            .map(|(rule, _, _)| rule.as_str())
            .collect();
        match breaks {
            None => assert!(
                shown.iter().all(|(_, verdict, _)| verdict == "pass"),
                "{name} ({source}) is correct: {shown:?}"
            ),
            Some(rule) => assert!(
                failed.contains(rule),
                "{name} ({source}) breaks {rule}; the page fails {failed:?}"
            ),
        }

        // Each link says what it opens, and opens a page written beside the summary.
        let links = dom.within(row, "a");
        let pictures: Vec<usize> = dom
            .find(|e| e.has_class("pictures"))
            .into_iter()
            .filter(|&list| dom.is_within(list, row))
            .flat_map(|list| dom.within(list, "a"))
            .collect();
        assert_eq!(
            links.len() - pictures.len(),
            2,
            "{name}: a link to each report ({links:?})"
        );
        assert_eq!(
            pictures.is_empty(),
            breaks.is_none(),
            "{name}: a picture of each failing spec, none of a passing one"
        );
        for &link in &links {
            let said = dom.get(link).words();
            assert!(
                said == "text report" || said == "JSON report" || said.starts_with("picture of "),
                "{name}: a link says {said:?}"
            );
            let href = dom.get(link).attribute("href").expect("href");
            assert!(out.join(href).is_file(), "{name}: {href} is written");
        }
        // The first picture opens in the browser too: the failing spec's timeline.
        if let Some(&picture) = pictures.first() {
            let href = dom.get(picture).attribute("href").expect("href");
            let opened = headless::render(&browser, &out.join(href), false);
            opened.assert_clean(&format!("{name}'s picture {href}"));
            let svg = opened.dom.by_id("explain");
            assert_eq!(opened.dom.get(svg).tag, "svg", "{href}");
            let difference = opened.dom.find(|e| e.has_class("difference"));
            assert_eq!(
                difference.len(),
                1,
                "{href}: one first difference is marked"
            );
        }
    }

    // The rules' table: a row per rule, its share of the class as summary.json counts it.
    let rules_table = dom.find(|e| e.tag == "table" && e.has_class("rules"));
    assert_eq!(rules_table.len(), 1);
    let rule_rows = rows(dom, rules_table[0]);
    assert_eq!(rule_rows.len() - 1, expected_rules.len());
    for (row, (rule, share)) in rule_rows[1..].iter().zip(expected_rules) {
        let row_cells = cells(dom, *row);
        assert_eq!(&dom.get(row_cells[0]).words(), rule);
        let passed = share["passed"].as_u64().expect("passed");
        let submissions = share["submissions"].as_u64().expect("submissions");
        assert_eq!(
            dom.get(row_cells[1]).words(),
            format!("{passed} / {submissions}")
        );
    }
    // The causes' table names each broken rule's cause, its example linked to a report.
    let causes = dom.find(|e| e.tag == "table" && e.has_class("causes"));
    assert_eq!(causes.len(), 1, "the class's failure causes are listed");
    for link in dom.within(causes[0], "a") {
        let href = dom.get(link).attribute("href").expect("href");
        assert!(
            out.join(href).is_file(),
            "a cause's example {href} is written"
        );
    }

    // The sorting script runs: a click on the score heading puts the lowest score first.
    let clicked = headless::with_script(
        &out.join("summary.html"),
        "summary-by-score.html",
        "document.querySelector('#rows th[data-col=\"2\"]').click();",
    );
    let sorted = headless::render(&browser, &clicked, false);
    sorted.assert_clean("the lease-queue summary, sorted by score");
    let order: Vec<String> = submission_rows(&sorted.dom)
        .into_iter()
        .map(|row| submission_name(&sorted.dom, row))
        .collect();
    let score = |name: &str| {
        expected_rows
            .iter()
            .find(|row| row["submission"] == name)
            .and_then(|row| row["score"].as_f64())
            .expect("a score")
    };
    assert!(
        order
            .windows(2)
            .all(|pair| score(&pair[0]) <= score(&pair[1])),
        "{order:?}"
    );
}

/// A solution whose retries wait the same backoff each time, explained on the spec of a
/// doubling wait: the picture has a lane for the class and one for each given part, the
/// solution's reads of the clock drawn as calls to the clock's lane, each `advance` marked on
/// it with the time it moves to, and the state view's lists beside the steps.
#[test]
fn the_explain_picture_of_a_lease_queue_run_draws_the_clock_and_the_state_lists() {
    let Some(browser) = headless::browser() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let html = dir.path().join("explain.html");
    let explained = ran(dlqspec()
        .args([
            "explain",
            &format!("{EXERCISE}/specs/backoff-doubles-with-each-attempt.yaml"),
            "--impl",
            "python:tests/exercises/lease-queue/broken/fixed_backoff.py",
            "--format",
            "html",
            "--output",
            path_arg(&html),
        ])
        .output()
        .expect("dlqspec runs"));
    assert!(
        html.is_file(),
        "explain wrote no page: {}{}",
        explained.stdout,
        explained.stderr
    );
    let page = headless::render(&browser, &html, false);
    page.assert_clean("the explain picture of a lease-queue run");
    let dom = &page.dom;
    let svg = dom.by_id("explain");
    assert_eq!(dom.get(svg).tag, "svg");
    let lanes: Vec<String> = dom
        .find(|e| e.has_class("lane") && !e.has_class("list-head"))
        .into_iter()
        .filter(|&lane| dom.is_within(lane, svg))
        .filter_map(|lane| dom.get(lane).attribute("data-lane").map(str::to_owned))
        .collect();
    for lane in ["test", "LeaseQueue", "clock", "effects"] {
        assert!(lanes.iter().any(|l| l == lane), "no lane {lane}: {lanes:?}");
    }
    // The solution's reads of the clock: calls from the class's lane to the clock's.
    let clock_calls: Vec<String> = dom
        .find(|e| {
            e.has_class("call")
                && e.attribute("data-from") == Some("leasequeue")
                && e.attribute("data-to") == Some("clock")
        })
        .into_iter()
        .map(|call| dom.get(call).words())
        .collect();
    assert!(
        clock_calls.iter().any(|call| call == "clock.now() -> 5"),
        "no read of the clock drawn: {clock_calls:?}"
    );
    // Each `advance` of the spec marks the time it moves to: 5, 15 and 16.
    let words = dom.get(svg).words();
    for now in ["now 5", "now 15", "now 16"] {
        assert!(words.contains(now), "{now} is not drawn: {words}");
    }
    // The state view's lists, headed by their own names: the job leased, then waiting for its
    // retry time, each with the lease's end or the retry's time beside its id (the view's
    // `shown:` in exercise.yaml).
    let heads: Vec<String> = dom
        .find(|e| e.has_class("list-head"))
        .into_iter()
        .filter_map(|head| dom.get(head).attribute("data-lane").map(str::to_owned))
        .collect();
    // Every list of the view, done and quarantine too (a panel of four cut them).
    assert_eq!(
        heads,
        ["ready", "held", "waiting", "leased", "done", "quarantine"]
    );
    let lists: Vec<String> = dom
        .find(|e| e.has_class("list"))
        .into_iter()
        .map(|list| dom.get(list).words())
        .collect();
    for shown in [
        "leased: a (worker w1, until 10)",
        "waiting: a (due 5)",
        "waiting: a (due 10)",
    ] {
        assert!(
            lists.iter().any(|l| l == shown),
            "no {shown:?} in {lists:?}"
        );
    }
    // The first difference: the third retry's wait, 36 wanted.
    let differences = dom.find(|e| e.has_class("difference"));
    assert_eq!(differences.len(), 1, "one first difference is marked");
    assert!(dom.is_within(differences[0], svg));
}
