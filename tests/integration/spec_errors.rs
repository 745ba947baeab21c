//! Spec errors told to an author: every mistake of a file in one run, in source order, each at
//! its place, and every invalid word with the nearest valid one, word for word.

use std::path::Path;

use crate::common::{Ran, path_arg, run, temp_spec};

/// What `dlqspec run` says of a broken spec: its `error:` messages and `-->` places, in order.
fn errors_of(text: &str) -> (Vec<String>, Vec<String>, String) {
    let (_dir, path) = temp_spec("broken.yaml", text);
    let ran = run(&["run", path_arg(&path)]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    let messages = ran
        .stdout
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("error: "))
        .map(str::to_owned)
        .collect();
    let places = ran
        .stdout
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--> "))
        .map(|place| place.rsplit('/').next().unwrap_or(place).to_owned())
        .collect();
    (messages, places, ran.stdout)
}

const THREE_MISTAKES: &str = "contract: dlq-consumer
name: three mistakes
messages:
  - {id: a, bdy: x}
handler:
  a: [okay]
steps:
  - procss: ok
  - process: ok
";

#[test]
fn a_file_with_three_mistakes_shows_them_all_in_one_run_in_order() {
    let (messages, places, stdout) = errors_of(THREE_MISTAKES);
    assert_eq!(
        messages,
        [
            "unknown field `bdy` (did you mean `body`?), expected one of id, body",
            "unknown value `okay` (the nearest valid one is `ok`), expected one of ok, transient, permanent, error, crash",
            "unknown value `procss` (did you mean `process`?), expected one of process, recover, restart, advance, send, replay, fault, expect, repeat",
        ],
        "{stdout}"
    );
    assert_eq!(
        places,
        ["broken.yaml:4:13", "broken.yaml:6:7", "broken.yaml:8:5"],
        "{stdout}"
    );
    assert!(stdout.contains("3 errors in "), "{stdout}");
    // Each with its own line and caret.
    assert!(stdout.contains("8 |   - procss: ok\n"), "{stdout}");
    assert_eq!(stdout.matches('^').count(), 3, "{stdout}");
}

#[test]
fn lint_json_and_junit_tell_every_error_of_the_file() {
    let (_dir, path) = temp_spec("broken.yaml", THREE_MISTAKES);
    let lint = run(&["lint", path_arg(&path)]);
    assert_eq!(lint.code, 2, "{}{}", lint.stdout, lint.stderr);
    assert_eq!(lint.stdout.matches("error: ").count(), 3, "{}", lint.stdout);
    assert!(
        lint.stdout
            .ends_with("0 smells and 3 spec errors in 1 spec\n"),
        "{}",
        lint.stdout
    );

    let json = run(&["run", path_arg(&path), "--format", "json"]);
    let finished: serde_json::Value = json
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|event| event["event"] == "spec_finished")
        .expect("a spec_finished event");
    let error = &finished["spec_error"];
    assert_eq!(finished["outcome"], "spec_error");
    assert_eq!((&error["line"], &error["column"]), (&4.into(), &13.into()));
    let more: Vec<(u64, u64)> = error["more"]
        .as_array()
        .expect("more")
        .iter()
        .map(|e| (e["line"].as_u64().unwrap(), e["column"].as_u64().unwrap()))
        .collect();
    assert_eq!(more, [(6, 7), (8, 5)], "{}", json.stdout);

    let junit = run(&["run", path_arg(&path), "--format", "junit"]);
    let errors = junit.stdout.matches("<error ").count();
    assert_eq!(
        errors, 1,
        "one spec-error outcome per file: {}",
        junit.stdout
    );
    for place in [
        "broken.yaml:4:13: ",
        "broken.yaml:6:7: ",
        "broken.yaml:8:5: ",
    ] {
        assert!(junit.stdout.contains(place), "{place}: {}", junit.stdout);
    }
}

