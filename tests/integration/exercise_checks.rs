//! An exercise wrong in ways YAML's shape cannot show, told to its author: a first `draw:`
//! value the reference refuses and a `refused:` value it accepts (lint and explore, at
//! exercise.yaml's line and column, never a green explore), and a known mistake whose
//! failures are told under another rule than its header names (strength, at its first line).
//! The mistakes an outside author made in it (a spec's wrong key, a clock move of no number,
//! the one view named in `expect`, a boolean of words, a rule decided at an `expect`) are each
//! told at the text at fault, all in one pass. A reference that does not load is told once, by
//! every command that runs it, and is named as its author knows it; a regrade tells that
//! `exercise.yaml` or the reference changed since; `new` runs its starter on the reference; the
//! shims refuse data JSON cannot carry and a restart factory that makes nothing. The exercise
//! is a small idempotency-key store written from an outside author's.

use std::path::Path;

use crate::common::{path_arg, run, shown_for_snapshot, snapshot_settings};

const EXERCISE: &str = "\
exercise: deduper
title: A store remembers each key for ttl ticks of the clock and says whether it has seen it
class: Deduper
reference: reference.py
given:
  clock: {kind: clock, class: Clock, advance: [1, 2, 3]}
create:
  args:
    clock: {given: clock}
    ttl: {draw: [3, 1, 5], refused: [0, -1]}
methods:
  seen:
    args:
      key: {draw: [a, b]}
views:
  state:
    deep_copy: true
    keys: [expires_at]
rules:
  - id: ttl-validated
    says: The ttl is an integer of at least 1; any other value raises an invalid-argument error.
    decides:
      - {call: create}
  - id: first-seen-false
    says: seen(key) of a key not remembered returns false and remembers it until now + ttl.
    decides:
      - {call: seen, returns: false}
      - {call: seen, returns: false, view: state, key: keys}
  - id: repeat-seen-true
    says: seen(key) of a remembered key returns true.
    decides:
      - {call: seen, returns: true}
  - id: no-refresh
    says: seen(key) of a remembered key does not extend its expiry.
    decides:
      - {call: seen, returns: true, view: state, key: keys}
  - id: expires-at-ttl
    says: A key remembered at time t is forgotten when now reaches t + ttl.
    decides:
      - {view: state, key: keys}
";

