//! The command line, as clap types. `main.rs` parses it; `commands` carries it out.
//!
//! One command-line vocabulary, here alone. Each flag is defined once, as ripgrep does:
//! `ProcessLimits` holds `--timeout`, `--memory`, `--cpu`, `--processes`, `--disk` and
//! `--sandbox`, flattened into every command that starts an implementation (`grade` hands them on
//! to its runs by `ProcessLimits::to_args`); `--output` is a file or, where a command writes
//! several, a folder (each command's help says which); `--budget` is wall-clock time; `--format`
//! is wherever a command writes more than one format. The clap types (`ValueEnum`) live only here
//! and map onto the library's own (`RunFormat` onto `report::ReportFormat`, `SandboxChoice` onto
//! `sandbox::Sandbox`), so no layer below knows the command line. A renamed flag stays one release
//! as a hidden option, which `Command::adopt_old_spellings` carries over to the new one with a
//! note on stderr.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::str::FromStr;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::external::sandbox::Sandbox;
use crate::model::world::WorldChoice;
use crate::report::ReportFormat;
use crate::run::select::{Partition, SpecFilter};

#[derive(Debug, Parser)]
#[command(
    name = "dlqspec",
    version,
    about = "Executable contracts for dead-letter-queue handling: run YAML scenario specs against the built-in reference implementation or yours.",
    after_help = "Exit codes: 0 every spec passed; 1 some spec failed (mismatch or implementation error); 2 a spec is broken or the command line is wrong."
)]
pub struct Cli {
    /// When to color the output. NO_COLOR, CLICOLOR_FORCE and TERM=dumb are respected by `auto`.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, global = true)]
    pub(crate) color: ColorWhen,

