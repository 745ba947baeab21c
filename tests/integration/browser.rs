//! dlqspec's HTML pages in a real, headless browser: each renders with nothing on the console
//! and no network resource, and its key elements are in the DOM the browser built. With
//! `DLQSPEC_BLESS_SCREENSHOTS=1` the same tests write the pictures of docs/reports.md.

use std::path::{Path, PathBuf};

use crate::common::headless::{self, Dom, Rendered};
use crate::common::{dlqspec, path_arg, ran, root};

/// Renders `page`, taking the screenshot `name` when screenshots are blessed.
fn rendered(browser: &Path, page: &Path, name: &str) -> (Rendered, Option<PathBuf>) {
    let blessed = headless::blessed_screenshot(name);
    (headless::render(browser, page, blessed.is_some()), blessed)
}

/// Writes the screenshot where a blessing run keeps it (after the page's checks passed).
fn bless(rendered: &Rendered, target: Option<PathBuf>) {
    let (Some(target), Some(png)) = (target, &rendered.screenshot) else {
        return;
    };
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "the screenshot is a PNG"
    );
    std::fs::create_dir_all(target.parent().expect("docs/images")).expect("docs/images");
    std::fs::write(&target, png).expect("write the screenshot");
    eprintln!("wrote {}", target.display());
}

fn page(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{name}</title></head><body>\n{body}\n</body></html>\n"
    );
    std::fs::write(&path, html).expect("write the page");
    path
}

#[test]
fn the_browser_check_passes_a_clean_page_and_fails_one_with_a_script_error() {
    let Some(browser) = headless::browser() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let clean = page(dir.path(), "clean.html", "<p id=\"here\">a &amp; b</p>");
    let clean = headless::render(&browser, &clean, false);
    clean.assert_clean("a page with nothing wrong");
    assert_eq!(clean.dom.get(clean.dom.by_id("here")).words(), "a & b");

    let broken = page(
        dir.path(),
        "broken.html",
        "<p>before</p><script>noSuchFunction();</script>",
    );
    let broken = headless::render(&browser, &broken, false);
    assert!(
        broken
            .console
            .iter()
            .any(|line| line.contains("Uncaught ReferenceError: noSuchFunction is not defined")),
        "{:?}",
        broken.console
    );
}

#[test]
fn the_browser_check_fails_a_page_that_writes_to_the_console() {
    let Some(browser) = headless::browser() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let logging = page(
        dir.path(),
        "logging.html",
        "<script>console.error('said on the console');</script>",
    );
    let logging = headless::render(&browser, &logging, false);
    assert!(
        logging
            .console
            .iter()
            .any(|line| line.contains("said on the console")),
        "{:?}",
        logging.console
    );
}

#[test]
fn the_browser_check_fails_a_page_that_loads_a_network_resource() {
    let Some(browser) = headless::browser() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let remote = page(
        dir.path(),
        "remote.html",
        "<style>body{background:url('http://example.invalid/back.png')}</style>\
         <img src=\"https://example.invalid/picture.png\">\
         <link rel=\"stylesheet\" href=\"//example.invalid/style.css\">\
         <a href=\"#here\" id=\"here\">a local link</a><img src=\"data:,\">",
    );
    let remote = headless::render(&browser, &remote, false);
    let named = remote.dom.remote_resources();
    assert_eq!(named.len(), 3, "{named:?}");
    // What the browser asked the network for, seen apart from the DOM.
    assert!(
        [
            "http://example.invalid/back.png",
            "https://example.invalid/picture.png"
        ]
        .iter()
        .all(|url| remote.requests.iter().any(|r| r == url)),
        "{:?}",
        remote.requests
    );
}

#[test]
fn a_missing_browser_fails_a_ci_run_and_is_a_skip_said_elsewhere() {
    let dir = tempfile::tempdir().expect("temp dir");
    assert_eq!(headless::find_on_path(dir.path().as_os_str()), None);
    let chromium = dir.path().join("chromium");
    std::fs::write(&chromium, "#!/bin/sh\n").expect("write");
    assert_eq!(
        headless::find_on_path(dir.path().as_os_str()),
        None,
        "a file that is not executable is no browser"
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&chromium, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    assert_eq!(
        headless::find_on_path(dir.path().as_os_str()),
        Some(chromium)
    );

    assert_eq!(headless::browser_or_skip(None, false), None);
    let failed = std::panic::catch_unwind(|| headless::browser_or_skip(None, true))
        .expect_err("no browser in CI is a failure");
    let message = failed.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("chromium is missing") && message.contains("apt-get install -y chromium"),
        "{message}"
    );
}