/// The reference; a known mistake is it with `REFRESH` put in.
const REFERENCE: &str = "\
class Deduper:
    def __init__(self, clock, ttl):
        if type(ttl) is not int or ttl < 1:
            raise ValueError(\"ttl must be an integer of at least 1, not %r\" % (ttl,))
        self._clock = clock
        self._ttl = ttl
        self._keys = {}

    def _purge(self):
        now = self._clock.now()
        for key in [k for k, until in self._keys.items() if until <= now]:
            del self._keys[key]
        return now

    def seen(self, key):
        now = self._purge()
        if key in self._keys:
            return True
        self._keys[key] = now + self._ttl
        return False

    def state(self):
        self._purge()
        return {\"ttl\": self._ttl, \"keys\": [{\"key\": k, \"expires_at\": t} for k, t in self._keys.items()]}
";

const REFRESH: (&str, &str) = (
    "        if key in self._keys:\n            return True",
    "        if key in self._keys:\n            self._keys[key] = now + self._ttl\n            return True",
);

const SPEC: &str = "\
contract: deduper
name: seeing a remembered key again does not extend how long it is remembered
rules: [deduper/no-refresh, deduper/repeat-seen-true, deduper/first-seen-false]
steps:
  - create: {ttl: 4}
  - seen: {key: a, returns: false}
  - advance: 3
  - seen: {key: a, returns: true}
  - expect:
      ttl: 4
      keys: [{key: a, expires_at: 4}]
  - advance: 1
  - seen: {key: a, returns: false}
expect:
  ttl: 4
  keys: [{key: a, expires_at: 8}]
";

/// The exercise written into a fresh folder, `ttl` being its constructor argument's line and
/// its one known mistake headed by `header`.
fn folder(ttl: &str, header: &str) -> tempfile::TempDir {
    let line = "    ttl: {draw: [3, 1, 5], refused: [0, -1]}";
    written((line, &format!("    ttl: {ttl}")), SPEC, header)
}

/// The exercise written into a fresh folder with `edit` made to its `exercise.yaml` (`from`
/// replaced by `to`), `spec` as its one spec and its known mistake headed by `header`.
fn written(edit: (&str, &str), spec: &str, header: &str) -> tempfile::TempDir {
    let folder = tempfile::tempdir().expect("a temp dir");
    let write = |name: &str, text: &str| {
        let path = folder.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        std::fs::write(path, text).expect("written");
    };
    assert!(EXERCISE.contains(edit.0), "{}", edit.0);
    write("exercise.yaml", &EXERCISE.replacen(edit.0, edit.1, 1));
    write("reference.py", REFERENCE);
    write("specs/repeat-does-not-refresh.yaml", spec);
    assert!(REFERENCE.contains(REFRESH.0));
    write(
        "mistakes/refreshes-on-repeat.py",
        &format!("{header}\n{}", REFERENCE.replace(REFRESH.0, REFRESH.1)),
    );
    folder
}

const HEADER: &str = "# breaks no-refresh: seeing a remembered key again pushes its expiry back";

fn explore(folder: &Path) -> crate::common::Ran {
    let reference = folder.join("reference.py");
    run(&explore_args(path_arg(folder), path_arg(&reference), "20"))
}

/// `explore` of the exercise at `folder` against `target`, `cases` cases from seed 1.
fn explore_args<'a>(folder: &'a str, target: &'a str, cases: &'a str) -> Vec<&'a str> {
    vec![
        "explore",
        "--exercise",
        folder,
        "--contract",
        "deduper",
        "--impl",
        target,
        "--cases",
        cases,
        "--seed",
        "1",
    ]
}

#[test]
fn a_first_draw_the_reference_refuses_is_told_at_exercise_yaml_by_lint_and_explore() {
    let broken = folder("{draw: [0, 3, 1]}", HEADER);
    let lint = run(&["lint", path_arg(broken.path())]);
    assert_eq!(lint.code, 2, "{}{}", lint.stdout, lint.stderr);
    let told = format!("{}{}", lint.stdout, lint.stderr);
    for words in [
        "exercise.yaml:10:18",
        "the reference refuses the first values `draw:` gives the constructor ({ttl: 0})",
        "invalid_argument (ValueError: ttl must be an integer of at least 1, not 0)",
        "`ttl: {draw: [3, 1], refused: [0]}`",
        "^",
    ] {
        assert!(told.contains(words), "{words}:\n{told}");
    }
    assert!(!told.contains("no smells"), "{told}");

    let explored = explore(broken.path());
    assert_eq!(explored.code, 2, "{}{}", explored.stdout, explored.stderr);
    let told = format!("{}{}", explored.stdout, explored.stderr);
    assert!(told.contains("exercise.yaml:10:18"), "{told}");
    assert!(!told.contains("no divergence"), "{told}");
    assert!(!told.contains("a bug of the generator"), "{told}");
}

#[test]
fn a_refused_value_the_reference_accepts_is_told_at_it() {
    let broken = folder("{draw: [3, 1], refused: [0, 2]}", HEADER);
    let lint = run(&["lint", path_arg(broken.path())]);
    assert_eq!(lint.code, 2, "{}{}", lint.stdout, lint.stderr);
    let told = format!("{}{}", lint.stdout, lint.stderr);
    assert!(told.contains("exercise.yaml:10:38"), "{told}");
    assert!(
        told.contains("the reference accepts `ttl: 2`: it makes a Deduper of it"),
        "{told}"
    );
}