    /// An exercise folder (holding exercise.yaml) whose specs the command may meet, besides
    /// those the spec paths belong to or hold, which are found by themselves (repeatable).
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) exercise: Vec<PathBuf>,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run specs and report each one, with a diff for every mismatch.
    #[command(
        after_help = "Examples:\n  dlqspec run\n  dlqspec run specs/dlq-consumer/poison-at-budget-plus-one.yaml\n  dlqspec run specs --impl python:solution.py\n  dlqspec run specs --impl node:solution.ts\n  dlqspec run specs --impl auto:submissions/alice\n  dlqspec run specs --impl cmd:'java -cp examples/java/classes Main'\n  dlqspec run specs --filter dlq-consumer/poison\n  dlqspec run --filter 'dlq-consumer/*.yaml' --fail-fast\n  dlqspec run --partition 2/3 --format junit --output junit.xml\n\nExit codes: 0 every spec passed; 1 some spec failed; 2 a spec is broken or the command line is wrong.\nThe JSON, JUnit and TAP formats are described in docs/reports.md."
    )]
    Run(RunArgs),

    /// List every rule of every contract with the specs that cover it; flags uncovered rules.
    #[command(
        after_help = "Examples:\n  dlqspec rules\n  dlqspec rules specs/dlq-consumer\n\nExits 1 when a rule is covered by no spec."
    )]
    Rules(RulesArgs),

    /// Print the JSON Schema of spec files (draft-07), for completion and checking in editors.
    #[command(
        after_help = "Examples:\n  dlqspec schema > schema/dlqspec.schema.json\n\nA spec whose first line is `# yaml-language-server: $schema=../../schema/dlqspec.schema.json`\ngets completion, hover help and checking in editors that use yaml-language-server."
    )]
    Schema,

    /// Write a commented starter spec that passes as written.
    #[command(
        after_help = "Examples:\n  dlqspec new specs/dlq-consumer/my-case.yaml --contract dlq-consumer\n  dlqspec new specs/dlq-consumer/my-case.yaml    (the folder names the contract)\n\nNever overwrites a file (exit 2)."
    )]
    New(NewArgs),

    /// Tell what happens in a scenario, step by step: deliveries, handler outcomes, decisions and the rules behind them, DLQ changes, crashes, checks.
    #[command(
        after_help = "Examples:\n  dlqspec explain specs/dlq-consumer/poison-cycle.yaml\n  dlqspec explain specs/dlq-consumer/poison-cycle.yaml --impl python:solution.py\n  dlqspec explain specs/dlq-consumer/poison-cycle.yaml --impl python:solution.py --format html --output poison-cycle.html\n\nRuns the built-in implementation (or --impl) and tells the whole run, past the first difference.\n--format html draws it as a sequence diagram in a self-contained page (docs/reports.md).\nExit codes: 0 the scenario passes; 1 it fails; 2 the spec is broken."
    )]
    Explain(ExplainArgs),

    /// Rewrite failing expectations with what the built-in implementation does, keeping every other byte of the file.
    #[command(
        after_help = "Examples:\n  dlqspec bless specs/dlq-consumer/my-case.yaml\n  dlqspec bless --check specs\n  dlqspec bless --interactive specs\n\nBlessing always runs the built-in reference implementation. Only expectations that differ\nare rewritten; comments, key order, quoting and layout stay. Each file is written whole\n(temporary file and rename), and only when the blessed spec passes. A broken spec is never\nblessed.\nExit codes: 0 nothing (more) to bless; 1 --check found something to bless, or a spec could\nnot be blessed; 2 a spec is broken or the command line is wrong."
    )]
    Bless(BlessArgs),

    /// Flag spec smells: messages never delivered, outcomes never used, idle trailing steps, missing rules, duplicate names, uncovered rules.
    #[command(
        after_help = "Examples:\n  dlqspec lint\n  dlqspec lint specs/dlq-consumer/my-case.yaml\n  dlqspec lint specs --allow idle-trailing-step\n  dlqspec lint specs/dlq-consumer/my-case.yaml --coverage\n\nSmell ids: no-rule, unexercised-rule, checks-nothing, duplicate-name, uncovered-rule,\nnever-delivered, unused-outcomes, never-processed, idle-trailing-step, stale-allow.\nuncovered-rule is judged for a whole contract folder (specs/CONTRACT, or a folder holding\none, such as specs), or with --coverage.\nExit codes: 0 no smells; 1 some smell; 2 a spec is broken or the command line is wrong."
    )]
    Lint(LintArgs),

    /// Start an external implementation, greet it and make a few obvious calls: says exactly
    /// what is wrong, or shows the handshake and timings. Takes about a second.
    #[command(
        after_help = "Examples:\n  dlqspec smoke --impl python:solution.py\n  dlqspec smoke --impl node:solution.ts\n  dlqspec smoke --impl cmd:'./my-impl --protocol'\n\nExits 0 when all is well, 1 otherwise."
    )]
    Smoke(SmokeArgs),

    /// Run the specs against several implementations and show a rule-by-implementation table.
    #[command(
        after_help = "Examples:\n  dlqspec matrix --impl python:solution.py --impl node:solution.ts\n  dlqspec matrix specs --impl python:a.py --impl python:b.py --output matrix.html\n  dlqspec matrix --impl python:solution.py --format markdown > matrix.md\n\nA cell counts, of the specs covering a rule, how many passed. Exits 0 when every implementation passed every spec it ran, 1 when one failed, 2 when a spec is broken."
    )]
    Matrix(MatrixArgs),

    /// Search for scenarios where an implementation differs from the built-in one, and shrink
    /// the first to a minimal spec; or run one spec under every schedule of injected crashes.
    #[command(
        after_help = "Examples:\n  dlqspec explore --impl python:solution.py\n  dlqspec explore --impl node:solution.ts --contract dlq-consumer --seed 42 --output found/\n  dlqspec explore --impl python:solution.py --cases 2000 --budget 60\n  dlqspec explore specs/dlq-consumer/poison-cycle.yaml --crashes 2 --impl python:solution.py\n\nEvery case is blessed on the built-in implementation first, so it never fails a correct one.\nThe seed is printed: `--seed S` replays a run. docs/explore.md explains it all.\nExit codes: 0 no divergence within the budget (or every invariant holds); 1 a divergence or a\nbroken invariant was found; 2 the command line is wrong."
    )]
    Explore(ExploreArgs),

    /// How strong is a suite: run its specs against every classic mistake of each contract's
    /// catalogue and report which mistakes survive, with a spec explore found to catch each.
    #[command(
        after_help = "Examples:\n  dlqspec strength\n  dlqspec strength specs/dlq-consumer/my-new-specs/ --output suggested/\n  dlqspec strength specs --explore-cases 0\n\nExit codes: 0 every mistake is caught; 1 some mistake survives; 2 a spec is broken or the\ncommand line is wrong."
    )]
    Strength(StrengthArgs),
    /// Grade many submissions against the specs, each in its own process: a report per
    /// submission and a summary (CSV and HTML) with a row each.
    #[command(
        after_help = "Examples:\n  dlqspec grade submissions/* --output grades\n  dlqspec grade submissions/ --output grades\n  dlqspec grade alice.py bob/ carol.ts --specs specs/dlq-consumer --budget 60 --jobs 2\n  dlqspec grade submissions/* --partition 2/4 --output shard-2\n  dlqspec grade --merge shard-1 shard-2 shard-3 shard-4 --output grades\n\nA submission is a solution file (.py, .mjs, .js, .cjs, .ts) or a folder whose entry file is the\nfirst of solution.py, solution.ts, solution.mjs, solution.js, solution.cjs found in it, else its\nonly solution file. A folder with no solution file but folders in it (a class: a GitHub Classroom\nclone, a Gradescope export) is one submission per folder. Each is graded by `dlqspec run` in a process of its own, within --budget\nseconds of wall time. Writes DIR/NAME.txt (the human report), DIR/NAME.jsonl (JSON lines),\nDIR/summary.csv, DIR/summary.html and DIR/summary.json (the rows, for --merge); for a failing\nsubmission, DIR/NAME/explain/SPEC.html, the picture of each of its first 5 failing specs.\nExit codes: 0 every submission passed; 1 some did not; 2 the command line is wrong."
    )]
    Grade(GradeArgs),

    /// Run the selected specs, then rerun what each saved change affects: a spec file that
    /// changed or appeared runs again, a change to the implementation reruns them all.
    #[command(
        after_help = "Examples:\n  dlqspec watch specs/dlq-consumer --impl python:solution.py\n  dlqspec watch specs/dlq-consumer/my-case.yaml\n  dlqspec watch --filter poison --impl node:solution.ts\n\nChanges are gathered until the files are quiet for 200 ms. A broken spec is reported and\nwatching goes on. The screen is cleared before each rerun when stdout is a terminal.\nCtrl-C stops watching, ending any implementation process still running."
    )]
    Watch(WatchArgs),

    /// Print a shell completion script for dlqspec.
    #[command(
        after_help = "Examples:\n  dlqspec completions bash > ~/.local/share/bash-completion/completions/dlqspec\n  dlqspec completions zsh > \"${fpath[1]}/_dlqspec\"\n  dlqspec completions fish > ~/.config/fish/completions/dlqspec.fish"
    )]
    Completions(CompletionsArgs),

    /// Print the man page of dlqspec or of one of its subcommands (roff).
    #[command(
        after_help = "Examples:\n  dlqspec man --install                 # every page, into ~/.local/share/man/man1: then `man dlqspec`\n  dlqspec man > dlqspec.1 && man ./dlqspec.1\n  dlqspec man run > dlqspec-run.1\n  dlqspec man | gzip > /usr/local/share/man/man1/dlqspec.1.gz"
    )]
    Man(ManArgs),

    /// Print the type declarations of an exercise folder's given parts and class, for a
    /// student's editor: TypeScript (given.d.ts) or a Python stub (given.pyi).
    #[command(
        after_help = "Examples:\n  dlqspec types exercises/my-lesson > given.d.ts\n  dlqspec types exercises/my-lesson --language python > given.pyi\n\ngiven.d.ts declares the module `given`: a TypeScript solution imports from 'given', not './given' (import { Clock } from 'given'; import type { ... } from 'given'), with given.d.ts part of the program (a tsconfig.json beside it, or tsc --strict solution.ts given.d.ts). A Python solution writes from given import Clock.\n\nExit codes: 0 printed; 2 no exercise folder there."
    )]
    Types(TypesArgs),

    /// Not a command: `dlqspec init` is a guess people make, and is answered with the command
    /// that starts a spec (`new`), not with clap's nearest spelling (`lint`).
    #[command(hide = true, disable_help_flag = true)]
    Init {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct GradeArgs {
    /// Solution files, or folders holding one solution each.
    #[arg(required_unless_present = "merge", value_name = "SUBMISSION")]
    pub(crate) submissions: Vec<PathBuf>,

    /// Grade only the K-th of N shares of the submissions, so N CI jobs together grade each
    /// once: K/N or count:K/N (round-robin over the submissions sorted by name, then path as
    /// given), hash:K/N (by a hash of the same).
    #[arg(long, value_name = "K/N", value_parser = Partition::from_str, conflicts_with = "merge")]
    pub(crate) partition: Option<Partition>,

    /// Join the output folders of shards (each written by `grade --output DIR`) into one
    /// summary in --output, copying their reports; a submission in two shards is refused.
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with = "submissions")]
    pub(crate) merge: Vec<PathBuf>,

    /// Spec files or folders to grade against.
    #[arg(long, value_name = "PATH", default_value = "specs")]
    pub(crate) specs: Vec<PathBuf>,

    /// Compare with an earlier grading: DIR is the --output folder it wrote (only its
    /// summary.json is read, nothing is written there). Says, per submission, the score
    /// before and after and which specs changed verdict, and which submissions are new or gone.
    #[arg(long, value_name = "DIR", conflicts_with = "partition")]
    pub(crate) against: Option<PathBuf>,

    /// How many submissions are graded at once [default: the number of CPU cores].
    #[arg(long, short, value_name = "N", value_parser = parse_jobs)]
    pub(crate) jobs: Option<NonZeroUsize>,

    /// The folder the reports and the summary are written to (created if missing).
    #[arg(long, short, value_name = "DIR", default_value = "grades")]
    pub(crate) output: PathBuf,

    /// Wall-clock seconds each submission may take in all; past them its run is stopped, with
    /// everything it started, and its row says so.
    #[arg(long, value_name = "SECS", default_value = "120", value_parser = crate::external::launch::parse_timeout)]
    pub(crate) budget: std::time::Duration,

    /// The limits on each submission's processes, as `run` takes them, handed on to each run.
    #[command(flatten)]
    pub(crate) limits: ProcessLimits,

    /// Start every submission cold: its own interpreter, as on a machine where the warm start
    /// cannot be had. By default Python submissions start warm: one zygote, boxed itself, has
    /// started the interpreter and forks a child per submission that joins the same box a cold
    /// start gets (as root, with namespaces, Landlock, a pids cgroup and an interpreter a box's
    /// uid can reach; elsewhere every submission starts cold, said in one note).
    #[arg(long)]
    pub(crate) cold: bool,

    /// The old flag for the default warm start, which does nothing: kept one release, hidden,
    /// with a note.
    #[arg(long = "warm", hide = true, conflicts_with = "cold")]
    pub(crate) old_warm: bool,

    /// The world every submission's dlq-consumer specs act on, as `run --world`: `fake` (the
    /// default) or amqp://... Handed to each run in its environment, not on its command line.
    #[arg(long, value_name = "URL", value_parser = checked(WorldChoice::parse))]
    pub(crate) world: Option<String>,

    /// Draw the pictures (`explain --format html`) of the first N failing specs of each
    /// failing submission (at most 5), each by a boxed run of its own that costs an
    /// interpreter start: 0 draws none.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u8).range(0..=5))]
    pub(crate) pictures: u8,
}