/// The class of the summary's picture: a correct solution, two with a classic mistake each
/// and one that does not load.
const CLASS: &[(&str, &str)] = &[
    ("alice/solution.py", "examples/python/solution.py"),
    ("bob/consumer.py", "tests/solutions/dlq_no_poison.py"),
    ("carol/solution.py", "tests/solutions/dlq_off_by_one.py"),
    ("dave.py", "tests/students/syntax_error.py"),
];

/// A few specs, of a few rules each: the picture shows the rules and the submissions both.
const CLASS_SPECS: &[&str] = &[
    "success-acks-and-returns-ok.yaml",
    "permanent-on-the-first-delivery.yaml",
    "transient-retried-to-the-tail.yaml",
    "exhausted-at-max-attempts.yaml",
    "poison-cycle.yaml",
    "poison-is-put-before-the-ack.yaml",
    "crash-before-put-loses-nothing.yaml",
    "entry-times-follow-the-clock.yaml",
];

/// `CLASS`, in a fresh folder.
fn class_folder() -> tempfile::TempDir {
    let class = tempfile::tempdir().expect("temp dir");
    for (at, source) in CLASS {
        let file = class.path().join(at);
        std::fs::create_dir_all(file.parent().expect("a folder")).expect("mkdir");
        std::fs::copy(root().join(source), &file).expect("copy");
    }
    class
}

/// The `<td>` and `<th>` cells of row `row`, in order.
pub(crate) fn cells(dom: &Dom, row: usize) -> Vec<usize> {
    dom.find(|e| e.tag == "td" || e.tag == "th")
        .into_iter()
        .filter(|&cell| dom.get(cell).parent == Some(row))
        .collect()
}

/// The rows of table `table`, in order.
pub(crate) fn rows(dom: &Dom, table: usize) -> Vec<usize> {
    dom.within(table, "tr")
}

/// The summary's `#rows` table's rows of submissions, in order (its two heading rows skipped).
pub(crate) fn submission_rows(dom: &Dom) -> Vec<usize> {
    rows(dom, dom.by_id("rows")).into_iter().skip(2).collect()
}

/// The name a row of the summary's `#rows` table gives its submission.
pub(crate) fn submission_name(dom: &Dom, row: usize) -> String {
    let names: Vec<usize> = dom
        .within(cells(dom, row)[0], "span")
        .into_iter()
        .filter(|&span| dom.get(span).has_class("name"))
        .collect();
    dom.get(names[0]).words()
}

/// The submission in each row of the summary's `#rows` table, in order.
fn submissions_in_order(dom: &Dom) -> Vec<String> {
    submission_rows(dom)
        .into_iter()
        .map(|row| submission_name(dom, row))
        .collect()
}

