//! The authoring commands on the real binary: schema, new, explain, bless, lint.

use std::ops::Range;
use std::path::PathBuf;

use dlqspec::contracts::builtin::Builtin;
use dlqspec::contracts::contract::RunMode;
use dlqspec::load::discover;
use dlqspec::load::loader;
use dlqspec::text::source::SourceFile;
use dlqspec::text::yaml::edit::{Document, Kind, LeadKind, Node};
use serde_json::Value;
use serde_saphyr::granit_parser::ScalarStyle;

use crate::common::{path_arg, root, run, snapshot_settings, temp_spec};

/// Every bundled spec file, sorted.
fn bundled_specs() -> Vec<PathBuf> {
    let specs = discover::spec_files(&[root().join("specs")]).expect("specs/ exists");
    assert!(!specs.is_empty(), "no bundled specs found");
    specs
}

fn bundled(name: &str) -> String {
    let path = root().join("specs/dlq-consumer").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `text` with the first `needle` replaced; the needle must be there, so a changed bundled
/// spec fails this test loudly instead of making it test nothing.
fn broken(text: &str, needle: &str, replacement: &str) -> String {
    assert!(
        text.contains(needle),
        "the spec no longer contains {needle:?}"
    );
    text.replacen(needle, replacement, 1)
}

#[test]
fn every_new_subcommand_has_an_example_in_its_help() {
    for command in ["schema", "new", "explain", "bless", "lint"] {
        let ran = run(&[command, "--help"]);
        assert_eq!(ran.code, 0, "{command}: {}", ran.stderr);
        assert!(
            ran.stdout.contains("Examples:\n  dlqspec "),
            "{command} --help has no example:\n{}",
            ran.stdout
        );
    }
}

#[test]
fn the_committed_schema_is_up_to_date() {
    let ran = run(&["schema"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let committed =
        std::fs::read_to_string(root().join("schema/dlqspec.schema.json")).unwrap_or_default();
    assert!(
        ran.stdout == committed,
        "schema/dlqspec.schema.json is stale: regenerate it with `cargo run -- schema > schema/dlqspec.schema.json`"
    );
}

fn schema_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&run(&["schema"]).stdout).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema is a valid draft-07 schema")
}

fn schema_errors(validator: &jsonschema::Validator, yaml: &str) -> Vec<String> {
    // As editors read it: YAML 1.2, where a plain `y` is a string, not a boolean.
    let options = serde_saphyr::options! { strict_booleans: true };
    let instance: Value =
        serde_saphyr::from_str_with_options(yaml, options).expect("the spec is YAML");
    validator
        .iter_errors(&instance)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect()
}

#[test]
fn every_bundled_spec_and_every_starter_is_valid_against_the_schema() {
    let validator = schema_validator();
    for path in bundled_specs() {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# yaml-language-server: $schema=../../schema/dlqspec.schema.json\n"),
            "{} does not point editors at the schema on its first line",
            path.display()
        );
        let errors = schema_errors(&validator, &text);
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    }
    for contract in crate::common::bundled_contracts() {
        let errors = schema_errors(&validator, &contract.starter("a starter"));
        assert!(
            errors.is_empty(),
            "{} starter: {errors:#?}",
            contract.name()
        );
    }
}

#[test]
fn the_schema_rejects_an_unknown_key_an_unknown_step_and_an_unknown_contract() {
    let validator = schema_validator();
    let spec = "contract: dlq-consumer\nname: x\nsteps:\n  - process: ok\n";
    assert_eq!(schema_errors(&validator, spec), Vec::<String>::new());
    for bad in [
        spec.replace("name: x", "nmae: x"),
        spec.replace("process: ok", "proces: ok"),
        spec.replace("process: ok", "process: okay"),
        spec.replace("dlq-consumer", "dlq-consumr"),
    ] {
        assert!(
            !schema_errors(&validator, &bad).is_empty(),
            "accepted:\n{bad}"
        );
    }
}

#[test]
fn the_schema_takes_an_allow_with_a_known_smell_and_a_reason_only() {
    let validator = schema_validator();
    for contract in ["dlq-consumer", "outcome-queue"] {
        let steps = if contract == "dlq-consumer" {
            "  - process: none\n"
        } else {
            "  - create: {max_attempts: 2}\n"
        };
        let spec = format!(
            "contract: {contract}\nname: x\nsteps:\n{steps}allow:\n  - {{smell: idle-trailing-step, reason: on purpose}}\n"
        );
        assert_eq!(
            schema_errors(&validator, &spec),
            Vec::<String>::new(),
            "{spec}"
        );
        for bad in [
            spec.replace(", reason: on purpose", ""),
            spec.replace("reason: on purpose", "reason: \" \""),
            spec.replace("idle-trailing-step", "idle-trailing-stp"),
            spec.replace("idle-trailing-step", "uncovered-rule"),
        ] {
            assert!(
                !schema_errors(&validator, &bad).is_empty(),
                "accepted:\n{bad}"
            );
        }
    }
}