#[test]
fn draws_the_reference_agrees_with_pass_lint_explore_and_strength() {
    let right = folder("{draw: [3, 1, 5], refused: [0, -1]}", HEADER);
    let lint = run(&["lint", path_arg(right.path())]);
    assert_eq!(lint.code, 0, "{}{}", lint.stdout, lint.stderr);
    let explored = explore(right.path());
    assert_eq!(explored.code, 0, "{}{}", explored.stdout, explored.stderr);
    assert!(
        explored.stdout.contains("no divergence"),
        "{}",
        explored.stdout
    );
    let strength = run(&["strength", path_arg(right.path()), "--explore-cases", "0"]);
    assert_eq!(strength.code, 0, "{}{}", strength.stdout, strength.stderr);
    assert!(!strength.stdout.contains("misnamed"), "{}", strength.stdout);
}

#[test]
fn a_known_mistake_told_under_another_rule_than_its_header_is_told_at_its_header() {
    let header = "# breaks first-seen-false: seeing a remembered key again pushes its expiry back";
    let misnamed = folder("{draw: [3, 1, 5], refused: [0, -1]}", header);
    let strength = run(&[
        "strength",
        path_arg(misnamed.path()),
        "--explore-cases",
        "0",
    ]);
    assert_eq!(strength.code, 1, "{}{}", strength.stdout, strength.stderr);
    let told = &strength.stdout;
    for words in [
        "caught    refreshes-on-repeat",
        "but told as breaking deduper/no-refresh, not deduper/first-seen-false as its header says",
        "mistakes/refreshes-on-repeat.py:1:1: misnamed mistake: its header says it breaks `deduper/first-seen-false`, but no spec that catches it tells that rule; the first tells `deduper/no-refresh`",
        "write `breaks no-refresh:` in the header, or make a pattern of `first-seen-false`'s `decides`",
        "every mistake is caught, 1 under another rule than its header names",
    ] {
        assert!(told.contains(words), "{words}:\n{told}");
    }
}

/// Holds that `lint` refuses the folder as broken (exit 2) telling each of `words`.
fn refused_telling(folder: &Path, words: &[&str]) {
    let lint = run(&["lint", path_arg(folder)]);
    let told = format!("{}{}", lint.stdout, lint.stderr);
    assert_eq!(lint.code, 2, "{told}");
    for words in words {
        assert!(told.contains(words), "{words}:\n{told}");
    }
}

/// A first draft of the spec with four mistakes, each of one key or value.
const DRAFT: &str = "\
contract: deduper
name: seeing a remembered key again does not extend how long it is remembered
rules: [deduper/no-refresh]
steps:
  - create: {ttl: 4}
  - seen: {key: a, returns: false, kye: b}
  - advance: x
  - seen:
      key: a
      retruns: true
expect:
  state: {ttl: 4, keys: [{key: a, expires_at: 4}]}
";

#[test]
fn a_drafts_mistakes_are_told_in_one_pass_each_at_the_text_at_fault() {
    let draft = written(("", ""), DRAFT, HEADER);
    refused_telling(
        draft.path(),
        &[
            "4 errors in",
            "repeat-does-not-refresh.yaml:6:36",
            "`kye` is not an argument of `seen`",
            "repeat-does-not-refresh.yaml:7:14",
            "`advance` takes the time to move the clock by, a number of at least 0 (`advance: 3`), not `x`",
            "repeat-does-not-refresh.yaml:10:7",
            "repeat-does-not-refresh.yaml:12:3",
            "take `state:` out and write what it holds in its place, `expect: {ttl: 4, keys: [{key: a, expires_at: 4}]}`",
        ],
    );
    let ran = run(&["lint", path_arg(draft.path())]);
    snapshot_settings().bind(|| {
        insta::assert_snapshot!("exercise_draft_lint", shown_for_snapshot(&ran));
    });
}

#[test]
fn a_boolean_written_in_words_is_told_with_its_key_and_the_two_words_it_takes() {
    let broken = written(("deep_copy: true", "deep_copy: yes please"), SPEC, HEADER);
    refused_telling(
        broken.path(),
        &[
            "exercise.yaml:17:16",
            "`deep_copy` takes `true` or `false`, not `yes please`: write `deep_copy: true` or `deep_copy: false`",
        ],
    );
    let broken = written(("advance: [1, 2, 3]", "advance: [1, two]"), SPEC, HEADER);
    refused_telling(
        broken.path(),
        &[
            "exercise.yaml:6:51",
            "each item of `advance` is a whole number, 0 or more, not `two`",
        ],
    );
}

