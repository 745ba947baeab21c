//! How a JavaScript or TypeScript solution spells an exercise's names: exercise.yaml and the
//! specs write them in snake_case; a solution may write its methods, its restart's factory and
//! the view keys exercise.yaml declares (`keys:`) in camelCase, as JavaScript does, or as
//! written. An exercise of multi-word names, written here, passes its reference, a camelCase
//! solution in JavaScript and in TypeScript, and a snake_case one; a key it does not declare
//! is not renamed; `keys:` takes snake_case only; and `dlqspec types` declares the camelCase
//! names the shim accepts, the restart's factory with them (docs/authoring-exercises.md).

use std::path::Path;

use crate::common::{dlqspec, node_tests, path_arg, ran};

const EXERCISE: &str = r"exercise: job-board
title: A job board keeps posted jobs waiting and dead-letters those given up
class: JobBoard
reference: reference.py

given:
  clock: {kind: clock, class: Clock}

create:
  args:
    clock: {given: clock}
    max_tries: {draw: [2, 3]}

methods:
  post_job:
    args:
      job_id: {draw: [a, b]}
  give_up:
    args:
      job_id: {draw: [a, b]}

views:
  state:
    keys: [dead_letter, posted_at, max_tries]
    draw:
      - [{clear: {path: [dead_letter]}}]

restart: {snapshot: take_snapshot, from: from_snapshot}

rules:
  - id: post-waits
    says: post_job(job_id) puts the job in waiting with the time it was posted and returns true.
    decides:
      - {call: post_job}
  - id: give-up-dead-letters
    says: give_up(job_id) moves a waiting job to dead_letter and returns true; of any other id it returns false.
    decides:
      - {call: give_up}
  - id: state-deep-copy
    says: state() returns {waiting, dead_letter, max_tries}, a deep copy.
    decides:
      - {mutate: state}
  - id: restart-keeps
    says: take_snapshot() and JobBoard.from_snapshot(snapshot, clock) keep every job where it was.
    decides:
      - {call: restart}
";

const REFERENCE: &str = r#"class JobBoard:
    def __init__(self, clock, max_tries):
        self._clock = clock
        self._max_tries = max_tries
        self._waiting = []
        self._dead = []

    def post_job(self, job_id):
        self._waiting.append({"id": job_id, "posted_at": self._clock.now()})
        return True

    def give_up(self, job_id):
        for job in self._waiting:
            if job["id"] == job_id:
                self._waiting.remove(job)
                self._dead.append(dict(job))
                return True
        return False

    def state(self):
        return {
            "waiting": [dict(j) for j in self._waiting],
            "dead_letter": [dict(j) for j in self._dead],
            "max_tries": self._max_tries,
        }

    def take_snapshot(self):
        return self.state()

    @classmethod
    def from_snapshot(cls, snapshot, clock):
        board = cls(clock, snapshot["max_tries"])
        board._waiting = snapshot["waiting"]
        board._dead = snapshot["dead_letter"]
        return board
"#;

const SPEC: &str = r"contract: job-board
name: a job given up is dead-lettered with the time it was posted, through a restart
rules: [job-board/post-waits, job-board/give-up-dead-letters, job-board/state-deep-copy, job-board/restart-keeps]
steps:
  - create: {max_tries: 2}
  - post_job: {job_id: a, returns: true}
  - advance: 3
  - post_job: {job_id: b, returns: true}
  - give_up: {job_id: b, returns: true}
  - give_up: {job_id: c, returns: false}
  - mutate_state:
      - {clear: {path: [dead_letter]}}
      - {set: {path: [max_tries], value: 9}}
      - {set: {path: [waiting, 0, posted_at], value: 7}}
  - restart
  - expect:
      waiting: [{id: a, posted_at: 0}]
      dead_letter: [{id: b, posted_at: 3}]
      max_tries: 2
  - give_up: {job_id: a, returns: true}
expect:
  waiting: []
  dead_letter: [{id: b, posted_at: 3}, {id: a, posted_at: 0}]
  max_tries: 2
";

/// The same class as JavaScript writes it: camelCase methods, factory and keys.
const CAMEL_JS: &str = r"export class JobBoard {
  #clock;
  #maxTries;
  #waiting = [];
  #deadLetter = [];

  constructor(clock, maxTries) {
    this.#clock = clock;
    this.#maxTries = maxTries;
  }

  postJob(jobId) {
    this.#waiting.push({ id: jobId, postedAt: this.#clock.now() });
    return true;
  }

  giveUp(jobId) {
    const at = this.#waiting.findIndex((job) => job.id === jobId);
    if (at < 0) return false;
    this.#deadLetter.push(...this.#waiting.splice(at, 1));
    return true;
  }

  state() {
    return {
      waiting: this.#waiting.map((job) => ({ ...job })),
      deadLetter: this.#deadLetter.map((job) => ({ ...job })),
      maxTries: this.#maxTries,
    };
  }

  takeSnapshot() {
    return this.state();
  }

  static fromSnapshot(snapshot, clock) {
    const board = new JobBoard(clock, snapshot.maxTries);
    board.#waiting = snapshot.waiting;
    board.#deadLetter = snapshot.deadLetter;
    return board;
  }
}
";

/// The same in TypeScript, typed by what `dlqspec types` declares.
const CAMEL_TS: &str = r#"import { Clock } from "given";

interface Job { id: string; postedAt: number }
interface State { waiting: Job[]; deadLetter: Job[]; maxTries: number }

export class JobBoard {
  private waiting: Job[] = [];
  private deadLetter: Job[] = [];

  constructor(private readonly clock: Clock, private readonly maxTries: number) {}

  postJob(jobId: string): boolean {
    this.waiting.push({ id: jobId, postedAt: this.clock.now() });
    return true;
  }