/// A value parser that checks a value with `parse` and keeps its text, to hand on as written.
fn checked<T>(
    parse: fn(&str) -> Result<T, String>,
) -> impl Fn(&str) -> Result<String, String> + Clone + Send + Sync + 'static
where
    T: 'static,
{
    move |text: &str| parse(text).map(|_| text.to_owned())
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) specs: SpecPaths,

    /// Run only specs whose name or path contains TEXT, or with a rule id that is TEXT or starts
    /// with it (`dlq-consumer/`). TEXT with * ? [ { is a path glob (`dlq-consumer/poison-*.yaml`).
    /// Repeatable: a spec runs when any filter matches.
    #[arg(long, value_name = "TEXT", value_parser = SpecFilter::new)]
    pub(crate) filter: Vec<SpecFilter>,

    /// Run only the K-th of N shares of the selected specs, so N CI jobs together run each
    /// spec once: K/N or count:K/N (by position in path order), hash:K/N (by path hash).
    #[arg(long, value_name = "K/N", value_parser = Partition::from_str)]
    pub(crate) partition: Option<Partition>,

    /// How many specs run at once [default: the number of CPU cores; 1 for an external
    /// --impl, where each job is a process of its own and starting one costs more than the
    /// whole suite takes to run].
    #[arg(long, short, value_name = "N", value_parser = parse_jobs)]
    pub(crate) jobs: Option<NonZeroUsize>,

    /// Start no more specs after the first failure; the rest are reported as skipped.
    #[arg(long)]
    pub(crate) fail_fast: bool,

    /// Look for no failure's cause (where the implementation first departs from the
    /// reference): each failure is told by its difference alone. The verdicts are the same
    /// either way; a cause costs runs of the reference and its classic mistakes per failure.
    #[arg(long)]
    pub(crate) no_causes: bool,

    /// Wall-clock seconds the whole run may take: then no spec starts, the implementation is
    /// ended, every spec not finished is skipped (`not run: budget`) and the report written.
    #[arg(long, value_name = "SECS", value_parser = crate::external::launch::parse_timeout)]
    pub(crate) budget: Option<std::time::Duration>,

    /// The report format written to stdout, or to --output.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = RunFormat::Human)]
    pub(crate) format: RunFormat,

    /// Write the report to FILE (replaced atomically); the human report still goes to stdout.
    #[arg(long, short, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) shown: ShownArgs,

    #[command(flatten)]
    pub(crate) target: TargetArgs,

    /// Failures to expect from this implementation (a YAML list of specs and rules, see
    /// docs/known-failures.md): reported, not failing the run; one that passes fails the run.
    #[arg(long, value_name = "FILE")]
    pub(crate) known_failures: Option<PathBuf>,

    /// Tell each spec that is not `visible` as `hidden spec N` in the human report, with its
    /// verdict and rules only: no path, diff or output. For `grade`'s per-submission report,
    /// which students read.
    #[arg(long, hide = true)]
    pub(crate) conceal_hidden: bool,

    #[command(flatten)]
    pub(crate) authoring: RunAuthoringArgs,

    /// The world the dlq-consumer specs act on: `fake` (the lesson's queue, DLQ and clock,
    /// the default) or a RabbitMQ queue,
    /// amqp://USER:PASS@HOST:PORT/VHOST?queue-type=quorum|classic&dead-letter=consumer|broker
    /// (the DLQ and the clock stay dlqspec's). A spec that passes on the fake and fails there
    /// is a divergence, named by the broker's property (docs/brokers.md). `dead-letter=broker`
    /// has RabbitMQ dead-letter too (a dead-letter exchange; quorum: `x-delivery-limit`
    /// max_attempts - 1) and compares what it dead-letters with the lesson's DLQ. Without it,
    /// $DLQSPEC_WORLD, else `fake`.
    #[arg(long, value_name = "URL", value_parser = WorldChoice::parse)]
    pub(crate) world: Option<WorldChoice>,
}