#[test]
fn the_contracts_checks_are_all_told_at_once() {
    let text = "contract: dlq-consumer
name: checks
rules: [dlq-consumer/poisn]
max_attempts: 0
messages:
  - {id: a, body: x}
  - {id: a, body: y}
steps:
  - fault: {crash: after, call: dlq.pt}
  - process: ok
  - expect: {trace: [queue.receve() -> a]}
";
    let (messages, places, stdout) = errors_of(text);
    assert_eq!(
        messages,
        [
            "unknown rule `dlq-consumer/poisn` (did you mean `dlq-consumer/poison`?); `dlqspec rules` lists the rules of dlq-consumer",
            "`max_attempts` must be at least 1",
            "duplicate message id `a`",
            "unknown call `dlq.pt` (did you mean `dlq.put`?); a fault waits on one of queue.send, queue.receive, queue.ack, queue.retry, dlq.put, dlq.remove, handler",
            "`queue.receve() -> a` is not a trace line (did you mean `queue.receive`?); a line is one of `queue.receive() -> ID`, `handler(ID) -> OUTCOME`, `queue.ack(ID)`, `queue.retry(ID)`, `queue.send(ID)`, `dlq.put(ID)`, `dlq.remove(ID)`, `queue.recover()`, `clock.advance(N)`, `CALL -> crash (injected before the call)` or `... after the call`, or a misuse ending in ` !misuse`",
        ],
        "{stdout}"
    );
    assert_eq!(
        places,
        [
            "broken.yaml:3:9",
            "broken.yaml:4:15",
            "broken.yaml:7:5",
            "broken.yaml:9:33",
            "broken.yaml:11:22"
        ],
        "{stdout}"
    );
}

#[test]
fn a_mistake_is_told_once_not_with_what_follows_from_it() {
    // The misspelt `body` is not also a missing `body`; one missing `create` is one error, not
    // one for every step after it.
    let (messages, _, stdout) = errors_of(
        "contract: dlq-consumer\nname: x\nmessages:\n  - id: a\n    bdy: x\n  - {id: b, body: y}\nexpect:\n  dlq:\n    - {id: a, body: x, reason: poison, eror: null, attempts: 1, first_attempt_at: 0, failed_at: 0}\n",
    );
    assert_eq!(
        messages,
        [
            "unknown field `bdy` (did you mean `body`?), expected one of id, body",
            "unknown field `eror` (did you mean `error`?), expected one of id, body, reason, error, attempts, first_attempt_at, failed_at, count, from",
        ],
        "{stdout}"
    );
    let (messages, places, stdout) = errors_of(
        "contract: outcome-queue\nname: x\nsteps:\n  - submit: {id: a, payload: p}\n  - process: {outcome: success, returns: done}\n  - replay: {id: a, returns: false}\n",
    );
    assert_eq!(
        messages,
        ["`submit` needs an instance: the first step is `create`"],
        "{stdout}"
    );
    assert_eq!(places, ["broken.yaml:4:5"], "{stdout}");
}

const SYNTAX_UNTOLD: &str = "(further errors may follow; fix this one and run again)";

/// The line that counts a file's errors, its path cut to the file's name.
fn count_line(stdout: &str) -> String {
    stdout
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(|c: char| c.is_ascii_digit()) && l.contains(" error"))
        .and_then(|l| {
            let (head, rest) = l.split_once(" in ")?;
            Some(format!("{head} in {}", &rest[rest.find("broken.yaml")?..]))
        })
        .unwrap_or_default()
}

#[test]
fn a_yaml_syntax_error_is_told_without_its_cascades_and_says_more_may_follow() {
    // The unclosed `[` reads `ok expect` as one value: that is no mistake of its own.
    let (messages, places, stdout) =
        errors_of("contract: dlq-consumer\nname: x\nsteps: [process: ok\nexpect:\n  pendng: []\n");
    assert_eq!(
        messages,
        [
            "this `[` starts a flow list that is never closed, so the lines after it are read into it: close it with `]` where the list ends, or write it as a block list"
        ],
        "{stdout}"
    );
    assert_eq!(places, ["broken.yaml:3:8"], "{stdout}");
    assert!(
        count_line(&stdout) == format!("1 error in broken.yaml {SYNTAX_UNTOLD}"),
        "{stdout}"
    );
    // A shape error above the part a syntax error may have swallowed is its own: both.
    let (messages, places, stdout) = errors_of(
        "contract: dlq-consumer\nname: x\nmessages: [{id: a, bdy: x}]\nhandler:\n  a:\n    - permanent: PermanentError: bad\n",
    );
    assert_eq!(
        messages,
        [
            "unknown field `bdy` (did you mean `body`?), expected one of id, body",
            "the value of `permanent` holds `: `, which YAML reads as a new key: quote the value, `permanent: \"PermanentError: bad\"`",
        ],
        "{stdout}"
    );
    assert_eq!(places, ["broken.yaml:3:20", "broken.yaml:6:32"], "{stdout}");
    assert!(
        count_line(&stdout) == format!("2 errors in broken.yaml {SYNTAX_UNTOLD}"),
        "{stdout}"
    );
    let (_dir, path) = temp_spec("broken.yaml", "contract: dlq-consumer\nname: [x\n");
    let json = run(&["run", path_arg(&path), "--format", "json"]);
    assert!(
        json.stdout
            .contains("\"untold\":\"further errors may follow; fix this one and run again\""),
        "{}",
        json.stdout
    );
}