#[test]
fn the_grade_summary_renders_in_a_browser_with_every_submission_and_rule() {
    let Some(browser) = headless::browser() else {
        return;
    };
    let class = class_folder();
    let mut command = dlqspec();
    // Run in the class's folder, so the page names submissions as a teacher typed them.
    command
        .current_dir(class.path())
        .args(["grade", "--jobs", "2"]);
    // The specs are copied beside the class, so the page names them as a teacher typed them
    // too, and no path of this machine appears in it.
    let specs = class.path().join("specs/dlq-consumer");
    std::fs::create_dir_all(&specs).expect("mkdir");
    for spec in CLASS_SPECS {
        std::fs::copy(
            root().join("specs/dlq-consumer").join(spec),
            specs.join(spec),
        )
        .expect("copy a spec");
        command
            .arg("--specs")
            .arg(format!("specs/dlq-consumer/{spec}"));
    }
    command.args(["--output", "grades", "alice", "bob", "carol", "dave.py"]);
    let graded = ran(command.output().expect("dlqspec runs"));
    assert_eq!(graded.code, 1, "{}{}", graded.stdout, graded.stderr);
    let out = class.path().join("grades");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("summary.json is JSON");
    let expected_rows = summary["rows"].as_array().expect("rows");
    let expected_rules = summary["rules"].as_object().expect("rules");
    assert_eq!(expected_rows.len(), CLASS.len());

    let (page, shot) = rendered(&browser, &out.join("summary.html"), "summary");
    page.assert_clean("summary.html");
    let dom = &page.dom;

    // The submissions' table: its headings, the rules' under their contract's, made clickable
    // by the page's sorting script (so the script ran), then a row per submission by its name
    // with its status.
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
            "dlq-consumer"
        ]
    );
    let short: Vec<&str> = expected_rules
        .keys()
        .map(|rule| {
            rule.split_once('/')
                .map_or(rule.as_str(), |(_, short)| short)
        })
        .collect();
    assert_eq!(words(all_rows[1]), short);
    let sortable: Vec<usize> = dom
        .find(|e| e.tag == "th" && e.attribute("data-col").is_some())
        .into_iter()
        .filter(|&th| dom.is_within(th, table))
        .collect();
    assert_eq!(sortable.len(), 4 + expected_rules.len());
    for &th in &sortable {
        let style = dom.get(th).attribute("style").unwrap_or_default();
        assert!(style.contains("cursor: pointer"), "{style:?}");
    }
    assert_eq!(submission_rows(dom).len(), expected_rows.len());
    for expected in expected_rows {
        let submission = expected["submission"].as_str().expect("submission");
        let row = submission_rows(dom)
            .into_iter()
            .find(|&row| submission_name(dom, row) == submission)
            .unwrap_or_else(|| panic!("no row for {submission}"));
        // A rule's cell says the same for every row that never ran.
        let rule_cells: Vec<String> = cells(dom, row)[5..]
            .iter()
            .map(|&c| dom.get(c).words())
            .collect();
        if expected["status"] == "broken" {
            assert!(rule_cells.iter().all(|c| c == "\u{2013}"), "{rule_cells:?}");
        }
        let status = expected["status"].as_str().expect("status");
        let status_cell = dom.get(cells(dom, row)[1]);
        assert!(
            status_cell.has_class(status),
            "{submission}: {status_cell:?}"
        );
        assert_eq!(status_cell.words(), status);
        let links = dom.within(row, "a");
        // Besides its two reports, a failing row links the pictures of its failing specs.
        let pictures: Vec<usize> = dom
            .find(|e| e.has_class("pictures"))
            .into_iter()
            .filter(|&list| dom.is_within(list, row))
            .flat_map(|list| dom.within(list, "a"))
            .collect();
        if status != "broken" {
            assert_eq!(
                links.len() - pictures.len(),
                2,
                "{submission}: a link to each report ({links:?})"
            );
        }
        if status == "fail" {
            assert!(!pictures.is_empty(), "{submission}: no picture linked");
        }
        // Each link says what it opens.
        for &link in &links {
            let said = dom.get(link).words();
            assert!(
                said == "text report" || said == "JSON report" || said.starts_with("picture of "),
                "{submission}: a link says {said:?}"
            );
        }
        for link in links {
            let href = dom.get(link).attribute("href").expect("href");
            assert!(out.join(href).is_file(), "{submission}: {href} is written");
        }
    }

    // The rules' table: a bar per rule, as wide as the share of the class passing it.
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
        let bars = dom.within(row_cells[2], "div");
        assert!(dom.get(bars[0]).has_class("bar"), "{rule}");
        let width = dom.get(bars[1]).attribute("style").unwrap_or_default();
        // Rounded to the nearest: 1 of 6 is 17%, never the 16% a cut would say.
        let nearest = (passed * 200 + submissions) / (2 * submissions);
        assert_eq!(width, format!("width:{nearest}%"), "{rule}");
    }
    bless(&page, shot);

    // A click on the score heading sorts the rows by score, lowest first: the broken one.
    let before = submissions_in_order(dom);
    let clicked = headless::with_script(
        &out.join("summary.html"),
        "summary-by-score.html",
        "document.querySelector('#rows th[data-col=\"2\"]').click();",
    );
    let sorted = headless::render(&browser, &clicked, false);
    sorted.assert_clean("summary.html, sorted by score");
    let after = submissions_in_order(&sorted.dom);
    assert_eq!(before, ["alice", "bob", "carol", "dave.py"]);
    assert_eq!(
        after.first().map(String::as_str),
        Some("dave.py"),
        "{after:?}"
    );
    let score = |name: &str| {
        expected_rows
            .iter()
            .find(|row| row["submission"] == name)
            .and_then(|row| row["score"].as_f64())
            .expect("a score")
    };
    assert!(
        after
            .windows(2)
            .all(|pair| score(&pair[0]) <= score(&pair[1])),
        "{after:?}"
    );
}

