//! What a student reads: one message for one cause, the rule broken named, what happened shown.

use crate::common::*;

/// The lines of the `failures by cause:` section of a human report.
pub(crate) fn causes(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| *l != "failures by cause:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

#[test]
fn a_solution_that_cannot_load_is_told_once_with_a_count_of_the_specs_not_run() {
    let ran = run(&[
        "run",
        "specs",
        "--impl",
        "python:tests/impls/syntax_error.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let errors = ran
        .stdout
        .lines()
        .filter(|l| l.starts_with("ERROR "))
        .count();
    assert_eq!(errors, 1, "{}", ran.stdout);
    assert!(
        ran.stdout.contains("SyntaxError")
            && ran.stdout.contains("tests/impls/syntax_error.py:6\n"),
        "{}",
        ran.stdout
    );
    let total = suite().len();
    assert!(
        ran.stdout.contains(&format!(
            "      {total} specs not run: this error kept them from starting\n"
        )) && ran
            .stdout
            .starts_with("ERROR the implementation did not start, so no spec could run\n"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.lines().count() < 20, "{}", ran.stdout);
    assert!(causes(&ran.stdout).is_empty(), "{}", ran.stdout);
}

#[test]
fn one_systematic_mistake_is_one_cause_line_naming_the_rule_it_breaks() {
    let solution = "python:tests/solutions/dlq_handler_gets_message.py";
    let ran = run(&["run", "specs", "--impl", solution]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let failed = ran
        .stdout
        .lines()
        .filter(|l| l.starts_with("FAIL "))
        .count();
    assert!(failed > 1, "{}", ran.stdout);
    // Every heading names the rule the cause breaks, not the spec's `rules:`.
    let headings: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|l| {
            l.starts_with("      rule broken: ") || l.starts_with("      the spec's rules: ")
        })
        .collect();
    assert_eq!(headings.len(), failed, "{}", ran.stdout);
    assert!(
        headings
            .iter()
            .all(|h| *h == "      rule broken: dlq-consumer/no-misuse"),
        "{headings:#?}"
    );
    let causes = causes(&ran.stdout);
    assert_eq!(
        causes,
        [format!(
            "  {failed}  dlq-consumer/no-misuse: after receiving X, the reference calls the handler with X; yours misused the world (handler)  (first: specs/dlq-consumer/already-dead-lettered-id-sent-again.yaml)"
        )],
        "{}",
        ran.stdout
    );
}

/// The first message of a spec error of a spec with `text`.
fn spec_error_of(text: &str) -> String {
    let (_dir, path) = temp_spec("broken.yaml", text);
    let ran = run(&["run", path_arg(&path)]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    ran.stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("error: "))
        .unwrap_or_else(|| panic!("no error line:\n{}", ran.stdout))
        .to_owned()
}

#[test]
fn spec_errors_speak_of_the_spec_not_of_the_parser() {
    assert!(
        spec_error_of("").starts_with("the file is empty: "),
        "{}",
        spec_error_of("")
    );
    assert!(spec_error_of("# just a comment\n\n").starts_with("the file is empty: "));
    let dead = "contract: dlq-consumer\nname: x\nmessages:\n  - {id: a, body: x}\nhandler:\n  a: [permanent: bad sku]\nsteps:\n  - process: dead\nexpect:\n  dlq:\n";
    let quote = "the value of `error` holds `: `, which YAML reads as a new key: quote the value, `error: \"PermanentError: bad sku\"`";
    for entry in [
        "    - {id: a, body: x, reason: permanent, error: PermanentError: bad sku, attempts: 1, first_attempt_at: 0, failed_at: 0}\n",
        "    - id: a\n      error: PermanentError: bad sku\n",
    ] {
        assert_eq!(spec_error_of(&format!("{dead}{entry}")), quote);
    }
    assert_eq!(
        spec_error_of(
            "contract: outcome-queue\nname: x\nsteps:\n  - create:\n    max_attempts: 3\n"
        ),
        "`max_attempts` is not indented under `create:`, so it is read as a sibling of `create`, which is left empty: indent `max_attempts` (and the keys after it) two spaces more than `create`"
    );
    assert_eq!(
        spec_error_of(
            "contract: dlq-consumer\nname: x\nmessages:\n  - {id: a, body: x}\nhandler:\n  a: [ok]\nsteps:\n  - process: okay\n"
        ),
        "unknown value `okay` (the nearest valid one is `ok`), expected one of ok, retry, dead, none, crash, any"
    );
}

/// The docs the commands are read from: the README and every page under docs/.
fn documents() -> Vec<std::path::PathBuf> {
    let mut docs: Vec<_> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root().join("README.md"));
    docs
}

/// What one doc asks a reader to run: its `dlqspec ...` command lines (in ```sh blocks, or
/// after a `$ ` prompt), with their line, and the files it shows whole (a ```yaml block whose
/// first line is `# NAME.yaml: ...`), which a reader saves before running them.
struct Documented {
    commands: Vec<(usize, String)>,
    files: Vec<(String, String)>,
}

fn documented(text: &str) -> Documented {
    let (mut commands, mut files) = (Vec::new(), Vec::new());
    let mut fence: Option<(String, Vec<&str>)> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = match fence.take() {
                Some((info, body)) => {
                    let named = body.first().and_then(|l| l.strip_prefix("# "));
                    let name = named.and_then(|l| l.split_once(".yaml: ")).map(|(n, _)| n);
                    if let (true, Some(name)) = (info == "yaml", name) {
                        files.push((format!("{name}.yaml"), body.join("\n") + "\n"));
                    }
                    None
                }
                None => Some((info.trim().to_owned(), Vec::new())),
            };
            continue;
        }
        let Some((info, body)) = &mut fence else {
            continue;
        };
        body.push(line);
        let command = match trimmed.strip_prefix("$ ") {
            Some(prompted) => prompted,
            None if matches!(info.as_str(), "sh" | "bash" | "shell") => trimmed,
            None => continue,
        };
        // A command line ends at a comment or at `&&`: the first command is the one run.
        let command = command.split(" #").next().unwrap_or(command);
        let command = command.split(" && ").next().unwrap_or(command).trim();
        if let Some(args) = command.strip_prefix("dlqspec ") {
            commands.push((index + 1, args.to_owned()));
        }
    }
    Documented { commands, files }
}

/// Words that stand for what the reader fills in: a command holding one is a pattern, not
/// a command to run as written.
fn is_placeholder(word: &str) -> bool {
    word.contains("...")
        || word.chars().any(|c| c.is_ascii_uppercase())
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || "_:-=.<>[]|".contains(c))
}