#[test]
fn two_mistakes_in_one_item_are_both_told() {
    let dlq = "contract: dlq-consumer\nname: x\nmessages: [{id: a, body: x}]\nhandler:\n  a: [ok]\nsteps:\n";
    let (messages, places, stdout) = errors_of(&format!("{dlq}  - {{process: okay, extra: 1}}\n"));
    assert_eq!(
        messages,
        [
            "unknown value `okay` (the nearest valid one is `ok`), expected one of ok, retry, dead, none, crash, any",
            "`extra` is a second key beside `process`: an item holds one key; put `extra` in an item of its own (`- extra: ...`), or remove it",
        ],
        "{stdout}"
    );
    assert_eq!(places, ["broken.yaml:7:15", "broken.yaml:7:21"], "{stdout}");
    // A second key under a step was read as nothing at all.
    let (messages, places, stdout) = errors_of(&format!("{dlq}  - process: ok\n    restart: 1\n"));
    assert_eq!(
        messages,
        [
            "`restart` is a second key beside `process`: an item holds one key; put `restart` in an item of its own (`- restart: ...`), or remove it"
        ],
        "{stdout}"
    );
    assert_eq!(places, ["broken.yaml:8:5"], "{stdout}");
}

#[test]
fn the_contracts_checks_are_told_with_the_shape_errors_but_not_their_cascades() {
    let (messages, places, stdout) = errors_of(
        "contract: dlq-consumer\nname: x\nmessages:\n  - {id: a, body: x}\n  - {id: a, body: y}\nsteps:\n  - restat\n  - process: okay\n  - fault: {crash: after, call: dlq.pt}\n",
    );
    assert_eq!(
        messages,
        [
            "duplicate message id `a`",
            "unknown value `restat` (did you mean `restart`?), expected one of process, recover, restart, advance, send, replay, fault, expect, repeat",
            "unknown value `okay` (the nearest valid one is `ok`), expected one of ok, retry, dead, none, crash, any",
            "unknown call `dlq.pt` (did you mean `dlq.put`?); a fault waits on one of queue.send, queue.receive, queue.ack, queue.retry, dlq.put, dlq.remove, handler",
        ],
        "{stdout}"
    );
    assert_eq!(
        places,
        [
            "broken.yaml:5:5",
            "broken.yaml:7:5",
            "broken.yaml:8:14",
            "broken.yaml:9:33"
        ],
        "{stdout}"
    );
    // `b` is defined by the broken message: its handler entry is no mistake of its own.
    let (messages, _, stdout) = errors_of(
        "contract: dlq-consumer\nname: x\nmessages:\n  - {id: b, bdy: x}\n  - {id: a, body: y}\nhandler:\n  b: [ok]\n  c: [ok]\n",
    );
    assert_eq!(
        messages,
        ["unknown field `bdy` (did you mean `body`?), expected one of id, body"],
        "{stdout}"
    );
    // A broken `create` may have been the queue: no `needs a queue` or duplicate job follows;
    // a broken step that is no `create` leaves both checked.
    let queue = "contract: outcome-queue\nname: x\nsteps:\n";
    let (messages, _, stdout) = errors_of(&format!(
        "{queue}  - create: {{max_attemps: 2}}\n  - submit: {{id: a, payload: p}}\n"
    ));
    assert_eq!(
        messages,
        [
            "`max_attemps` is not an argument of `create` (did you mean `max_attempts`?), expected one of max_attempts, returns, raises"
        ],
        "{stdout}"
    );
    let (messages, places, stdout) = errors_of(&format!(
        "{queue}  - create: {{max_attempts: 2}}\n  - submit: {{id: a, payload: p}}\n  - submit: {{id: a, payload: p}}\n  - procss: x\n"
    ));
    assert_eq!(
        messages,
        [
            "`procss` is not a step of `outcome-queue` (did you mean `process`?), expected one of create, submit, process, replay, state, mutate_state, restart, expect",
        ],
        "{stdout}"
    );
    assert_eq!(places, ["broken.yaml:7:5"], "{stdout}");
}

