//! Exercise folders: `exercises/bounded-buffer/` (exercise.yaml, a Python reference, specs and
//! known mistakes) run, judged, diagnosed, explored, explained and graded in Python,
//! JavaScript and TypeScript with no Rust of its own; exercise.yaml's and its specs' errors
//! told at their source; and the engine and the shims naming no exercise.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{dlqspec, node_tests, ran, root, run, two_at_a_time};

const FOLDER: &str = "exercises/bounded-buffer";

/// The rule a known mistake or a one-mistake solution names in its first line
/// (`# breaks RULE: words`), qualified with the exercise's name.
fn breaks(file: &Path) -> String {
    let text = std::fs::read_to_string(file).expect("the solution reads");
    let first = text.lines().next().unwrap_or_default();
    let words = first.trim_start_matches(['#', '/', ' ']).trim();
    let rule = words
        .strip_prefix("breaks ")
        .and_then(|rest| rest.split_once(':'))
        .map(|(rule, _)| rule.trim().to_owned())
        .unwrap_or_else(|| panic!("{}: no `breaks RULE:` first line", file.display()));
    if rule.contains('/') {
        rule
    } else {
        format!("bounded-buffer/{rule}")
    }
}

/// The JSON-lines events of a run of the exercise's specs on `implementation`.
fn events(implementation: &str) -> (i32, Vec<Value>) {
    let ran = run(&["run", FOLDER, "--impl", implementation, "--format", "json"]);
    let events = ran
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    (ran.code, events)
}