/// What the human report of a run shows, for `run` and `watch` alike.
#[derive(Debug, Args)]
pub(crate) struct ShownArgs {
    /// Print only the specs that did not pass, and the closing count.
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// Show what an implementation printed and raised under passing specs too (it is always
    /// shown under failing ones).
    #[arg(long)]
    pub(crate) show_output: bool,
}

/// What `dlqspec watch` runs, and against which implementation.
#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    pub(crate) specs: SpecPaths,

    /// Run only specs a filter selects, as `run --filter` does (repeatable: any may match).
    #[arg(long, value_name = "TEXT", value_parser = SpecFilter::new)]
    pub(crate) filter: Vec<SpecFilter>,

    /// How many specs run at once (as `run --jobs`).
    #[arg(long, short, value_name = "N", value_parser = parse_jobs)]
    pub(crate) jobs: Option<NonZeroUsize>,

    #[command(flatten)]
    pub(crate) shown: ShownArgs,

    #[command(flatten)]
    pub(crate) target: TargetArgs,

    /// Start a Python solution cold on every run: by default, as root (as `grade`), one
    /// zygote that has started the interpreter forks each run's process into its box.
    #[arg(long)]
    pub(crate) cold: bool,

    /// Stop after this many reruns, with the last run's exit code (for tests and scripts).
    #[arg(long, value_name = "K", hide = true)]
    pub(crate) max_reruns: Option<u64>,
}