#[test]
fn a_rule_decided_at_an_expect_is_refused_and_one_decided_at_a_clock_move_is_kept() {
    let broken = written(("{call: create}", "{call: expect}"), SPEC, HEADER);
    refused_telling(
        broken.path(),
        &[
            "exercise.yaml:23:16",
            "`call: expect` names no call a departure is found at (`expect` calls nothing",
            "expected one of create, restart, advance, seen",
        ],
    );
    let moved = written(
        (
            "      - {view: state, key: keys}\n",
            "      - {call: advance}\n",
        ),
        SPEC,
        HEADER,
    );
    let lint = run(&["lint", path_arg(moved.path())]);
    assert_eq!(lint.code, 0, "{}{}", lint.stdout, lint.stderr);
}

/// `grade` over the exercise's specs into `out`, the reference as the one submission.
fn grade(folder: &Path, out: &Path, extra: &[&str]) -> crate::common::Ran {
    let submission = folder.join("reference.py");
    let specs = folder.join("specs");
    let mut args = vec![
        "grade",
        "--specs",
        path_arg(&specs),
        "--output",
        path_arg(out),
        "--jobs",
        "1",
    ];
    args.extend_from_slice(extra);
    args.push(path_arg(&submission));
    run(&args)
}

#[test]
fn a_regrade_tells_that_exercise_yaml_or_the_reference_changed_since() {
    let exercise = folder("{draw: [3, 1, 5], refused: [0, -1]}", HEADER);
    let outputs = tempfile::tempdir().expect("a temp dir");
    let digest = |out: &Path| crate::common::summary_json(out)["suite"]["digest"].clone();
    let first = outputs.path().join("first");
    let graded = grade(exercise.path(), &first, &[]);
    assert_eq!(graded.code, 0, "{}{}", graded.stdout, graded.stderr);
    let against = ["--against", path_arg(&first)];
    let again = outputs.path().join("again");
    let graded = grade(exercise.path(), &again, &against);
    assert_eq!(graded.code, 0, "{}{}", graded.stdout, graded.stderr);
    assert_eq!(digest(&again), digest(&first));
    assert!(
        !graded.stdout.contains("the suite changed"),
        "{}",
        graded.stdout
    );
    for file in ["exercise.yaml", "reference.py"] {
        let path = exercise.path().join(file);
        let was = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, format!("{was}# changed\n")).expect("written");
        let out = outputs.path().join(file);
        let graded = grade(exercise.path(), &out, &against);
        std::fs::write(&path, was).expect("put back");
        assert_eq!(graded.code, 0, "{}{}", graded.stdout, graded.stderr);
        assert_ne!(digest(&out), digest(&first), "{file}");
        let told = format!(
            "against {}: no change (1 submission)\n  the suite changed since (digest {} then, {} now)",
            path_arg(&first),
            digest(&first).as_str().expect("a digest"),
            digest(&out).as_str().expect("a digest"),
        );
        assert!(graded.stdout.contains(&told), "{file}: {}", graded.stdout);
        let html = std::fs::read_to_string(out.join("summary.html")).expect("summary.html");
        assert!(html.contains("the suite changed since"), "{file}");
    }
}