#[test]
fn aliases_do_not_stop_the_errors_an_anchor_in_error_says_so() {
    let dlq = "contract: dlq-consumer\nname: x\nmessages: [{id: a, body: x}]\n";
    let (messages, _, stdout) = errors_of(&format!(
        "{dlq}handler:\n  a: &o [ok]\nsteps:\n  - procss: ok\n  - restat\nexpect:\n  in_fligt: *o\n"
    ));
    assert_eq!(messages.len(), 3, "{stdout}");
    assert_eq!(count_line(&stdout), "3 errors in broken.yaml", "{stdout}");
    // An anchor no alias uses is blanked like the rest.
    let (messages, _, stdout) = errors_of(&format!("{dlq}steps:\n  - &s procss: ok\n  - restat\n"));
    assert_eq!(messages.len(), 2, "{stdout}");
    let (messages, _, stdout) = errors_of(&format!(
        "{dlq}steps:\n  - &s {{procss: ok}}\n  - restat\n  - *s\n"
    ));
    assert_eq!(messages.len(), 1, "{stdout}");
    assert!(
        count_line(&stdout)
            == "1 error in broken.yaml (further errors may follow: the part in error defines an anchor (`&name`) that an alias uses, so it is not skipped; fix it and run again)",
        "{stdout}"
    );
}

#[test]
fn a_file_over_a_mebibyte_has_every_error_told() {
    let padding = "# padding\n".repeat(110_000);
    let (messages, places, stdout) = errors_of(&format!(
        "contract: dlq-consumer\nname: x\nmessages: [{{id: a, bdy: x}}, {{id: b, bdy: y}}]\n{padding}"
    ));
    assert_eq!(messages.len(), 2, "{stdout}");
    assert_eq!(places, ["broken.yaml:3:20", "broken.yaml:3:37"], "{stdout}");
    assert_eq!(count_line(&stdout), "2 errors in broken.yaml", "{stdout}");
}

#[test]
fn the_bound_that_stops_the_errors_is_told() {
    // 12 MiB: the first decode and the tree of the second pass 32 MiB with the decodes a
    // round of recovery makes, so the second mistake is not looked for.
    let padding = "# padding\n".repeat(1_200_000);
    let (messages, _, stdout) = errors_of(&format!(
        "contract: dlq-consumer\nname: x\nmessages: [{{id: a, bdy: x}}, {{id: b, bdy: y}}]\n{padding}"
    ));
    assert_eq!(messages.len(), 1, "{stdout}");
    assert_eq!(
        count_line(&stdout),
        "1 error in broken.yaml (further errors may follow: reading the file again for them stopped after 32 MiB re-read; fix these and run again)",
        "{stdout}"
    );
    let messages: String = (0..25)
        .map(|n| format!("  - {{id: m{n}, bdy: x}}\n"))
        .collect();
    let (told, _, stdout) = errors_of(&format!(
        "contract: dlq-consumer\nname: x\nmessages:\n{messages}"
    ));
    assert_eq!(told.len(), 20, "{stdout}");
    assert_eq!(
        count_line(&stdout),
        "20 errors in broken.yaml (further errors may follow: at most 20 errors of a file are told; fix these and run again)",
        "{stdout}"
    );
}