/// Copies of bundled specs with expectations broken in several ways, and the originals.
fn broken_copies() -> Vec<(&'static str, String, String)> {
    let poison = bundled("poison-cycle.yaml");
    let whole_list = {
        let start = poison
            .find("  dlq:\n")
            .expect("poison-cycle expects a dlq list");
        let end = poison
            .find("  pending: []")
            .expect("poison-cycle expects pending");
        format!("{}  dlq: []\n{}", &poison[..start], &poison[end..])
    };
    let crash = bundled("crash-after-put-before-ack.yaml");
    let transient = bundled("transient-retried-to-the-tail.yaml");
    vec![
        // A scalar in a block mapping (a dlq entry written in block style).
        (
            "scalar-in-block-map.yaml",
            broken(&poison, "failed_at: 15", "failed_at: 99"),
            poison.clone(),
        ),
        // A whole dlq entry list, emptied.
        ("whole-dlq-list.yaml", whole_list, poison.clone()),
        // A value inside a flow mapping inside a block list.
        (
            "scalar-in-flow-entry.yaml",
            broken(&crash, "failed_at: 0}", "failed_at: 9}"),
            crash,
        ),
        // A value in a flow list, a flow list of the wrong length, and a step's return.
        (
            "flow-list-and-step.yaml",
            broken(
                &broken(&transient, "pending: [b, a]", "pending: [a]"),
                "- process: retry",
                "- process: ok",
            ),
            transient,
        ),
    ]
}