/// The options of `run` for an author at work: list, rerun failures, timings.
#[derive(Debug, Args)]
pub(crate) struct RunAuthoringArgs {
    /// List the selected specs (path, name, rules), one a line, without running them;
    /// `--format json` gives one JSON object a line.
    #[arg(long)]
    pub(crate) list: bool,

    /// Run only the selected specs that failed in the last runs (recorded in .dlqspec/, or
    /// $DLQSPEC_CACHE_DIR); all of them when none did.
    #[arg(long, visible_alias = "lf", conflicts_with = "failed_first")]
    pub(crate) last_failed: bool,

    /// Run the selected specs that failed in the last runs first, then the others.
    #[arg(long, visible_alias = "ff")]
    pub(crate) failed_first: bool,

    /// After the run, list the N slowest specs with their times.
    #[arg(long, value_name = "N")]
    pub(crate) durations: Option<usize>,

    /// Mark a spec that takes SECS or longer as SLOW, with its time. Off unless asked: a mark
    /// carries the run's own time, and a report that changes with the machine's load cannot be
    /// compared with the last one.
    #[arg(long = "slow", value_name = "SECS", value_parser = parse_seconds)]
    pub(crate) slow: Option<std::time::Duration>,
}

fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|secs| std::time::Duration::try_from_secs_f64(secs).ok())
        .ok_or_else(|| format!("expected seconds, 0 or more, such as 1 or 0.5; got `{text}`"))
}

fn parse_jobs(text: &str) -> Result<NonZeroUsize, String> {
    match text.parse::<usize>() {
        Ok(jobs) => NonZeroUsize::new(jobs).ok_or_else(|| "must be at least 1".to_owned()),
        Err(_) => Err(format!(
            "expected a whole number of jobs such as 4; got `{text}`"
        )),
    }
}

#[derive(Debug, Args)]
pub(crate) struct ExploreArgs {
    /// A spec whose scenario to run under every schedule of up to --crashes crashes. Without
    /// it, scenarios are generated.
    #[arg(value_name = "SPEC")]
    pub(crate) spec: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) target: TargetArgs,

    /// Generate scenarios of this contract only (all contracts by default).
    #[arg(long, value_name = "NAME")]
    pub(crate) contract: Option<String>,

    /// The seed of the random scenarios (a fresh one by default; it is printed either way).
    #[arg(long, value_name = "S")]
    pub(crate) seed: Option<u64>,

    /// How many scenarios to try per contract [default: 400].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) cases: Option<u64>,

    /// Wall-clock seconds the search may take: then no scenario starts, even with cases left.
    #[arg(long, value_name = "SECS", value_parser = parse_positive_seconds)]
    pub(crate) budget: Option<std::time::Duration>,

    /// The folder the spec found is written into (created if missing), ready for specs/;
    /// without it the spec is printed.
    #[arg(long, short, value_name = "DIR")]
    pub(crate) output: Option<PathBuf>,

    /// `--output`'s old spelling, kept one release, hidden, with a note.
    #[arg(
        long = "out",
        value_name = "DIR",
        hide = true,
        conflicts_with = "output"
    )]
    pub(crate) old_out: Option<PathBuf>,

    /// `--budget`'s old spelling, kept one release, hidden, with a note.
    #[arg(long = "time", value_name = "SECS", hide = true, conflicts_with = "budget",
          value_parser = parse_positive_seconds)]
    pub(crate) old_time: Option<std::time::Duration>,

    /// With SPEC: the most crashes a schedule injects [default: 1].
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(0..=4))]
    pub(crate) crashes: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct StrengthArgs {
    #[command(flatten)]
    pub(crate) specs: SpecPaths,

    /// Scenarios explore may try per surviving mistake to find a spec that catches it; 0
    /// skips the search.
    #[arg(long, value_name = "N", default_value_t = crate::strength::DEFAULT_EXPLORE_CASES)]
    pub(crate) explore_cases: u64,

    /// The seed of those searches.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub(crate) seed: u64,

    /// The folder the specs explore found are written into (created if missing), one file
    /// each; without it they are printed.
    #[arg(long, short, value_name = "DIR")]
    pub(crate) output: Option<PathBuf>,

    /// `--output`'s old spelling, kept one release, hidden, with a note.
    #[arg(
        long = "out",
        value_name = "DIR",
        hide = true,
        conflicts_with = "output"
    )]
    pub(crate) old_out: Option<PathBuf>,
}

fn parse_positive_seconds(text: &str) -> Result<std::time::Duration, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs.is_finite() => Ok(std::time::Duration::from_secs_f64(secs)),
        _ => Err(format!(
            "expected a number of seconds above 0, such as 30 or 0.5; got `{text}`"
        )),
    }
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// The subcommand whose page to print (dlqspec-SUBCOMMAND(1)); none for dlqspec(1).
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "install")]
    pub(crate) subcommand: Option<String>,
    /// Write every page (dlqspec(1) and each dlqspec-SUBCOMMAND(1)) into
    /// `$XDG_DATA_HOME/man/man1`, else `~/.local/share/man/man1`, where `man` finds them;
    /// an earlier install's pages there are replaced.
    #[arg(long)]
    pub(crate) install: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TypesArgs {
    /// The exercise folder (holding exercise.yaml), or a spec or folder inside it.
    #[arg(value_name = "EXERCISE")]
    pub(crate) exercise: PathBuf,

    /// The language whose declarations to print.
    #[arg(long, value_enum, default_value_t = TypesLanguage::Typescript)]
    pub(crate) language: TypesLanguage,
}