#[test]
fn a_colon_in_a_flow_value_gets_the_quoting_hint() {
    let dlq = "contract: dlq-consumer\nname: x\nmessages: [{id: a, body: x}]\nhandler:\n";
    for (line, key, value, column) in [
        (
            "  a: [{permanent: PermanentError: bad sku}]",
            "permanent",
            "PermanentError: bad sku",
            33,
        ),
        ("  a: [permanent: x: y]", "permanent", "x: y", 19),
    ] {
        let (messages, places, stdout) = errors_of(&format!("{dlq}{line}\n"));
        assert_eq!(
            messages,
            [format!(
                "the value of `{key}` holds `: `, which YAML reads as a new key: quote the value, `{key}: \"{value}\"`"
            )],
            "{stdout}"
        );
        assert_eq!(places, [format!("broken.yaml:5:{column}")], "{stdout}");
    }
}

#[test]
fn a_step_of_the_other_contract_is_told_as_one() {
    let told = error_of(
        "contract: dlq-consumer\nname: x\nmessages: [{id: a, body: x}]\nsteps:\n  - create: {max_attempts: 2}\n",
    );
    assert_eq!(
        told,
        "`create` is an outcome-queue step; this spec's contract is dlq-consumer (line 1), whose nearest step is `repeat`; expected one of process, recover, restart, advance, send, replay, fault, expect, repeat"
    );
    let told = error_of(
        "# a comment\ncontract: outcome-queue\nname: x\nsteps:\n  - create: {max_attempts: 2}\n  - recover\n",
    );
    assert_eq!(
        told,
        "`recover` is not a step of `outcome-queue` (the nearest valid one is `create`), expected one of create, submit, process, replay, state, mutate_state, restart, expect"
    );
    let told = error_of(
        "contract: outcome-queue\nname: x\nsteps:\n  - create: {max_attempts: 2}\n  - process: ok\n",
    );
    assert_eq!(
        told,
        "`process` takes a mapping of its arguments by name: write `process: {outcome: ok}`"
    );
    // A word no contract's `process` takes is told as the outcome-queue's own mistake.
    let told = error_of(
        "contract: outcome-queue\nname: x\nsteps:\n  - create: {max_attempts: 2}\n  - process: sucess\n",
    );
    assert_eq!(
        told,
        "`process` takes a mapping of its arguments by name: write `process: {outcome: sucess}`"
    );
}

/// The one error of a spec with `text`.
fn error_of(text: &str) -> String {
    let (messages, _, stdout) = errors_of(text);
    assert_eq!(messages.len(), 1, "{stdout}");
    messages.into_iter().next().unwrap_or_default()
}