#[test]
fn bless_restores_broken_bundled_specs_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let copies = broken_copies();
    for (name, broken, _) in &copies {
        std::fs::write(dir.path().join(name), broken).unwrap();
    }
    let ran = run(&["bless", path_arg(dir.path())]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    for (name, _, original) in &copies {
        let blessed = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(
            blessed == *original,
            "{name} was not restored byte for byte:\n{blessed}"
        );
    }
    let shown = dir.path().join("flow-list-and-step.yaml");
    assert!(
        ran.stdout.contains(&format!(
            "blessed {} (2 values rewritten)\n",
            shown.display()
        )),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.ends_with("blessed 4 specs, 0 unchanged\n"),
        "{}",
        ran.stdout
    );
    let again = run(&["bless", "--check", path_arg(dir.path())]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert!(
        again.stdout.ends_with("nothing to bless in 4 specs\n"),
        "{}",
        again.stdout
    );
}

#[test]
fn bless_check_shows_a_diff_writes_nothing_and_exits_1() {
    let (name, broken, _) = broken_copies().remove(2);
    let (_dir, path) = temp_spec(name, &broken);
    let ran = run(&["bless", "--check", path_arg(&path)]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let shown = path.display();
    assert!(
        ran.stdout.starts_with(&format!(
            "would bless {shown} (1 value):\n--- {shown}\n+++ {shown} (blessed)\n@@ "
        )),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("failed_at: 9}\n+"), "{}", ran.stdout);
    assert!(
        ran.stdout
            .ends_with("1 spec would change; `dlqspec bless` writes it\n"),
        "{}",
        ran.stdout
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
}

#[test]
fn bless_never_blesses_a_broken_spec() {
    let text = "contract: dlq-consumer\nname: x\nmessages: [{id: a, body: b}]\nhandler: {a: []}\nsteps:\n  - process: retry\n";
    let (_dir, path) = temp_spec("broken.yaml", text);
    let ran = run(&["bless", path_arg(&path)]);
    assert_eq!(ran.code, 2, "{}", ran.stdout);
    assert!(
        ran.stdout.starts_with(&format!(
            "not blessed: {}: the spec is broken\nerror: message `a` reached the handler a 1st time, but the spec scripts 0 outcomes (at step 1 (process)): add the outcome of call 1\n",
            path.display()
        )),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("4 | handler: {a: []}\n  |           ^\n"),
        "{}",
        ran.stdout
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

/// Places inside the expectations of `text` where a change is still a loadable spec: each
/// scalar changed (in a list, those of its first and last item), and the last item of every
/// list of two or more dropped.
fn mutations(text: &str) -> Vec<(Range<usize>, String)> {
    fn collect(text: &str, node: &Node, out: &mut Vec<(Range<usize>, String)>) {
        match &node.kind {
            Kind::Scalar { value, style } if node.start < node.end => {
                let old = &text[node.start..node.end];
                let new = match (style, value.parse::<u64>()) {
                    (ScalarStyle::Plain, Ok(n)) => (n + 1).to_string(),
                    (ScalarStyle::Plain, Err(_)) => format!("{old}x"),
                    (ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted, _) => {
                        format!("{}x{}", &old[..old.len() - 1], &old[old.len() - 1..])
                    }
                    _ => return,
                };
                out.push((node.start..node.end, new));
            }
            Kind::Sequence { flow, items } => {
                // The first and the last item stand for the rest: long traces add only time.
                for item in items
                    .first()
                    .into_iter()
                    .chain(items.last().filter(|_| items.len() > 1))
                {
                    collect(text, item, out);
                }
                if let [.., before, last] = items.as_slice() {
                    let range = if *flow {
                        before.end..last.end
                    } else {
                        let Some(dash) = last.lead.filter(|l| l.kind == LeadKind::Dash) else {
                            return;
                        };
                        let start = text[..dash.at].rfind('\n').map_or(0, |i| i + 1);
                        let end = text[last.end..]
                            .find('\n')
                            .map_or(text.len(), |i| last.end + i + 1);
                        start..end
                    };
                    out.push((range, String::new()));
                }
            }
            Kind::Mapping { entries, .. } => {
                for (_, value) in entries {
                    collect(text, value, out);
                }
            }
            _ => {}
        }
    }
    crate::common::bundled_contracts(); // outcome-queue's folder registered, as a command does
    let spec = loader::load(SourceFile::from_text("m.yaml", text)).expect("bundled specs load");
    let run = spec.scenario.run(&mut Builtin::new(), RunMode::Record);
    let document = Document::parse(text).expect("bundled specs parse");
    let mut found = Vec::new();
    for checkpoint in &run.checkpoints {
        for written in &checkpoint.written {
            let node = document
                .find(written.at, &written.path)
                .expect("written values are found");
            collect(text, node, &mut found);
        }
    }
    found
        .into_iter()
        .filter(|(range, new)| {
            let changed = format!("{}{new}{}", &text[..range.start], &text[range.end..]);
            loader::load(SourceFile::from_text("m.yaml", changed)).is_ok()
        })
        .collect()
}

#[test]
fn bless_restores_every_bundled_spec_after_any_one_expectation_is_broken() {
    let dir = tempfile::tempdir().unwrap();
    let mut copies = Vec::new();
    let specs: Vec<PathBuf> = bundled_specs();
    for path in &specs {
        let path = path.clone();
        let original = std::fs::read_to_string(&path).unwrap();
        // Folder and name: two contracts may both have `empty-queue-returns-none.yaml`.
        let stem = path
            .strip_prefix(root().join("specs"))
            .unwrap_or(&path)
            .with_extension("")
            .to_string_lossy()
            .replace(['/', '\\'], "--");
        for (index, (range, new)) in mutations(&original).into_iter().enumerate() {
            let name = format!("{stem}.{index}.yaml");
            let changed = format!(
                "{}{new}{}",
                &original[..range.start],
                &original[range.end..]
            );
            std::fs::write(dir.path().join(&name), changed).unwrap();
            copies.push((name, original.clone()));
        }
    }
    assert!(
        copies.len() >= 3 * specs.len(),
        "too few mutations: {}",
        copies.len()
    );
    // The copies of an exercise folder's specs sit outside it: the folder is named.
    let ran = run(&[
        "bless",
        path_arg(dir.path()),
        "--exercise",
        "specs/outcome-queue",
    ]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let mut differing = Vec::new();
    for (name, original) in &copies {
        let blessed = std::fs::read_to_string(dir.path().join(name)).unwrap();
        if blessed != *original {
            differing.push(format!("{name}:\n{blessed}"));
        }
    }
    assert!(
        differing.is_empty(),
        "{} of {} broken copies were not restored byte for byte; the first, as blessed: {}",
        differing.len(),
        copies.len(),
        differing[0]
    );
}

#[test]
fn new_writes_a_starter_that_passes_and_lints_clean() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("specs/dlq-consumer/my-first-case.yaml");
    let ran = run(&["new", path_arg(&path), "--contract", "dlq-consumer"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(
        ran.stdout.lines().next().unwrap_or_default(),
        format!(
            "wrote {}: a dlq-consumer starter spec that passes as written",
            path.display()
        )
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\nname: my first case\n"), "{text}");
    let ran = run(&["run", path_arg(&path)]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert!(ran.stdout.starts_with("PASS "), "{}", ran.stdout);
    let ran = run(&["lint", path_arg(&path)]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    // In a checkout, the starter points editors at the schema; the folder names the contract.
    let inside = root()
        .join("target")
        .join(format!("new-{}", std::process::id()));
    let in_checkout = inside.join("dlq-consumer/x.yaml");
    let ran = run(&["new", path_arg(&in_checkout)]);
    let text = std::fs::read_to_string(&in_checkout).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&inside);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(
        text.starts_with("# yaml-language-server: $schema=../../../schema/dlqspec.schema.json\n"),
        "{text}"
    );
}

#[test]
fn new_never_overwrites_a_file() {
    let (_dir, path) = temp_spec("mine.yaml", "my words\n");
    let ran = run(&["new", path_arg(&path), "--contract", "dlq-consumer"]);
    assert_eq!(ran.code, 2);
    assert_eq!(
        ran.stderr,
        format!(
            "error: {} already exists; `dlqspec new` never overwrites a file\n",
            path.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "my words\n");
}

#[test]
fn new_names_the_known_contracts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.yaml");
    let ran = run(&["new", path_arg(&path), "--contract", "dlq"]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr
            .starts_with("error: unknown contract `dlq`; expected one of dlq-consumer"),
        "{}",
        ran.stderr
    );
    let ran = run(&["new", path_arg(&path)]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr
            .starts_with("error: which contract? pass --contract NAME (one of dlq-consumer"),
        "{}",
        ran.stderr
    );
    assert!(!path.exists());
}

#[test]
fn explain_tells_the_poison_cycle_with_the_rule_behind_each_decision() {
    let ran = run(&["explain", "specs/dlq-consumer/poison-cycle.yaml"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    for line in [
        "a poison pill is dead-lettered after max_attempts crashes\n",
        "specs/dlq-consumer/poison-cycle.yaml · contract dlq-consumer · implementation builtin\n",
        "    handler(p) crashes the process\n",
        "    rule dlq-consumer/crash-propagates: the crash propagates out of process_one and p stays in flight\n",
        ": recover: the visibility timeout runs out; p back to the ready tail\n",
        ": restart: a fresh consumer instance takes over, remembering nothing\n",
        ": advance: the clock moves by 10, from 0 to 10\n",
        "    receive p: receive_count 3, first received at 0\n",
        "    rule dlq-consumer/poison: receive_count 3 > max_attempts 2: p is past its budget (its delivery at receive_count 2 died mid-handler), so it is dead-lettered as poison without calling the handler\n",
        "    dlq.put(p): reason poison, error null, attempts 2, first_attempt_at 0, failed_at 15; the DLQ holds p\n",
    ] {
        assert!(
            ran.stdout.contains(line),
            "missing {line:?} in:\n{}",
            ran.stdout
        );
    }
    assert!(
        ran.stdout
            .ends_with("\noutcome: PASS: every expectation holds\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn explain_tells_a_failing_scenario_to_the_end_and_exits_1() {
    let text = "contract: dlq-consumer\nname: wrong\nmessages: [{id: a, body: b}]\nhandler: {a: [transient: t, ok]}\nsteps:\n  - process: ok\n  - process: ok\nexpect: {pending: [a]}\n";
    let (_dir, path) = temp_spec("wrong.yaml", text);
    let ran = run(&["explain", path_arg(&path)]);
    assert_eq!(ran.code, 1, "{}", ran.stdout);
    assert!(
        ran.stdout
            .contains("    \u{2717} process: expected ok, got retry\n"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains(&format!(
            "\noutcome: FAIL: 2 checked values differ\n  first difference at step 1 (process) ({}:6:14)\n",
            path.display()
        )),
        "{}",
        ran.stdout
    );
}

#[test]
fn lint_points_at_each_smell_with_its_id_and_exits_1() {
    let text = "contract: dlq-consumer\nname: smelly\nmessages:\n  - {id: a, body: x}\nhandler:\n  a: [ok, ok]\nsteps:\n  - process: ok\n  - process: none\n  - process: none\n";
    let (_dir, path) = temp_spec("smelly.yaml", text);
    let ran = run(&["lint", path_arg(&path)]);
    assert_eq!(ran.code, 1, "{}", ran.stdout);
    snapshot_settings().bind(|| insta::assert_snapshot!("lint_smells", ran.stdout));
}

#[test]
fn lint_finds_duplicate_names_never_delivered_messages_and_uncovered_rules_in_a_folder() {
    let top = tempfile::tempdir().unwrap();
    // A whole contract folder: rule coverage is judged.
    let dir = top.path().join("dlq-consumer");
    std::fs::create_dir(&dir).unwrap();
    let spec = "contract: dlq-consumer\nname: same\nrules: [dlq-consumer/success]\nmessages: [{id: a, body: x}, {id: b, body: y}]\nhandler: {a: [ok]}\nsteps:\n  - process: ok\n";
    std::fs::write(dir.as_path().join("a.yaml"), spec).unwrap();
    std::fs::write(dir.as_path().join("b.yaml"), spec).unwrap();
    let ran = run(&["lint", path_arg(dir.as_path())]);
    assert_eq!(ran.code, 1, "{}", ran.stdout);
    let a = dir.as_path().join("a.yaml");
    let b = dir.as_path().join("b.yaml");
    for line in [
        format!(
            "{}:4:30: never-delivered: message `b` is never delivered and no expectation names it: process it, expect it somewhere, or leave it out\n",
            a.display()
        ),
        format!(
            "{}:2:7: duplicate-name: {} has the same name; names tell specs apart in reports\n",
            b.display(),
            a.display()
        ),
        format!(
            "dlq-consumer/poison: uncovered-rule: no spec under {} checks this rule: ",
            dir.as_path().display()
        ),
    ] {
        assert!(
            ran.stdout.contains(&line),
            "missing {line:?} in:\n{}",
            ran.stdout
        );
    }
    assert!(
        !ran.stdout.contains("dlq-consumer/success: uncovered-rule"),
        "{}",
        ran.stdout
    );
}

#[test]
fn lint_judges_coverage_only_for_a_whole_contract_folder_or_with_coverage() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "contract: dlq-consumer\nname: one\nrules: [dlq-consumer/success]\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps:\n  - process: ok\n";
    std::fs::write(dir.path().join("a.yaml"), spec).unwrap();
    let ran = run(&["lint", path_arg(dir.path())]);
    assert_eq!(
        (ran.code, ran.stdout.as_str()),
        (0, "no smells in 1 spec\n")
    );
    let ran = run(&["lint", path_arg(dir.path()), "--coverage"]);
    assert_eq!(ran.code, 1, "{}", ran.stdout);
    assert!(
        ran.stdout.contains("dlq-consumer/poison: uncovered-rule: "),
        "{}",
        ran.stdout
    );
    assert!(!ran.stdout.contains("outcome-queue/"), "{}", ran.stdout);
    let ran = run(&[
        "lint",
        path_arg(dir.path()),
        "--coverage",
        "--allow",
        "uncovered-rule",
    ]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
}

/// The bundled suite lints clean, rule coverage included.
#[test]
fn the_bundled_suite_lints_clean() {
    let ran = run(&["lint", "specs"]);
    let smells: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|line| line.starts_with("specs/") || line.contains(": uncovered-rule: "))
        .collect();
    assert!(smells.is_empty(), "{}", ran.stdout);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
}

/// A dlq-consumer spec whose second expectation differs: the handler is called once, not twice.
const FAILING: &str = "contract: dlq-consumer\nname: NAME\nrules: [dlq-consumer/success]\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps:\n  - process: ok\nexpect:\n  handler_calls: {a: 2}\n";

#[test]
fn bless_refuses_a_spec_whose_fault_never_fires_at_the_fault_and_writes_nothing() {
    let text = FAILING.replace(
        "steps:\n",
        "steps:\n  - fault: {crash: after, call: dlq.put}\n",
    );
    let (_dir, path) = temp_spec("unfired.yaml", &text);
    for check in [false, true] {
        let mut args = vec!["bless"];
        if check {
            args.push("--check");
        }
        args.push(path_arg(&path));
        let ran = run(&args);
        assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
        let shown = path.display();
        for line in [
            format!("not blessed: {shown}: the spec is broken\n"),
            "error: the crash armed here never fires".to_owned(),
            format!("--> {shown}:7:5\n"),
        ] {
            assert!(
                ran.stdout.contains(&line),
                "missing {line:?} in:\n{}",
                ran.stdout
            );
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}

#[test]
fn bless_writes_a_spec_with_a_smell_and_points_at_lint_for_each() {
    let text = FAILING.replace("{id: a, body: x}]", "{id: a, body: x}, {id: b, body: y}]");
    let (_dir, path) = temp_spec("smelly.yaml", &text);
    let ran = run(&["bless", path_arg(&path)]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let shown = path.display();
    assert!(
        ran.stdout.contains(&format!(
            "blessed {shown} (1 value rewritten)\n  smell: {shown}:4:30: never-delivered: message `b` is never delivered and no expectation names it: process it, expect it somewhere, or leave it out (see `dlqspec lint {shown}`)\n"
        )),
        "{}",
        ran.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text.replace("{a: 2}", "{a: 1}")
    );
    // Allowed in the spec, the smell is not told.
    let allowed = format!("{text}allow: [{{smell: never-delivered, reason: b waits}}]\n");
    std::fs::write(&path, &allowed).unwrap();
    let ran = run(&["bless", path_arg(&path)]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(!ran.stdout.contains("smell:"), "{}", ran.stdout);
}

/// `dlqspec bless --interactive ARGS` with `answers` on stdin, taken for a terminal.
fn bless_interactively(args: &[&str], answers: &str) -> crate::common::Ran {
    use std::io::Write as _;
    let mut child = crate::common::dlqspec()
        .env("DLQSPEC_ASSUME_TTY", "1")
        .args(["bless", "--interactive"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("dlqspec runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(answers.as_bytes()).expect("answers");
    drop(stdin);
    crate::common::ran(child.wait_with_output().expect("dlqspec ends"))
}

#[test]
fn bless_interactive_never_overwrites_an_edit_made_while_it_asked() {
    use std::io::{Read as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.yaml");
    std::fs::write(&path, FAILING.replace("NAME", "a")).unwrap();
    let mut child = crate::common::dlqspec()
        .env("DLQSPEC_ASSUME_TTY", "1")
        .args(["bless", "--interactive", path_arg(&path)])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("dlqspec runs");
    // Wait for the question, edit the spec as an author would, then accept.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut shown = Vec::new();
    let mut byte = [0u8; 1];
    while !shown.ends_with(b"[q]uit: ") {
        assert_eq!(
            stdout.read(&mut byte).expect("the question"),
            1,
            "no question"
        );
        shown.push(byte[0]);
    }
    let edited = format!("# the author's note\n{}", FAILING.replace("NAME", "a"));
    std::fs::write(&path, &edited).unwrap();
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"a\n").expect("the answer");
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("the rest");
    let status = child.wait().expect("dlqspec ends");
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(
        rest.contains("changed since its diff was shown; run bless again"),
        "{rest}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
}

#[test]
fn bless_interactive_asks_per_spec_writes_the_accepted_and_stops_at_quit() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["a.yaml", "b.yaml", "c.yaml", "d.yaml"];
    for name in names {
        std::fs::write(dir.path().join(name), FAILING.replace("NAME", name)).unwrap();
    }
    // An answer that is no answer is asked again.
    let ran = bless_interactively(&[path_arg(dir.path())], "a\nwhat\ns\nq\n");
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let path = |name: &str| dir.path().join(name);
    let text = |name: &str| std::fs::read_to_string(path(name)).unwrap();
    assert_eq!(
        text("a.yaml"),
        FAILING
            .replace("NAME", "a.yaml")
            .replace("{a: 2}", "{a: 1}")
    );
    for name in ["b.yaml", "c.yaml", "d.yaml"] {
        assert_eq!(text(name), FAILING.replace("NAME", name), "{name}");
    }
    let a = path("a.yaml");
    let b = path("b.yaml");
    let c = path("c.yaml");
    for line in [
        format!(
            "{} (1 value):\n--- {}\n+++ {} (blessed)\n@@ ",
            a.display(),
            a.display(),
            a.display()
        ),
        "-  handler_calls: {a: 2}\n+  handler_calls: {a: 1}\n".to_owned(),
        format!(
            "bless {}? [a]ccept, [s]kip, [q]uit: blessed {} (1 value rewritten)\n",
            a.display(),
            a.display()
        ),
        format!(
            "please answer a (accept), s (skip) or q (quit)\nbless {}? [a]ccept, [s]kip, [q]uit: skipped {}\n",
            b.display(),
            b.display()
        ),
        format!("bless {}? [a]ccept, [s]kip, [q]uit: ", c.display()),
    ] {
        assert!(
            ran.stdout.contains(&line),
            "missing {line:?} in:\n{}",
            ran.stdout
        );
    }
    assert!(
        !ran.stdout
            .contains(&format!("bless {}?", path("d.yaml").display())),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.ends_with(
            "blessed 1 spec, 0 unchanged, 1 skipped, stopped by quit: 2 specs left as they are\n"
        ),
        "{}",
        ran.stdout
    );
    // The end of the answers is a quit too: nothing more is written.
    let ran = bless_interactively(&[path_arg(dir.path())], "");
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(text("b.yaml"), FAILING.replace("NAME", "b.yaml"));
}

#[test]
fn bless_interactive_without_a_terminal_refuses_and_says_what_to_do() {
    let (_dir, path) = temp_spec("a.yaml", &FAILING.replace("NAME", "a"));
    let output = crate::common::dlqspec()
        .env_remove("DLQSPEC_ASSUME_TTY")
        .args(["bless", "--interactive", path_arg(&path)])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("dlqspec runs");
    let ran = crate::common::ran(output);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr
            .contains("stdin is not a terminal: run it in a terminal, or drop --interactive"),
        "{}",
        ran.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        FAILING.replace("NAME", "a")
    );
    let ran = run(&["bless", "--interactive", "--check", path_arg(&path)]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("'--interactive' cannot be used with '--check'"),
        "{}",
        ran.stderr
    );
}

#[test]
fn lint_allow_takes_known_smell_ids_only_with_a_did_you_mean() {
    let ran = run(&["lint", "specs", "--allow", "never-delivred"]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr
            .contains("`never-delivred` is not a smell id (did you mean `never-delivered`?)"),
        "{}",
        ran.stderr
    );
}

#[test]
fn lint_leaves_out_allowed_smells_and_reports_a_stale_allow() {
    let smelly = "contract: dlq-consumer\nname: smelly\nrules: [dlq-consumer/success]\nmessages: [{id: a, body: x}, {id: b, body: y}]\nhandler: {a: [ok]}\nsteps:\n  - process: ok\n";
    let (dir, path) = temp_spec("smelly.yaml", smelly);
    let shown = path.display();
    let ran = run(&["lint", path_arg(&path), "--allow", "never-delivered"]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert_eq!(ran.stdout, "no smells in 1 spec (1 allowed)\n");
    let allowing = format!(
        "{smelly}allow:\n  - {{smell: never-delivered, reason: b is for later}}\n  - {{smell: no-rule, reason: stale}}\n"
    );
    std::fs::write(&path, allowing).unwrap();
    let ran = run(&["lint", path_arg(&path)]);
    assert_eq!(ran.code, 1, "{}", ran.stdout);
    snapshot_settings().bind(|| insta::assert_snapshot!("lint_stale_allow", ran.stdout));
    // A reason is required.
    std::fs::write(
        &path,
        format!("{smelly}allow: [{{smell: never-delivered}}]\n"),
    )
    .unwrap();
    let ran = run(&["lint", path_arg(&path)]);
    assert_eq!(ran.code, 2, "{}", ran.stdout);
    assert!(
        ran.stdout
            .contains("error: the allow of `never-delivered` has no `reason`")
            && ran.stdout.contains(&format!("--> {shown}:8:9\n")),
        "{}",
        ran.stdout
    );
    drop(dir);
}

#[test]
fn lint_tells_never_delivered_generated_messages_once_per_line() {
    let text = "contract: dlq-consumer\nname: compact\nrules: [dlq-consumer/success]\ngenerate:\n  - {count: 1000, id: \"m-{n}\", body: \"b-{n}\", handler: [ok]}\nsteps:\n  - process: ok\n";
    let (_dir, path) = temp_spec("compact.yaml", text);
    let ran = run(&["lint", path_arg(&path)]);
    assert_eq!(ran.code, 1, "{}", ran.stdout);
    let smells: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|l| l.contains(": never-delivered: "))
        .collect();
    assert_eq!(smells.len(), 1, "{}", ran.stdout);
    assert!(smells[0].ends_with("never-delivered: 999 messages written here (`m-2` to `m-1000`) are never delivered and no expectation names them: process them, expect them somewhere, or leave them out"), "{}", ran.stdout);
    assert!(
        ran.stdout
            .contains("unused-outcomes: the handler outcomes of 999 messages written here"),
        "{}",
        ran.stdout
    );
}

#[test]
fn explain_tells_an_outcome_queue_run_with_lines_job_ids_states_and_specific_rules() {
    let text = "contract: outcome-queue\nname: q\nsteps:\n  - create: {max_attempts: 2}\n  - submit: {id: a, payload: pa}\n  - submit: {id: b, payload: pb}\n  - process: {outcome: transient, returns: retry}\n  - process: {outcome: permanent, returns: dead}\n  - process: {outcome: retry, raises: invalid_argument}\n  - replay: {id: b, returns: true}\n  - replay: {id: zzz, returns: false}\nexpect: {ready: [{id: a, payload: pa, attempts: 1}, {id: b, payload: pb, attempts: 0}], done: [], quarantine: []}\n";
    let (_dir, path) = temp_spec("q.yaml", text);
    // The spec sits outside the exercise's folder, so the folder is named.
    let ran = run(&[
        "explain",
        path_arg(&path),
        "--exercise",
        "specs/outcome-queue",
    ]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let timeline = ran
        .stdout
        .split_once("\n\n")
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    // Each step by its line, the call and its answer, the lists after it by job id, and the
    // rules it reaches, the most specific first: a raise reaches only the rule of that raise.
    fn told(timeline: &str, n: usize) -> &str {
        let from = timeline
            .find(&format!("step {n} (line {})", n + 3))
            .unwrap_or_else(|| panic!("step {n}:\n{timeline}"));
        let rest = &timeline[from..];
        let to = rest[1..].find("\nstep ").map_or(rest.len(), |at| at + 1);
        &rest[..to]
    }
    let step = |n: usize| told(timeline, n);
    let rules = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|line| line.trim().strip_prefix("rule "))
            .filter_map(|rule| rule.split(':').next())
            .map(str::to_owned)
            .collect()
    };
    assert!(
        step(1).contains("RetryQueue(2) -> a new instance"),
        "{timeline}"
    );
    assert!(
        step(3).contains("ready: [a, b]; done: []; quarantine: []"),
        "{timeline}"
    );
    let fourth = step(4);
    assert!(fourth.contains("process(transient) -> retry"), "{timeline}");
    assert!(fourth.contains("ready: [b, a]"), "{timeline}");
    assert_eq!(
        rules(fourth),
        [
            "outcome-queue/transient-retry-tail",
            "outcome-queue/attempt-counted-first"
        ],
        "{timeline}"
    );
    let fifth = step(5);
    assert!(fifth.contains("quarantine: [b]"), "{timeline}");
    assert_eq!(
        rules(fifth),
        [
            "outcome-queue/permanent-quarantine",
            "outcome-queue/entry-retains-diagnostics",
            "outcome-queue/attempt-counted-first"
        ],
        "{timeline}"
    );
    assert_eq!(
        rules(step(6)),
        ["outcome-queue/outcome-validated-first"],
        "{timeline}"
    );
    assert!(rules(step(7)).contains(&"outcome-queue/replay-resets".to_owned()));
    assert_eq!(
        rules(step(8)),
        ["outcome-queue/replay-missing-false"],
        "{timeline}"
    );
    assert!(
        timeline.ends_with("outcome: PASS: every expectation holds\n"),
        "{timeline}"
    );
}

#[test]
fn explain_says_what_replay_skipped() {
    let ran = run(&[
        "explain",
        "specs/dlq-consumer/replay-skips-unknown-ids.yaml",
    ]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains(
            "step 3 (line 17): replay([ghost, b, a]) returned [a]\n    \
             dlq.entries(): the DLQ holds a\n    \
             queue.send(a): a joins the ready tail\n    \
             dlq.remove(a): the DLQ holds nothing\n    \
             replay skips ghost, b: not in the DLQ\n    \
             rule dlq-consumer/replay-selection: the given ids that are in the DLQ are replayed, in the order given, each once; skipped: ghost, b\n"
        ),
        "{}",
        ran.stdout
    );
    let ran = run(&[
        "explain",
        "specs/dlq-consumer/replay-a-repeated-id-once.yaml",
    ]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("\n    replay skips the repeats of a: each id is replayed once\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn explain_tells_no_rule_for_a_retry_a_crash_prevented() {
    let text = "contract: dlq-consumer\nname: a crash before queue.retry\nrules: [dlq-consumer/transient-retry, dlq-consumer/crash-propagates]\nmessages: [{id: a, body: x}]\nhandler: {a: [transient: db down, ok]}\nsteps:\n  - fault: {crash: before, call: queue.retry}\n  - process: crash\n  - recover\n  - process: ok\n";
    let (_dir, path) = temp_spec("prevented.yaml", text);
    let ran = run(&["explain", path_arg(&path)]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains(
            "step 2 (line 8): process_one() returned crash\n    \
             receive a: receive_count 1, first received at 0\n    \
             dlq.has(a) -> false\n    \
             handler(a) raises TransientError: db down\n    \
             CRASH injected before queue.retry: the process dies\n    \
             rule dlq-consumer/crash-propagates: the crash injected at queue.retry propagates out of process_one: the retry of a never happens, and a stays in flight\n    \
             \u{2713} process: crash\n\
             step 3 (line 9): recover"
        ),
        "{}",
        ran.stdout
    );
    assert!(
        !ran.stdout.contains("rule dlq-consumer/transient-retry"),
        "{}",
        ran.stdout
    );
    // The rule is still exercised: the implementation had to call queue.retry for the crash.
    let linted = run(&["lint", path_arg(&path)]);
    assert_eq!(linted.code, 0, "{}", linted.stdout);
}