/// The languages `dlqspec types` writes declarations for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TypesLanguage {
    Typescript,
    Python,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct RulesArgs {
    #[command(flatten)]
    pub(crate) specs: SpecPaths,
}

#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The spec file to create.
    pub(crate) path: PathBuf,

    /// The contract the spec is for; by default the name of the file's folder.
    #[arg(long, value_name = "NAME")]
    pub(crate) contract: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// The spec file to explain.
    pub(crate) spec: PathBuf,

    /// How to tell it: text, or html (the run as an SVG sequence diagram in a self-contained page).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    pub(crate) format: ExplainFormat,

    /// Write the explanation to FILE instead of stdout (`-` is stdout).
    #[arg(long, short, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) target: TargetArgs,

    /// The world to run it on, as `run --world`: `fake` or amqp://... Without it,
    /// $DLQSPEC_WORLD, else `fake`.
    #[arg(long, value_name = "URL", value_parser = WorldChoice::parse)]
    pub(crate) world: Option<WorldChoice>,
}

/// How `explain` tells a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExplainFormat {
    Text,
    Html,
}

#[derive(Debug, Args)]
pub(crate) struct BlessArgs {
    #[command(flatten)]
    pub(crate) specs: SpecPaths,

    /// Write nothing: show what would change, as a diff per file, and exit 1 if anything would.
    #[arg(long)]
    pub(crate) check: bool,

    /// Show each spec's change as a diff and ask: a (accept: write it), s (skip: leave the
    /// file), q (quit: stop; what was accepted is written). Needs a terminal on stdin.
    #[arg(long, short, conflicts_with = "check")]
    pub(crate) interactive: bool,
}

#[derive(Debug, Args)]
pub(crate) struct LintArgs {
    #[command(flatten)]
    pub(crate) specs: SpecPaths,

    /// Do not report the smell ID anywhere (repeatable); a spec allows one for itself with
    /// `allow: [{smell: ID, reason: ...}]`.
    #[arg(long, value_name = "ID", value_parser = crate::contracts::smell::known)]
    pub(crate) allow: Vec<&'static str>,

    /// Judge rule coverage (uncovered-rule) for every contract the linted specs use, even when
    /// no whole contract folder (specs/CONTRACT, or a folder holding one) is given.
    #[arg(long)]
    pub(crate) coverage: bool,
}

/// Which implementation to check and how long it may take to answer (run, smoke).
#[derive(Debug, Args)]
pub(crate) struct TargetArgs {
    /// The implementation to check: python:FILE, node:FILE (.mjs, .js, .cjs, .ts, .mts, .cts), auto:PATH (a file
    /// or folder whose language and entry file are picked as `grade` picks them),
    /// cmd:'COMMAND LINE', or builtin (the default). The shims are built in (written to the cache folder;
    /// $DLQSPEC_SHIMS overrides them); $DLQSPEC_PYTHON and $DLQSPEC_NODE name the interpreters.
    #[arg(long = "impl", value_name = "IMPL", value_parser = crate::external::launch::parse)]
    pub(crate) implementation: Option<crate::external::launch::Target>,

    #[command(flatten)]
    pub(crate) limits: ProcessLimits,
}

#[derive(Debug, Args)]
pub(crate) struct SmokeArgs {
    /// The implementation to try: python:FILE, node:FILE (.mjs, .js, .cjs, .ts, .mts, .cts), auto:PATH (entry file
    /// picked as `grade` picks it) or cmd:'COMMAND LINE'.
    #[arg(long = "impl", value_name = "IMPL", value_parser = crate::external::launch::parse)]
    pub(crate) implementation: crate::external::launch::Target,

    #[command(flatten)]
    pub(crate) limits: ProcessLimits,
}

#[derive(Debug, Args)]
pub(crate) struct MatrixArgs {
    #[command(flatten)]
    pub(crate) specs: SpecPaths,

    /// Use only specs a filter selects, as `run --filter` does (repeatable: any may match).
    #[arg(long, value_name = "TEXT", value_parser = SpecFilter::new)]
    pub(crate) filter: Vec<SpecFilter>,

    /// An implementation to compare (repeatable): python:FILE, node:FILE (.mjs, .js, .cjs, .ts, .mts, .cts) or
    /// cmd:'COMMAND LINE'. The built-in implementation is always the first column.
    #[arg(long = "impl", value_name = "IMPL", value_parser = crate::external::launch::parse)]
    pub(crate) implementations: Vec<crate::external::launch::Target>,

    #[command(flatten)]
    pub(crate) limits: ProcessLimits,

    /// How to write the matrix: text (the table the terminal shows), markdown, or html (a
    /// self-contained page; markdown and html link each failing cell to its diff). [default:
    /// markdown for an --output FILE ending in .md, html for .html, else text]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(crate) format: Option<MatrixFormat>,