#[test]
fn every_invalid_word_gets_the_nearest_valid_one() {
    let dlq = "contract: dlq-consumer\nname: x\nmessages: [{id: a, body: x}]\n";
    let queue = "contract: outcome-queue\nname: x\nsteps:\n  - create: {max_attempts: 2}\n";
    let cases = [
        (
            "a top-level key",
            format!("{dlq}mesages: []\n"),
            "unknown field `mesages` (did you mean `messages`?), expected one of contract, name, description, rules, points, visibility, allow, max_attempts, messages, generate, handler, steps, expect",
        ),
        (
            "a key of a step",
            format!("{dlq}steps:\n  - replay: {{ids: [a], retrns: []}}\n"),
            "unknown field `retrns` (did you mean `returns`?), expected one of ids, returns, crash",
        ),
        (
            "a key of an expectation",
            format!("{dlq}expect:\n  in_fligt: []\n"),
            "unknown field `in_fligt` (did you mean `in_flight`?), expected one of dlq, pending, in_flight, handler_calls, trace, clock, counts, dlq_reasons",
        ),
        (
            "a step kind",
            format!("{dlq}steps:\n  - restat\n"),
            "unknown value `restat` (did you mean `restart`?), expected one of process, recover, restart, advance, send, replay, fault, expect, repeat",
        ),
        (
            "a handler outcome",
            format!("{dlq}handler:\n  a: [transiet: t]\n"),
            "unknown value `transiet` (did you mean `transient`?), expected one of ok, transient, permanent, error, crash",
        ),
        (
            "what process_one returns",
            format!("{dlq}steps:\n  - process: okay\n"),
            "unknown value `okay` (the nearest valid one is `ok`), expected one of ok, retry, dead, none, crash, any",
        ),
        (
            "a fault's call, far from any",
            format!("{dlq}steps:\n  - fault: {{crash: after, call: dlq.delete}}\n"),
            "unknown call `dlq.delete` (the nearest valid one is `dlq.remove`); a fault waits on one of queue.send, queue.receive, queue.ack, queue.retry, dlq.put, dlq.remove, handler",
        ),
        (
            "a fault's timing",
            format!("{dlq}steps:\n  - fault: {{crash: aftr, call: dlq.put}}\n"),
            "unknown value `aftr` (did you mean `after`?), expected one of before, after",
        ),
        (
            "a call in a trace",
            format!("{dlq}expect:\n  trace: [queue.akc(a)]\n"),
            "`queue.akc(a)` is not a trace line (did you mean `queue.ack`?); a line is one of `queue.receive() -> ID`, `handler(ID) -> OUTCOME`, `queue.ack(ID)`, `queue.retry(ID)`, `queue.send(ID)`, `dlq.put(ID)`, `dlq.remove(ID)`, `queue.recover()`, `clock.advance(N)`, `CALL -> crash (injected before the call)` or `... after the call`, or a misuse ending in ` !misuse`",
        ),
        (
            "a DLQ reason",
            format!(
                "{dlq}expect:\n  dlq:\n    - {{id: a, body: x, reason: exausted, error: null, attempts: 1, first_attempt_at: 0, failed_at: 0}}\n"
            ),
            "unknown value `exausted` (did you mean `exhausted`?), expected one of permanent, exhausted, poison",
        ),
        (
            "a rule id",
            format!("{dlq}rules: [dlq-consumer/posion]\n"),
            "unknown rule `dlq-consumer/posion` (did you mean `dlq-consumer/poison`?); `dlqspec rules` lists the rules of dlq-consumer",
        ),
        (
            "a smell id",
            format!("{dlq}allow: [{{smell: never-deliverd, reason: why}}]\n"),
            "`never-deliverd` is not a smell id (did you mean `never-delivered`?); the smells are no-rule, unexercised-rule, checks-nothing, duplicate-name, uncovered-rule, never-delivered, unused-outcomes, never-processed, idle-trailing-step, stale-allow",
        ),
        (
            "a contract",
            "contract: outcome-que\nname: x\n".to_owned(),
            "unknown contract `outcome-que` (did you mean `outcome-queue`?); expected one of dlq-consumer, outcome-queue",
        ),
        (
            "an outcome written where process's mapping goes",
            format!("{queue}  - process: okay\n"),
            "`process` takes a mapping of its arguments by name: write `process: {outcome: okay}`",
        ),
        (
            "a state op",
            format!("{queue}  - mutate_state: [clr: [quarantine]]\n"),
            "unknown value `clr` (the nearest valid one is `clear`), expected one of set, delete, append, clear",
        ),
        (
            "a visibility",
            format!("{dlq}visibility: hiden\n"),
            "unknown value `hiden` (did you mean `hidden`?), expected one of visible, hidden, after_due_date, after_published",
        ),
    ];
    let mut wrong = Vec::new();
    for (what, text, expected) in &cases {
        let told = error_of(text);
        if told != *expected {
            wrong.push(format!("{what}:\n  told     {told}\n  expected {expected}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `grade` of the Python example against the spec file `specs`, into a folder of its own.
fn grade_with_specs(specs: &Path) -> (tempfile::TempDir, Ran) {
    let out = tempfile::tempdir().expect("temp dir");
    let ran = run(&[
        "grade",
        "--specs",
        path_arg(specs),
        "--output",
        path_arg(out.path()),
        "examples/python/solution.py",
    ]);
    (out, ran)
}

#[test]
fn grade_refuses_a_broken_spec_with_each_of_its_errors_and_blames_no_student() {
    let (_dir, path) = temp_spec("broken.yaml", THREE_MISTAKES);
    let (out, ran) = grade_with_specs(&path);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    let told: Vec<&str> = ran
        .stderr
        .lines()
        .filter_map(|line| line.trim().split_once("broken.yaml:").map(|(_, rest)| rest))
        .collect();
    assert_eq!(
        told,
        [
            "4:13: unknown field `bdy` (did you mean `body`?), expected one of id, body",
            "6:7: unknown value `okay` (the nearest valid one is `ok`), expected one of ok, transient, permanent, error, crash",
            "8:5: unknown value `procss` (did you mean `process`?), expected one of process, recover, restart, advance, send, replay, fault, expect, repeat",
        ],
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains("1 of the 1 specs of --specs is broken"),
        "{}",
        ran.stderr
    );
    assert!(
        !out.path().join("summary.csv").exists(),
        "no student graded"
    );
}

#[test]
fn tap_junit_and_grade_say_further_errors_may_follow() {
    let messages: String = (0..25)
        .map(|n| format!("  - {{id: m{n}, bdy: x}}\n"))
        .collect();
    let (_dir, path) = temp_spec(
        "broken.yaml",
        &format!("contract: dlq-consumer\nname: x\nmessages:\n{messages}"),
    );
    let why =
        "further errors may follow: at most 20 errors of a file are told; fix these and run again";
    let tap = run(&["run", path_arg(&path), "--format", "tap"]);
    assert!(
        tap.stdout.contains(&format!("  untold: \"{why}\"\n")),
        "{}",
        tap.stdout
    );
    let junit = run(&["run", path_arg(&path), "--format", "junit"]);
    assert!(
        junit.stdout.contains(&format!("broken.yaml: {why}")),
        "{}",
        junit.stdout
    );
    let (out, ran) = grade_with_specs(&path);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    let last = ran
        .stderr
        .lines()
        .rfind(|line| line.contains("broken.yaml"));
    assert!(
        last.is_some_and(|line| line.ends_with(&format!("broken.yaml: {why}"))),
        "{}",
        ran.stderr
    );
    // One error with a syntax error after it: grade lists it and the note, not the count line.
    let (_dir, path) = temp_spec(
        "broken.yaml",
        "contract: dlq-consumer\nname: x\nmessages: [{id: a, body: x}]\nsteps: [process: ok\n",
    );
    let ran = run(&[
        "grade",
        "--specs",
        path_arg(&path),
        "--output",
        path_arg(out.path()),
        "examples/python/solution.py",
    ]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr
            .contains("broken.yaml: further errors may follow; fix this one and run again"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_word_replaced_by_a_longer_one_keeps_the_rest_of_its_item_told_at_its_place() {
    let (messages, places, stdout) = errors_of(
        "contract: dlq-consumer\nname: x\nmessages: [{id: a, body: x}]\nsteps:\n  - fault: {crash: aftr, call: dlq.pt}\n  - fault: {crash: aftr, call: dlq.put, xtra: 1}\n  - process: ok\n",
    );
    assert_eq!(
        messages,
        [
            "unknown value `aftr` (did you mean `after`?), expected one of before, after",
            "unknown call `dlq.pt` (did you mean `dlq.put`?); a fault waits on one of queue.send, queue.receive, queue.ack, queue.retry, dlq.put, dlq.remove, handler",
            "unknown value `aftr` (did you mean `after`?), expected one of before, after",
            "unknown field `xtra` (the nearest valid one is `nth`), expected one of crash, call, nth",
        ],
        "{stdout}"
    );
    assert_eq!(
        places,
        [
            "broken.yaml:5:20",
            "broken.yaml:5:32",
            "broken.yaml:6:20",
            "broken.yaml:6:41"
        ],
        "{stdout}"
    );
    // Each caret under its word as written.
    assert!(
        stdout.contains(
            "5 |   - fault: {crash: aftr, call: dlq.pt}\n        |                                ^\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "6 |   - fault: {crash: aftr, call: dlq.put, xtra: 1}\n        |                                         ^\n"
        ),
        "{stdout}"
    );
    // Columns count characters: a word not in ASCII moves what follows it by its characters.
    let (_, places, stdout) = errors_of(
        "contract: dlq-consumer\nname: x\nmessages: [{id: a, body: x}]\nhandler:\n  a: [é, okay]\nsteps:\n  - fault: {crash: aftré, call: dlq.pt}\n  - process: ok\n",
    );
    assert_eq!(
        places,
        [
            "broken.yaml:5:7",
            "broken.yaml:5:10",
            "broken.yaml:7:20",
            "broken.yaml:7:33"
        ],
        "{stdout}"
    );
}