#[test]
fn a_reference_that_does_not_load_is_told_once_by_every_command_that_runs_it() {
    let exercise = folder("{draw: [3, 1, 5], refused: [0, -1]}", HEADER);
    let at = exercise.path();
    // Two specs and five rules: the error is told once, not per spec nor per rule.
    std::fs::write(
        at.join("specs/second.yaml"),
        SPEC.replace("name: seeing", "name: again, seeing"),
    )
    .expect("written");
    let reference = at.join("reference.py");
    let student = tempfile::tempdir().expect("a temp dir");
    let solution = student.path().join("solution.py");
    std::fs::write(&solution, REFERENCE).expect("written");
    let solution = format!("python:{}", path_arg(&solution));
    let (specs, exercise_arg) = (at.join("specs"), path_arg(at));
    let commands: [Vec<&str>; 6] = [
        vec!["run", path_arg(&specs)],
        vec!["rules", exercise_arg],
        vec!["lint", exercise_arg],
        vec!["strength", exercise_arg, "--explore-cases", "0"],
        explore_args(exercise_arg, &solution, "5"),
        vec!["smoke", "--exercise", exercise_arg, "--impl", &solution],
    ];
    for (broken, says) in [
        (
            "class Deduper(\n",
            "does not load, so no spec, rule or case of the exercise can be judged: SyntaxError: '(' was never closed",
        ),
        (
            &REFERENCE.replace("class Deduper:", "class Dedupr:")[..],
            "does not serve it, so no spec, rule or case of the exercise can be judged: it has no class `Deduper` (deduper); it defines: Dedupr (did you mean `Deduper`?)",
        ),
    ] {
        std::fs::write(&reference, broken).expect("written");
        for args in &commands {
            let ran = run(args);
            let told = format!("{}{}", ran.stdout, ran.stderr);
            assert_eq!(ran.code, 2, "{args:?}: {told}");
            let head =
                format!("error: the reference (reference.py) of the exercise deduper {says}");
            assert!(told.starts_with(&head), "{args:?}: {told}");
            assert_eq!(told.matches("error:").count(), 1, "{args:?}: {told}");
            assert_eq!(told.matches("reference.py)").count(), 1, "{args:?}: {told}");
            assert!(told.contains("exercise.yaml:4:12"), "{args:?}: {told}");
            assert!(!told.contains("specs/"), "{args:?}: {told}");
        }
    }
}

#[test]
fn the_reference_is_named_as_its_author_knows_it_never_the_built_in() {
    let exercise = folder("{draw: [3, 1, 5], refused: [0, -1]}", HEADER);
    let at = exercise.path();
    let spec = at.join("specs/repeat-does-not-refresh.yaml");
    // An expectation the reference contradicts, and a rule a spec claims and never reaches.
    std::fs::write(&spec, SPEC.replace("expires_at: 8", "expires_at: 9")).expect("written");
    std::fs::write(
        at.join("specs/fresh.yaml"),
        "contract: deduper\nname: a fresh store remembers nothing\nrules: [deduper/repeat-seen-true]\nsteps:\n  - create: {ttl: 4}\nexpect: {ttl: 4, keys: []}\n",
    )
    .expect("written");
    let solution = format!("python:{}", path_arg(&at.join("reference.py")));
    let mistake = format!(
        "python:{}",
        path_arg(&at.join("mistakes/refreshes-on-repeat.py"))
    );
    let out = tempfile::tempdir().expect("a temp dir");
    let graded = out.path().join("graded");
    let (specs, exercise_arg) = (at.join("specs"), path_arg(at));
    let told: [(Vec<&str>, &str); 5] = [
        (
            vec!["run", path_arg(&spec)],
            "the spec's expectation differs from what the reference (reference.py) does at final expect",
        ),
        (
            vec!["run", path_arg(&spec), "--impl", &solution],
            "error: the reference (reference.py) fails this spec at final expect",
        ),
        (
            vec!["lint", exercise_arg],
            "but its run on the reference (reference.py) never reaches a decision of that rule",
        ),
        (
            vec![
                "grade",
                "--specs",
                path_arg(&specs),
                "--output",
                path_arg(&graded),
                &solution,
            ],
            "(the reference (reference.py) does not pass it)",
        ),
        (
            explore_args(exercise_arg, &mistake, "50"),
            "it passes on the reference (reference.py) and fails on this one",
        ),
    ];
    for (args, says) in told {
        let ran = run(&args);
        let text = format!("{}{}", ran.stdout, ran.stderr);
        assert!(text.contains(says), "{args:?}: {says}\n{text}");
        assert!(!text.contains("built-in"), "{args:?}: {text}");
        if args[0] == "explore" {
            assert!(
                text.contains("The reference (reference.py) passes this spec"),
                "{text}"
            );
        }
    }
}

