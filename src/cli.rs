//! The command line, as clap types. `main.rs` parses it; `commands` carries it out.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::str::FromStr;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::ReportFormat;
use crate::select::{Filter, Partition};

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
    pub color: ColorWhen,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run specs and report each one, with a diff for every mismatch.
    #[command(
        after_help = "Examples:\n  dlqspec run\n  dlqspec run specs/dlq-consumer/poison-at-budget-plus-one.yaml\n  dlqspec run specs --filter dlq-consumer/poison\n  dlqspec run --filter 'dlq-consumer/*.yaml' --fail-fast\n  dlqspec run --partition 2/3 --format junit --output junit.xml\n\nExit codes: 0 every spec passed; 1 some spec failed; 2 a spec is broken or the command line is wrong.\nThe JSON, JUnit and TAP formats are described in docs/reports.md."
    )]
    Run(RunArgs),

    /// List every rule of every contract with the specs that cover it; flags uncovered rules.
    #[command(
        after_help = "Examples:\n  dlqspec rules\n  dlqspec rules specs/dlq-consumer\n\nExits 1 when a rule is covered by no spec."
    )]
    Rules(RulesArgs),

    /// Print a shell completion script for dlqspec.
    #[command(
        after_help = "Examples:\n  dlqspec completions bash > ~/.local/share/bash-completion/completions/dlqspec\n  dlqspec completions zsh > \"${fpath[1]}/_dlqspec\"\n  dlqspec completions fish > ~/.config/fish/completions/dlqspec.fish"
    )]
    Completions(CompletionsArgs),

    /// Print the man page of dlqspec or of one of its subcommands (roff).
    #[command(
        after_help = "Examples:\n  dlqspec man > dlqspec.1 && man ./dlqspec.1\n  dlqspec man run > dlqspec-run.1\n  dlqspec man | gzip > /usr/local/share/man/man1/dlqspec.1.gz"
    )]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Spec files or folders (folders are searched for .yaml/.yml files).
    #[arg(default_value = "specs")]
    pub paths: Vec<PathBuf>,

    /// Run only specs whose name or path contains TEXT, or with a rule id that is TEXT or starts
    /// with it (`dlq-consumer/`). TEXT with * ? [ { is a path glob (`dlq-consumer/poison-*.yaml`).
    /// Repeatable: a spec runs when any filter matches.
    #[arg(long, value_name = "TEXT", value_parser = Filter::new)]
    pub filter: Vec<Filter>,

    /// Run only the K-th of N shares of the selected specs, so N CI jobs together run each
    /// spec once: K/N or count:K/N (by position in path order), hash:K/N (by path hash).
    #[arg(long, value_name = "K/N", value_parser = Partition::from_str)]
    pub partition: Option<Partition>,

    /// How many specs run at once [default: the number of CPU cores].
    #[arg(long, short, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<NonZeroUsize>,

    /// Start no more specs after the first failure; the rest are reported as skipped.
    #[arg(long)]
    pub fail_fast: bool,

    /// The report format written to stdout, or to --output.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,

    /// Write the report to FILE (replaced atomically); the human report still goes to stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print only the specs that did not pass, and the closing count.
    #[arg(long, short)]
    pub quiet: bool,
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
pub struct ManArgs {
    /// The subcommand whose page to print (dlqspec-SUBCOMMAND(1)); none for dlqspec(1).
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Spec files or folders whose coverage is shown.
    #[arg(default_value = "specs")]
    pub paths: Vec<PathBuf>,
}