/// The window a teacher reads the class page in: the layout test's.
const TEACHERS_WINDOW: (u32, u32) = (1400, 900);

/// Where the layout test keeps its screenshot of the class page, for CI to publish
/// (docs/testing.md).
fn kept_screenshot() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    target.join("browser/summary-1400x900.png")
}

#[test]
fn the_grade_summary_fits_a_1400_px_window_with_the_submissions_first() {
    let Some(browser) = headless::browser() else {
        return;
    };
    // The whole bundled suite (every rule a column) over a class with the longest notes a
    // row gets: an empty folder, a misnamed file, a solution that does not load.
    let class = class_folder();
    std::fs::create_dir_all(class.path().join("erin")).expect("mkdir");
    std::fs::create_dir_all(class.path().join("frank")).expect("mkdir");
    std::fs::copy(
        root().join("examples/python/solution.py"),
        class.path().join("frank/solution.py.txt"),
    )
    .expect("copy");
    let out = class.path().join("grades");
    let graded = ran(dlqspec()
        .args(["grade", "--specs", "specs", "--jobs", "2", "--output"])
        .arg(&out)
        .args(
            ["alice", "bob", "carol", "dave.py", "erin", "frank"].map(|who| class.path().join(who)),
        )
        .output()
        .expect("dlqspec runs"));
    assert_eq!(graded.code, 1, "{}{}", graded.stdout, graded.stderr);
    // The page measured by the browser that drew it, written where the DOM dump carries it.
    let measured = headless::with_script(
        &out.join("summary.html"),
        "summary-measured.html",
        "var b = document.body, d = document.documentElement, t = document.getElementById('rows'), w = t.parentNode;\n\
         b.setAttribute('data-table-top', Math.round(t.getBoundingClientRect().top + window.scrollY));\n\
         b.setAttribute('data-screen', window.innerWidth + 'x' + window.innerHeight);\n\
         b.setAttribute('data-page-width', d.scrollWidth);\n\
         b.setAttribute('data-table-overflow', w.scrollWidth - w.clientWidth);",
    );
    let page = headless::render_in(&browser, &measured, true, TEACHERS_WINDOW);
    page.assert_clean("summary.html at 1400 px");
    if let Some(png) = &page.screenshot {
        let kept = kept_screenshot();
        std::fs::create_dir_all(kept.parent().expect("a folder")).expect("mkdir");
        std::fs::write(&kept, png).expect("keep the screenshot");
    }
    let body = page.dom.find(|e| e.tag == "body")[0];
    let number = |name: &str| -> i64 {
        let value = page.dom.get(body).attribute(name).unwrap_or_default();
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name} = {value:?}"))
    };
    let screen = page
        .dom
        .get(body)
        .attribute("data-screen")
        .unwrap_or_default()
        .to_owned();
    let (width, height) = screen
        .split_once('x')
        .map(|(w, h)| (w.parse::<i64>().unwrap_or(0), h.parse::<i64>().unwrap_or(0)))
        .expect("the screen's size");
    assert_eq!(width, i64::from(TEACHERS_WINDOW.0), "{screen}");
    let top = number("data-table-top");
    assert!(
        top < height / 2,
        "the submissions' table starts {top} px down, below the first half of a {height} px screen"
    );
    assert!(
        number("data-page-width") <= width,
        "the page is {} px wide in a {width} px window: it scrolls sideways",
        number("data-page-width")
    );
    assert_eq!(
        number("data-table-overflow"),
        0,
        "the table scrolls sideways in a {width} px window"
    );
    // The header names the suite, when and by which dlqspec.
    let about = page.dom.get(page.dom.by_id("about")).words();
    assert!(
        about.starts_with("suite specs (")
            && about.contains(&format!("{} specs, digest ", crate::common::suite().len()))
            && about.contains(" UTC · dlqspec "),
        "{about}"
    );
}

/// The class a matrix cell's text stands for: `n/n` passed, fewer failed (no spec of this
/// run is skipped), `skipped`, or `-` for a rule no spec covers.
fn cell_class(text: &str) -> &'static str {
    match text.split_once('/') {
        Some((passed, total)) if passed == total => "pass",
        Some(_) => "fail",
        None if text == "skipped" => "skip",
        None => "none",
    }
}