    /// Also write the matrix to FILE, in --format (replaced atomically); the terminal table
    /// still goes to stdout.
    #[arg(long, short, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    /// A world to run on (repeatable), as `run --world`: `fake` or amqp://... Two or more
    /// give a rule-by-world table, a column per world (per implementation and world).
    #[arg(long, value_name = "URL", value_parser = WorldChoice::parse)]
    pub(crate) world: Vec<WorldChoice>,
}

/// The spec files a command reads.
#[derive(Debug, Args)]
pub(crate) struct SpecPaths {
    /// Spec files or folders (folders are searched for .yaml/.yml files).
    #[arg(default_value = "specs")]
    pub(crate) paths: Vec<PathBuf>,
}

/// How long an external implementation may take to answer and what each of its processes may
/// use (docs/protocol.md, Limits): defined once, for every command that starts one.
#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct ProcessLimits {
    /// Seconds an external implementation may take to answer one request before it is killed.
    #[arg(long = "timeout", value_name = "SECS", default_value = "5", value_parser = crate::external::launch::parse_timeout)]
    pub(crate) timeout: std::time::Duration,

    /// Memory each implementation may use, such as 512M or 2G, or unlimited: each process's
    /// data, and, as root, everything its box holds (shared memory and its folders' files
    /// too). Past it allocations fail, and the spec is errored saying so.
    #[arg(long = "memory", value_name = "SIZE", default_value = crate::external::limits::DEFAULT_MEMORY_TEXT, value_parser = |v: &str| crate::external::limits::parse_memory(v).map(Limit))]
    pub(crate) memory: Limit,

    /// CPU time each implementation process may use over its life, in seconds, or unlimited.
    #[arg(long = "cpu", value_name = "SECS", default_value = crate::external::limits::DEFAULT_CPU_TEXT, value_parser = |v: &str| crate::external::limits::parse_cpu(v).map(Limit))]
    pub(crate) cpu: Limit,

    /// Processes and threads each implementation may have at once (in the box: a pids cgroup
    /// as root, RLIMIT_NPROC otherwise), or unlimited.
    #[arg(long = "processes", value_name = "N", default_value = "256", value_parser = |v: &str| crate::external::limits::parse_processes(v).map(Limit))]
    pub(crate) processes: Limit,

    /// What each implementation may write, such as 64M or 1G, or unlimited: its private
    /// folder and its /dev/shm each hold at most this, and no file it writes grows past it.
    #[arg(long = "disk", value_name = "SIZE", default_value = crate::external::limits::DEFAULT_DISK_TEXT, value_parser = |v: &str| crate::external::limits::parse_disk(v).map(Limit))]
    pub(crate) disk: Limit,

    /// Run each implementation process in the box (docs/security.md): its own files, no view
    /// of dlqspec, no network, no signals out, a process limit, an unprivileged uid (under
    /// `grade` as root, one per submission). `off` is for debugging only and unsafe for grading.
    #[arg(
        long = "sandbox",
        value_name = "ON|OFF",
        value_enum,
        default_value = "on"
    )]
    pub(crate) sandbox: SandboxChoice,
}

/// Whether implementations run in the box (`--sandbox`): the command line's word for
/// `sandbox::Sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SandboxChoice {
    /// Every implementation process runs in the box.
    On,
    /// No box: the implementation runs with dlqspec's rights (for debugging only; unsafe for
    /// grading).
    Off,
}

impl From<SandboxChoice> for Sandbox {
    fn from(choice: SandboxChoice) -> Sandbox {
        match choice {
            SandboxChoice::On => Sandbox::On,
            SandboxChoice::Off => Sandbox::Off,
        }
    }
}

/// A limit's amount, `None` for unlimited (a type of its own: clap reads `Option` as
/// "the option may be left out").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limit(pub Option<u64>);

impl ProcessLimits {
    pub(crate) fn limits(&self) -> crate::external::limits::Limits {
        crate::external::limits::Limits {
            memory: self.memory.0,
            cpu_seconds: self.cpu.0,
            processes: self.processes.0,
            disk: self.disk.0,
            sandbox: self.sandbox.into(),
        }
    }

    /// The options that give these limits, as the command line reads them: what `grade`
    /// hands on to each of its runs.
    pub(crate) fn to_args(self) -> Vec<String> {
        let amount = |limit: Limit| {
            limit
                .0
                .map_or_else(|| "unlimited".to_owned(), |n| n.to_string())
        };
        let sandbox = match self.sandbox {
            SandboxChoice::On => "on",
            SandboxChoice::Off => "off",
        };
        [
            ("--timeout", self.timeout.as_secs_f64().to_string()),
            ("--memory", amount(self.memory)),
            ("--cpu", amount(self.cpu)),
            ("--processes", amount(self.processes)),
            ("--disk", amount(self.disk)),
            ("--sandbox", sandbox.to_owned()),
        ]
        .into_iter()
        .flat_map(|(option, value)| [option.to_owned(), value])
        .collect()
    }
}

/// `run --format`: the command line's words for `report::ReportFormat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum RunFormat {
    /// Colored lines for people, with diffs.
    #[default]
    Human,
    /// One JSON object per event (docs/reports.md).
    Json,
    /// JUnit XML, one testcase per spec.
    Junit,
    /// TAP version 13.
    Tap,
    /// Gradescope's autograder results.json (docs/autograders.md).
    Gradescope,
    /// An Exercism test runner's results.json, version 3 (docs/autograders.md).
    Exercism,
}