/// Each failing spec's outcome and cause.
fn failures(events: &[Value]) -> Vec<(String, Option<String>)> {
    events
        .iter()
        .filter(|e| e["event"] == "spec_finished" && e["outcome"] != "passed")
        .map(|e| {
            (
                e["outcome"].as_str().unwrap_or_default().to_owned(),
                e["cause"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

fn files_in(folder: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(folder))
        .expect("the folder reads")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    files.sort();
    files
}

#[test]
fn the_reference_passes_every_spec_of_its_folder() {
    let ran = run(&["run", FOLDER]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let specs = files_in(&format!("{FOLDER}/specs")).len();
    assert!(specs >= 7);
    assert!(
        ran.stdout.contains(&format!("{specs} passed, 0 failed")),
        "{}",
        ran.stdout
    );
}

#[test]
fn correct_solutions_in_three_languages_pass_and_a_javascript_slip_fails_on_its_rule() {
    let mut solutions = vec!["tests/exercises/bounded-buffer/buffer_deque.py"];
    if node_tests() {
        solutions.push("tests/exercises/bounded-buffer/buffer.mjs");
        solutions.push("tests/exercises/bounded-buffer/buffer.ts");
    }
    for solution in solutions {
        let (code, events) = events(solution);
        assert_eq!(code, 0, "{solution}: {:?}", failures(&events));
        assert!(failures(&events).is_empty(), "{solution}");
    }
    if node_tests() {
        let slip = "tests/exercises/bounded-buffer/buffer_undefined.js";
        let (code, events) = events(slip);
        assert_eq!(code, 1);
        let failed = failures(&events);
        assert_eq!(failed.len(), 1, "{failed:?}");
        let rule = breaks(&root().join(slip));
        assert!(
            failed[0]
                .1
                .as_deref()
                .is_some_and(|cause| cause.starts_with(&format!("{rule}:"))),
            "{failed:?}"
        );
    }
}

/// Every known mistake fails, all its failures one cause, that cause under the rule its first
/// line names, and the report tells it as the known mistake it is.
#[test]
fn each_known_mistake_reads_as_one_cause_under_its_rule() {
    let mistakes = files_in(&format!("{FOLDER}/mistakes"));
    assert!(mistakes.len() >= 4);
    let results = two_at_a_time(&mistakes, &|mistake: &PathBuf| {
        let shown = mistake
            .strip_prefix(root())
            .unwrap_or(mistake)
            .display()
            .to_string();
        let human = run(&["run", FOLDER, "--impl", &shown]);
        (shown.clone(), breaks(mistake), events(&shown), human)
    });
    for (mistake, rule, (code, events), human) in results {
        assert_eq!(code, 1, "{mistake} fails");
        let failed = failures(&events);
        assert!(!failed.is_empty(), "{mistake}");
        let causes: std::collections::BTreeSet<Option<String>> =
            failed.iter().map(|(_, cause)| cause.clone()).collect();
        assert_eq!(causes.len(), 1, "{mistake}: one cause, not {causes:?}");
        let cause = causes.into_iter().next().flatten().unwrap_or_default();
        assert!(cause.starts_with(&format!("{rule}:")), "{mistake}: {cause}");
        let what = std::fs::read_to_string(root().join(&mistake)).expect("reads");
        let what = what
            .lines()
            .next()
            .unwrap_or_default()
            .split_once(':')
            .map(|(_, w)| w.trim())
            .unwrap_or_default()
            .to_owned();
        assert!(
            human.stdout.contains(&format!("a known mistake: {what}")),
            "{mistake}:\n{}",
            human.stdout
        );
    }
}

/// explore finds every known mistake from the draws exercise.yaml gives, and no divergence in
/// a correct solution.
#[test]
fn explore_finds_each_known_mistake_and_passes_a_correct_solution() {
    let mistakes = files_in(&format!("{FOLDER}/mistakes"));
    let explore = |implementation: &str, cases: &str| {
        run(&[
            "explore",
            "--exercise",
            FOLDER,
            "--contract",
            "bounded-buffer",
            "--impl",
            implementation,
            "--seed",
            "7",
            "--cases",
            cases,
        ])
    };
    let found = two_at_a_time(&mistakes, &|mistake: &PathBuf| {
        let shown = mistake
            .strip_prefix(root())
            .unwrap_or(mistake)
            .display()
            .to_string();
        (shown.clone(), explore(&shown, "400"))
    });
    for (mistake, ran) in found {
        assert_eq!(ran.code, 1, "{mistake}: {}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stdout.contains("found a divergence"),
            "{mistake}: {}",
            ran.stdout
        );
        assert!(
            !ran.stdout.contains("could not be blessed"),
            "{mistake}: {}",
            ran.stdout
        );
    }
    let correct = explore("tests/exercises/bounded-buffer/buffer_deque.py", "60");
    assert_eq!(correct.code, 0, "{}{}", correct.stdout, correct.stderr);
    assert!(
        !correct.stdout.contains("could not be blessed"),
        "{}",
        correct.stdout
    );
}

#[test]
fn rules_new_lint_and_schema_serve_the_exercise() {
    let rules = run(&["rules", FOLDER]);
    assert_eq!(rules.code, 0, "{}", rules.stdout);
    assert!(
        rules.stdout.starts_with("bounded-buffer (6 rules)"),
        "{}",
        rules.stdout
    );
    assert!(rules.stdout.contains("every rule is covered"));
    assert!(
        !rules.stdout.contains("dlq-consumer"),
        "only the exercise's rules: {}",
        rules.stdout
    );

    let lint = run(&["lint", FOLDER]);
    assert_eq!(lint.code, 0, "{}{}", lint.stdout, lint.stderr);

    let schema = run(&["schema", "--exercise", FOLDER]);
    assert_eq!(schema.code, 0);
    let schema: Value = serde_json::from_str(&schema.stdout).expect("the schema is JSON");
    assert!(schema.to_string().contains("\"const\":\"bounded-buffer\""));

    // A starter written into a copy of the folder passes as written.
    let copy = tempfile::tempdir().expect("a temp dir");
    for file in ["exercise.yaml", "reference.py"] {
        std::fs::copy(root().join(FOLDER).join(file), copy.path().join(file)).expect("copies");
    }
    std::fs::create_dir(copy.path().join("specs")).expect("specs/");
    let spec = copy.path().join("specs/first.yaml");
    let new = run(&["new", spec.to_str().expect("utf-8")]);
    assert_eq!(new.code, 0, "{}{}", new.stdout, new.stderr);
    let ran = run(&["run", spec.to_str().expect("utf-8")]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
}

/// `lint` finds an exercise spec's smells in its run on the reference: a call repeated with the
/// same answer after the last change, and answers scripted for a callable given part beyond
/// the calls made (a copy of the folder whose buffer asks a given `check` before each put).
#[test]
fn lint_tells_an_exercise_specs_idle_steps_and_unused_scripted_answers_at_their_place() {
    let copy = tempfile::tempdir().expect("a temp dir");
    let read = |file: &str| std::fs::read_to_string(root().join(FOLDER).join(file)).expect("reads");
    let capacity = "    capacity: {draw: [3, 2, 1, 0, -1, 2.5, \"2\"]}\n";
    let exercise = read("exercise.yaml").replace(
        capacity,
        &format!("{capacity}    check: {{given: check}}\n"),
    );
    let exercise = exercise.replace(
        "\ncreate:\n",
        "\ngiven:\n  check: {kind: callable}\n\ncreate:\n",
    );
    let reference = read("reference.py")
        .replace(
            "def __init__(self, capacity):\n",
            "def __init__(self, capacity, check):\n        self._check = check\n",
        )
        .replace(
            "def put(self, item):\n",
            "def put(self, item):\n        if self._check(item) is False:\n            return False\n",
        );
    assert!(exercise.contains("check: {given: check}") && reference.contains("self._check(item)"));
    std::fs::write(copy.path().join("exercise.yaml"), exercise).expect("writes");
    std::fs::write(copy.path().join("reference.py"), reference).expect("writes");
    std::fs::create_dir(copy.path().join("specs")).expect("specs/");
    let spec = copy.path().join("specs/smelly.yaml");
    std::fs::write(
        &spec,
        "contract: bounded-buffer\nname: smelly\nrules: [bounded-buffer/take-oldest]\nscript:\n  check: [{returns: true}, {returns: false}, {returns: true}]\nsteps:\n  - create: {capacity: 2}\n  - put: {item: a, returns: true}\n  - take: {returns: a}\n  - take: {returns: none}\n  - take: {returns: none}\n",
    )
    .expect("writes");
    let shown = spec.to_str().expect("utf-8");
    let lint = run(&["lint", shown]);
    assert_eq!(lint.code, 1, "{}{}", lint.stdout, lint.stderr);
    let smells: Vec<&str> = lint
        .stdout
        .lines()
        .filter(|line| line.starts_with(shown))
        .collect();
    assert_eq!(
        smells,
        [
            format!(
                "{shown}:5:28: unused-outcomes: the 2nd scripted answer of `check` and the 2 from there are never used: `check` is called once; script only as many answers as the calls the run makes"
            ),
            format!(
                "{shown}:11:5: idle-trailing-step: step 5 (take) repeats step 4 with the same arguments and answer and changes nothing: leave it out, or change something between the two"
            ),
        ],
        "{}",
        lint.stdout
    );
    assert!(
        lint.stdout.ends_with("2 smells in 1 spec\n"),
        "{}",
        lint.stdout
    );
    // Without the idle step and with one answer a put, the spec is clean.
    let clean = std::fs::read_to_string(&spec)
        .expect("reads")
        .replace(
            "  - take: {returns: none}\n  - take: {returns: none}\n",
            "  - take: {returns: none}\n",
        )
        .replace(", {returns: false}, {returns: true}]", "]");
    std::fs::write(&spec, clean).expect("writes");
    let lint = run(&["lint", shown]);
    assert_eq!(lint.code, 0, "{}{}", lint.stdout, lint.stderr);
}

/// `explain --impl` of a failing spec marks each step's decision: `✓` under the rule that
/// decides it while the solution does what the reference does, `✗` with both sides where it
/// departs, and nothing past it, where the runs have parted.
#[test]
fn explain_marks_each_decision_up_to_the_departure() {
    let explained = run(&[
        "explain",
        &format!("{FOLDER}/specs/take-oldest-first.yaml"),
        "--impl",
        &format!("{FOLDER}/mistakes/takes-newest.py"),
    ]);
    assert_eq!(explained.code, 1, "{}", explained.stderr);
    let text = &explained.stdout;
    assert_eq!(
        text.matches("    \u{2713} decision bounded-buffer/put-appends: put returns true, as the reference does\n").count(),
        3,
        "{text}"
    );
    assert!(
        text.contains("    \u{2713} decision bounded-buffer/capacity-validated: create makes an instance, as the reference does\n"),
        "{text}"
    );
    let departs = "    \u{2717} decision bounded-buffer/take-oldest: take: the reference returns a; yours returns c\n";
    assert_eq!(text.matches(departs).count(), 1, "{text}");
    let (before, after) = text.split_once(departs).expect("the departure is told");
    assert!(
        before.contains("step 5 (line 9)") && !before.contains("step 6"),
        "{text}"
    );
    assert!(
        !after.contains(" decision "),
        "nothing is judged past the departure:\n{text}"
    );
}

#[test]
fn explain_draws_a_known_mistake_and_grade_grades_a_class_of_the_exercise() {
    let page = tempfile::tempdir().expect("a temp dir");
    let html = page.path().join("take.html");
    let explained = run(&[
        "explain",
        &format!("{FOLDER}/specs/take-oldest-first.yaml"),
        "--impl",
        &format!("{FOLDER}/mistakes/takes-newest.py"),
        "--format",
        "html",
        "--output",
        html.to_str().expect("utf-8"),
    ]);
    assert_eq!(explained.code, 1, "{}", explained.stderr);
    let page_text = std::fs::read_to_string(&html).expect("the page");
    assert!(page_text.contains("BoundedBuffer") && page_text.contains("take()"));

    let out = tempfile::tempdir().expect("a temp dir");
    let graded = ran(dlqspec()
        .args([
            "grade",
            "tests/exercises/bounded-buffer/buffer_deque.py",
            &format!("{FOLDER}/mistakes/takes-newest.py"),
            "--specs",
            FOLDER,
            "--output",
        ])
        .arg(out.path())
        .output()
        .expect("grade runs"));
    assert_eq!(graded.code, 1, "{}{}", graded.stdout, graded.stderr);
    let summary = crate::common::summary_json(out.path());
    let text = summary.to_string();
    assert!(text.contains("bounded-buffer/take-oldest"), "{text}");
    assert!(
        graded.stdout.contains("1 pass, 1 fail"),
        "{}",
        graded.stdout
    );
}

/// exercise.yaml's errors, every one of the file at once, each at its line and column with
/// the nearest valid word; and a spec's step of the wrong name told the same way.
#[test]
fn a_broken_exercise_and_a_broken_spec_are_told_at_their_source() {
    let folder = tempfile::tempdir().expect("a temp dir");
    std::fs::write(folder.path().join("reference.py"), "class Box:\n    pass\n").expect("writes");
    std::fs::write(
        folder.path().join("exercise.yaml"),
        "exercise: box\ntitle: a box\nclass: Box\nreference: reference.py\ncreate:\n  args:\n    clock: {given: clok}\ngiven:\n  clock: {kind: clock}\nmethods:\n  open: {}\nrules:\n  - id: opens\n    says: it opens\n    decides: [{call: opne}]\n",
    )
    .expect("writes");
    std::fs::create_dir(folder.path().join("specs")).expect("specs/");
    std::fs::write(
        folder.path().join("specs/a.yaml"),
        "contract: box\nname: a\nsteps:\n  - create: {}\n  - opn\n",
    )
    .expect("writes");
    let specs = folder.path().join("specs");
    let broken = run(&["run", specs.to_str().expect("utf-8")]);
    assert_eq!(broken.code, 2, "{}{}", broken.stdout, broken.stderr);
    assert!(
        broken.stderr.contains("exercise.yaml:7:"),
        "{}",
        broken.stderr
    );
    assert!(
        broken.stderr.contains("did you mean `clock`"),
        "{}",
        broken.stderr
    );
    assert!(
        broken.stderr.contains("exercise.yaml:15:"),
        "{}",
        broken.stderr
    );
    assert!(broken.stderr.contains("`open`"), "{}", broken.stderr);

    std::fs::write(
        folder.path().join("exercise.yaml"),
        "exercise: box\ntitle: a box\nclass: Box\nreference: reference.py\nmethods:\n  open: {}\nrules:\n  - id: opens\n    says: it opens\n    decides: [{call: open}]\n",
    )
    .expect("writes");
    let spec = run(&["run", specs.to_str().expect("utf-8")]);
    assert_eq!(spec.code, 2, "{}{}", spec.stdout, spec.stderr);
    let told = format!("{}{}", spec.stdout, spec.stderr);
    assert!(told.contains("a.yaml:5:5"), "{told}");
    assert!(told.contains("`open`"), "{told}");
}

/// The engine and the shims know no exercise: no exercise folder's name or class stands in
/// src/, crates/ or shims/ (the shims' own tests aside).
#[test]
fn no_exercise_is_named_by_the_engine_or_the_shims() {
    let mut names = Vec::new();
    // The example exercises, and the bundled suite's exercise folders (outcome-queue's).
    let bundled = files_in("specs")
        .into_iter()
        .filter(|folder| folder.join("exercise.yaml").is_file());
    for folder in files_in("exercises").into_iter().chain(bundled) {
        let text = std::fs::read_to_string(folder.join("exercise.yaml")).expect("exercise.yaml");
        for key in ["exercise:", "class:"] {
            let value = text
                .lines()
                .find_map(|line| line.strip_prefix(key))
                .map(|v| v.trim().to_owned())
                .unwrap_or_else(|| panic!("{}: no `{key}`", folder.display()));
            names.push(value);
        }
    }
    assert!(names.len() >= 6, "{names:?}");
    let mut named = Vec::new();
    for top in ["src", "crates", "shims"] {
        for entry in walkdir::WalkDir::new(root().join(top)) {
            let entry = entry.expect("walks");
            let path = entry.path();
            let skipped = path.components().any(|c| {
                matches!(
                    c.as_os_str().to_str(),
                    Some("node_modules" | "vendor" | "tests" | "target")
                )
            });
            if !entry.file_type().is_file() || skipped {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            for name in &names {
                if text.contains(name.as_str()) {
                    named.push(format!("{} names {name}", path.display()));
                }
            }
        }
    }
    assert!(named.is_empty(), "{named:#?}");
}

/// The names the shims must not know: every contract's name (the built-in ones and the
/// exercise folders'), the class it declares, its given parts' classes and its errors; read
/// from the registry's description of each built-in contract and from what dlqspec makes of
/// each exercise folder (`dlqspec types`), so that a new contract or exercise joins the list.
fn contract_vocabulary() -> Vec<String> {
    let mut names = Vec::new();
    let mut described = |name: &str, description: &Value| {
        names.push(name.to_owned());
        names.extend(description["class"].as_str().map(str::to_owned));
        for part in description["given"].as_object().into_iter().flatten() {
            names.extend(part.1["class"].as_str().map(str::to_owned));
        }
        names.extend(
            description["errors"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|e| e.0.clone()),
        );
    };
    for contract in dlqspec::contracts::BUILT_IN {
        described(contract.name(), &contract.protocol_description());
    }
    let bundled = files_in("specs")
        .into_iter()
        .filter(|folder| folder.join("exercise.yaml").is_file());
    for folder in files_in("exercises").into_iter().chain(bundled) {
        let name = folder.file_name().and_then(|n| n.to_str()).expect("a name");
        let text = std::fs::read_to_string(folder.join("exercise.yaml")).expect("exercise.yaml");
        for key in ["exercise:", "class:"] {
            names.extend(
                text.lines()
                    .find_map(|line| line.strip_prefix(key))
                    .map(|v| v.trim().to_owned()),
            );
        }
        names.push(name.to_owned());
        // Its given parts' classes and its errors, as dlqspec declares them for TypeScript.
        let types = run(&["types", folder.to_str().expect("utf-8")]);
        assert_eq!(types.code, 0, "{}", types.stderr);
        names.extend(types.stdout.lines().filter_map(|line| {
            let rest = line.trim().strip_prefix("export class ")?;
            Some(rest.split([' ', '{']).next()?.to_owned())
        }));
    }
    names.sort();
    names.dedup();
    names
}

/// Whether `text` holds `name` as a whole name: not inside a longer identifier (so `readMessage`
/// does not hold `Message`); a name with a hyphen (a contract's) anywhere.
fn holds_name(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        name.contains('-') || !(before.is_some_and(word) || after.is_some_and(word))
    })
}

/// The shims know no contract: no file under shims/ (their own tests and node_modules aside),
/// comments and READMEs included, names a contract, an exercise, a class a contract declares, a
/// given part's class or a given error. What they serve comes from hello's description.
#[test]
fn the_shims_name_no_contract_class_given_part_or_error() {
    let names = contract_vocabulary();
    for known in [
        "dlq-consumer",
        "outcome-queue",
        "DLQConsumer",
        "RetryQueue",
        "FakeQueue",
        "FakeDLQ",
        "FakeClock",
        "PermanentError",
        "TransientError",
        "Crash",
        "MisuseError",
        "LeaseQueue",
        "BoundedBuffer",
        "StaleLease",
    ] {
        assert!(
            names.iter().any(|n| n == known),
            "{known} is not in {names:?}"
        );
    }
    let mut named = Vec::new();
    let mut read = 0;
    for entry in walkdir::WalkDir::new(root().join("shims")) {
        let entry = entry.expect("walks");
        let path = entry.path();
        let relative = path
            .strip_prefix(root().join("shims"))
            .expect("under shims");
        let skipped = relative.components().any(|c| {
            matches!(c.as_os_str().to_str(), Some("node_modules")) || relative.starts_with("tests")
        });
        if !entry.file_type().is_file() || skipped {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue; // not text (a gzipped vendor file)
        };
        read += 1;
        for name in &names {
            if holds_name(&text, name) {
                named.push(format!("{} names {name}", relative.display()));
            }
        }
    }
    assert!(read >= 8, "only {read} files read under shims/");
    assert!(named.is_empty(), "{named:#?}");
}

/// `dlqspec types` derives a student's declarations from exercise.yaml: TypeScript that names
/// the class's methods with the argument types its draws show, and a Python stub that parses.
#[test]
fn types_are_derived_from_the_exercise() {
    let typescript = run(&["types", FOLDER]);
    assert_eq!(typescript.code, 0, "{}", typescript.stderr);
    assert!(typescript.stdout.contains("declare module 'given'"));
    assert!(
        typescript.stdout.contains("put(item: string): unknown;"),
        "{}",
        typescript.stdout
    );
    assert!(
        typescript
            .stdout
            .contains("new (capacity: number) => BoundedBufferShape")
    );
    let python = run(&["types", FOLDER, "--language", "python"]);
    assert_eq!(python.code, 0, "{}", python.stderr);
    let stub = tempfile::NamedTempFile::new().expect("a temp file");
    std::fs::write(stub.path(), &python.stdout).expect("writes");
    let parsed = std::process::Command::new("python3")
        .args(["-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())"])
        .arg(stub.path())
        .status()
        .expect("python3 runs");
    assert!(parsed.success(), "{}", python.stdout);
    assert!(
        python
            .stdout
            .contains("def put(self, item: str) -> object: ...")
    );
    // A clock's time is a float (a spec may move it by a fraction), it offers no advance (the
    // spec moves it), and the restart's factory is a static method.
    let leases = run(&["types", "exercises/lease-queue", "--language", "python"]);
    assert_eq!(leases.code, 0, "{}", leases.stderr);
    for declared in [
        "    def now(self) -> float: ...\n",
        "    @staticmethod\n    def from_snapshot(snapshot: object, clock: Clock, effects: EffectsLog) -> \"LeaseQueueShape\": ...\n",
    ] {
        assert!(
            leases.stdout.contains(declared),
            "{declared}\n{}",
            leases.stdout
        );
    }
    let nowhere = run(&["types", "specs"]);
    assert_eq!(nowhere.code, 2);
}

/// What `dlqspec types` writes is TypeScript the compiler takes: a class written against it
/// (its given parts, errors, shape, constructor and restart factory, each imported from
/// `'given'`) type-checks under `tsc --strict`, and one that breaks the shape does not.
#[test]
fn typescript_declarations_type_check_with_tsc() {
    if !node_tests() {
        return;
    }
    let tsc = crate::common::tsc();
    let declared = run(&["types", "exercises/lease-queue"]);
    assert_eq!(declared.code, 0, "{}", declared.stderr);
    let solution = |take: &str| {
        format!(
            "import {{ Clock, EffectsLog, StaleLease }} from 'given';\n\
             import type {{ LeaseQueueShape, LeaseQueueConstructor, LeaseQueueFactory }} from 'given';\n\
             export class LeaseQueue implements LeaseQueueShape {{\n\
               constructor(private clock: Clock, private effects: EffectsLog, budget: number, lease: number, backoff: number) {{}}\n\
               static fromSnapshot(snapshot: unknown, clock: Clock, effects: EffectsLog): LeaseQueue {{ return new LeaseQueue(clock, effects, 1, 1, 1); }}\n\
               submit(jobId: string, account: string, payload: string) {{ this.effects.apply(account, payload); return true; }}\n\
               {take}\n\
               finish(jobId: string, worker: string, outcome: string): boolean {{ throw new StaleLease(jobId); }}\n\
               replay(jobId: string) {{ return false; }}\n\
               state() {{ return {{ now: this.clock.now() }}; }}\n\
               policy() {{ return {{}}; }}\n\
               snapshot() {{ return {{}}; }}\n\
             }}\n\
             export const made: LeaseQueueConstructor = LeaseQueue;\n\
             export const factory: LeaseQueueFactory = LeaseQueue;\n"
        )
    };
    // The import the header, `types --help` and docs/students.md show.
    assert!(
        declared
            .stdout
            .contains("// Import from 'given', not './given': `import { Clock, EffectsLog, StaleLease } from 'given';`"),
        "{}",
        declared.stdout
    );
    let check_with = |source: String, resolution: &[&str]| {
        let folder = tempfile::tempdir().expect("a temp dir");
        std::fs::write(folder.path().join("given.d.ts"), &declared.stdout).expect("writes");
        std::fs::write(folder.path().join("queue.ts"), source).expect("writes");
        std::process::Command::new(&tsc)
            .args(["--noEmit", "--strict", "--target", "es2022"])
            .args(resolution)
            .args(["queue.ts", "given.d.ts"])
            .current_dir(folder.path())
            .output()
            .expect("tsc runs")
    };
    let check = |take: &str| check_with(solution(take), &[]);
    let good = check("take(worker: string) { return null; }");
    assert!(
        good.status.success(),
        "{}{}\n{}",
        String::from_utf8_lossy(&good.stdout),
        String::from_utf8_lossy(&good.stderr),
        declared.stdout
    );
    // The same import under the module resolutions students' projects use; `./given` names
    // the file, which declares a module rather than being one, and tsc refuses it.
    for resolution in [
        &["--module", "node16", "--moduleResolution", "node16"][..],
        &["--module", "esnext", "--moduleResolution", "bundler"][..],
    ] {
        let good = check_with(
            solution("take(worker: string) { return null; }"),
            resolution,
        );
        assert!(
            good.status.success(),
            "{resolution:?}: {}",
            String::from_utf8_lossy(&good.stdout)
        );
        let relative = solution("take(worker: string) { return null; }")
            .replace("from 'given'", "from './given'");
        let refused = check_with(relative, resolution);
        assert!(
            String::from_utf8_lossy(&refused.stdout).contains("TS2306"),
            "{resolution:?}: {}",
            String::from_utf8_lossy(&refused.stdout)
        );
    }
    // A class without `take` does not have the shape: the declarations are read, not skipped.
    let bad = check("");
    assert!(!bad.status.success(), "tsc took a class without take");
    assert!(
        String::from_utf8_lossy(&bad.stdout).contains("'take'"),
        "{}",
        String::from_utf8_lossy(&bad.stdout)
    );
}

/// A broken exercise folder in the project's `specs/` stops a command that reads it, and no
/// other: `run other/` in that project still runs, and `run specs` tells the broken file.
#[test]
fn a_broken_exercise_in_the_default_suite_stops_only_what_reads_it() {
    let project = tempfile::tempdir().expect("a temp dir");
    let broken = project.path().join("specs/broken");
    std::fs::create_dir_all(&broken).expect("folders");
    std::fs::write(broken.join("exercise.yaml"), "exercise: [not, a, name]\n").expect("written");
    let other = project.path().join("other");
    std::fs::create_dir_all(&other).expect("folders");
    std::fs::copy(
        root().join("specs/dlq-consumer/default-budget-is-three.yaml"),
        other.join("a.yaml"),
    )
    .expect("copied");
    let elsewhere = ran(dlqspec()
        .current_dir(project.path())
        .args(["run", "other"])
        .output()
        .expect("dlqspec runs"));
    assert_eq!(
        elsewhere.code, 0,
        "{}{}",
        elsewhere.stdout, elsewhere.stderr
    );
    let suite = ran(dlqspec()
        .current_dir(project.path())
        .args(["run", "specs"])
        .output()
        .expect("dlqspec runs"));
    assert_eq!(suite.code, 2, "{}{}", suite.stdout, suite.stderr);
    assert!(
        format!("{}{}", suite.stdout, suite.stderr).contains("exercise.yaml:1:"),
        "{}{}",
        suite.stdout,
        suite.stderr
    );
}