#[test]
fn the_matrix_renders_in_a_browser_with_a_cell_per_rule_and_implementation() {
    let Some(browser) = headless::browser() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let html = dir.path().join("matrix.html");
    let implementations = [
        "python:examples/python/solution.py",
        "python:tests/solutions/dlq_no_poison.py",
    ];
    let mut command = dlqspec();
    command
        .arg("matrix")
        .args(crate::common::suite_of("specs/dlq-consumer"));
    for implementation in implementations {
        command.args(["--impl", implementation]);
    }
    command.args(["--output", path_arg(&html)]);
    let matrix = ran(command.output().expect("dlqspec runs"));
    assert_eq!(matrix.code, 1, "{}{}", matrix.stdout, matrix.stderr);
    // The terminal's table, which the page must agree with: `rule CELL...` lines.
    let terminal: Vec<Vec<String>> = matrix
        .stdout
        .lines()
        .skip(1)
        .take_while(|line| !line.is_empty())
        .map(|line| {
            let (rule, cells) = line.split_once("  ").expect("a rule and its cells");
            std::iter::once(rule.to_owned())
                .chain(cells.split_whitespace().map(str::to_owned))
                .collect()
        })
        .collect();
    assert!(terminal.len() > 2, "{}", matrix.stdout);

    let (page, shot) = rendered(&browser, &html, "matrix");
    page.assert_clean("the matrix");
    let dom = &page.dom;
    let table = dom.by_id("matrix");
    let all_rows = rows(dom, table);
    let headings: Vec<String> = cells(dom, all_rows[0])
        .into_iter()
        .map(|c| dom.get(c).words())
        .collect();
    let mut wanted = vec!["rule", "builtin"];
    wanted.extend(implementations);
    assert_eq!(headings, wanted);
    assert_eq!(all_rows.len() - 1, terminal.len());
    let mut failing = 0;
    for (row, expected) in all_rows[1..].iter().zip(&terminal) {
        let row_cells = cells(dom, *row);
        let rule = dom.within(row_cells[0], "code");
        let name = rule
            .first()
            .map_or_else(|| dom.get(row_cells[0]).words(), |&c| dom.get(c).words());
        assert_eq!(name, expected[0]);
        let verdicts = &row_cells[1..];
        assert_eq!(verdicts.len(), implementations.len() + 1, "{name}");
        for (&cell, text) in verdicts.iter().zip(&expected[1..]) {
            let element = dom.get(cell);
            assert_eq!(&element.words(), text, "{name}");
            let class = cell_class(text);
            assert!(
                element.has_class("cell") && element.has_class(class),
                "{name}: {text} is {class}: {element:?}"
            );
            // A failing rule's cell links to its first failure, shown below the table.
            if class == "fail" && name != "all specs" {
                failing += 1;
                let link = dom.within(cell, "a");
                let href = dom.get(link[0]).attribute("href").expect("href");
                let target = dom.by_id(href.strip_prefix('#').expect("a link in the page"));
                assert_eq!(dom.get(target).tag, "section");
                assert!(
                    !dom.within(target, "pre").is_empty(),
                    "{href} shows the diff"
                );
            }
        }
    }
    assert!(failing > 0, "the solution with a mistake fails some rule");
    bless(&page, shot);
}