impl From<RunFormat> for ReportFormat {
    fn from(format: RunFormat) -> ReportFormat {
        match format {
            RunFormat::Human => ReportFormat::Human,
            RunFormat::Json => ReportFormat::Json,
            RunFormat::Junit => ReportFormat::Junit,
            RunFormat::Tap => ReportFormat::Tap,
            RunFormat::Gradescope => ReportFormat::Gradescope,
            RunFormat::Exercism => ReportFormat::Exercism,
        }
    }
}

/// `matrix --format`: how the matrix is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MatrixFormat {
    /// The table the terminal shows, without colors in a file.
    Text,
    /// A Markdown table.
    Markdown,
    /// A self-contained HTML page.
    Html,
}

impl MatrixFormat {
    /// The format a file name says by its extension (`.md`, `.markdown`, `.html`, `.htm`).
    pub(crate) fn of_extension(path: &std::path::Path) -> Option<MatrixFormat> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(MatrixFormat::Markdown),
            "html" | "htm" => Some(MatrixFormat::Html),
            _ => None,
        }
    }
}

impl Command {
    /// The spec paths the command reads (files or folders), where exercise folders are found.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        match self {
            Command::Run(args) => args.specs.paths.clone(),
            Command::Watch(args) => args.specs.paths.clone(),
            Command::Rules(args) => args.specs.paths.clone(),
            Command::Bless(args) => args.specs.paths.clone(),
            Command::Lint(args) => args.specs.paths.clone(),
            Command::Matrix(args) => args.specs.paths.clone(),
            Command::Strength(args) => args.specs.paths.clone(),
            Command::Grade(args) => args.specs.clone(),
            Command::New(args) => vec![args.path.clone()],
            Command::Explain(args) => vec![args.spec.clone()],
            Command::Explore(args) => args.spec.iter().cloned().collect(),
            Command::Types(args) => vec![args.exercise.clone()],
            Command::Schema
            | Command::Smoke(_)
            | Command::Completions(_)
            | Command::Man(_)
            | Command::Init { .. } => Vec::new(),
        }
    }

    /// Carries what an old spelling of an option gave over to the option it is now, and
    /// returns the note to print for each old spelling used (kept one release).
    pub(crate) fn adopt_old_spellings(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        match self {
            Command::Explore(args) => {
                renamed(&mut args.old_out, &mut args.output, "--out", "--output", &mut notes);
                renamed(&mut args.old_time, &mut args.budget, "--time", "--budget", &mut notes);
            }
            Command::Strength(args) => {
                renamed(&mut args.old_out, &mut args.output, "--out", "--output", &mut notes);
            }
            Command::Grade(args) if args.old_warm => notes.push(
                "note: --warm does nothing: a warm start is the default (--cold asks for a cold one); --warm will go in the next release".to_owned(),
            ),
            _ => {}
        }
        notes
    }
}

/// Moves an old spelling's value into its new option, with the note that says so.
fn renamed<T>(
    old: &mut Option<T>,
    new: &mut Option<T>,
    old_name: &str,
    new_name: &str,
    notes: &mut Vec<String>,
) {
    if let Some(value) = old.take() {
        *new = Some(value);
        notes.push(format!(
            "note: {old_name} is now {new_name}; {old_name} will go in the next release"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits_of(args: &[&str]) -> ProcessLimits {
        let cli = Cli::try_parse_from([["dlqspec", "run"].as_slice(), args].concat())
            .expect("the options parse");
        match cli.command {
            Command::Run(run) => run.target.limits,
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn the_limits_handed_on_read_back_as_the_same_limits() {
        for given in [
            vec![],
            vec![
                "--timeout",
                "0.25",
                "--memory",
                "512M",
                "--cpu",
                "unlimited",
                "--processes",
                "32",
                "--disk",
                "1G",
                "--sandbox",
                "off",
            ],
        ] {
            let limits = limits_of(&given);
            let handed = limits.to_args();
            let again = limits_of(&handed.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(again.limits(), limits.limits(), "{handed:?}");
            assert_eq!(again.timeout, limits.timeout, "{handed:?}");
        }
    }

    #[test]
    fn an_old_spelling_moves_to_its_new_option_with_a_note() {
        let mut cli = Cli::try_parse_from(["dlqspec", "explore", "--out", "found", "--time", "3"])
            .expect("the old spellings parse");
        let notes = cli.command.adopt_old_spellings();
        assert_eq!(
            notes,
            [
                "note: --out is now --output; --out will go in the next release",
                "note: --time is now --budget; --time will go in the next release",
            ]
        );
        let Command::Explore(args) = cli.command else {
            panic!("not explore");
        };
        assert_eq!(args.output, Some(PathBuf::from("found")));
        assert_eq!(args.budget, Some(std::time::Duration::from_secs(3)));
        assert_eq!((args.old_out, args.old_time), (None, None));
    }

    #[test]
    fn matrix_guesses_its_format_only_from_an_extension_that_says_it() {
        let of = |name: &str| MatrixFormat::of_extension(std::path::Path::new(name));
        assert_eq!(of("m.MD"), Some(MatrixFormat::Markdown));
        assert_eq!(of("m.htm"), Some(MatrixFormat::Html));
        assert_eq!(of("m.txt"), None);
        assert_eq!(of("matrix"), None);
    }
}