/// The exercise made restartable: `snapshot()` gives plain data, `from_snapshot` makes the
/// instance again from it.
fn restartable(exercise: &Path) {
    let definition = std::fs::read_to_string(exercise.join("exercise.yaml")).expect("read");
    std::fs::write(
        exercise.join("exercise.yaml"),
        format!("{definition}restart:\n  snapshot: snapshot\n  from: from_snapshot\n"),
    )
    .expect("written");
    std::fs::write(
        exercise.join("reference.py"),
        format!("{REFERENCE}{SNAPSHOT}"),
    )
    .expect("written");
}

const SNAPSHOT: &str = "
    def snapshot(self):
        return {\"ttl\": self._ttl, \"keys\": dict(self._keys)}

    @classmethod
    def from_snapshot(cls, snapshot, clock):
        made = cls(clock, snapshot[\"ttl\"])
        made._keys = dict(snapshot[\"keys\"])
        return made
";

/// The deduper in JavaScript, restartable, its keys a `Map`: `state()` and `snapshot()` each
/// hand out plain data as written.
const JAVASCRIPT: &str = "\
export class Deduper {
  constructor(clock, ttl) {
    if (!Number.isInteger(ttl) || ttl < 1) throw new RangeError(`ttl must be an integer of at least 1, not ${ttl}`);
    this.clock = clock; this.ttl = ttl; this.keys = new Map();
  }
  purge() { const now = this.clock.now(); for (const [k, t] of this.keys) if (t <= now) this.keys.delete(k); return now; }
  seen(key) { const now = this.purge(); if (this.keys.has(key)) return true; this.keys.set(key, now + this.ttl); return false; }
  state() { this.purge(); return { ttl: this.ttl, keys: [...this.keys].map(([key, t]) => ({ key, expires_at: t })) }; }
  snapshot() { return { ttl: this.ttl, keys: Object.fromEntries(this.keys) }; }
  static fromSnapshot(snapshot, clock) { const made = new Deduper(clock, snapshot.ttl); made.keys = new Map(Object.entries(snapshot.keys)); return made; }
}
";

/// `smoke` of `text` (a solution file named `name`) on the exercise at `exercise`: its exit
/// code and what it printed.
fn smoke(exercise: &Path, name: &str, text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let solution = dir.path().join(name);
    std::fs::write(&solution, text).expect("written");
    let target = format!("auto:{}", path_arg(&solution));
    let ran = run(&["smoke", "--exercise", path_arg(exercise), "--impl", &target]);
    (ran.code, format!("{}{}", ran.stdout, ran.stderr))
}

#[test]
fn data_json_cannot_carry_is_refused_by_the_shims_naming_its_type_and_the_fix() {
    let exercise = folder("{draw: [3, 1, 5], refused: [0, -1]}", HEADER);
    restartable(exercise.path());
    let (code, told) = smoke(
        exercise.path(),
        "solution.py",
        &format!("{REFERENCE}{SNAPSHOT}"),
    );
    assert_eq!(code, 0, "{told}");
    let returns = "        return {\"ttl\": self._ttl, \"keys\": dict(self._keys)}";
    assert!(SNAPSHOT.contains(returns));
    let set = SNAPSHOT.replace(
        returns,
        "        return {\"ttl\": self._ttl, \"keys\": set(self._keys)}",
    );
    let (code, told) = smoke(exercise.path(), "solution.py", &format!("{REFERENCE}{set}"));
    assert_eq!(code, 1, "{told}");
    assert!(
        told.contains("snapshot() returned a set at .keys, which JSON cannot carry: return plain dicts/lists (list(a_set), dict(mapping), vars(obj))"),
        "{told}"
    );
    if !crate::common::node_tests() {
        return;
    }
    let (code, told) = smoke(exercise.path(), "solution.mjs", JAVASCRIPT);
    assert_eq!(code, 0, "{told}");
    for (from, to, says) in [
        (
            "keys: Object.fromEntries(this.keys) }",
            "keys: this.keys }",
            "snapshot() returned a Map at .keys, which JSON would carry as {}: return plain objects/arrays",
        ),
        (
            "return { ttl: this.ttl, keys: [...this.keys]",
            "return { ttl: this.ttl, seen: new Set(this.keys.keys()), keys: [...this.keys]",
            "state() returned a Set at .seen, which JSON would carry as {}: return plain objects/arrays",
        ),
    ] {
        assert!(JAVASCRIPT.contains(from), "{from}");
        let (code, told) = smoke(
            exercise.path(),
            "solution.mjs",
            &JAVASCRIPT.replace(from, to),
        );
        assert_eq!(code, 1, "{told}");
        assert!(told.contains(says), "{says}\n{told}");
    }
    // An instance of the solution's own class is data: JSON carries its fields, which is what
    // a spec compares, so a snapshot written as one restores.
    let classy = JAVASCRIPT.replace(
        "snapshot() { return { ttl: this.ttl, keys: Object.fromEntries(this.keys) }; }",
        "snapshot() { return new (class Snapshot { constructor(ttl, keys) { this.ttl = ttl; this.keys = keys; } })(this.ttl, Object.fromEntries(this.keys)); }",
    );
    assert_ne!(classy, JAVASCRIPT);
    let (code, told) = smoke(exercise.path(), "solution.mjs", &classy);
    assert_eq!(code, 0, "{told}");
}

#[test]
fn a_restart_factory_that_returns_nothing_is_told_by_smoke_in_the_students_terms() {
    let exercise = folder("{draw: [3, 1, 5], refused: [0, -1]}", HEADER);
    restartable(exercise.path());
    // Nothing, or the snapshot handed back: said at the restart, not by the view after it.
    for (returns, what) in [("", "None"), ("        return snapshot\n", "a dict")] {
        let factory = SNAPSHOT.replace("        return made\n", returns);
        let (code, told) = smoke(
            exercise.path(),
            "solution.py",
            &format!("{REFERENCE}{factory}"),
        );
        assert_eq!(code, 1, "{told}");
        let says = format!(
            "Deduper.from_snapshot() returned {what}, not the Deduper it makes from the snapshot: end it with `return` of the instance it makes"
        );
        assert!(
            told.contains("FAIL  new deduper by from_snapshot(its snapshot)")
                && told.contains(&says),
            "{told}"
        );
    }
    if !crate::common::node_tests() {
        return;
    }
    let (code, told) = smoke(
        exercise.path(),
        "solution.mjs",
        &JAVASCRIPT.replace(" return made; }", " }"),
    );
    assert_eq!(code, 1, "{told}");
    assert!(
        told.contains(
            "Deduper.fromSnapshot() returned undefined, not the Deduper it makes from the snapshot"
        ),
        "{told}"
    );
}

#[test]
fn new_runs_its_starter_on_the_reference_and_tells_what_it_made_of_it() {
    let exercise = folder("{draw: [3, 1, 5], refused: [0, -1]}", HEADER);
    let starter = exercise.path().join("specs/starter.yaml");
    let ran = run(&["new", path_arg(&starter)]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("a deduper starter spec that passes as written"),
        "{}",
        ran.stdout
    );
    // The reference refuses the starter's `seen: {key: a}`: new says so, never "passes".
    let seen = "    def seen(self, key):\n";
    assert!(REFERENCE.contains(seen));
    std::fs::write(
        exercise.path().join("reference.py"),
        REFERENCE.replace(
            seen,
            &format!("{seen}        if key == \"a\":\n            raise KeyError(key)\n"),
        ),
    )
    .expect("written");
    let refused = exercise.path().join("specs/refused.yaml");
    let ran = run(&["new", path_arg(&refused)]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    crate::common::assert_contains_all(
        &ran.stdout,
        [
            "a deduper starter spec, but the reference (reference.py) does not pass it as written:",
            "first difference at step 2 (seen)",
            "+error: \"KeyError: 'a'\"",
            "next: dlqspec explain ",
        ],
        "new",
    );
    assert!(!ran.stdout.contains("passes as written"), "{}", ran.stdout);
    assert!(refused.is_file(), "the starter is written all the same");
}