#[test]
fn the_explain_picture_renders_in_a_browser_with_its_lanes_and_first_difference() {
    let Some(browser) = headless::browser() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let html = dir.path().join("explain.html");
    let explained = ran(dlqspec()
        .args([
            "explain",
            "specs/dlq-consumer/poison-cycle.yaml",
            "--impl",
            "python:tests/solutions/dlq_no_poison.py",
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

    let (page, shot) = rendered(&browser, &html, "explain");
    page.assert_clean("the explain picture");
    let dom = &page.dom;
    let svg = dom.by_id("explain");
    assert_eq!(dom.get(svg).tag, "svg");
    // Queue, consumer, handler and DLQ.
    let lanes: Vec<usize> = dom
        .find(|e| e.has_class("lane"))
        .into_iter()
        .filter(|&lane| dom.is_within(lane, svg))
        .collect();
    assert!(lanes.len() >= 4, "lanes: {}", lanes.len());
    let differences = dom.find(|e| e.has_class("difference"));
    assert_eq!(differences.len(), 1, "one first difference is marked");
    assert!(dom.is_within(differences[0], svg));
    assert!(!dom.get(differences[0]).words().is_empty());
    bless(&page, shot);
}

/// A solution that dead-letters a poison message one delivery early (`>=` for `>`): the step
/// where it puts the message in the DLQ is marked with a cross and told, above the expectation
/// that shows it, which keeps the red box of the first difference.
#[test]
fn the_explain_picture_marks_the_step_where_the_implementation_departs() {
    let Some(browser) = headless::browser() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let correct = std::fs::read_to_string(root().join("examples/python/solution.py"))
        .expect("the example solution");
    let poison_check = "if msg[\"receive_count\"] > self.max_attempts:";
    assert!(
        correct.contains(poison_check),
        "the example's poison check moved"
    );
    let early = dir.path().join("solution.py");
    std::fs::write(
        &early,
        correct.replacen(
            poison_check,
            "if msg[\"receive_count\"] >= self.max_attempts:",
            1,
        ),
    )
    .expect("write the solution");
    let html = dir.path().join("explain.html");
    let explained = ran(dlqspec()
        .args([
            "explain",
            "specs/dlq-consumer/poison-cycle.yaml",
            "--impl",
            &format!("python:{}", path_arg(&early)),
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
    let (page, _) = rendered(&browser, &html, "explain-departure");
    page.assert_clean("the explain picture of a departure");
    let dom = &page.dom;
    let svg = dom.by_id("explain");
    let departure = dom.by_id("departure");
    assert!(dom.is_within(departure, svg));
    let heading = dom.get(departure).words();
    // max_attempts 2: the second delivery (step 6) is dead-lettered; the reference runs the
    // handler again.
    assert!(
        heading.starts_with("\u{2717} step 6 (line 21)"),
        "{heading}"
    );
    let told = dom.find(|e| e.has_class("departs"));
    assert_eq!(told.len(), 1, "the departure is told once");
    let words = dom.get(told[0]).words();
    assert!(
        words.contains("yours departs from the reference"),
        "{words}"
    );
    // The expectation that shows it is the first difference, further down.
    let difference = dom.find(|e| e.has_class("difference"));
    assert_eq!(difference.len(), 1);
    assert!(departure < told[0] && told[0] < difference[0]);
    assert!(dom.get(difference[0]).words().contains('\u{2717}'));
}

#[test]
fn the_dom_scan_reads_what_a_browser_serialises() {
    let dom = Dom::parse(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><style>td>p{}</style></head>\
         <body><table id=\"t\" class=\"a  b\"><tbody><tr><td title=\"x &quot;y&quot;\">1 &lt; 2</td>\
         <td>é<br>&#233;&#x41;</td></tr></tbody></table><!-- <p id=\"t\"> -->\
         <svg><rect width=\"1\"></rect><circle r=\"2\"/></svg><script>if (a<b) {}</script></body></html>",
    );
    let table = dom.by_id("t");
    assert!(dom.get(table).has_class("b") && !dom.get(table).has_class("a  b"));
    let cells = dom.within(table, "td");
    assert_eq!(cells.len(), 2);
    assert_eq!(dom.get(cells[0]).words(), "1 < 2");
    assert_eq!(dom.get(cells[0]).attribute("title"), Some("x \"y\""));
    assert_eq!(dom.get(cells[1]).words(), "ééA");
    assert_eq!(dom.get(dom.find(|e| e.tag == "style")[0]).text, "td>p{}");
    let svg = dom.find(|e| e.tag == "svg")[0];
    assert_eq!(
        dom.within(svg, "rect").len() + dom.within(svg, "circle").len(),
        2
    );
    assert_eq!(
        dom.get(dom.find(|e| e.tag == "script")[0]).text,
        "if (a<b) {}"
    );
    assert!(dom.remote_resources().is_empty());
}

#[test]
fn the_console_lines_are_the_pages_own() {
    let log = "[1:1:1201/110500.205705:INFO:CONSOLE:42] \"Uncaught TypeError: x\", source: file:///tmp/page.html (42)\n\
               [1:1:1201/110500.205705:ERROR:dbus/bus.cc:405] Failed to connect to the bus\n\
               [1:1:1201/110500.2:INFO:CONSOLE(3)] \"said\", source:  (3)\n\
               [1:1:1201/110500.3:INFO:CONSOLE:7] \"the browser's own\", source: chrome://new-tab-page/ (7)\n";
    let lines = headless::console_lines(log);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains("Uncaught TypeError: x") && lines[1].contains("\"said\""));
}
