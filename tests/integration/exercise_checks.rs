//! An exercise wrong in ways YAML's shape cannot show, told to its author: a first `draw:`
//! value the reference refuses and a `refused:` value it accepts (lint and explore, at
//! exercise.yaml's line and column, never a green explore), and a known mistake whose
//! failures are told under another rule than its header names (strength, at its first line).
//! The exercise is a small idempotency-key store written from an outside author's; the
//! mistakes that author made in it (a spec's wrong key, a clock move of no number, the one
//! view named in `expect`, a boolean of words, a rule decided at an `expect`) are each told
//! at the text at fault, all in one pass.

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
    run(&[
        "explore",
        "--exercise",
        path_arg(folder),
        "--contract",
        "deduper",
        "--impl",
        path_arg(&reference),
        "--cases",
        "20",
        "--seed",
        "1",
    ])
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