/// Copies the folder `from` of the repository into `to`, recursively.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("a folder").flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("a copy");
        }
    }
}

#[test]
fn every_documented_command_runs_as_written() {
    let mut broken = Vec::new();
    let mut students_page = 0;
    for doc in documents() {
        let name = doc
            .strip_prefix(root())
            .unwrap_or(&doc)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&doc).expect("a doc");
        let documented = documented(&text);
        // A clone of what the commands read, in a folder of their own: a command that writes
        // (`new`, `--output`) writes there, in the order the doc gives.
        let clone = tempfile::tempdir().expect("temp dir");
        for folder in ["specs", "examples", "tests/solutions", "tests/impls"] {
            copy_tree(&root().join(folder), &clone.path().join(folder));
        }
        for (file, content) in &documented.files {
            std::fs::write(clone.path().join(file), content).expect("a doc's file");
        }
        for (line, args) in &documented.commands {
            let at = format!("{name}:{line}");
            if name == "docs/students.md" {
                students_page += 1;
            }
            let Some(words) = shlex_words(args) else {
                broken.push(format!("{at}: cannot split `{args}`"));
                continue;
            };
            // `watch` runs until interrupted, `bless --interactive` asks a terminal, and
            // `grade --merge` reads the shards other machines graded.
            let first = words.first().map(String::as_str).unwrap_or_default();
            // A command on a broker runs, in the broker tests' turn, where one listens (always
            // in CI: broker.rs fails without one there).
            let on_broker = words.iter().any(|w| w.starts_with("amqp://"));
            let turn = on_broker.then(crate::broker::turn);
            if words.iter().any(|w| is_placeholder(w))
                || matches!(turn, Some(None))
                || matches!(first, "watch" | "completions" | "man")
                || words.iter().any(|w| w == "--interactive" || w == "--merge")
            {
                continue;
            }
            let ran = ran(dlqspec()
                .current_dir(clone.path())
                .env("DLQSPEC_SHIMS", root().join("shims"))
                .args(&words)
                .output()
                .expect("dlqspec runs"));
            // 0 passes and 1 fails some spec: both are runs; 2 is a usage or spec error.
            if ran.code != 0 && ran.code != 1 {
                broken.push(format!(
                    "{at}: `dlqspec {args}` exits {}:\n{}{}",
                    ran.code, ran.stdout, ran.stderr
                ));
            }
        }
    }
    assert!(students_page > 0, "docs/students.md shows no command");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// `text` split into words as a shell would for the simple quoting docs use.