  giveUp(jobId: string): boolean {
    const at = this.waiting.findIndex((job) => job.id === jobId);
    if (at < 0) return false;
    this.deadLetter.push(...this.waiting.splice(at, 1));
    return true;
  }

  state(): State {
    return {
      waiting: this.waiting.map((job) => ({ ...job })),
      deadLetter: this.deadLetter.map((job) => ({ ...job })),
      maxTries: this.maxTries,
    };
  }

  takeSnapshot(): State {
    return this.state();
  }

  static fromSnapshot(snapshot: State, clock: Clock): JobBoard {
    const board = new JobBoard(clock, snapshot.maxTries);
    board.waiting = snapshot.waiting;
    board.deadLetter = snapshot.deadLetter;
    return board;
  }
}
"#;

/// JavaScript written with the contract's own snake_case names, which the shim accepts too.
const SNAKE_JS: &str = r"export class JobBoard {
  constructor(clock, max_tries) {
    this.clock = clock;
    this.max_tries = max_tries;
    this.waiting = [];
    this.dead_letter = [];
  }

  post_job(job_id) {
    this.waiting.push({ id: job_id, posted_at: this.clock.now() });
    return true;
  }

  give_up(job_id) {
    const at = this.waiting.findIndex((job) => job.id === job_id);
    if (at < 0) return false;
    this.dead_letter.push(...this.waiting.splice(at, 1));
    return true;
  }

  state() {
    return structuredClone({ waiting: this.waiting, dead_letter: this.dead_letter, max_tries: this.max_tries });
  }

  take_snapshot() {
    return this.state();
  }

  static from_snapshot(snapshot, clock) {
    const board = new JobBoard(clock, snapshot.max_tries);
    board.waiting = snapshot.waiting;
    board.dead_letter = snapshot.dead_letter;
    return board;
  }
}
";

/// The exercise in `folder`, with `exercise` as its exercise.yaml.
fn write_exercise(folder: &Path, exercise: &str) {
    std::fs::create_dir_all(folder.join("specs")).expect("mkdir");
    std::fs::write(folder.join("exercise.yaml"), exercise).expect("write");
    std::fs::write(folder.join("reference.py"), REFERENCE).expect("write");
    std::fs::write(folder.join("specs/give-up.yaml"), SPEC).expect("write");
}

#[test]
fn a_javascript_solution_may_spell_the_exercises_names_in_camel_case_or_as_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("job-board");
    write_exercise(&folder, EXERCISE);
    let reference = ran(dlqspec().arg("run").arg(&folder).output().expect("runs"));
    assert_eq!(
        reference.code, 0,
        "{}{}",
        reference.stdout, reference.stderr
    );
    assert!(
        reference.stdout.contains("1 passed, 0 failed"),
        "{}",
        reference.stdout
    );

    let types = ran(dlqspec().arg("types").arg(&folder).output().expect("runs"));
    assert_eq!(types.code, 0, "{}", types.stderr);
    for declared in [
        "postJob(jobId: string): unknown;",
        "giveUp(jobId: string): unknown;",
        "takeSnapshot(): unknown;",
        "new (clock: Clock, maxTries: number) => JobBoardShape",
        "fromSnapshot(snapshot: unknown, clock: Clock): JobBoardShape;",
    ] {
        assert!(
            types.stdout.contains(declared),
            "no {declared:?} in\n{}",
            types.stdout
        );
    }
    let python = ran(dlqspec()
        .arg("types")
        .arg(&folder)
        .args(["--language", "python"])
        .output()
        .expect("runs"));
    assert!(
        python.stdout.contains(
            "    @staticmethod\n    def from_snapshot(snapshot: object, clock: Clock) -> \"JobBoardShape\": ..."
        ),
        "{}",
        python.stdout
    );

    if !node_tests() {
        return;
    }
    let solutions = [
        ("camel.mjs", CAMEL_JS),
        ("camel.ts", CAMEL_TS),
        ("snake.mjs", SNAKE_JS),
    ];
    for (name, text) in solutions {
        let solution = dir.path().join(name);
        std::fs::write(&solution, text).expect("write");
        let ran = ran(dlqspec()
            .arg("run")
            .arg(&folder)
            .args(["--impl", path_arg(&solution)])
            .output()
            .expect("runs"));
        assert_eq!(ran.code, 0, "{name}\n{}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stdout.contains("1 passed, 0 failed"),
            "{name}\n{}",
            ran.stdout
        );
    }

    // A key exercise.yaml does not declare is handed back as the solution wrote it: the
    // camelCase solution's `deadLetter` is then a difference, told as a known key missing.
    let undeclared = dir.path().join("undeclared/job-board");
    write_exercise(
        &undeclared,
        &EXERCISE.replace(
            "keys: [dead_letter, posted_at, max_tries]",
            "keys: [posted_at, max_tries]",
        ),
    );
    let camel = dir.path().join("camel.mjs");
    let failed = ran(dlqspec()
        .arg("run")
        .arg(&undeclared)
        .args(["--impl", path_arg(&camel)])
        .output()
        .expect("runs"));
    assert_eq!(failed.code, 1, "{}{}", failed.stdout, failed.stderr);
    assert!(failed.stdout.contains("deadLetter"), "{}", failed.stdout);
}

#[test]
fn a_view_key_is_declared_in_snake_case() {
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("job-board");
    write_exercise(
        &folder,
        &EXERCISE.replace("keys: [dead_letter,", "keys: [deadLetter,"),
    );
    let refused = ran(dlqspec().arg("run").arg(&folder).output().expect("runs"));
    assert_eq!(refused.code, 2, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused
            .stderr
            .contains("`state`'s key `deadLetter` is not snake_case"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("exercise.yaml:"),
        "{}",
        refused.stderr
    );
}