fn shlex_words(text: &str) -> Option<Vec<String>> {
    let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in text.chars() {
        match (quote, c) {
            (None, '\'' | '"') => (quote, any) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None, ' ') => {
                if any {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (_, c) => {
                word.push(c);
                any = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if any {
        words.push(word);
    }
    Some(words)
}

/// The FAIL block of `spec` in a human report: its heading and the indented lines under it.
fn fail_block<'a>(stdout: &'a str, spec: &str) -> Vec<&'a str> {
    let heading = format!("FAIL  {spec}  ");
    stdout
        .lines()
        .skip_while(|l| !l.starts_with(&heading))
        .skip(1)
        .take_while(|l| l.starts_with("      "))
        .map(str::trim_start)
        .collect()
}

#[test]
fn a_bare_return_is_shown_as_undefined_and_differs_from_the_null_the_contract_pins() {
    if !node_tests() {
        return;
    }
    let cases = [
        (
            "node:tests/solutions/dlq_empty_returns_undefined.mjs",
            "specs/dlq-consumer/empty-queue-returns-none.yaml",
            [
                "rule broken: dlq-consumer/empty-queue",
                "cause: with nothing ready, the reference returns none; yours returned undefined",
                "a known mistake: ends processOne with a bare `return;` when nothing is ready: JavaScript's undefined, not null",
                "first difference at step 1 (process) (specs/dlq-consumer/empty-queue-returns-none.yaml:11:14)",
                "the step: process: none (it received nothing: no message was ready)",
                "JavaScript's undefined is not null: the contract pins null here, so write `return null;`, not a bare `return;`",
                "--- expected",
                "+++ actual",
                "@@ -1,1 +1,1 @@",
                "-process: none",
                "+process: undefined",
            ],
        ),
        (
            "node:tests/solutions/oq_empty_returns_undefined.mjs",
            "specs/outcome-queue/empty-queue-returns-none.yaml",
            [
                "rule broken: outcome-queue/empty-returns-none",
                "cause: at step 2 `{process: {outcome: success, returns: none}}`: process: the reference returns null; yours returns undefined",
                "a known mistake: ends process with a bare `return;` when nothing is ready: JavaScript's undefined, not null",
                "first difference at step 2 (process) (specs/outcome-queue/empty-queue-returns-none.yaml:11:42)",
                "the step: process: {outcome: success, returns: none}",
                "JavaScript's undefined is not null: the contract pins null here, so write `return null;`, not a bare `return;`",
                "--- expected",
                "+++ actual",
                "@@ -1,1 +1,1 @@",
                "-returns: null",
                "+returns: undefined",
            ],
        ),
    ];
    for (solution, spec, block) in cases {
        let ran = run(&["run", spec, "--impl", solution]);
        assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
        assert_eq!(fail_block(&ran.stdout, spec), block, "{}", ran.stdout);
    }
    // Where the contract pins no value, `undefined` is as good as `null`: the reference
    // solution's submit and constructor return it, and pass.
    let ran = run(&[
        "run",
        "specs/outcome-queue/submit-appends-to-the-ready-tail.yaml",
        "--impl",
        "node:examples/javascript/solution.mjs",
    ]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
}

#[test]
fn a_difference_at_a_step_shows_the_step_as_its_spec_writes_it() {
    let cases = [
        // The outcome passed, which the student would otherwise open the spec to learn.
        (
            "python:tests/solutions/oq_permanent_retried.py",
            "specs/outcome-queue/invalid-outcome-counts-no-attempt.yaml",
            [
                "rule broken: outcome-queue/permanent-quarantine",
                "cause: at step 6 `{process: {outcome: permanent, returns: dead}}`: process: the reference returns dead; yours returns retry",
                "a known mistake: treats a permanent failure like a transient one while attempts remain",
                "first difference at step 6 (process) (specs/outcome-queue/invalid-outcome-counts-no-attempt.yaml:14:44)",
                "the step: process: {outcome: permanent, returns: dead}",
                "--- expected",
            ],
        ),
        // The message and delivery the call received, which the spec does not write.
        (
            "python:tests/solutions/dlq_no_poison.py",
            "specs/dlq-consumer/poison-cycle.yaml",
            [
                "rule broken: dlq-consumer/poison",
                "cause: after receiving p, the reference puts p in the DLQ; yours called the handler with p once more than the spec scripts",
                "a known mistake: has no poison check, so a message that crashes the handler is delivered again and again",
                "first difference at step 9 (process) (specs/dlq-consumer/poison-cycle.yaml:24:5)",
                "the step: process: dead (it received p, delivery 3)",
                "message `p` reached the handler a 3rd time, but the spec scripts 2 outcomes: the implementation called the handler more often than the rules allow",
            ],
        ),
    ];
    for (solution, spec, block) in cases {
        let ran = run(&["run", spec, "--impl", solution]);
        assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
        assert_eq!(
            fail_block(&ran.stdout, spec)[..block.len()],
            block,
            "{}",
            ran.stdout
        );
    }
}
